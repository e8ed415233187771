//===- Planner.cpp - layout-derived reshard plans ---------------------------===//

#include "m2n/Plan/Planner.h"

#include <algorithm>
#include <cassert>
#include <map>
#include <optional>
#include <sstream>
#include <unordered_map>

namespace m2n {

std::string Transfer::str() const {
  std::ostringstream os;
  os << srcRank << ' ' << srcBox.str() << " -> " << dstRank << ' '
     << dstBox.str() << ' ' << (reduction ? toString(*reduction) : "copy");
  return os.str();
}

int64_t ReshardPlan::remoteElements() const {
  int64_t total = 0;
  for (const Transfer &transfer : transfers)
    if (!transfer.isLocal())
      total += transfer.srcBox.volume();
  return total;
}

IntersectionPlanner::IntersectionPlanner(const Layout &src, const Layout &dst,
                                         std::vector<int64_t> shape)
    : src(src), dst(dst), shape(std::move(shape)) {}

namespace {

/// The source ranks that hold the same contribution to the same box.
struct SourceGroup {
  Box box;
  int64_t contributor = 0;
  std::vector<int64_t> replicas; // Communicator ranks, grid order.
};

/// Finds the source groups whose boxes overlap a destination box. The
/// non-empty source intervals of one tensor dimension partition it (every
/// rank applies the same chunking), so each dimension is a sorted list of
/// disjoint intervals and the groups form a dense grid over them.
class SourceIndex {
public:
  SourceIndex(const std::vector<SourceGroup> &groups, int64_t numContributors,
              int64_t rank)
      : numContributors(numContributors), intervals(rank), strides(rank) {
    for (const SourceGroup &group : groups)
      for (int64_t d = 0; d < rank; ++d)
        intervals[d].push_back(
            {group.box.offsets[d], group.box.offsets[d] + group.box.sizes[d]});
    int64_t cells = 1;
    for (int64_t d = rank - 1; d >= 0; --d) {
      std::vector<Interval> &list = intervals[d];
      std::sort(list.begin(), list.end(), [](Interval a, Interval b) {
        return a.begin < b.begin || (a.begin == b.begin && a.end < b.end);
      });
      list.erase(std::unique(list.begin(), list.end(),
                             [](Interval a, Interval b) {
                               return a.begin == b.begin && a.end == b.end;
                             }),
                 list.end());
      strides[d] = cells;
      cells *= static_cast<int64_t>(list.size());
    }
    table.assign(cells * numContributors, -1);
    for (size_t id = 0; id < groups.size(); ++id)
      table[cellOf(groups[id].box) * numContributors +
            groups[id].contributor] = static_cast<int64_t>(id);
  }

  /// Calls `fn(groupId)` for every group of `contributor` overlapping `box`.
  template <typename Fn>
  void forEachOverlap(const Box &box, int64_t contributor, Fn fn) const {
    int64_t rank = static_cast<int64_t>(intervals.size());
    std::vector<int64_t> first(rank), last(rank);
    for (int64_t d = 0; d < rank; ++d) {
      const std::vector<Interval> &list = intervals[d];
      int64_t begin = box.offsets[d], end = begin + box.sizes[d];
      auto lo = std::partition_point(list.begin(), list.end(),
                                     [&](Interval i) { return i.end <= begin; });
      auto hi = std::partition_point(lo, list.end(),
                                     [&](Interval i) { return i.begin < end; });
      if (lo == hi)
        return;
      first[d] = lo - list.begin();
      last[d] = hi - list.begin();
    }
    std::vector<int64_t> index = first;
    while (true) {
      int64_t cell = 0;
      for (int64_t d = 0; d < rank; ++d)
        cell += index[d] * strides[d];
      int64_t id = table[cell * numContributors + contributor];
      if (id >= 0)
        fn(id);
      int64_t d = rank - 1;
      while (d >= 0 && ++index[d] == last[d]) {
        index[d] = first[d];
        --d;
      }
      if (d < 0)
        return;
    }
  }

private:
  int64_t cellOf(const Box &box) const {
    int64_t cell = 0;
    for (size_t d = 0; d < intervals.size(); ++d) {
      const std::vector<Interval> &list = intervals[d];
      auto it = std::partition_point(list.begin(), list.end(), [&](Interval i) {
        return i.begin < box.offsets[d] ||
               (i.begin == box.offsets[d] &&
                i.end < box.offsets[d] + box.sizes[d]);
      });
      cell += (it - list.begin()) * strides[d];
    }
    return cell;
  }

