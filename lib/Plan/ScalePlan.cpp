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
  for (const auto &[key, positions] : replicas) {
    Box box = src.localBox(shape, positions.front());
    Box touched = blocksTouching(scaling, dims, box);
    for (size_t i = 0; i < positions.size(); ++i) {
      int64_t rank = src.mesh.rankAt(positions[i]);
      Box share = replicaShare(touched, static_cast<int64_t>(positions.size()),
                               static_cast<int64_t>(i));
      result.slotBoxes[rank] = touched;
      result.amaxBoxes[rank] = share;
      if (!share.empty())
        shares.push_back({rank, share});
    }
  }
  for (int64_t position = 0; position < dst.mesh.size(); ++position)
    result.holderBoxes[dst.mesh.rankAt(position)] =
        blocksTouching(scaling, dims, dst.localBox(shape, position));

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

} // namespace m2n
