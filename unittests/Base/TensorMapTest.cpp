//===- TensorMapTest.cpp - tensor maps as the TMA unit takes them ---------===//

#include "m2n/Artifact/TensorMap.h"

#include <gtest/gtest.h>

using namespace m2n;

namespace {

TensorMapSpec spec(Dims extents, Dims box) {
  return {BufferRef{BufferKind::Source, 0, -1, 0}, std::move(extents),
          std::move(box)};
}

/// The message of a refused spec ("" when it is taken).
std::string refusal(const TensorMapSpec &map, int64_t elementBytes) {
  TensorMapGeometry geometry;
  return tensorMapGeometry(map, elementBytes, geometry).value_or("");
}

TEST(TensorMapTest, InnermostFirstWithByteStrides) {
  // A bf16 buffer of 3 x 40 x 64 with a 1 x 8 x 32 tile.
  TensorMapGeometry g;
  ASSERT_EQ(tensorMapGeometry(spec({3, 40, 64}, {1, 8, 32}), 2, g),
            std::nullopt);
  EXPECT_EQ(g.rank, 3);
  EXPECT_EQ(g.dims[0], 64u);
  EXPECT_EQ(g.dims[1], 40u);
  EXPECT_EQ(g.dims[2], 3u);
  EXPECT_EQ(g.strides[0], 128u);       // A row of 64 bf16.
  EXPECT_EQ(g.strides[1], 128u * 40u); // A plane of 40 rows.
  EXPECT_EQ(g.box[0], 32u);
  EXPECT_EQ(g.box[1], 8u);
  EXPECT_EQ(g.box[2], 1u);
}

TEST(TensorMapTest, OneDimensionHasNoStride) {
  TensorMapGeometry g;
  ASSERT_EQ(tensorMapGeometry(spec({1000}, {256}), 4, g), std::nullopt);
  EXPECT_EQ(g.rank, 1);
  EXPECT_EQ(g.dims[0], 1000u);
  EXPECT_EQ(g.box[0], 256u);
}

TEST(TensorMapTest, LimitsAreNamed) {
  EXPECT_EQ(refusal(spec({}, {}), 4), "has 0 dimensions (1 to 5)");
  EXPECT_EQ(refusal(spec({2, 2, 2, 2, 2, 16}, {1, 1, 1, 1, 1, 16}), 4),
            "has 6 dimensions (1 to 5)");
  EXPECT_EQ(refusal(spec({4, 64}, {4}), 4),
            "has a box of 1 dimensions over 2");
  EXPECT_EQ(refusal(spec({4, 1024}, {4, 512}), 4),
            "dimension 1 has a box of 512 elements (1 to 256, within 1024)");
  EXPECT_EQ(refusal(spec({4, 64}, {8, 64}), 4),
            "dimension 0 has a box of 8 elements (1 to 256, within 4)");
  EXPECT_EQ(refusal(spec({4, 64}, {0, 64}), 4),
            "dimension 0 has a box of 0 elements (1 to 256, within 4)");
  // Rows of 6 f32 (24 bytes): the next dimension's stride is not a
  // multiple of 16.
  EXPECT_EQ(refusal(spec({4, 6}, {4, 4}), 4),
            "dimension 0 has a stride of 24 bytes (a multiple of 16 below "
            "2^40)");
  EXPECT_EQ(refusal(spec({4, 64}, {4, 2}), 4),
            "has box rows of 8 bytes (a multiple of 16)");
  EXPECT_EQ(refusal(spec({(int64_t(1) << 32) + 1}, {16}), 1),
            "dimension 0 has 4294967297 elements (1 to 2^32)");
  EXPECT_EQ(refusal(spec({2, 1 << 20, 1 << 20}, {1, 1, 16}), 4),
            "dimension 0 has a stride of 2^40 bytes or more");
  EXPECT_EQ(refusal(spec({4, 64}, {4, 64}), 16),
            "has elements of 16 bytes");
}

} // namespace
