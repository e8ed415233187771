//===- LayoutTest.cpp - DTensor layout math ---------------------------------===//

#include "m2n/Base/Layout.h"

#include <gtest/gtest.h>

using namespace m2n;

namespace {

// torch.chunk(torch.arange(n), k) sizes, padded with empty chunks as DTensor
// does: n=5, k=4 -> [2, 2, 1, 0]; n=10, k=4 -> [3, 3, 3, 1]; n=2, k=4 ->
// [1, 1, 0, 0].
TEST(ChunkTest, MatchesTorchChunk) {
  auto sizes = [](int64_t n, int64_t k) {
    std::vector<int64_t> result;
    for (int64_t i = 0; i < k; ++i)
      result.push_back(chunkOf(n, k, i).size());
    return result;
  };
  EXPECT_EQ(sizes(5, 4), (std::vector<int64_t>{2, 2, 1, 0}));
  EXPECT_EQ(sizes(10, 4), (std::vector<int64_t>{3, 3, 3, 1}));
  EXPECT_EQ(sizes(2, 4), (std::vector<int64_t>{1, 1, 0, 0}));
  EXPECT_EQ(sizes(0, 3), (std::vector<int64_t>{0, 0, 0}));
  EXPECT_EQ(sizes(8, 1), (std::vector<int64_t>{8}));
  EXPECT_EQ(chunkOf(10, 4, 3).begin, 9);
  EXPECT_EQ(chunkOf(5, 4, 3).begin, 5);
}

// MeshIndex answers as Mesh::indexOf does, for contiguous, strided and
// permuted meshes, in constant time (the router asks once per transfer).
TEST(MeshIndexTest, AgreesWithIndexOf) {
  std::vector<int64_t> strided, permuted;
  for (int64_t i = 0; i < 1000; ++i) {
    strided.push_back(2 * i + 1);
    permuted.push_back((i * 7) % 1000 + 5);
  }
  for (const Mesh &mesh : {Mesh::contiguous({10, 100}, 3),
                           Mesh::explicitRanks({1000}, strided),
                           Mesh::explicitRanks({10, 100}, permuted),
                           Mesh::explicitRanks({1}, {42})}) {
    MeshIndex index(mesh);
    for (int64_t rank = -2; rank < 2010; ++rank)
      EXPECT_EQ(index.indexOf(rank), mesh.indexOf(rank)) << rank;
  }
}

TEST(LayoutTest, PaperExampleABoxes) {
  Layout trainer{Mesh::contiguous({1, 4}, 0),
                 {Placement::replicate(), Placement::shard(0)}};
  Layout generator{Mesh::contiguous({2, 2}, 4),
                   {Placement::replicate(), Placement::shard(0)}};
  std::vector<int64_t> shape = {4, 8};
  EXPECT_EQ(trainer.localBox(shape, 2).str(), "[2:3, 0:8]");
  EXPECT_EQ(generator.localBox(shape, 0).str(), "[0:2, 0:8]"); // rank 4
  EXPECT_EQ(generator.localBox(shape, 1).str(), "[2:4, 0:8]"); // rank 5
  EXPECT_EQ(generator.localBox(shape, 2).str(), "[0:2, 0:8]"); // rank 6
  EXPECT_EQ(generator.mesh.rankAt(3), 7);
  EXPECT_EQ(generator.mesh.indexOf(6), std::optional<int64_t>(2));
}

// [Shard(0), Shard(0)] on a 2x2 mesh: mesh axis 0 splits first, so the rank
// at (i, j) holds chunk j of chunk i.
TEST(LayoutTest, NestedShardingIsOuterAxisFirst) {
  Layout layout{Mesh::contiguous({2, 2}),
                {Placement::shard(0), Placement::shard(0)}};
  std::vector<int64_t> shape = {7};
  // Axis 0: [0,4) [4,7); axis 1 within [0,4): [0,2) [2,4); within [4,7):
  // [4,6) [6,7).
  EXPECT_EQ(layout.localBox(shape, 0).str(), "[0:2]");
  EXPECT_EQ(layout.localBox(shape, 1).str(), "[2:4]");
  EXPECT_EQ(layout.localBox(shape, 2).str(), "[4:6]");
  EXPECT_EQ(layout.localBox(shape, 3).str(), "[6:7]");
}

TEST(LayoutTest, ContributorIndexCountsPartialAxesOnly) {
  Layout layout{Mesh::contiguous({2, 3, 2}),
                {Placement::partial(Reduction::Sum), Placement::shard(0),
                 Placement::partial(Reduction::Sum)}};
  EXPECT_EQ(layout.numContributors(), 4);
  // Grid position (1, 2, 0) -> contributor 1*2 + 0 = 2.
  EXPECT_EQ(layout.contributorIndex(1 * 6 + 2 * 2 + 0), 2);
  EXPECT_EQ(layout.contributorIndex(0 * 6 + 1 * 2 + 1), 1);
  EXPECT_EQ(layout.reduction(), std::optional<Reduction>(Reduction::Sum));
}

TEST(LayoutTest, ValidationNamesTheProblem) {
  Layout good{Mesh::contiguous({4}), {Placement::shard(1)}};
  EXPECT_EQ(validateLayout(good, {4, 4}, 4), std::nullopt);
  EXPECT_NE(validateLayout(good, {4}, 4)->find("shards dimension 1"),
            std::string::npos);
  EXPECT_NE(validateLayout(good, {4, 4}, 3)->find("outside the communicator"),
            std::string::npos);
  Layout duplicate{Mesh::explicitRanks({2}, {1, 1}), {Placement::replicate()}};
  EXPECT_NE(validateLayout(duplicate, {4}, 4)->find("more than once"),
            std::string::npos);
  Layout partial{Mesh::contiguous({4}), {Placement::partial(Reduction::Max)}};
  Layout other{Mesh::contiguous({4}, 4), {Placement::partial(Reduction::Max)}};
  EXPECT_NE(validateReshard(partial, other, {4}, 8)->find("source mesh"),
            std::string::npos);
}

} // namespace
