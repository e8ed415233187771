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

// Explicit boundaries: part p of the axes sharding a dimension (row-major,
// the first axis outermost) is [b[p], b[p + 1]); empty parts allowed.
TEST(BoundariesTest, PartsFollowTheBoundaries) {
  Layout upstream{Mesh::contiguous({3}), {Placement::shard(0, {0, 2, 5, 7})}};
  ASSERT_EQ(validateLayout(upstream, {7, 5}, 3), std::nullopt);
  EXPECT_EQ(upstream.localBox({7, 5}, 0).str(), "[0:2, 0:5]");
  EXPECT_EQ(upstream.localBox({7, 5}, 1).str(), "[2:5, 0:5]");
  EXPECT_EQ(upstream.localBox({7, 5}, 2).str(), "[5:7, 0:5]");
  EXPECT_EQ(upstream.str(), "mesh [3] ranks [0, 1, 2], [shard<0, [0, 2, 5, 7]>]");

  // Mesh [2, 3, 2]: axes 0 and 2 split dim 0 into 2 x 2 parts, axis 1
  // splits dim 1 by torch.chunk.
  Layout two{Mesh::contiguous({2, 3, 2}),
             {Placement::shard(0, {0, 1, 1, 4, 8}), Placement::shard(1),
              Placement::shard(0)}};
  ASSERT_EQ(validateLayout(two, {8, 5}, 12), std::nullopt);
  EXPECT_EQ(two.partsOf(0), 4);
  EXPECT_EQ(two.partsOf(1), 3);
  // Grid position (a0, a1, a2) -> part 2 x a0 + a2 of dim 0.
  EXPECT_EQ(two.localBox({8, 5}, 0).str(), "[0:1, 0:2]");  // (0, 0, 0)
  EXPECT_EQ(two.localBox({8, 5}, 1).str(), "[1:1, 0:2]");  // (0, 0, 1)
  EXPECT_EQ(two.localBox({8, 5}, 3).str(), "[1:1, 2:4]");  // (0, 1, 1)
  EXPECT_EQ(two.localBox({8, 5}, 6).str(), "[1:4, 0:2]");  // (1, 0, 0)
  EXPECT_EQ(two.localBox({8, 5}, 11).str(), "[4:8, 4:5]"); // (1, 2, 1)
  EXPECT_TRUE(two.localBox({8, 5}, 1).empty());
}

// The chunk rule's boundaries nest the chunks (not torch.chunk over all the
// parts at once), and such boundaries are that rule: canonicalLayout drops
// them, and only them.
TEST(BoundariesTest, ChunkBoundariesAndCanonicalForm) {
  Layout nested{Mesh::contiguous({2, 2}), {Placement::shard(0), Placement::shard(0)}};
  // chunk(5, 2) = [0, 3), [3, 5); each again in 2: [0, 2), [2, 3), [3, 4), [4, 5).
  EXPECT_EQ(chunkBoundaries(nested, 0, 5), (std::vector<int64_t>{0, 2, 3, 4, 5}));
  EXPECT_EQ(chunkBoundaries(nested, 1, 9), (std::vector<int64_t>{0, 9}));
  for (int64_t j = 0; j < 4; ++j) {
    Layout spelled = nested;
    spelled.placements[0].boundaries = {0, 2, 3, 4, 5};
    EXPECT_EQ(spelled.localBox({5}, j), nested.localBox({5}, j));
  }
  Layout spelled = nested;
  spelled.placements[0].boundaries = {0, 2, 3, 4, 5};
  EXPECT_EQ(canonicalLayout(spelled, {5}).placements, nested.placements);
  spelled.placements[0].boundaries = {0, 2, 4, 5, 5}; // Flat chunk(5, 4).
  EXPECT_EQ(canonicalLayout(spelled, {5}).placements, spelled.placements);
  Layout one{Mesh::contiguous({3}), {Placement::shard(0, {0, 3, 6, 7})}};
  EXPECT_FALSE(canonicalLayout(one, {7}).hasBoundaries());
}

TEST(BoundariesTest, InvalidBoundariesAreNamed) {
  auto problem = [](std::vector<Placement> placements, std::vector<int64_t> mesh,
                    std::vector<int64_t> shape) {
    Layout layout{Mesh::contiguous(mesh), std::move(placements)};
    std::optional<std::string> wrong = validateLayout(layout, shape, 64);
    return wrong.value_or("valid");
  };
  EXPECT_EQ(problem({Placement::shard(0, {0, 2, 7})}, {3}, {7}),
            "mesh axis 0 gives 3 boundaries of dimension 0 but the mesh axes "
            "sharding it cut it into 3 parts (4 boundaries)");
  EXPECT_EQ(problem({Placement::shard(0, {1, 2, 5, 7})}, {3}, {7}),
            "mesh axis 0: the boundaries of dimension 0 start at 1, not 0");
  EXPECT_EQ(problem({Placement::shard(0, {0, 5, 2, 7})}, {3}, {7}),
            "mesh axis 0: the boundaries of dimension 0 decrease (5 then 2)");
  EXPECT_EQ(problem({Placement::shard(0, {0, 2, 5, 6})}, {3}, {7}),
            "mesh axis 0: the boundaries of dimension 0 end at 6, not at its "
            "extent 7");
  EXPECT_EQ(problem({Placement::shard(0), Placement::shard(0, {0, 1, 2, 3, 8})},
                    {2, 2}, {8}),
            "mesh axis 1 has boundaries of dimension 0, but mesh axis 0 shards "
            "it first: the first axis carries every part's boundaries");
  Placement notShard = Placement::replicate();
  notShard.boundaries = {0, 8};
  EXPECT_EQ(problem({notShard}, {1}, {8}),
            "mesh axis 0 has boundaries but does not shard");
  EXPECT_EQ(problem({Placement::shard(0, {0, 0, 0, 8}), Placement::replicate()},
                    {3, 2}, {8}),
            "valid");
}

} // namespace