  int64_t numContributors;
  std::vector<std::vector<Interval>> intervals;
  std::vector<int64_t> strides;
  std::vector<int64_t> table; // (cell, contributor) -> group id or -1.
};

/// One destination rank's need for the intersection of its box with one
/// source group's box.
struct Need {
  int64_t group;
  int64_t dstIndex;
  bool isCopy;
  int64_t owner = -1;
};

} // namespace

ReshardPlan IntersectionPlanner::plan() const {
  const int64_t rank = static_cast<int64_t>(shape.size());
  const int64_t numContributors = src.numContributors();

  // Source groups, keyed by (contributor, box). Grid order keeps the replica
  // lists, and therefore the plan, deterministic.
  std::vector<SourceGroup> groups;
  std::map<std::pair<int64_t, std::vector<int64_t>>, int64_t> groupOfKey;
  for (int64_t i = 0; i < src.mesh.size(); ++i) {
    Box box = src.localBox(shape, i);
    if (box.empty())
      continue;
    int64_t contributor = src.contributorIndex(i);
    std::vector<int64_t> key = box.offsets.vec();
    key.insert(key.end(), box.sizes.begin(), box.sizes.end());
    auto [it, inserted] = groupOfKey.try_emplace(
        {contributor, std::move(key)}, static_cast<int64_t>(groups.size()));
    if (inserted)
      groups.push_back({box, contributor, {}});
    groups[it->second].replicas.push_back(src.mesh.rankAt(i));
  }
  SourceIndex index(groups, numContributors, rank);

  // Every destination's needs, in destination order, then contributor order.
  std::vector<Need> needs;
  std::vector<Box> dstBoxes(dst.mesh.size());
  // Source positions by rank: one look-up per destination (a scan of the
  // source mesh each made planning quadratic in ranks).
  std::unordered_map<int64_t, int64_t> srcIndexOf;
  srcIndexOf.reserve(src.mesh.size());
  for (int64_t i = 0; i < src.mesh.size(); ++i)
    srcIndexOf.emplace(src.mesh.rankAt(i), i);
  for (int64_t j = 0; j < dst.mesh.size(); ++j) {
    dstBoxes[j] = dst.localBox(shape, j);
    if (dstBoxes[j].empty())
      continue;
    // The contributors this destination needs, the copied one first: its
    // own contribution when it is a source contributor (a local copy that
    // waits for nobody), otherwise the lowest.
    std::vector<int64_t> contributors = contributorsOf(src, dst, j);
    if (auto own = srcIndexOf.find(dst.mesh.rankAt(j));
        own != srcIndexOf.end()) {
      auto it = std::find(contributors.begin(), contributors.end(),
                          src.contributorIndex(own->second));
      if (it != contributors.end())
        std::rotate(contributors.begin(), it, it + 1);
    }
    for (int64_t c : contributors)
      index.forEachOverlap(dstBoxes[j], c, [&](int64_t group) {
        needs.push_back({group, j, c == contributors.front()});
      });
  }

  // Owners: local copies first, then the least-loaded replica of the group,
  // ties broken by the replica's overall load, then grid order.
  std::vector<std::vector<int64_t>> needsOfGroup(groups.size());
  for (size_t n = 0; n < needs.size(); ++n)
    needsOfGroup[needs[n].group].push_back(static_cast<int64_t>(n));
  std::map<int64_t, int64_t> overallLoad; // Transfers served per source rank.
  for (size_t g = 0; g < groups.size(); ++g) {
    const std::vector<int64_t> &replicas = groups[g].replicas;
    std::vector<int64_t> groupLoad(replicas.size(), 0);
    for (int64_t n : needsOfGroup[g]) {
      int64_t dstRank = dst.mesh.rankAt(needs[n].dstIndex);
      auto it = std::find(replicas.begin(), replicas.end(), dstRank);
      if (it == replicas.end())
        continue;
      needs[n].owner = dstRank;
      ++groupLoad[it - replicas.begin()];
      ++overallLoad[dstRank];
    }
    for (int64_t n : needsOfGroup[g]) {
      if (needs[n].owner >= 0)
        continue;
      size_t best = 0;
      for (size_t r = 1; r < replicas.size(); ++r) {
        auto key = [&](size_t i) {
          return std::make_pair(groupLoad[i], overallLoad[replicas[i]]);
        };
        if (key(r) < key(best))
          best = r;
      }
      needs[n].owner = replicas[best];
      ++groupLoad[best];
      ++overallLoad[replicas[best]];
    }
  }

  ReshardPlan plan;
  plan.transfers.reserve(needs.size());
  std::optional<Reduction> reduction = src.reduction();
  for (const Need &need : needs) {
    const SourceGroup &group = groups[need.group];
    const Box &dstBox = dstBoxes[need.dstIndex];
    Box region = group.box.intersect(dstBox);
    Transfer transfer;
    transfer.srcRank = need.owner;
    transfer.srcBox = region.relativeTo(group.box.offsets);
    transfer.dstRank = dst.mesh.rankAt(need.dstIndex);
    transfer.dstBox = region.relativeTo(dstBox.offsets);
    if (!need.isCopy)
      transfer.reduction = reduction;
    plan.transfers.push_back(std::move(transfer));
  }
  return plan;
}

//===----------------------------------------------------------------------===//
// Verification
//===----------------------------------------------------------------------===//

namespace {
/// Index of every rank in a mesh (-1 when absent).
std::map<int64_t, int64_t> indexByRank(const Mesh &mesh) {
  std::map<int64_t, int64_t> result;
  for (int64_t i = 0; i < mesh.size(); ++i)
    result[mesh.rankAt(i)] = i;
  return result;
}

std::string ranksCovered(const Box &box) { return box.str(); }
} // namespace

std::vector<PlanIssue> verifyPlan(const Layout &src, const Layout &dst,
                                  const std::vector<int64_t> &shape,
                                  const ReshardPlan &plan, size_t maxIssues) {
  std::vector<PlanIssue> issues;
  auto report = [&](int64_t transfer, std::string message) {
    if (issues.size() < maxIssues)
      issues.push_back({transfer, std::move(message)});
  };
  const int64_t rank = static_cast<int64_t>(shape.size());
  std::map<int64_t, int64_t> srcIndex = indexByRank(src.mesh);
  std::map<int64_t, int64_t> dstIndex = indexByRank(dst.mesh);
  std::optional<Reduction> reduction = src.reduction();

  // Each rank's local box once (a plan has many transfers per rank).
  std::vector<std::optional<Box>> srcLocals(src.mesh.size()),
      dstLocals(dst.mesh.size());
  auto localBoxOf = [&](std::vector<std::optional<Box>> &locals,
                        const Layout &layout, int64_t index) -> const Box & {
    std::optional<Box> &local = locals[index];
    if (!local)
      local = layout.localBox(shape, index);
    return *local;
  };

  // Per-transfer checks; remember the valid ones per destination.
  std::vector<std::vector<int64_t>> transfersOfDst(dst.mesh.size());
  for (size_t t = 0; t < plan.transfers.size(); ++t) {
    const Transfer &transfer = plan.transfers[t];
    int64_t id = static_cast<int64_t>(t);
    auto srcIt = srcIndex.find(transfer.srcRank);
    auto dstIt = dstIndex.find(transfer.dstRank);
    if (srcIt == srcIndex.end()) {
      report(id, "source rank " + std::to_string(transfer.srcRank) +
                     " is not in the source mesh");
      continue;
    }
    if (dstIt == dstIndex.end()) {
      report(id, "destination rank " + std::to_string(transfer.dstRank) +
                     " is not in the destination mesh");
      continue;
    }
    if (transfer.srcBox.rank() != rank || transfer.dstBox.rank() != rank) {
      report(id, "box rank differs from the tensor rank " +
                     std::to_string(rank));
      continue;
    }
    if (transfer.srcBox.sizes != transfer.dstBox.sizes) {
      report(id, "source box " + transfer.srcBox.str() +
                     " and destination box " + transfer.dstBox.str() +
                     " differ in size");
      continue;
    }
    if (transfer.srcBox.empty()) {
      report(id, "moves an empty box " + transfer.srcBox.str());
      continue;
    }
    const Box &srcLocal = localBoxOf(srcLocals, src, srcIt->second);
    const Box &dstLocal = localBoxOf(dstLocals, dst, dstIt->second);
    Box srcBounds{std::vector<int64_t>(rank, 0), srcLocal.sizes};
    Box dstBounds{std::vector<int64_t>(rank, 0), dstLocal.sizes};
    if (!srcBounds.contains(transfer.srcBox)) {
      report(id, "source box " + transfer.srcBox.str() +
                     " is outside the local buffer " + srcBounds.str() +
                     " of rank " + std::to_string(transfer.srcRank));
      continue;
    }
    if (!dstBounds.contains(transfer.dstBox)) {
      report(id, "destination box " + transfer.dstBox.str() +
                     " is outside the local buffer " + dstBounds.str() +
                     " of rank " + std::to_string(transfer.dstRank));
      continue;
    }
    bool sameElements = true;
    for (int64_t d = 0; d < rank; ++d)
      sameElements &= srcLocal.offsets[d] + transfer.srcBox.offsets[d] ==
                      dstLocal.offsets[d] + transfer.dstBox.offsets[d];
    if (!sameElements) {
      Box srcGlobal = transfer.srcBox.relativeTo(std::vector<int64_t>(rank, 0));
      for (int64_t d = 0; d < rank; ++d)
        srcGlobal.offsets[d] += srcLocal.offsets[d];
      Box dstGlobal = transfer.dstBox;
      for (int64_t d = 0; d < rank; ++d)
        dstGlobal.offsets[d] += dstLocal.offsets[d];
      report(id, "moves global elements " + srcGlobal.str() + " into global "
                     "elements " + dstGlobal.str());
      continue;
    }
    if (transfer.reduction && transfer.reduction != reduction) {
      report(id, std::string("reduces with '") +
                     toString(*transfer.reduction) +
                     "' but the source layout " +
                     (reduction ? std::string("reduces with '") +
                                      toString(*reduction) + "'"
                                : std::string("has no partial placement")));
      continue;
    }
    const int64_t srcContributor = src.contributorIndex(srcIt->second);
    if (keptContributor(src, dst, srcContributor) !=
        dst.contributorIndex(dstIt->second)) {
      report(id, "moves contributor " + std::to_string(srcContributor) +
                     " into destination contributor " +
                     std::to_string(dst.contributorIndex(dstIt->second)));
      continue;
    }
    transfersOfDst[dstIt->second].push_back(id);
  }
  if (!issues.empty())
    return issues;

  // Coverage: compress each destination's transfer boundaries into a grid of
  // cells, and count per cell the copies and the contributors received.
  const int64_t numContributors = src.numContributors();
  for (int64_t j = 0; j < dst.mesh.size(); ++j) {
    Box local = dst.localBox(shape, j);
    if (local.empty())
      continue;
    const int64_t dstRank = dst.mesh.rankAt(j);
    const std::vector<int64_t> &incoming = transfersOfDst[j];
    std::vector<std::vector<int64_t>> cuts(rank);
    for (int64_t d = 0; d < rank; ++d) {
      cuts[d] = {0, local.sizes[d]};
      for (int64_t t : incoming) {
        const Box &box = plan.transfers[t].dstBox;
        cuts[d].push_back(box.offsets[d]);
        cuts[d].push_back(box.offsets[d] + box.sizes[d]);
      }
      std::sort(cuts[d].begin(), cuts[d].end());
      cuts[d].erase(std::unique(cuts[d].begin(), cuts[d].end()),
                    cuts[d].end());
    }
    std::vector<int64_t> gridShape(rank);
    int64_t cells = 1;
    for (int64_t d = 0; d < rank; ++d) {
      gridShape[d] = static_cast<int64_t>(cuts[d].size()) - 1;
      cells *= gridShape[d];
    }
    // received[cell * K + contributor], copies[cell].
    std::vector<int32_t> received(cells * numContributors, 0);
    std::vector<int32_t> copies(cells, 0);
    for (int64_t t : incoming) {
      const Transfer &transfer = plan.transfers[t];
      int64_t contributor =
          src.contributorIndex(srcIndex.find(transfer.srcRank)->second);
      std::vector<int64_t> first(rank), last(rank);
      for (int64_t d = 0; d < rank; ++d) {
        const std::vector<int64_t> &c = cuts[d];
        first[d] = std::lower_bound(c.begin(), c.end(),
                                    transfer.dstBox.offsets[d]) -
                   c.begin();
        last[d] = std::lower_bound(c.begin(), c.end(),
                                   transfer.dstBox.offsets[d] +
                                       transfer.dstBox.sizes[d]) -
                  c.begin();
      }
      std::vector<int64_t> cell = first;
      while (true) {
        int64_t linear = linearize(cell, gridShape);
        ++received[linear * numContributors + contributor];
        copies[linear] += transfer.reduction ? 0 : 1;
        int64_t d = rank - 1;
        while (d >= 0 && ++cell[d] == last[d]) {
          cell[d] = first[d];
          --d;
        }
        if (d < 0)
          break;
      }
    }
    const int64_t ownContributor = dst.contributorIndex(j);
    std::vector<int64_t> cell(rank, 0);
    for (int64_t linear = 0; linear < cells; ++linear) {
      int64_t rest = linear;
      for (int64_t d = rank - 1; d >= 0; --d) {
        cell[d] = rest % gridShape[d];
        rest /= gridShape[d];
      }
      // Named only when wrong: the cells of a refit's plan number millions.
      auto prefix = [&] {
        Box where{std::vector<int64_t>(rank), std::vector<int64_t>(rank)};
        for (int64_t d = 0; d < rank; ++d) {
          where.offsets[d] = cuts[d][cell[d]];
          where.sizes[d] = cuts[d][cell[d] + 1] - cuts[d][cell[d]];
        }
        return "destination rank " + std::to_string(dstRank) +
               ": local elements " + ranksCovered(where);
      };
      if (copies[linear] != 1) {
        report(-1, prefix() + " receive " + std::to_string(copies[linear]) +
                       " copies, expected exactly 1");
        continue;
      }
      for (int64_t c = 0; c < numContributors; ++c) {
        int32_t expected =
            keptContributor(src, dst, c) == ownContributor ? 1 : 0;
        int32_t got = received[linear * numContributors + c];
        if (got != expected) {
          report(-1, prefix() + " receive contributor " + std::to_string(c) +
                         " " + std::to_string(got) + " times, expected " +
                         std::to_string(expected));
          break;
        }
      }
    }
  }
  return issues;
}

} // namespace m2n
