//===- ScalePlan.cpp - the amax exchange of a quantizing reshard ----------===//

#include "m2n/Plan/ScalePlan.h"

#include <algorithm>

namespace m2n {

namespace {

/// Calls visit(blockIndex, blockCoords) for every block of `blocks` (a box
/// of the scale tensor), row-major.
template <typename Visit>
void forEachBlock(const Box &blocks, const Dims &scaleShape, Visit &&visit) {
  if (blocks.empty())
    return;
  Dims coords = blocks.offsets;
  while (true) {
    visit(linearize(coords, scaleShape), coords);
    size_t d = coords.size();
    while (d-- > 0) {
      if (++coords[d] < blocks.offsets[d] + blocks.sizes[d])
        break;
      coords[d] = blocks.offsets[d];
    }
    if (d == static_cast<size_t>(-1))
      return;
  }
}

/// The elements of block `coords` (cut by the tensor's end).
Box blockRegion(const Dims &coords, const Dims &block, const Dims &shape) {
  Box region;
  region.offsets.resize(shape.size());
  region.sizes.resize(shape.size());
  for (size_t d = 0; d < shape.size(); ++d) {
    region.offsets[d] = coords[d] * block[d];
    region.sizes[d] = std::min(block[d], shape[d] - region.offsets[d]);
  }
  return region;
}

} // namespace

ScalePlan planScales(const Scaling &scaling, const Layout &src,
                     const Layout &dst, const std::vector<int64_t> &shape,
                     const ReshardPlan &plan) {
  Dims dims(shape.begin(), shape.end());
  Dims block = blockShape(scaling, dims);
  ScalePlan result;
  result.scaleShape = scaleShape(scaling, dims);
  int64_t blockCount = 1;
  for (int64_t extent : result.scaleShape)
    blockCount *= extent;

  // Source boxes and their replicas (without partial axes, positions hold
  // identical or disjoint boxes), in grid order.
  std::map<std::pair<std::vector<int64_t>, std::vector<int64_t>>,
           std::vector<int64_t>>
      replicas;
  std::vector<Box> srcBoxes(src.mesh.size());
  for (int64_t position = 0; position < src.mesh.size(); ++position) {
    srcBoxes[position] = src.localBox(shape, position);
    const Box &box = srcBoxes[position];
    replicas[{std::vector<int64_t>(box.offsets.begin(), box.offsets.end()),
              std::vector<int64_t>(box.sizes.begin(), box.sizes.end())}]
        .push_back(position);
  }
  // Pieces: each block's part of each distinct box, computed by one replica.
  std::map<int64_t, std::vector<AmaxPiece>> byRank;
  for (const auto &[key, positions] : replicas) {
    const Box &box = srcBoxes[positions.front()];
    forEachBlock(blocksTouching(scaling, dims, box), result.scaleShape,
                 [&](int64_t index, const Dims &coords) {
                   int64_t position =
                       positions[index % static_cast<int64_t>(positions.size())];
                   int64_t rank = src.mesh.rankAt(position);
                   Box region =
                       box.intersect(blockRegion(coords, block, dims));
                   std::vector<AmaxPiece> &pieces = byRank[rank];
                   pieces.push_back({rank, region.relativeTo(box.offsets),
                                     index,
                                     static_cast<int64_t>(pieces.size())});
                 });
  }
  for (auto &[rank, pieces] : byRank)
    result.pieces.insert(result.pieces.end(), pieces.begin(), pieces.end());

  // Blocks to pieces, as offsets into one array (counting sort by block).
  result.blockStart.assign(blockCount + 1, 0);
  for (const AmaxPiece &piece : result.pieces)
    ++result.blockStart[piece.block + 1];
  for (int64_t b = 0; b < blockCount; ++b)
    result.blockStart[b + 1] += result.blockStart[b];
  result.piecesByBlock.resize(result.pieces.size());
  std::vector<int64_t> next(result.blockStart.begin(),
                            result.blockStart.end() - 1);
  for (size_t i = 0; i < result.pieces.size(); ++i)
    result.piecesByBlock[next[result.pieces[i].block]++] =
        static_cast<int64_t>(i);

  // Who needs which scale: the sources of the transfers, the destinations.
  MeshIndex srcIndex(src.mesh);
  for (const Transfer &transfer : plan.transfers) {
    std::optional<int64_t> position = srcIndex.indexOf(transfer.srcRank);
    if (!position)
      continue;
    Box global = transfer.srcBox;
    for (size_t d = 0; d < global.offsets.size(); ++d)
      global.offsets[d] += srcBoxes[*position].offsets[d];
    std::vector<int64_t> &blocks = result.quantizedBlocks[transfer.srcRank];
    forEachBlock(blocksTouching(scaling, dims, global), result.scaleShape,
                 [&](int64_t index, const Dims &) { blocks.push_back(index); });
  }
  for (auto &[rank, blocks] : result.quantizedBlocks) {
    std::sort(blocks.begin(), blocks.end());
    blocks.erase(std::unique(blocks.begin(), blocks.end()), blocks.end());
  }
  for (int64_t position = 0; position < dst.mesh.size(); ++position)
    result.heldBlocks[dst.mesh.rankAt(position)] =
        blocksTouching(scaling, dims, dst.localBox(shape, position));
  return result;
}

} // namespace m2n
