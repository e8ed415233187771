//===- Router.cpp - topology-aware routes for reshard plans -----------------===//

#include "m2n/Route/Router.h"

#include "m2n/Route/CostModel.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <tuple>

namespace m2n {

TopologyRouter::TopologyRouter(const Layout &src, const Layout &dst,
                               std::vector<int64_t> shape,
                               const Topology &topology)
    : src(src), dst(dst), shape(std::move(shape)), topology(topology),
      domains(topology), srcIndex(src.mesh), dstIndex(dst.mesh) {}

Schedule TopologyRouter::route(const ReshardPlan &plan,
                               Strategy strategy) const {
  switch (strategy) {
  case Strategy::Flat:
    return routeFlat(plan);
  case Strategy::GatherBroadcast:
    return routeGatherBroadcast();
  case Strategy::Hierarchical:
    return routeHierarchical(plan);
  }
  return {};
}

namespace {
BufferRef source(int64_t rank) { return {BufferKind::Source, rank, -1}; }
BufferRef destination(int64_t rank) {
  return {BufferKind::Destination, rank, -1};
}

/// A step, its link classified by the topology.
Step makeStep(const DomainMap &domains, BufferRef from, Box fromBox,
              BufferRef to, Box toBox, std::optional<Reduction> reduction) {
  Step step;
  step.link = domains.linkBetween(from.rank, to.rank);
  step.from = from;
  step.fromBox = std::move(fromBox);
  step.to = to;
  step.toBox = std::move(toBox);
  step.reduction = reduction;
  return step;
}

/// Appends makeStep's step.
void addStep(Schedule &schedule, const DomainMap &domains, BufferRef from,
             Box fromBox, BufferRef to, Box toBox,
             std::optional<Reduction> reduction) {
  schedule.steps.push_back(makeStep(domains, from, std::move(fromBox), to,
                                    std::move(toBox), reduction));
}

BufferRef addScratch(Schedule &schedule, int64_t rank, const Dims &shape) {
  schedule.scratches.push_back({rank, shape});
  return {BufferKind::Scratch, rank,
          static_cast<int64_t>(schedule.scratches.size()) - 1};
}

Box wholeBox(const Dims &sizes) { return {Dims(sizes.size(), 0), sizes}; }

/// Where bands of dimension `d` may be cut: at multiples of the block
/// extent where blocks cut the dimension (global coordinates), anywhere
/// where one block spans it (every band then reads the same scales).
int64_t cutStep(const Dims &blocks, const std::vector<int64_t> &shape,
                size_t d) {
  return d < blocks.size() && blocks[d] > 0 && blocks[d] < shape[d]
             ? blocks[d]
             : 1;
}

/// The dimension a region's quantizing is cut into bands along: its
/// outermost with a place to cut inside it (-1: none, one quantizer takes
/// the region).
int64_t bandAxis(const Box &region, const Dims &blocks,
                 const std::vector<int64_t> &shape) {
  for (size_t d = 0; d < region.sizes.size(); ++d) {
    const int64_t step = cutStep(blocks, shape, d);
    const int64_t firstCut = (region.offsets[d] / step + 1) * step;
    if (firstCut < region.offsets[d] + region.sizes[d])
      return static_cast<int64_t>(d);
  }
  return -1;
}

/// Where `quantizers` bands of `region` (global coordinates, not empty)
/// begin along bandAxis, and where the last ends (quantizers + 1 offsets,
/// relative to the region): water-filling, each band sized so that the
/// elements its quantizer has quantized (`loadOf(q)` so far) come out as
/// even as the cuts (cutStep) allow. Region by region, so not the best
/// split over all regions at once. Bands may be empty.
template <typename LoadOf>
std::vector<int64_t> bandCuts(const Box &region, size_t quantizers,
                              LoadOf loadOf, const Dims &blocks,
                              const std::vector<int64_t> &shape) {
  const int64_t axis = bandAxis(region, blocks, shape);
  const int64_t extent = axis >= 0 ? region.sizes[axis] : 1;
  const int64_t origin = axis >= 0 ? region.offsets[axis] : 0;
  const int64_t step = axis >= 0 ? cutStep(blocks, shape, axis) : 1;
  // The level every quantizer's load is filled up to.
  std::vector<int64_t> loads(quantizers);
  for (size_t q = 0; q < quantizers; ++q)
    loads[q] = loadOf(q);
  std::vector<int64_t> sorted = loads;
  std::sort(sorted.begin(), sorted.end());
  const double volume = static_cast<double>(region.volume());
  double level = 0, below = 0;
  for (size_t k = 1; k <= quantizers; ++k) {
    below += static_cast<double>(sorted[k - 1]);
    level = (volume + below) / static_cast<double>(k);
    if (k == quantizers || level <= static_cast<double>(sorted[k]))
      break;
  }
  // Cumulative shares in rows, each cut moved to the nearest block
  // boundary (or the region's ends).
  auto snap = [&](double rows) {
    int64_t at = std::clamp<int64_t>(std::llround(rows), 0, extent);
    int64_t lower = (origin + at) / step * step - origin;
    int64_t upper = std::min(lower + step, extent);
    lower = std::max<int64_t>(lower, 0);
    return at - lower <= upper - at ? lower : upper;
  };
  const double rowVolume = volume / static_cast<double>(extent);
  std::vector<int64_t> cuts(quantizers + 1, 0);
  double share = 0;
  for (size_t q = 0; q < quantizers; ++q) {
    share += std::max(0.0, level - static_cast<double>(loads[q]));
    cuts[q + 1] = q + 1 == quantizers
                      ? extent
                      : std::max(cuts[q], snap(share / rowVolume));
  }
  return cuts;
}

Box shifted(const Box &box, const Dims &origin, int sign) {
  Box result = box;
  for (size_t d = 0; d < origin.size(); ++d)
    result.offsets[d] += sign * origin[d];
  return result;
}
} // namespace

//===----------------------------------------------------------------------===//
// flat
//===----------------------------------------------------------------------===//

Schedule TopologyRouter::routeFlat(const ReshardPlan &plan) const {
  Schedule schedule;
  schedule.strategy = Strategy::Flat;
  for (const Transfer &t : plan.transfers)
    addStep(schedule, domains, source(t.srcRank), t.srcBox,
            destination(t.dstRank), t.dstBox, t.reduction);
  return schedule;
}

//===----------------------------------------------------------------------===//
// gather-bcast
//===----------------------------------------------------------------------===//

Schedule TopologyRouter::routeGatherBroadcast() const {
  Schedule schedule;
  schedule.strategy = Strategy::GatherBroadcast;
  const int64_t root = src.mesh.rankAt(0);
  const int64_t copies = dst.numContributors();
  const Dims full(shape);
  // Source contributor c lands in the root's full tensor keptContributor(c):
  // the lowest contributor of each copies, the others reduce into it.
  std::vector<int64_t> copyingContributor(copies, -1);
  for (int64_t c = src.numContributors() - 1; c >= 0; --c)
    copyingContributor[keptContributor(src, dst, c)] = c;

  // Gather: one replica of every source box into the root's full tensor
  // (one per destination contributor).
  std::vector<BufferRef> rootScratch;
  for (int64_t k = 0; k < copies; ++k)
    rootScratch.push_back(addScratch(schedule, root, full));
  auto preference = [&](int64_t rank) {
    return std::make_tuple(rank != root,
                           domains.domainOf(rank) != domains.domainOf(root));
  };
  std::map<std::pair<int64_t, std::vector<int64_t>>, int64_t> injector;
  for (int64_t i = 0; i < src.mesh.size(); ++i) {
    Box box = src.localBox(shape, i);
    if (box.empty())
      continue;
    std::vector<int64_t> key = box.offsets.vec();
    key.insert(key.end(), box.sizes.begin(), box.sizes.end());
    auto [it, inserted] = injector.try_emplace(
        {src.contributorIndex(i), key}, src.mesh.rankAt(i));
    if (!inserted && preference(src.mesh.rankAt(i)) < preference(it->second))
      it->second = src.mesh.rankAt(i);
  }
  for (const auto &[key, rank] : injector) {
    int64_t contributor = key.first;
    int64_t kept = keptContributor(src, dst, contributor);
    Box box = src.localBox(shape, *srcIndex.indexOf(rank));
    std::optional<Reduction> reduction;
    if (contributor != copyingContributor[kept])
      reduction = src.reduction();
    addStep(schedule, domains, source(rank), wholeBox(box.sizes),
            rootScratch[kept], box, reduction);
  }

  // Broadcast: a ring through the destination ranks, the root's domain
  // first, then domain by domain.
  std::vector<int64_t> ring;
  for (int64_t j = 0; j < dst.mesh.size(); ++j)
    if (!dst.localBox(shape, j).empty() && dst.mesh.rankAt(j) != root)
      ring.push_back(dst.mesh.rankAt(j));
  const int64_t rootDomain = domains.domainOf(root);
  std::stable_sort(ring.begin(), ring.end(), [&](int64_t a, int64_t b) {
    auto key = [&](int64_t r) {
      int64_t d = domains.domainOf(r);
      return std::make_tuple(d != rootDomain, d, r);
    };
    return key(a) < key(b);
  });
  std::map<int64_t, std::vector<BufferRef>> fullCopyOf;
  fullCopyOf[root] = rootScratch;
  int64_t previous = root;
  for (int64_t rank : ring) {
    for (int64_t k = 0; k < copies; ++k) {
      fullCopyOf[rank].push_back(addScratch(schedule, rank, full));
      addStep(schedule, domains, fullCopyOf[previous][k], wholeBox(full),
              fullCopyOf[rank][k], wholeBox(full), std::nullopt);
    }
    previous = rank;
  }

  // Every destination copies its part out of its full tensor.
  for (int64_t j = 0; j < dst.mesh.size(); ++j) {
    Box box = dst.localBox(shape, j);
    if (box.empty())
      continue;
    int64_t rank = dst.mesh.rankAt(j);
    int64_t k = dst.contributorIndex(j);
    addStep(schedule, domains, fullCopyOf[rank][k], box, destination(rank),
            wholeBox(box.sizes), std::nullopt);
  }
  return schedule;
}

//===----------------------------------------------------------------------===//
// hierarchical
//===----------------------------------------------------------------------===//

/// Reduce, then share: when several destination replicas in one NVLink
/// domain need the reduction of the same region, each reduces one chunk of
/// it (all contributions of that chunk) and the others copy the reduced
/// chunk from it: a reduce-scatter followed by an all-gather. With m
/// replicas and c contributions, each replica pulls (c - 1) / m of the
/// region to reduce and (m - 1) / m reduced, instead of reducing all c - 1
/// contributions of the whole region. Returns the indices of the plan's
/// transfers it routed.
std::set<size_t> TopologyRouter::routeReduceShare(const ReshardPlan &plan,
                                                  Schedule &schedule) const {
  std::set<size_t> routed;
  if (!reducesContributions(src, dst))
    return routed;
  // Transfers by the value they fill: destination contributor, then the
  // global region (offsets, then sizes).
  std::map<std::vector<int64_t>, std::vector<size_t>> byRegion;
  std::vector<Box> dstBoxes(dst.mesh.size());
  for (int64_t j = 0; j < dst.mesh.size(); ++j)
    dstBoxes[j] = dst.localBox(shape, j);
  auto globalOf = [&](const Transfer &t) {
    return shifted(t.dstBox, dstBoxes[*dstIndex.indexOf(t.dstRank)].offsets, +1);
  };
  for (size_t i = 0; i < plan.transfers.size(); ++i) {
    Box region = globalOf(plan.transfers[i]);
    std::vector<int64_t> key = {
        dst.contributorIndex(*dstIndex.indexOf(plan.transfers[i].dstRank))};
    key.insert(key.end(), region.offsets.begin(), region.offsets.end());
    key.insert(key.end(), region.sizes.begin(), region.sizes.end());
    byRegion[key].push_back(i);
  }
  int64_t rotation = 0;
  for (const auto &[key, indices] : byRegion) {
    // The replicas needing the region, each with its transfers into it.
    std::map<int64_t, std::vector<size_t>> transfersOf;
    std::set<int64_t> involved; // The domains of its sources and targets.
    for (size_t i : indices) {
      const Transfer &t = plan.transfers[i];
      transfersOf[t.dstRank].push_back(i);
      involved.insert(domains.domainOf(t.dstRank));
      involved.insert(domains.domainOf(t.srcRank));
    }
    const int64_t m = static_cast<int64_t>(transfersOf.size());
    if (m < 2 || involved.size() != 1)
      continue;
    const size_t contributions = transfersOf.begin()->second.size();
    if (contributions < 2 ||
        std::any_of(transfersOf.begin(), transfersOf.end(), [&](const auto &e) {
          return e.second.size() != contributions;
        }))
      continue;
    const Box region = globalOf(plan.transfers[indices.front()]);
    int64_t axis = -1;
    for (int64_t d = 0; d < region.rank() && axis < 0; ++d)
      if (region.sizes[d] >= m)
        axis = d;
    if (axis < 0)
      continue;

    std::vector<int64_t> replicas;
    for (const auto &entry : transfersOf)
      replicas.push_back(entry.first);
    // `box` (a box of `region` in some buffer) restricted to chunk k.
    const int64_t extent = region.sizes[axis];
    auto chunkOf = [&](const Box &box, int64_t k) {
      Box piece = box;
      int64_t begin = k * extent / m, end = (k + 1) * extent / m;
      piece.offsets[axis] += begin;
      piece.sizes[axis] = end - begin;
      return piece;
    };
    for (int64_t k = 0; k < m; ++k) {
      const int64_t owner = replicas[(k + rotation) % m];
      // The owner combines every contribution of its chunk...
      for (size_t i : transfersOf[owner]) {
        const Transfer &t = plan.transfers[i];
        addStep(schedule, domains, source(t.srcRank), chunkOf(t.srcBox, k),
                destination(owner), chunkOf(t.dstBox, k), t.reduction);
      }
      // ...and the other replicas copy the result.
      const Box ownerBox =
          chunkOf(plan.transfers[transfersOf[owner].front()].dstBox, k);
      for (int64_t replica : replicas)
        if (replica != owner)
          addStep(schedule, domains, destination(owner), ownerBox,
                  destination(replica),
                  chunkOf(plan.transfers[transfersOf[replica].front()].dstBox, k),
                  std::nullopt);
    }
    ++rotation;
    routed.insert(indices.begin(), indices.end());
  }
  return routed;
}

std::optional<ReduceShare> parseReduceShare(const std::string &text) {
  if (text == "on" || text == "true")
    return ReduceShare::On;
  if (text == "off" || text == "false")
    return ReduceShare::Off;
  if (text == "auto")
    return ReduceShare::Auto;
  return std::nullopt;
}

Schedule TopologyRouter::routeHierarchical(const ReshardPlan &fullPlan) const {
  if (reduceShare == ReduceShare::Auto) {
    // Only reductions into replicas can differ; then the cheaper route.
    TopologyRouter direct = *this, shared = *this;
    direct.reduceShare = ReduceShare::Off;
    Schedule directSchedule = direct.routeHierarchical(fullPlan);
    if (!reducesContributions(src, dst))
      return directSchedule;
    shared.reduceShare = ReduceShare::On;
    Schedule sharedSchedule = shared.routeHierarchical(fullPlan);
    double directMs = estimateSchedule(directSchedule, topology, 1).solMs();
    double sharedMs = estimateSchedule(sharedSchedule, topology, 1).solMs();
    return sharedMs < directMs * (1 - 1e-9) ? sharedSchedule : directSchedule;
  }
  Schedule schedule;
  schedule.strategy = Strategy::Hierarchical;
  // Regions reduced for several replicas of one domain: reduce, then share.
  std::set<size_t> routed;
  if (reduceShare == ReduceShare::On)
    routed = routeReduceShare(fullPlan, schedule);
  // What is left to route (the whole plan, uncopied, when nothing was).
  ReshardPlan rest;
  for (size_t i = 0; !routed.empty() && i < fullPlan.transfers.size(); ++i)
    if (!routed.count(i))
      rest.transfers.push_back(fullPlan.transfers[i]);
  const ReshardPlan &plan = routed.empty() ? fullPlan : rest;
  schedule.steps.reserve(schedule.steps.size() + plan.transfers.size());

  // A delivery: one region of one source box (one contributor), and every
  // destination that needs exactly it.
  struct Target {
    int64_t rank;
    Box box; // In the destination's local buffer.
    std::optional<Reduction> reduction;
  };
  struct Delivery {
    std::vector<int64_t> replicas; // Source ranks holding the region.
    Box region;                    // Global coordinates.
    std::vector<Target> targets;
  };
  std::vector<Delivery> deliveries;
  std::map<std::vector<int64_t>, int64_t> deliveryOfKey;
  std::map<std::vector<int64_t>, std::vector<int64_t>> replicasOfGroup;
  std::vector<Box> srcBoxes(src.mesh.size());
  // A source group: contributor and box (offsets, then sizes).
  auto groupKey = [&](int64_t i) {
    std::vector<int64_t> key = {src.contributorIndex(i)};
    key.insert(key.end(), srcBoxes[i].offsets.begin(), srcBoxes[i].offsets.end());
    key.insert(key.end(), srcBoxes[i].sizes.begin(), srcBoxes[i].sizes.end());
    return key;
  };
  for (int64_t i = 0; i < src.mesh.size(); ++i) {
    srcBoxes[i] = src.localBox(shape, i);
    if (!srcBoxes[i].empty())
      replicasOfGroup[groupKey(i)].push_back(src.mesh.rankAt(i));
  }
  for (const Transfer &t : plan.transfers) {
    int64_t owner = *srcIndex.indexOf(t.srcRank);
    Box region = shifted(t.srcBox, srcBoxes[owner].offsets, +1);
    std::vector<int64_t> group = groupKey(owner);
    std::vector<int64_t> key = group;
    key.insert(key.end(), region.offsets.begin(), region.offsets.end());
    key.insert(key.end(), region.sizes.begin(), region.sizes.end());
    auto [it, inserted] = deliveryOfKey.try_emplace(
        key, static_cast<int64_t>(deliveries.size()));
    if (inserted)
      deliveries.push_back({replicasOfGroup[group], region, {}});
    deliveries[it->second].targets.push_back(
        {t.dstRank, t.dstBox, t.reduction});
  }

  // Raw partial contributions cannot be forwarded from a destination buffer
  // that already holds their reduction: leaders land them in scratch.
  const bool viaScratch = reducesContributions(src, dst);
  // Quantizing once forwards converted bytes: never for reductions.
  const bool once = quantizeOnce && !viaScratch;
  std::map<int64_t, int64_t> egressBytes, leaderLoad, forwardBytes,
      quantizedElements;

  // Copies of fp8 bands that destinations did not quantize themselves,
  // listed after every quantizing step: a rank's CTAs take its steps in
  // list order, and a copy waits for another rank's quantizing.
  std::vector<Step> bandCopies;
  // Shares `region` (no destination holds it) among the source replicas
  // `servers` of a domain and its destinations `targets` (see Router.h).
  auto spreadQuantizing = [&](const Box &region,
                              const std::vector<int64_t> &servers,
                              const std::vector<const Target *> &targets) {
    if (region.empty())
      return;
    struct Quantizer {
      int64_t rank;
      const Target *target; // nullptr: a source replica, into its scratch.
    };
    std::vector<Quantizer> quantizers;
    for (int64_t rank : servers)
      quantizers.push_back({rank, nullptr});
    for (const Target *target : targets)
      quantizers.push_back({target->rank, target});
    std::vector<int64_t> cuts = bandCuts(
        region, quantizers.size(),
        [&](size_t q) { return quantizedElements[quantizers[q].rank]; },
        quantizingBlocks, shape);
    auto localBoxOf = [&](int64_t rank) {
      return shifted(region, srcBoxes[*srcIndex.indexOf(rank)].offsets, -1);
    };
    const int64_t axis = bandAxis(region, quantizingBlocks, shape);
    auto bandOf = [&](const Box &box, size_t q) {
      Box band = box;
      if (axis >= 0) {
        band.offsets[axis] += cuts[q];
        band.sizes[axis] = cuts[q + 1] - cuts[q];
      }
      return band;
    };
    for (size_t q = 0; q < quantizers.size(); ++q) {
      if (cuts[q + 1] == cuts[q])
        continue;
      const Quantizer &quantizer = quantizers[q];
      const Box band = bandOf(wholeBox(region.sizes), q);
      quantizedElements[quantizer.rank] += band.volume();
      BufferRef from;
      Box fromBox;
      if (!quantizer.target) {
        from = addScratch(schedule, quantizer.rank, band.sizes);
        fromBox = wholeBox(band.sizes);
        // Every destination reads the scratch.
        egressBytes[quantizer.rank] +=
            band.volume() * static_cast<int64_t>(targets.size());
        addStep(schedule, domains, source(quantizer.rank),
                bandOf(localBoxOf(quantizer.rank), q), from, fromBox,
                std::nullopt);
      } else {
        // Each band is pulled from the replica that has sent the least.
        int64_t server = servers.front();
        for (int64_t rank : servers)
          if (egressBytes[rank] < egressBytes[server])
            server = rank;
        egressBytes[server] += band.volume();
        from = destination(quantizer.rank);
        fromBox = bandOf(quantizer.target->box, q);
        // (Quantizing once routes no reductions: the copies below reduce
        // nothing either.)
        addStep(schedule, domains, source(server), bandOf(localBoxOf(server), q),
                from, fromBox, quantizer.target->reduction);
      }
      for (const Target *target : targets)
        if (target != quantizer.target)
          bandCopies.push_back(makeStep(domains, from, fromBox,
                                        destination(target->rank),
                                        bandOf(target->box, q), std::nullopt));
    }
  };

  for (const Delivery &delivery : deliveries) {
    const Box &region = delivery.region;
    auto localBoxOf = [&](int64_t rank) {
      return shifted(region, srcBoxes[*srcIndex.indexOf(rank)].offsets, -1);
    };
    // Destinations holding the region themselves copy it locally (and,
    // quantizing once, are their domain's quantizer of it).
    std::vector<const Target *> remote;
    std::map<int64_t, const Target *> quantizerOfDomain;
    for (const Target &target : delivery.targets) {
      if (std::find(delivery.replicas.begin(), delivery.replicas.end(),
                    target.rank) != delivery.replicas.end()) {
        addStep(schedule, domains, source(target.rank), localBoxOf(target.rank),
                destination(target.rank), target.box, target.reduction);
        if (once) {
          quantizerOfDomain.try_emplace(domains.domainOf(target.rank), &target);
          quantizedElements[target.rank] += region.volume();
        }
      } else {
        remote.push_back(&target);
      }
    }
    if (remote.empty())
      continue;

    // Domains that hold a replica serve their own destinations over
    // NVLink; every other domain is reached over the network once.
    auto leastLoaded = [&](const std::vector<int64_t> &ranks) {
      int64_t best = ranks.front();
      for (int64_t rank : ranks)
        if (egressBytes[rank] < egressBytes[best])
          best = rank;
      egressBytes[best] += region.volume();
      return best;
    };
    std::map<int64_t, std::vector<int64_t>> replicasByDomain;
    for (int64_t rank : delivery.replicas)
      replicasByDomain[domains.domainOf(rank)].push_back(rank);
    // Remote targets in domains with a replica: each pulls from its
    // domain's server (a replica, the first time one is needed), or, when
    // quantizing once, they are routed together per domain below.
    std::map<int64_t, std::vector<const Target *>> byDomain, servedByDomain;
    std::map<int64_t, int64_t> serverOfDomain;
    std::vector<int64_t> servedOrder;
    for (const Target *target : remote) {
      int64_t domain = domains.domainOf(target->rank);
      auto replicas = replicasByDomain.find(domain);
      if (replicas == replicasByDomain.end()) {
        byDomain[domain].push_back(target);
        continue;
      }
      if (once) {
        if (servedByDomain[domain].empty())
          servedOrder.push_back(domain);
        servedByDomain[domain].push_back(target);
        continue;
      }
      auto [server, inserted] = serverOfDomain.try_emplace(domain, -1);
      if (inserted)
        server->second = leastLoaded(replicas->second);
      addStep(schedule, domains, source(server->second),
              localBoxOf(server->second), destination(target->rank),
              target->box, target->reduction);
    }
    // Sharing the quantizing with the sources: the injector's send
    // quantizes the whole region (packing it for the network) and is
    // charged for it before the bands are shared.
    int64_t injector = -1;
    if (once && quantizeOnSources && !byDomain.empty()) {
      injector = leastLoaded(delivery.replicas);
      quantizedElements[injector] += region.volume();
    }
    for (int64_t domain : servedOrder) {
      const std::vector<const Target *> &targets = servedByDomain[domain];
      // A target holding the region quantized it locally, or the one that
      // has quantized the fewest elements pulls it; the others copy its
      // fp8 bytes. A server (a replica of the domain) is chosen only if
      // something is pulled from it.
      auto local = quantizerOfDomain.find(domain);
      const Target *quantizer =
          local != quantizerOfDomain.end() ? local->second : nullptr;
      if (!quantizer && quantizeOnSources) {
        spreadQuantizing(region, replicasByDomain[domain], targets);
        continue;
      }
      int64_t server = -1;
      auto pull = [&](const Target &target) {
        if (server < 0)
          server = leastLoaded(replicasByDomain[domain]);
        quantizedElements[target.rank] += region.volume();
        addStep(schedule, domains, source(server), localBoxOf(server),
                destination(target.rank), target.box, target.reduction);
      };
      if (!quantizer && targets.size() > 1) {
        quantizer = targets.front();
        for (const Target *target : targets)
          if (quantizedElements[target->rank] <
              quantizedElements[quantizer->rank])
            quantizer = target;
        pull(*quantizer);
      }
      for (const Target *target : targets) {
        if (target == quantizer)
          continue;
        if (quantizer)
          addStep(schedule, domains, destination(quantizer->rank),
                  quantizer->box, destination(target->rank), target->box,
                  std::nullopt);
        else
          pull(*target);
      }
    }
    if (byDomain.empty())
      continue;

    // Inject once, from the replica that has sent the least so far; the
    // domains form a ring in domain order after the injector's.
    if (injector < 0)
      injector = leastLoaded(delivery.replicas);
    const int64_t home = domains.domainOf(injector);
    std::vector<int64_t> order;
    for (const auto &entry : byDomain)
      order.push_back(entry.first);
    std::stable_partition(order.begin(), order.end(),
                          [&](int64_t d) { return d > home; });
    // Leaders: the member that has led the fewest regions (so that leaders
    // of one domain differ by at most one), then the one that has forwarded
    // the fewest bytes.
    auto leaderOf = [&](int64_t domain) {
      const std::vector<const Target *> &members = byDomain[domain];
      const Target *leader = members.front();
      for (const Target *member : members)
        if (std::make_pair(leaderLoad[member->rank], forwardBytes[member->rank]) <
            std::make_pair(leaderLoad[leader->rank], forwardBytes[leader->rank]))
          leader = member;
      return leader;
    };
    // Every leader but the last one's forwards the region to the next
    // domain: enter the ring where the busiest forwarder ends up last.
    size_t bestTurn = 0;
    int64_t bestCost = -1;
    for (size_t turn = 0; turn < order.size(); ++turn) {
      int64_t cost = 0;
      for (size_t k = 0; k + 1 < order.size(); ++k)
        cost = std::max(cost, forwardBytes[leaderOf(
                                  order[(turn + k) % order.size()])->rank]);
      if (bestCost < 0 || cost < bestCost) {
        bestCost = cost;
        bestTurn = turn;
      }
    }
    std::rotate(order.begin(), order.begin() + bestTurn, order.end());

    BufferRef previous = source(injector);
    Box previousBox = localBoxOf(injector);
    for (int64_t domain : order) {
      const std::vector<const Target *> &members = byDomain[domain];
      const Target *leader = leaderOf(domain);
      ++leaderLoad[leader->rank];
      if (domain != order.back())
        forwardBytes[leader->rank] += region.volume();

      BufferRef landing;
      Box landingBox;
      if (viaScratch) {
        landing = addScratch(schedule, leader->rank, region.sizes);
        landingBox = wholeBox(region.sizes);
        addStep(schedule, domains, previous, previousBox, landing, landingBox,
                std::nullopt);
        addStep(schedule, domains, landing, landingBox,
                destination(leader->rank), leader->box, leader->reduction);
      } else {
        landing = destination(leader->rank);
        landingBox = leader->box;
        addStep(schedule, domains, previous, previousBox, landing, landingBox,
                std::nullopt);
      }
      for (const Target *member : members)
        if (member != leader)
          addStep(schedule, domains, landing, landingBox,
                  destination(member->rank), member->box, member->reduction);
      previous = landing;
      previousBox = landingBox;
    }
  }
  for (Step &copy : bandCopies)
    schedule.steps.push_back(std::move(copy));
  return schedule;
}

} // namespace m2n
