//===- ScalePlanTest.cpp - the amax exchange on random layouts -----------===//

#include "RandomLayouts.h"

#include "m2n/Plan/ScalePlan.h"

#include <gtest/gtest.h>

#include <cmath>
#include <iostream>

using namespace m2n;

namespace {

Box globalOf(const Box &local, const Box &owner) {
  Box global = local;
  for (size_t d = 0; d < global.offsets.size(); ++d)
    global.offsets[d] += owner.offsets[d];
  return global;
}

TEST(ScalePlanTest, BlocksStraddlingSourceShardsHavePiecesOnEachRank) {
  // 4 x 6 in 2 x 4 blocks; source TP3 over columns (2 each), destination
  // TP2 over rows: block (0, 0) (cols 0-3) spans source ranks 0 and 1,
  // block (0, 1) (cols 4-5, an edge block) lies on rank 2 alone.
  Layout src{Mesh::contiguous({3}), {Placement::shard(1)}};
  Layout dst{Mesh::contiguous({2}, 3), {Placement::shard(0)}};
  std::vector<int64_t> shape{4, 6};
  ReshardPlan plan = IntersectionPlanner(src, dst, shape).plan();
  ScalePlan scales = planScales(Scaling::block(2, 4), src, dst, shape, plan);
  EXPECT_EQ(scales.scaleShape, Dims({2, 2}));
  ASSERT_EQ(scales.blockCount(), 4);
  // Block 0 = rows 0-1, cols 0-3: rank 0 (cols 0-1) and rank 1 (cols 2-3).
  std::vector<int64_t> ranks;
  for (int64_t i = scales.blockStart[0]; i < scales.blockStart[1]; ++i)
    ranks.push_back(scales.pieces[scales.piecesByBlock[i]].rank);
  EXPECT_EQ(ranks, std::vector<int64_t>({0, 1}));
  // Rank 1's columns 2-3 lie in block column 0, rank 2's 4-5 in column 1.
  EXPECT_EQ(scales.quantizedBlocks[1], std::vector<int64_t>({0, 2}));
  EXPECT_EQ(scales.quantizedBlocks[2], std::vector<int64_t>({1, 3}));
  // Destination rank 4 holds rows 2-3: block row 1.
  EXPECT_EQ(scales.heldBlocks[4].offsets, Dims({1, 0}));
  EXPECT_EQ(scales.heldBlocks[4].sizes, Dims({1, 2}));
}

TEST(ScalePlanPropertyTest, PiecesCoverEveryBlockOnceAndGiveTheReferenceScales) {
  const uint64_t seed = propertySeed();
  const int64_t cases = propertyCases(2000);
  RandomLayouts random(seed);
  int64_t straddling = 0, pieces = 0;
  for (int64_t n = 0; n < cases; ++n) {
    int64_t tensorRank = random.uniform(1, 3);
    std::vector<int64_t> shape(tensorRank);
    for (int64_t &extent : shape)
      extent = random.uniform(1, 9);
    Scaling scaling = Scaling::tensor();
    int64_t mode = random.uniform(0, 2);
    if (mode == 1 && tensorRank >= 2)
      scaling = Scaling::block(random.uniform(1, 4), random.uniform(1, 4));
    if (mode == 2) {
      scaling = Scaling::mx();
      shape.back() = 32 * random.uniform(1, 3);
    }
    Layout src = random.layout(tensorRank, /*allowPartial=*/false);
    Layout dst = random.layout(tensorRank, /*allowPartial=*/false);
    SCOPED_TRACE("M2N_PROPERTY_SEED=" + std::to_string(seed) + " case " +
                 std::to_string(n) + ": " + src.str() + " -> " + dst.str() +
                 " " + scaling.str());
    ASSERT_EQ(validateReshard(src, dst, shape, kCommSize), std::nullopt);
    Dims dims(shape.begin(), shape.end());
    ReshardPlan plan = IntersectionPlanner(src, dst, shape).plan();
    ScalePlan scales = planScales(scaling, src, dst, shape, plan);
    pieces += static_cast<int64_t>(scales.pieces.size());

    // Random data with NaNs, zero blocks and a wide range of magnitudes.
    int64_t elements = 1;
    for (int64_t extent : shape)
      elements *= extent;
    std::vector<float> data(elements);
    for (float &value : data) {
      int64_t kind = random.uniform(0, 19);
      value = kind == 0   ? NAN
              : kind < 4  ? 0.0f
                          : std::ldexp(static_cast<float>(random.uniform(-999, 999)),
                                       static_cast<int>(random.uniform(-20, 10)));
    }
    std::vector<uint8_t> quantized(elements);
    std::vector<float> reference;
    quantizeTensor(scaling, ElementType::F32, ElementType::F8E4M3FN, dims,
                   reinterpret_cast<const uint8_t *>(data.data()),
                   quantized.data(), reference);
    ASSERT_EQ(scales.blockCount(), static_cast<int64_t>(reference.size()));

    // Invariant 1: each block's pieces tile it; their max is its amax.
    Dims block = blockShape(scaling, dims);
    std::vector<int64_t> covered(scales.blockCount(), 0);
    for (int64_t b = 0; b < scales.blockCount(); ++b) {
      float amax = 0.0f;
      std::vector<int64_t> ranks;
      for (int64_t i = scales.blockStart[b]; i < scales.blockStart[b + 1]; ++i) {
        const AmaxPiece &piece = scales.pieces[scales.piecesByBlock[i]];
        ASSERT_EQ(piece.block, b);
        std::optional<int64_t> position = src.mesh.indexOf(piece.rank);
        ASSERT_TRUE(position);
        Box owner = src.localBox(shape, *position);
        Box global = globalOf(piece.box, owner);
        ASSERT_TRUE(owner.contains(global)) << global.str();
        covered[b] += global.volume();
        ranks.push_back(piece.rank);
        // The piece's elements all lie in block b.
        Box blocks = blocksTouching(scaling, dims, global);
        ASSERT_EQ(blocks.volume(), 1) << global.str();
        ASSERT_EQ(linearize(blocks.offsets, scales.scaleShape), b);
        Dims index = global.offsets;
        for (int64_t e = 0; e < global.volume(); ++e) {
          amax = std::fmax(amax, std::fabs(data[linearize(index, dims)]));
          for (size_t d = index.size(); d-- > 0;) {
            if (++index[d] < global.offsets[d] + global.sizes[d])
              break;
            index[d] = global.offsets[d];
          }
        }
      }
      std::sort(ranks.begin(), ranks.end());
      straddling += std::unique(ranks.begin(), ranks.end()) - ranks.begin() > 1;
      ASSERT_EQ(scaleFromAmax(scaling, ElementType::F8E4M3FN, amax),
                reference[b])
          << "block " << b;
    }
    // Pieces are disjoint: their volumes add up to each block's elements.
    Dims blockIndex(dims.size(), 0), zero(dims.size(), 0);
    for (int64_t b = 0; b < scales.blockCount(); ++b) {
      int64_t volume = 1;
      for (size_t d = 0; d < dims.size(); ++d)
        volume *= std::min(block[d], dims[d] - blockIndex[d] * block[d]);
      ASSERT_EQ(covered[b], volume) << "block " << b;
      for (size_t d = dims.size(); d-- > 0;) {
        if (++blockIndex[d] < scales.scaleShape[d])
          break;
        blockIndex[d] = 0;
      }
    }
    // Invariant 3: the scales each rank needs.
    for (const Transfer &transfer : plan.transfers) {
      Box global = globalOf(transfer.srcBox,
                            src.localBox(shape, *src.mesh.indexOf(transfer.srcRank)));
      const std::vector<int64_t> &needed = scales.quantizedBlocks[transfer.srcRank];
      Box blocks = blocksTouching(scaling, dims, global);
      Dims coords = blocks.offsets;
      for (int64_t i = 0; i < blocks.volume(); ++i) {
        ASSERT_TRUE(std::binary_search(needed.begin(), needed.end(),
                                       linearize(coords, scales.scaleShape)));
        for (size_t d = coords.size(); d-- > 0;) {
          if (++coords[d] < blocks.offsets[d] + blocks.sizes[d])
            break;
          coords[d] = blocks.offsets[d];
        }
      }
    }
    for (int64_t position = 0; position < dst.mesh.size(); ++position)
      ASSERT_EQ(scales.heldBlocks[dst.mesh.rankAt(position)],
                blocksTouching(scaling, dims, dst.localBox(shape, position)));
    if (HasFailure())
      return;
  }
  EXPECT_GT(straddling, cases / 10);
  std::cout << "[ property ] seed " << seed << ": " << cases << " cases, "
            << pieces << " amax pieces, " << straddling
            << " blocks on several source ranks\n";
}

} // namespace
