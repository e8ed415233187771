//===- ScalePlan.cpp - the amax exchange of a quantizing reshard ----------===//

#include "m2n/Plan/ScalePlan.h"

#include <algorithm>

namespace m2n {

Box blockElements(const Scaling &scaling, const Dims &shape,
                  const Dims &coords) {
  Dims block = blockShape(scaling, shape);
  Box region;
  region.offsets.resize(shape.size());
  region.sizes.resize(shape.size());
  for (size_t d = 0; d < shape.size(); ++d) {
    region.offsets[d] = coords[d] * block[d];
    region.sizes[d] = std::min(block[d], shape[d] - region.offsets[d]);
  }
  return region;
}

Box ScalePlan::tableBox(int64_t rank, ScaleTable table) const {
  const std::map<int64_t, Box> &boxes =
      table == ScaleTable::Quantizer ? slotBoxes : holderBoxes;
  auto it = boxes.find(rank);
  return it == boxes.end() ? Box{} : it->second;
}

namespace {

/// Replica `index` of `count`'s part of the blocks `blocks`: torch.chunk of
/// the dimension with the most blocks.
Box replicaShare(const Box &blocks, int64_t count, int64_t index) {
  Box share = blocks;
  if (count == 1 || blocks.empty())
    return share;
  size_t widest = 0;
  for (size_t d = 1; d < blocks.sizes.size(); ++d)
    if (blocks.sizes[d] > blocks.sizes[widest])
      widest = d;
  Interval part = chunkOf(blocks.sizes[widest], count, index);
  share.offsets[widest] += part.begin;
  share.sizes[widest] = part.size();
  return share;
}

/// The part of `box` outside `cut`, as disjoint boxes.
std::vector<Box> subtract(const Box &box, const Box &cut) {
  Box common = box.intersect(cut);
  if (common.empty())
    return {box};
  std::vector<Box> parts;
  Box rest = box;
  for (size_t d = 0; d < box.sizes.size(); ++d) {
    int64_t begin = rest.offsets[d], end = begin + rest.sizes[d];
    int64_t cutBegin = common.offsets[d], cutEnd = cutBegin + common.sizes[d];
    if (begin < cutBegin) {
      Box below = rest;
      below.sizes[d] = cutBegin - begin;
      parts.push_back(below);
    }
    if (cutEnd < end) {
      Box above = rest;
      above.offsets[d] = cutEnd;
      above.sizes[d] = end - cutEnd;
      parts.push_back(above);
    }
    rest.offsets[d] = cutBegin;
    rest.sizes[d] = cutEnd - cutBegin;
  }
  return parts;
}

/// The part of `box` outside every box of `cuts`, as disjoint boxes.
std::vector<Box> subtractAll(const Box &box, const std::vector<Box> &cuts) {
  std::vector<Box> parts{box};
  for (const Box &cut : cuts) {
    std::vector<Box> next;
    for (const Box &part : parts)
      for (Box &piece : subtract(part, cut))
        next.push_back(std::move(piece));
    parts = std::move(next);
  }
  return parts;
}

/// `box` moved by `by`.
Box shifted(Box box, const Dims &by) {
  for (size_t d = 0; d < box.offsets.size(); ++d)
    box.offsets[d] += by[d];
  return box;
}

/// Calls visit(blockIndex, blockCoords) for every block of `blocks` (a box
/// of the scale tensor), row-major.
template <typename Visit>
void forEachBlock(const Box &blocks, const Dims &scaleShape, Visit &&visit) {
  forEachIndex(blocks, [&](const Dims &coords) {
    visit(linearize(coords, scaleShape), coords);
  });
}

/// Calls visit(first, width) for every row of `box` (its extent along the
/// last dimension) of a row-major array of `shape`, in order: `first` is
/// the linear index of the row's first element. Hundreds of millions of
/// scale-table entries are walked this way in a whole-model refit.
template <typename Visit>
void forEachRow(const Box &box, const Dims &shape, Visit &&visit) {
  if (box.empty())
    return;
  Box rows = box;
  rows.sizes.back() = 1;
  forEachBlock(rows, shape, [&](int64_t first, const Dims &) {
    visit(first, box.sizes.back());
  });
}

/// `box` in the coordinates of `origin`'s box.
Box within(const Box &box, const Box &origin) {
  return box.relativeTo(origin.offsets);
}

} // namespace

ScalePlan planScales(const Scaling &scaling, const Layout &src,
                     const Layout &dst, const std::vector<int64_t> &shape,
                     const ReshardPlan &plan) {
  Dims dims(shape.begin(), shape.end());
  ScalePlan result;
  result.scaleShape = scaleShape(scaling, dims);

  // Source boxes and their replicas (without partial axes, positions hold
  // identical or disjoint boxes), in grid order.
  std::map<std::pair<std::vector<int64_t>, std::vector<int64_t>>,
           std::vector<int64_t>>
      replicas;
  for (int64_t position = 0; position < src.mesh.size(); ++position) {
    Box box = src.localBox(shape, position);
    replicas[{std::vector<int64_t>(box.offsets.begin(), box.offsets.end()),
              std::vector<int64_t>(box.sizes.begin(), box.sizes.end())}]
        .push_back(position);
  }
  // The distinct boxes' amax shares, by rank, for the exchange.
  struct Share {
    int64_t rank;
    Box blocks;
  };
  std::vector<Share> shares;
  deriveScaleBoxes(scaling, src, dst, shape, result);
  for (const auto &[key, positions] : replicas) {
    Box box = src.localBox(shape, positions.front());
    Box touched = blocksTouching(scaling, dims, box);
    for (size_t i = 0; i < positions.size(); ++i) {
      int64_t rank = src.mesh.rankAt(positions[i]);
      Box share = replicaShare(touched, static_cast<int64_t>(positions.size()),
                               static_cast<int64_t>(i));
      result.amaxBoxes[rank] = share;
      if (!share.empty())
        shares.push_back({rank, share});
    }
  }

  // The tables to fill: the quantizer tables of the ranks that send, the
  // holder tables of the destinations.
  std::vector<std::pair<int64_t, ScaleTable>> tables;
  for (const Transfer &transfer : plan.transfers)
    tables.push_back({transfer.srcRank, ScaleTable::Quantizer});
  std::sort(tables.begin(), tables.end());
  tables.erase(std::unique(tables.begin(), tables.end()), tables.end());
  for (const auto &[rank, blocks] : result.holderBoxes)
    if (!blocks.empty())
      tables.push_back({rank, ScaleTable::Holder});

  // For each table block, the first share to reach it copies, the later
  // ones max-reduce (distinct boxes share blocks only where a block
  // straddles them, so the reduced parts are their edge blocks).
  std::vector<AmaxTransfer> copies, reductions;
  for (const auto &[rank, table] : tables) {
    Box tableBlocks = result.tableBox(rank, table);
    std::vector<Box> written;
    // The rank's own share first: its copy is local, as a plan's own
    // contribution is.
    std::vector<const Share *> order;
    for (const Share &share : shares)
      if (share.rank == rank)
        order.push_back(&share);
    for (const Share &share : shares)
      if (share.rank != rank)
        order.push_back(&share);
    for (const Share *sharePtr : order) {
      const Share &share = *sharePtr;
      Box common = tableBlocks.intersect(share.blocks);
      if (common.empty())
        continue;
      auto add = [&](const Box &blocks, std::optional<Reduction> reduction) {
        AmaxTransfer transfer;
        transfer.table = table;
        transfer.transfer.srcRank = share.rank;
        transfer.transfer.srcBox = within(blocks, result.slotBoxes[share.rank]);
        transfer.transfer.dstRank = rank;
        transfer.transfer.dstBox = within(blocks, tableBlocks);
        transfer.transfer.reduction = reduction;
        (reduction ? reductions : copies).push_back(transfer);
      };
      for (const Box &fresh : subtractAll(common, written))
        add(fresh, std::nullopt);
      for (size_t i = 0; i < written.size(); ++i) {
        Box again = common.intersect(written[i]);
        if (again.empty())
          continue;
        std::vector<Box> earlier(written.begin(), written.begin() + i);
        for (const Box &part : subtractAll(again, earlier))
          add(part, Reduction::Max);
      }
      written.push_back(common);
    }
  }
  result.exchange = std::move(copies);
  result.exchange.insert(result.exchange.end(), reductions.begin(),
                         reductions.end());
  return result;
}

void deriveScaleBoxes(const Scaling &scaling, const Layout &src,
                      const Layout &dst, const std::vector<int64_t> &shape,
                      ScalePlan &scalePlan) {
  Dims dims(shape.begin(), shape.end());
  scalePlan.scaleShape = scaleShape(scaling, dims);
  for (int64_t position = 0; position < src.mesh.size(); ++position)
    scalePlan.slotBoxes[src.mesh.rankAt(position)] =
        blocksTouching(scaling, dims, src.localBox(shape, position));
  for (int64_t position = 0; position < dst.mesh.size(); ++position)
    scalePlan.holderBoxes[dst.mesh.rankAt(position)] =
        blocksTouching(scaling, dims, dst.localBox(shape, position));
}

std::vector<PlanIssue>
verifyScalePlan(const Scaling &scaling, const Layout &src, const Layout &dst,
                const std::vector<int64_t> &shape, const ReshardPlan &plan,
                const ScalePlan &scalePlan, size_t maxIssues) {
  std::vector<PlanIssue> issues;
  auto report = [&](int64_t transfer, std::string message) {
    if (issues.size() < maxIssues)
      issues.push_back({transfer, std::move(message)});
  };
  Dims dims(shape.begin(), shape.end());
  const Dims &grid = scalePlan.scaleShape;
  int64_t blockCount = 1;
  for (int64_t extent : grid)
    blockCount *= extent;
  // Counts per block are held below; a scale tensor beyond 2^30 blocks (4
  // GiB of f32 scales for one tensor) is no weight's.
  if (blockCount > (int64_t(1) << 30)) {
    report(-1, "the scale tensor has " + std::to_string(blockCount) +
                   " blocks, more than 2^30");
    return issues;
  }
  auto blockName = [&](int64_t block) {
    Dims coords(grid.size());
    for (size_t d = grid.size(); d-- > 0;) {
      coords[d] = block % grid[d];
      block /= grid[d];
    }
    return Box{coords, Dims(grid.size(), 1)}.str();
  };

  // Phase 1: the shares. Replicas hold the same elements: their shares
  // must not overlap; distinct boxes are disjoint, so per block the
  // elements the shares cover add up to the block's exactly once.
  MeshIndex srcIndex(src.mesh);
  std::map<std::pair<std::vector<int64_t>, std::vector<int64_t>>,
           std::vector<int64_t>>
      replicas;
  std::vector<int64_t> covered(blockCount, 0);
  std::vector<int32_t> sharesOf(blockCount, 0);
  for (const auto &[rank, share] : scalePlan.amaxBoxes) {
    std::optional<int64_t> position = srcIndex.indexOf(rank);
    if (!position) {
      report(-1, "rank " + std::to_string(rank) +
                     " computes amaxes but is not in the source mesh");
      continue;
    }
    if (share.empty())
      continue;
    auto slots = scalePlan.slotBoxes.find(rank);
    if (slots == scalePlan.slotBoxes.end() || !slots->second.contains(share) ||
        share.rank() != static_cast<int64_t>(dims.size())) {
      report(-1, "rank " + std::to_string(rank) + " computes the amaxes of " +
                     "blocks " + share.str() +
                     ", not all of which its local box touches");
      continue;
    }
    Box box = src.localBox(shape, *position);
    replicas[{std::vector<int64_t>(box.offsets.begin(), box.offsets.end()),
              std::vector<int64_t>(box.sizes.begin(), box.sizes.end())}]
        .push_back(rank);
    forEachBlock(share, grid, [&](int64_t index, const Dims &coords) {
      covered[index] +=
          box.intersect(blockElements(scaling, dims, coords)).volume();
      ++sharesOf[index];
    });
  }
  for (const auto &[key, ranks] : replicas)
    for (size_t i = 0; i < ranks.size(); ++i)
      for (size_t j = i + 1; j < ranks.size(); ++j) {
        Box common = scalePlan.amaxBoxes.at(ranks[i]).intersect(
            scalePlan.amaxBoxes.at(ranks[j]));
        if (!common.empty())
          report(-1, "ranks " + std::to_string(ranks[i]) + " and " +
                         std::to_string(ranks[j]) +
                         " hold the same elements and both compute the "
                         "amaxes of blocks " +
                         common.str());
      }
  Box everything{Dims(grid.size(), 0), grid};
  forEachBlock(everything, grid, [&](int64_t index, const Dims &coords) {
    int64_t elements = blockElements(scaling, dims, coords).volume();
    if (covered[index] != elements)
      report(-1, "the amax shares cover " + std::to_string(covered[index]) +
                     " of the " + std::to_string(elements) +
                     " elements of block " + blockName(index));
  });
  if (!issues.empty())
    return issues;

  // Phase 2: the exchange. Each transfer on its own first: it reads slots
  // its rank computes and writes the same blocks inside an existing table.
  std::vector<size_t> valid;
  for (size_t i = 0; i < scalePlan.exchange.size(); ++i) {
    const AmaxTransfer &exchange = scalePlan.exchange[i];
    const Transfer &t = exchange.transfer;
    int64_t index = static_cast<int64_t>(i);
    auto share = scalePlan.amaxBoxes.find(t.srcRank);
    auto slots = scalePlan.slotBoxes.find(t.srcRank);
    if (share == scalePlan.amaxBoxes.end() ||
        slots == scalePlan.slotBoxes.end()) {
      report(index, "reads the slots of rank " + std::to_string(t.srcRank) +
                        ", which computes no amaxes");
      continue;
    }
    Box table = scalePlan.tableBox(t.dstRank, exchange.table);
    if (t.srcBox.rank() != static_cast<int64_t>(grid.size()) ||
        !(t.srcBox.sizes == t.dstBox.sizes) || t.srcBox.empty()) {
      report(index, "moves boxes of different or wrong sizes");
      continue;
    }
    Box blocks = shifted(t.srcBox, slots->second.offsets);
    if (!share->second.contains(blocks)) {
      report(index, "reads slots " + blocks.str() + " of rank " +
                        std::to_string(t.srcRank) +
                        ", which computes only " + share->second.str());
      continue;
    }
    bool hasTable = table.rank() == static_cast<int64_t>(grid.size());
    Box target = hasTable ? shifted(t.dstBox, table.offsets) : t.dstBox;
    if (!hasTable || !table.contains(target) || !(target == blocks)) {
      report(index, "writes blocks " + target.str() + " of the " +
                        (exchange.table == ScaleTable::Quantizer
                             ? "quantizer"
                             : "holder") +
                        " table of rank " + std::to_string(t.dstRank) +
                        (!hasTable ? ", which has none"
                                   : " from blocks " + blocks.str() +
                                         " (table " + table.str() + ")"));
      continue;
    }
    if (t.reduction && *t.reduction != Reduction::Max) {
      report(index, "reduces amaxes with something else than max");
      continue;
    }
    valid.push_back(i);
  }
  // Then table by table (one table's counts in memory at a time): from each
  // share a block at most once, so that counting contributions counts
  // shares; each entry one copy and as many contributions as its block has
  // shares (each of which covers the block: its reads lie in its share).
  auto keyOf = [&](size_t i) {
    const AmaxTransfer &e = scalePlan.exchange[i];
    return std::make_tuple(e.transfer.dstRank, e.table, e.transfer.srcRank);
  };
  std::stable_sort(valid.begin(), valid.end(),
                   [&](size_t a, size_t b) { return keyOf(a) < keyOf(b); });
  std::vector<std::pair<int64_t, ScaleTable>> needed;
  for (const Transfer &transfer : plan.transfers)
    needed.push_back({transfer.srcRank, ScaleTable::Quantizer});
  for (const auto &[rank, box] : scalePlan.holderBoxes)
    if (!box.empty())
      needed.push_back({rank, ScaleTable::Holder});
  std::sort(needed.begin(), needed.end());
  needed.erase(std::unique(needed.begin(), needed.end()), needed.end());
  size_t next = 0;
  for (const auto &[rank, kind] : needed) {
    Box table = scalePlan.tableBox(rank, kind);
    std::vector<int32_t> heard(table.volume(), 0), copied(table.volume(), 0);
    for (; next < valid.size(); ++next) {
      const AmaxTransfer &e = scalePlan.exchange[valid[next]];
      auto key = std::make_pair(e.transfer.dstRank, e.table);
      if (key > std::make_pair(rank, kind))
        break;
      if (key < std::make_pair(rank, kind))
        continue; // A table nobody needs: harmless.
      // The same share twice into this table.
      for (size_t before = next; before-- > 0;) {
        const AmaxTransfer &other = scalePlan.exchange[valid[before]];
        if (keyOf(valid[before]) != keyOf(valid[next]))
          break;
        Box twice = other.transfer.dstBox.intersect(e.transfer.dstBox);
        if (!twice.empty())
          report(static_cast<int64_t>(valid[next]),
                 "brings blocks " + shifted(twice, table.offsets).str() +
                     " of rank " + std::to_string(e.transfer.srcRank) +
                     "'s share into this table a second time");
      }
      forEachRow(e.transfer.dstBox, table.sizes, [&](int64_t first,
                                                      int64_t width) {
        for (int64_t at = first; at < first + width; ++at) {
          ++heard[at];
          copied[at] += !e.transfer.reduction;
        }
      });
    }
    std::string name = std::string(kind == ScaleTable::Quantizer
                                       ? "the quantizer"
                                       : "the holder") +
                       " table of rank " + std::to_string(rank);
    int64_t at = 0; // Row-major over the table, as its rows are walked.
    forEachRow(table, grid, [&](int64_t first, int64_t width) {
      for (int64_t index = first; index < first + width; ++index, ++at)
        if (copied[at] != 1 || heard[at] != sharesOf[index])
          report(-1, name + " gets block " + blockName(index) + " from " +
                         std::to_string(heard[at]) + " of its " +
                         std::to_string(sharesOf[index]) + " shares with " +
                         std::to_string(copied[at]) +
                         " copies (expected every share once, one copy)");
    });
  }
  return issues;
}

} // namespace m2n
