//===- LaunchShapeTest.cpp - how a rank's table is launched ---------------===//

#include "m2n/Artifact/Artifact.h"
#include "m2n/Artifact/KernelABI.h"

#include <gtest/gtest.h>

#include <cstdlib>

using namespace m2n;

namespace {

RankProgram itemsOf(std::initializer_list<std::pair<Mechanism, int64_t>> items) {
  RankProgram rank;
  for (auto [mechanism, bytes] : items) {
    Movement m;
    m.mechanism = mechanism;
    m.bytes = bytes;
    rank.items.push_back(m);
  }
  return rank;
}

KernelLaunch kernel(uint32_t walkers, uint32_t stages = 3,
                    uint64_t stageBytes = 65536) {
  KernelLaunch k;
  k.threads = 128;
  k.walkers = walkers;
  k.stages = stages;
  k.stageBytes = stageBytes;
  return k;
}

/// What the runtime launches for `rank` once m2n-choose-launch chose.
LaunchShape launchShape(const KernelLaunch &k, const RankProgram &rank,
                        uint32_t maxThreads = 1024) {
  return m2n::launchShape(k, chooseLaunch(k, rank.demand()), maxThreads);
}

TEST(LaunchShapeTest, VectorItemsTakeTheWholeBlockAndOneWalker) {
  LaunchShape shape = launchShape(
      kernel(8), itemsOf({{Mechanism::Bulk, 128}, {Mechanism::Vector, 100}}));
  EXPECT_EQ(shape, (LaunchShape{128, 1, 65536, 3}));
  // A zero-byte vector item moves nothing: the table stays TMA-only.
  shape = launchShape(kernel(8), itemsOf({{Mechanism::Bulk, 128},
                                          {Mechanism::Vector, 0}}));
  EXPECT_EQ(shape, (LaunchShape{32, 8, 128, 3}));
}

TEST(LaunchShapeTest, WalkersShareTheCompiledSharedMemory) {
  // Stages sized to the largest item, as many walkers as fit 3 x 64 KiB.
  EXPECT_EQ(launchShape(kernel(8), itemsOf({{Mechanism::Bulk, 65536}})),
            (LaunchShape{32, 1, 65536, 3}));
  EXPECT_EQ(launchShape(kernel(8), itemsOf({{Mechanism::Bulk, 16384},
                                            {Mechanism::Tile, 4096}})),
            (LaunchShape{32, 4, 16384, 3}));
  EXPECT_EQ(launchShape(kernel(8), itemsOf({{Mechanism::Bulk, 8192}})),
            (LaunchShape{32, 8, 8192, 3}));
  // Stages keep 128-byte alignment; at most `walkers` of them.
  EXPECT_EQ(launchShape(kernel(8), itemsOf({{Mechanism::Bulk, 100},
                                            {Mechanism::Bulk, 0}})),
            (LaunchShape{32, 8, 128, 3}));
  EXPECT_EQ(launchShape(kernel(4), itemsOf({{Mechanism::Bulk, 1000}})),
            (LaunchShape{32, 4, 1024, 3}));
  // 20 KiB items: three walkers of 3 x 20480 fit (180 KiB), four do not.
  EXPECT_EQ(launchShape(kernel(8), itemsOf({{Mechanism::Bulk, 20480}})),
            (LaunchShape{32, 3, 20480, 3}));
}

TEST(LaunchShapeTest, WalkersAreBoundedByTheBarriersAndTheOption) {
  // 8 stages each: 64 barriers hold 8 walkers.
  LaunchShape shape =
      launchShape(kernel(8, 8, 8192), itemsOf({{Mechanism::Bulk, 128}}));
  EXPECT_EQ(shape.walkers * shape.stages, kMaxKernelBarriers);
  EXPECT_EQ(launchShape(kernel(1), itemsOf({{Mechanism::Bulk, 128}})),
            (LaunchShape{32, 1, 65536, 3}));
  for (uint32_t walkers = 1; walkers <= kMaxWalkers; ++walkers)
    for (uint32_t stages = 1; stages <= 8; ++stages)
      for (int64_t bytes : {0, 16, 1000, 8192, 30000, 65536}) {
        KernelLaunch k = kernel(walkers, stages);
        LaunchShape s = launchShape(k, itemsOf({{Mechanism::Bulk, bytes}}));
        EXPECT_LE(s.sharedBytes(), k.stageBytes * k.stages);
        EXPECT_LE(s.walkers * s.stages, kMaxKernelBarriers);
        EXPECT_LE(s.walkers, walkers);
        EXPECT_GE(s.stageBytes, static_cast<uint64_t>(bytes));
        EXPECT_EQ(s.stageBytes % 16, 0u);
      }
}

TEST(LaunchShapeTest, WalkersFitTheBlockTheKernelAllows) {
  // A kernel whose registers allow 96 threads a block: three walkers.
  EXPECT_EQ(launchShape(kernel(8), itemsOf({{Mechanism::Bulk, 128}}), 96),
            (LaunchShape{32, 3, 128, 3}));
  EXPECT_EQ(launchShape(kernel(8), itemsOf({{Mechanism::Bulk, 128}}), 32),
            (LaunchShape{32, 1, 128, 3}));
}

TEST(LaunchShapeTest, StagesAreLaidOut128BytesApart) {
  // stage-bytes of 1040: each stage takes 1152 bytes, so that the second
  // stage (a tile's landing place) is 128-byte aligned too.
  KernelLaunch k = kernel(1, 3, 1040);
  EXPECT_EQ(launchShape(k, itemsOf({{Mechanism::Tile, 1040}})),
            (LaunchShape{32, 1, 1152, 3}));
  EXPECT_EQ(sharedMemoryBudget(k), 3u * 1152);
}

TEST(LaunchShapeTest, ChosenLaunchesPassTheRule) {
  // Whatever chooseLaunch gives passes both checks the verifier and the
  // loader make.
  for (uint32_t walkers = 1; walkers <= kMaxWalkers; ++walkers)
    for (uint32_t stages = 1; stages <= 8; ++stages)
      for (uint64_t stageBytes : {128u, 1040u, 8192u, 65536u})
        for (int64_t bytes : {0, 16, 100, 1000, 8192, 30000, 65536})
          for (bool vector : {false, true}) {
            KernelLaunch k = kernel(walkers, stages, stageBytes);
            if (checkKernelLaunch(k) ||
                static_cast<uint64_t>(bytes) > (stageBytes + 127) / 128 * 128)
              continue;
            LaunchDemand demand{vector, bytes};
            RankLaunch launch = chooseLaunch(k, demand);
            EXPECT_EQ(checkLaunch(launch, demand), std::nullopt);
            EXPECT_EQ(checkLaunch(k, launch), std::nullopt);
          }
}

TEST(LaunchShapeTest, TheRuleRefusesWhatCannotRun) {
  KernelLaunch k = kernel(8);
  auto refused = [](const std::optional<std::string> &why,
                    const char *expected) {
    ASSERT_TRUE(why) << expected;
    EXPECT_NE(why->find(expected), std::string::npos) << *why;
  };
  refused(checkLaunch(RankLaunch{64, 1, 128}, {}),
          "threads must be 32, 128 or 256");
  refused(checkLaunch(RankLaunch{512, 1, 128}, {}),
          "threads must be 32, 128 or 256");
  refused(checkLaunch(RankLaunch{32, 0, 128}, {}), "walkers 1-8");
  refused(checkLaunch(RankLaunch{32, 9, 128}, {}), "walkers 1-8");
  refused(checkLaunch(RankLaunch{32, 1, 100}, {}), "multiple of 128");
  refused(checkLaunch(RankLaunch{128, 2, 128}, {}), "runs one walker");
  refused(checkLaunch(RankLaunch{256, 2, 128}, {}), "runs one walker");
  EXPECT_FALSE(checkLaunch(RankLaunch{256, 1, 65536}, {true, 16}));
  refused(checkLaunch(RankLaunch{32, 1, 65536}, {true, 16}),
          "cannot run vector items");
  refused(checkLaunch(RankLaunch{32, 8, 128}, {false, 256}),
          "cannot run an item of 256 bytes");
  KernelLaunch narrow = k;
  narrow.threads = 32;
  refused(checkLaunch(narrow, RankLaunch{128, 1, 65536}),
          "its blocks are 32 threads");
  refused(checkLaunch(k, RankLaunch{32, 1, 65536 + 128}), "does not fit");
  refused(checkLaunch(k, RankLaunch{32, 4, 65536}), "does not fit");
  // 8 stages of 128 bytes: 64 barriers hold 8 walkers, not more.
  refused(checkLaunch(kernel(8, 8, 8192), RankLaunch{32, 9, 128}),
          "does not fit");
  EXPECT_EQ(checkLaunch(k, RankLaunch{32, 8, 8192}), std::nullopt);
}

TEST(LaunchShapeTest, CombinedLaunchesAreTheMergedItemsLaunch) {
  // A group rank's launch, combined from its members', is what
  // chooseLaunch gives their items together: random members, seed printed.
  const unsigned seed = 20261204;
  std::srand(seed);
  SCOPED_TRACE("seed " + std::to_string(seed));
  for (int trial = 0; trial < 2000; ++trial) {
    KernelLaunch k = kernel(1 + std::rand() % kMaxWalkers, 1 + std::rand() % 8,
                            128 * (1 + std::rand() % 512));
    if (checkKernelLaunch(k))
      continue;
    const int64_t compiled = static_cast<int64_t>((k.stageBytes + 127) / 128 * 128);
    LaunchDemand merged;
    std::optional<RankLaunch> combined;
    for (int member = 0, members = 1 + std::rand() % 4; member < members;
         ++member) {
      LaunchDemand demand;
      for (int item = 0, items = std::rand() % 3; item < items; ++item) {
        const int64_t bytes = std::rand() % (compiled + 1);
        const Mechanism mechanism =
            std::rand() % 8 ? Mechanism::Bulk : Mechanism::Vector;
        demand.add(mechanism, bytes);
        merged.add(mechanism, bytes);
      }
      RankLaunch own = chooseLaunch(k, demand);
      combined = combined ? combineLaunches(*combined, own) : own;
    }
    EXPECT_EQ(*combined, chooseLaunch(k, merged)) << "trial " << trial;
  }
}

TEST(LaunchShapeTest, ArtifactsKeepTheirLaunches) {
  Artifact artifact;
  artifact.ptx = "ptx";
  artifact.chip = "sm_90a";
  artifact.kernel.walkers = 8;
  CompiledReshard reshard;
  reshard.name = "@f#0";
  reshard.shape = {64};
  reshard.src.mesh = Mesh::contiguous({1});
  reshard.src.placements = {Placement::replicate()};
  reshard.dst = reshard.src;
  reshard.strategy = "flat";
  reshard.program.ranks[0].launch = RankLaunch{32, 2, 4096};
  // The one move the destination needs (a program must write it whole).
  Movement copy;
  copy.src = {BufferKind::Source, 0};
  copy.dst = {BufferKind::Destination, 0};
  copy.bytes = 256;
  reshard.program.ranks[0].items.push_back(copy);
  artifact.reshards.push_back(reshard);
  Artifact back;
  ASSERT_EQ(deserializeArtifact(serializeArtifact(artifact), back),
            std::nullopt);
  ASSERT_TRUE(back.reshards.at(0).program.ranks.at(0).launch);
  EXPECT_EQ(*back.reshards[0].program.ranks.at(0).launch,
            (RankLaunch{32, 2, 4096}));
  // A launch that does not fit the kernel, or a rank without one, which is
  // given chooseLaunch's.
  artifact.reshards[0].program.ranks[0].launch = RankLaunch{32, 8, 65536};
  std::optional<std::string> error =
      deserializeArtifact(serializeArtifact(artifact), back);
  ASSERT_TRUE(error);
  EXPECT_NE(error->find("@f#0: rank 0: launch 8 walkers x 32 threads"),
            std::string::npos)
      << *error;
  artifact.reshards[0].program.ranks[0].launch.reset();
  ASSERT_EQ(deserializeArtifact(serializeArtifact(artifact), back),
            std::nullopt);
  EXPECT_EQ(*back.reshards[0].program.ranks.at(0).launch,
            chooseLaunch(artifact.kernel,
                         artifact.reshards[0].program.ranks[0].demand()));
}

TEST(LaunchShapeTest, ArtifactsKeepTheirWalkersAndRefuseBadOnes) {
  Artifact artifact;
  artifact.ptx = "ptx";
  artifact.chip = "sm_90a";
  artifact.kernel.walkers = 6;
  Artifact back;
  ASSERT_EQ(deserializeArtifact(serializeArtifact(artifact), back),
            std::nullopt);
  EXPECT_EQ(back.kernel.walkers, 6u);
  for (uint32_t bad : {0u, kMaxWalkers + 1}) {
    artifact.kernel.walkers = bad;
    std::optional<std::string> error =
        deserializeArtifact(serializeArtifact(artifact), back);
    ASSERT_TRUE(error);
    EXPECT_NE(error->find(std::to_string(bad) + " walkers"), std::string::npos)
        << *error;
  }
}

} // namespace
