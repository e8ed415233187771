//===- PlannerTest.cpp - intersection planner: examples and properties -----===//

#include "m2n/Plan/Planner.h"
#include "m2n/Sim/HostSimulator.h"

#include "RandomLayouts.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <map>
#include <random>
#include <set>

using namespace m2n;

namespace {

std::vector<std::string> describe(const ReshardPlan &plan) {
  std::vector<std::string> lines;
  for (const Transfer &transfer : plan.transfers)
    lines.push_back(transfer.str());
  return lines;
}

TEST(PlannerTest, PaperExampleA) {
  Layout trainer{Mesh::contiguous({1, 4}, 0),
                 {Placement::replicate(), Placement::shard(0)}};
  Layout generator{Mesh::contiguous({2, 2}, 4),
                   {Placement::replicate(), Placement::shard(0)}};
  ReshardPlan plan = IntersectionPlanner(trainer, generator, {4, 8}).plan();
  EXPECT_EQ(describe(plan),
            (std::vector<std::string>{
                "0 [0:1, 0:8] -> 4 [0:1, 0:8] copy",
                "1 [0:1, 0:8] -> 4 [1:2, 0:8] copy",
                "2 [0:1, 0:8] -> 5 [0:1, 0:8] copy",
                "3 [0:1, 0:8] -> 5 [1:2, 0:8] copy",
                "0 [0:1, 0:8] -> 6 [0:1, 0:8] copy",
                "1 [0:1, 0:8] -> 6 [1:2, 0:8] copy",
                "2 [0:1, 0:8] -> 7 [0:1, 0:8] copy",
                "3 [0:1, 0:8] -> 7 [1:2, 0:8] copy",
            }));
  EXPECT_TRUE(verifyPlan(trainer, generator, {4, 8}, plan).empty());
}

// Replicated sources: every region comes from one replica, the replicas
// share the work, and a destination that is a replica copies locally.
TEST(PlannerTest, ReplicatedSourcesAreBalancedAndLocal) {
  Layout src{Mesh::contiguous({4}), {Placement::replicate()}};
  Layout dst{Mesh::contiguous({8}), {Placement::shard(0)}};
  ReshardPlan plan = IntersectionPlanner(src, dst, {16}).plan();
  std::map<int64_t, int> served;
  for (const Transfer &transfer : plan.transfers) {
    if (transfer.dstRank < 4) {
      EXPECT_TRUE(transfer.isLocal()) << transfer.str();
    }
    ++served[transfer.srcRank];
  }
  for (int64_t rank = 0; rank < 4; ++rank)
    EXPECT_EQ(served[rank], 2) << "rank " << rank;
}

// Each destination first copies its own contribution locally, then reduces
// the others into it.
TEST(PlannerTest, PartialToReplicateCopiesOwnThenReduces) {
  Layout src{Mesh::contiguous({2}), {Placement::partial(Reduction::Sum)}};
  Layout dst{Mesh::contiguous({2}), {Placement::replicate()}};
  ReshardPlan plan = IntersectionPlanner(src, dst, {4}).plan();
  EXPECT_EQ(describe(plan), (std::vector<std::string>{
                                "0 [0:4] -> 0 [0:4] copy",
                                "1 [0:4] -> 0 [0:4] sum",
                                "1 [0:4] -> 1 [0:4] copy",
                                "0 [0:4] -> 1 [0:4] sum",
                            }));
}

// DTensor's [P(sum), S(0), P(sum)] -> [S(1), S(0), P(sum)] on a [2, 1, 4]
// mesh: mesh axis 0 is reduced (and scatters dim 1), axis 2 stays partial.
// Rank (a0, 0, a2) combines the contributions of (0, 0, a2) and (1, 0, a2).
TEST(PlannerTest, ReducesSomePartialAxesAndKeepsTheOthers) {
  Mesh mesh = Mesh::contiguous({2, 1, 4});
  Layout src{mesh,
             {Placement::partial(Reduction::Sum), Placement::shard(0),
              Placement::partial(Reduction::Sum)}};
  Layout dst{mesh,
             {Placement::shard(1), Placement::shard(0),
              Placement::partial(Reduction::Sum)}};
  const std::vector<int64_t> shape = {4, 6};
  ASSERT_EQ(validateReshard(src, dst, shape, 8), std::nullopt);
  EXPECT_TRUE(reducesContributions(src, dst));
  EXPECT_EQ(keptContributor(src, dst, 6), 2);
  EXPECT_EQ(contributorsOf(src, dst, 5), (std::vector<int64_t>{1, 5}));
  ReshardPlan plan = IntersectionPlanner(src, dst, shape).plan();
  std::vector<std::string> lines = describe(plan);
  ASSERT_EQ(lines.size(), 16u);
  EXPECT_EQ(lines[0], "0 [0:4, 0:3] -> 0 [0:4, 0:3] copy");
  EXPECT_EQ(lines[1], "4 [0:4, 0:3] -> 0 [0:4, 0:3] sum");
  EXPECT_EQ(lines[10], "5 [0:4, 3:6] -> 5 [0:4, 0:3] copy");
  EXPECT_EQ(lines[11], "1 [0:4, 3:6] -> 5 [0:4, 0:3] sum");
  EXPECT_TRUE(verifyPlan(src, dst, shape, plan).empty());
  ReshardSimulator simulator(src, dst, shape, ElementType::I32);
  ASSERT_EQ(simulator.execute(plan), std::nullopt);
  SimulationReport report = simulator.check();
  EXPECT_TRUE(report.passed) << report.message;

  // A contribution sent to a rank that keeps a different one is caught.
  ReshardPlan wrong = plan;
  wrong.transfers[1].srcRank = 5;
  std::vector<PlanIssue> issues = verifyPlan(src, dst, shape, wrong);
  ASSERT_FALSE(issues.empty());
  EXPECT_EQ(issues[0].message,
            "moves contributor 5 into destination contributor 0");
}

TEST(PlannerTest, PartialDestinationsNeverCreatePartialAxes) {
  Mesh mesh = Mesh::contiguous({2, 2});
  Layout src{mesh, {Placement::partial(Reduction::Max), Placement::shard(0)}};
  Layout dst{mesh, {Placement::replicate(), Placement::partial(Reduction::Max)}};
  EXPECT_EQ(checkPartialDestination(src, dst),
            "destination is partial on mesh axis 1 where the source is "
            "shard<0>; a reshard reduces partial axes or keeps them, it does "
            "not create them");
  dst.placements = {Placement::partial(Reduction::Min), Placement::shard(0)};
  EXPECT_EQ(checkPartialDestination(src, dst),
            "destination reduction 'min' differs from source reduction 'max'");
  dst = {Mesh::contiguous({2, 2}, 4), src.placements};
  EXPECT_NE(checkPartialDestination(src, dst), std::nullopt);
}

TEST(PlannerTest, VerifierReportsMissingAndDuplicateData) {
  Layout src{Mesh::contiguous({2}), {Placement::shard(0)}};
  Layout dst{Mesh::contiguous({1}, 2), {Placement::replicate()}};
  ReshardPlan plan = IntersectionPlanner(src, dst, {4}).plan();
  ASSERT_EQ(plan.transfers.size(), 2u);
  ReshardPlan missing = plan;
  missing.transfers.pop_back();
  auto issues = verifyPlan(src, dst, {4}, missing);
  ASSERT_EQ(issues.size(), 1u);
  EXPECT_EQ(issues[0].message, "destination rank 2: local elements [2:4] "
                               "receive 0 copies, expected exactly 1");
  ReshardPlan twice = plan;
  twice.transfers.push_back(plan.transfers[0]);
  issues = verifyPlan(src, dst, {4}, twice);
  ASSERT_EQ(issues.size(), 1u);
  EXPECT_NE(issues[0].message.find("receive 2 copies"), std::string::npos);
  ReshardPlan shifted = plan;
  shifted.transfers[1].dstBox.offsets[0] = 1;
  issues = verifyPlan(src, dst, {4}, shifted);
  ASSERT_FALSE(issues.empty());
  EXPECT_EQ(issues[0].transfer, 1);
  EXPECT_EQ(issues[0].message,
            "moves global elements [2:4] into global elements [1:3]");
}

//===----------------------------------------------------------------------===//
// Property test: random layouts through planner, verifier and simulator.
//===----------------------------------------------------------------------===//

/// Checks the planner's invariants 2-4 that verifyPlan does not cover.
void checkOwnership(const Layout &src, const Layout &dst,
                    const std::vector<int64_t> &shape,
                    const ReshardPlan &plan) {
  std::set<std::pair<int64_t, int64_t>> pairs;
  // (contributor, box) of a source rank -> transfers per replica rank.
  std::map<std::pair<int64_t, std::string>, std::map<int64_t, int>> served;
  auto groupOf = [&](int64_t rank) {
    int64_t index = *src.mesh.indexOf(rank);
    return std::make_pair(src.contributorIndex(index),
                          src.localBox(shape, index).str());
  };
  for (int64_t i = 0; i < src.mesh.size(); ++i)
    if (!src.localBox(shape, i).empty())
      served[groupOf(src.mesh.rankAt(i))][src.mesh.rankAt(i)] += 0;
  for (const Transfer &transfer : plan.transfers) {
    EXPECT_TRUE(pairs.insert({transfer.srcRank, transfer.dstRank}).second)
        << "two transfers from " << transfer.srcRank << " to "
        << transfer.dstRank;
    ++served[groupOf(transfer.srcRank)][transfer.srcRank];
    // A destination holding the same source data must copy locally.
    if (!transfer.isLocal() && src.mesh.indexOf(transfer.dstRank)) {
      EXPECT_NE(groupOf(transfer.dstRank), groupOf(transfer.srcRank))
          << "rank " << transfer.dstRank
          << " receives data it holds itself: " << transfer.str();
    }
  }
  for (const auto &[group, loads] : served) {
    int minLoad = INT32_MAX, maxLoad = 0;
    for (const auto &[rank, load] : loads) {
      minLoad = std::min(minLoad, load);
      maxLoad = std::max(maxLoad, load);
    }
    EXPECT_LE(maxLoad - minLoad, 1) << "unbalanced replicas of " << group.second;
  }
}

TEST(PlannerPropertyTest, RandomReshardsAreExactBalancedAndDeterministic) {
  const uint64_t seed = propertySeed();
  const int64_t cases = propertyCases(10000);
  RandomLayouts random(seed);
  int64_t withPartial = 0, keptPartial = 0, partlyReduced = 0, transfers = 0,
          withBoundaries = 0;
  for (int64_t n = 0; n < cases; ++n) {
    std::vector<int64_t> shape = random.shape();
    int64_t rank = static_cast<int64_t>(shape.size());
    Layout src =
        random.withBoundaries(random.layout(rank, /*allowPartial=*/true), shape);
    Layout dst =
        random.withBoundaries(random.destination(src, rank), shape);
    ElementType type = random.elementType();
    SCOPED_TRACE("M2N_PROPERTY_SEED=" + std::to_string(seed) + " case " +
                 std::to_string(n) + ": " + src.str() + " -> " + dst.str() +
                 " shape rank " + std::to_string(rank) + " " + toString(type));
    ASSERT_EQ(validateReshard(src, dst, shape, kCommSize), std::nullopt);
    withPartial += src.hasPartial();
    withBoundaries += src.hasBoundaries() || dst.hasBoundaries();
    keptPartial += dst.hasPartial();
    partlyReduced += dst.hasPartial() && reducesContributions(src, dst);

    ReshardPlan plan = IntersectionPlanner(src, dst, shape).plan();
    transfers += static_cast<int64_t>(plan.transfers.size());
    std::vector<PlanIssue> issues = verifyPlan(src, dst, shape, plan);
    ASSERT_TRUE(issues.empty()) << issues.front().message;
    checkOwnership(src, dst, shape, plan);
    ASSERT_EQ(describe(IntersectionPlanner(src, dst, shape).plan()),
              describe(plan))
        << "planning is not deterministic";

    ReshardSimulator simulator(src, dst, shape, type);
    ASSERT_EQ(simulator.execute(plan), std::nullopt);
    SimulationReport report = simulator.check();
    ASSERT_TRUE(report.passed) << report.message;
    if (HasFailure())
      return;
  }
  // The generator must exercise the interesting cases, not only trivia.
  EXPECT_GT(withPartial, cases / 10);
  EXPECT_GT(keptPartial, cases / 100);
  EXPECT_GT(partlyReduced, cases / 1000);
  EXPECT_GT(transfers, cases);
  EXPECT_GT(withBoundaries, cases / 10);
  std::cout << "[ property ] seed " << seed << ": " << cases << " cases, "
            << withBoundaries << " with explicit boundaries, "
            << withPartial << " with partial sources, " << keptPartial
            << " keeping partial axes (" << partlyReduced
            << " reducing the others), " << transfers << " transfers\n";
}

} // namespace
