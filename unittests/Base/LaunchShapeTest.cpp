//===- LaunchShapeTest.cpp - how the runtime launches a rank's table ------===//

#include "m2n/Artifact/Artifact.h"
#include "m2n/Artifact/KernelABI.h"

#include <gtest/gtest.h>

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
      launchShape(kernel(16, 8, 8192), itemsOf({{Mechanism::Bulk, 128}}));
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
            (LaunchShape{32, 1, 65536, 3}));
}

TEST(LaunchShapeTest, StagesAreLaidOut128BytesApart) {
  // stage-bytes of 1040: each stage takes 1152 bytes, so that the second
  // stage (a tile's landing place) is 128-byte aligned too.
  KernelLaunch k = kernel(1, 3, 1040);
  EXPECT_EQ(launchShape(k, itemsOf({{Mechanism::Tile, 1040}})),
            (LaunchShape{32, 1, 1152, 3}));
  EXPECT_EQ(sharedMemoryBudget(k), 3u * 1152);
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
    EXPECT_NE(error->find("walkers per CTA"), std::string::npos) << *error;
  }
}

} // namespace
