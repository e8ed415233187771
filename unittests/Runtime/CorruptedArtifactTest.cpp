//===- CorruptedArtifactTest.cpp - the loader as a validator ---------------===//
//
// Well-formed artifacts (checksum and all, as a writer bug or a hostile file
// gives them) whose fields are wrong: each used to crash the runtime (the
// fuzzing campaign of issue 19) and must now be refused at load with a
// message naming the problem. Found by the fuzz targets (fuzz/) too.
//
//===----------------------------------------------------------------------===//

#include "ExampleArtifact.h"
#include "HostRun.h"

#include "m2n/runtime.h"

#include <gtest/gtest.h>

#include <climits>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

namespace {

struct Corruption {
  const char *name;
  std::function<void(m2n::CompiledReshard &)> corrupt;
  const char *message; // What the loader's message must contain.
};

m2n::Movement &firstItem(m2n::CompiledReshard &r) {
  return r.program.ranks.begin()->second.items.front();
}

const std::vector<Corruption> &corruptions() {
  static const std::vector<Corruption> all = {
      {"ZeroMeshAxis", // Mesh::coords divided by it.
       [](auto &r) {
         r.src.mesh.shape = {0};
         r.src.mesh.ranks.clear();
       },
       "source: mesh axis 0 has size 0"},
      {"MeshShapeProductWraps", // 2^32 x 2^32 ranks wrapped to 0 entries.
       [](auto &r) {
         r.src.mesh.shape = {int64_t{1} << 32, int64_t{1} << 32};
         r.src.mesh.ranks.clear();
         r.src.placements = {m2n::Placement::shard(0),
                             m2n::Placement::replicate()};
       },
       "source: mesh has more than 2147483648 ranks"},
      {"NegativeMeshRank",
       [](auto &r) { r.dst.mesh.ranks[0] = -3; },
       "destination: mesh rank -3 is outside the communicator"},
      {"MeshRankPastInt", // m2n_artifact_reshard_ranks overflowed an int.
       [](auto &r) { r.dst.mesh.ranks[0] = INT64_MAX; },
       "destination: mesh rank 9223372036854775807 is outside"},
      {"ShardOfAMissingDimension", // Layout::localBox read past the shape.
       [](auto &r) { r.src.placements[0] = m2n::Placement::shard(7); },
       "source: mesh axis 0 shards dimension 7 of a rank-2 tensor"},
      {"PlacementsForMissingAxes",
       [](auto &r) {
         r.src.placements.push_back(m2n::Placement::replicate());
       },
       "source: layout has 2 placements but its mesh has 1 axes"},
      {"NegativeExtent",
       [](auto &r) { r.shape[1] = -8; },
       "source: "},
      {"ProgramOfAHugeRank",
       [](auto &r) {
         r.program.ranks[int64_t{1} << 40] = r.program.ranks.begin()->second;
       },
       "a program for rank 1099511627776, outside any communicator"},
      {"ProgramOfANegativeRank",
       [](auto &r) { r.program.ranks[-1] = {}; },
       "a program for rank -1, outside any communicator"},
      {"OffsetPlusSizeWraps", // The host executor's bounds check wrapped.
       [](auto &r) {
         firstItem(r).srcOffset = INT64_MAX - 8;
         firstItem(r).bytes = 64;
       },
       "reaches outside its buffers"},
      {"DestinationOffsetPastTheBuffer",
       [](auto &r) { firstItem(r).dstOffset = int64_t{1} << 62; },
       "reaches outside its buffers"},
      {"ReductionOfAPartialElement", // Read past the buffer's last element.
       [](auto &r) {
         firstItem(r).reduction = m2n::Reduction::Sum;
         firstItem(r).mechanism = m2n::Mechanism::Vector;
         firstItem(r).bytes = 6;
       },
       "reduces a partial element"},
      {"NetworkReceiveAmongKernelItems", // The kernel has no such item.
       [](auto &r) { firstItem(r).mechanism = m2n::Mechanism::Network; },
       "is not a kernel item (bulk, tile or vector) but sits among them"},
      {"KernelItemAmongEngineCopies",
       [](auto &r) {
         m2n::RankProgram &rank = r.program.ranks.begin()->second;
         rank.engineCopies.push_back(rank.items.front());
       },
       "is not a copy-engine copy but sits among them"},
      {"ScratchBeyondTheCap", // std::bad_alloc escaped the host backend.
       [](auto &r) { r.program.scratches.push_back({0, {int64_t{1} << 39}}); },
       "is larger than 1099511627776 bytes"},
      {"ScratchElementCountWraps",
       [](auto &r) {
         r.program.scratches.push_back(
             {0, {int64_t{1} << 40, int64_t{1} << 40}});
       },
       "is larger than 1099511627776 bytes"},
      {"ScratchOnANegativeRank",
       [](auto &r) { r.program.scratches.push_back({-2, {4}}); },
       "a scratch buffer on rank -2, outside any communicator"},
      {"MovementOnAMissingRank",
       [](auto &r) { firstItem(r).dst.rank = 1 << 30; },
       "names a buffer that does not exist"},
      {"RepeatCountWraps",
       [](auto &r) {
         firstItem(r).repeats.push_back({INT64_MAX, 0, 0, -1});
         firstItem(r).repeats.push_back({4, 0, 0, -1});
       },
       "repeats more than"},
      {"MoveWritesTheSource", // The host backend wrote the caller's input.
       [](auto &r) {
         // Rank 0's join (0 bytes, src(0) -> src(0)) made to move bytes.
         firstItem(r).bytes = 32;
       },
       "writes into a source buffer, which a reshard only reads"},
      {"AccumulatorOnACopy", // The kernel would read an operand it has not.
       [](auto &r) {
         firstItem(r).accumulator = m2n::BufferRef{m2n::BufferKind::Source, 0};
       },
       "has an accumulator but is not a vector reduction"},
      {"ThreeWaits", // The kernel's item holds two.
       [](auto &r) {
         firstItem(r).waits.assign(3, {{0, 0}, 0});
       },
       "waits for 3 counters; a move waits for at most two"},
      {"CountersBeyondTheBound", // The runtime allocated them all.
       [](auto &r) {
         r.program.ranks.begin()->second.counters = int64_t{1} << 62;
       },
       "counters (at most 268435456)"},
      {"HugeBufferAlignment",
       [](auto &r) { r.program.bufferAlignment = int64_t{1} << 40; },
       "is not a power of two of at most 4096 bytes"},
      {"TensorBytesWrap", // m2n_artifact_buffer_bytes answered 0.
       [](auto &r) {
         r.shape = {int64_t{1} << 31, int64_t{1} << 31};
       },
       "the tensor's byte size does not fit in 64 bits"},
      {"NulInTheName", // Messages are C strings: the name hid the message.
       [](auto &r) { r.name = std::string("\0evil", 5); },
       "control character in a reshard name"},
  };
  return all;
}

// gtest names a case by its name, not its bytes.
void PrintTo(const Corruption &c, std::ostream *os) { *os << c.name; }

class CorruptedArtifactTest : public ::testing::TestWithParam<Corruption> {};

TEST_P(CorruptedArtifactTest, IsRefusedAtLoadWithAMessage) {
  const Corruption &c = GetParam();
  m2n::CompiledReshard reshard = exampleReshard();
  c.corrupt(reshard);
  const std::string bytes = exampleArtifact(reshard);
  // M2N_WRITE_CORRUPTED=DIR writes each as DIR/<name>.m2n: the artifact
  // fuzzers' kept regressions (fuzz/regressions/artifact) are these.
  if (const char *dir = std::getenv("M2N_WRITE_CORRUPTED"))
    std::ofstream(std::string(dir) + "/" + c.name + ".m2n", std::ios::binary)
        << bytes;
  m2n_artifact artifact = nullptr;
  EXPECT_EQ(m2n_artifact_load(bytes.data(), bytes.size(), &artifact),
            M2N_INVALID_ARTIFACT)
      << c.name;
  EXPECT_NE(std::string(m2n_last_error()).find(c.message), std::string::npos)
      << c.name << ": " << m2n_last_error();
  EXPECT_EQ(artifact, nullptr);
  if (artifact)
    m2n_artifact_destroy(artifact);
}

INSTANTIATE_TEST_SUITE_P(Loader, CorruptedArtifactTest,
                         ::testing::ValuesIn(corruptions()),
                         [](const auto &info) { return info.param.name; });

// Byte-level corruptions resealed (resealArtifact), so that they pass the
// checksum and reach the field checks.
TEST(CorruptedArtifactBytesTest, ResealedFieldCorruptionsAreRefused) {
  const std::string good = exampleArtifact();
  m2n_artifact artifact = nullptr;
  // The walkers field (the kernel's last u32 before the reshard count).
  std::string bytes = good;
  const size_t ptx = 24 + 8 + std::strlen("// no kernel needed on the host");
  const size_t walkers = ptx + 8 + 6 + 8 + 12 + 4 + 4 + 8 + 4;
  uint32_t many = 1000;
  std::memcpy(&bytes[walkers], &many, sizeof(many));
  m2n::resealArtifact(bytes);
  EXPECT_EQ(m2n_artifact_load(bytes.data(), bytes.size(), &artifact),
            M2N_INVALID_ARTIFACT);
  EXPECT_NE(std::string(m2n_last_error()).find("1000 walkers"),
            std::string::npos)
      << m2n_last_error();
  // Cut short, then resealed: the reader runs out mid-field.
  for (size_t keep : {good.size() - 1, good.size() / 2, size_t{40}}) {
    bytes = good.substr(0, keep);
    m2n::resealArtifact(bytes);
    EXPECT_EQ(m2n_artifact_load(bytes.data(), bytes.size(), &artifact),
              M2N_INVALID_ARTIFACT);
    EXPECT_NE(std::string(m2n_last_error()).find("truncated"),
              std::string::npos)
        << keep << ": " << m2n_last_error();
  }
  // Trailing bytes.
  bytes = good + "junk";
  m2n::resealArtifact(bytes);
  EXPECT_EQ(m2n_artifact_load(bytes.data(), bytes.size(), &artifact),
            M2N_INVALID_ARTIFACT);
  EXPECT_STREQ(m2n_last_error(),
               "artifact has unexpected bytes after its last field");
  EXPECT_EQ(artifact, nullptr);
}

// A scratch within the cap but beyond the host's memory: a status before
// anything is allocated (an allocator under a sanitizer aborts instead of
// throwing std::bad_alloc).
TEST(CorruptedArtifactBytesTest, ScratchBeyondHostMemoryIsAStatus) {
  m2n::CompiledReshard reshard = exampleReshard();
  reshard.program.scratches.push_back({0, {int64_t{1} << 38}}); // 1 TiB.
  const std::string bytes = exampleArtifact(reshard);
  m2n_artifact artifact = nullptr;
  ASSERT_EQ(m2n_artifact_load(bytes.data(), bytes.size(), &artifact),
            M2N_SUCCESS)
      << m2n_last_error();
  int ranks = 0;
  ASSERT_EQ(m2n_artifact_reshard_ranks(artifact, 0, &ranks), M2N_SUCCESS);
  std::vector<std::vector<uint8_t>> storage;
  std::vector<const void *> src;
  std::vector<void *> dst;
  std::vector<size_t> srcBytes, dstBytes;
  for (int rank = 0; rank < ranks; ++rank) {
    size_t s = 0, d = 0;
    ASSERT_EQ(m2n_artifact_buffer_bytes(artifact, 0, rank, &s, &d),
              M2N_SUCCESS);
    storage.emplace_back(s + 1);
    src.push_back(s ? storage.back().data() : nullptr);
    storage.emplace_back(d + 1);
    dst.push_back(d ? storage.back().data() : nullptr);
    srcBytes.push_back(s);
    dstBytes.push_back(d);
  }
  EXPECT_EQ(hostRun(artifact, {0}, ranks, src.data(), srcBytes.data(),
                             dst.data(), dstBytes.data()),
            M2N_OUT_OF_MEMORY);
  EXPECT_NE(std::string(m2n_last_error()).find("bytes of scratch memory"),
            std::string::npos)
      << m2n_last_error();
  m2n_artifact_destroy(artifact);
}

// Version 10's tables: every reshard names an existing program, every
// program is run by a reshard, and the copies the loader makes are bounded.
TEST(CorruptedArtifactBytesTest, ProgramTableCorruptionsAreRefused) {
  m2n::CompiledReshard reshard = exampleReshard();
  // A large program (unused scratch buffers): few names reach the bound.
  reshard.program.scratches.assign(1 << 17, {0, {1}});
  m2n::Artifact kernel;
  kernel.ptx = "// no kernel needed on the host";
  kernel.chip = "sm_90a";
  const std::string program = m2n::serializeProgram(reshard, kernel.kernel);
  auto load = [&](std::vector<std::string> programs,
                  const std::vector<std::pair<std::string, uint32_t>> &names) {
    const std::string bytes =
        m2n::assembleArtifact(kernel, std::move(programs), names).join();
    m2n_artifact artifact = nullptr;
    m2n_status status = m2n_artifact_load(bytes.data(), bytes.size(), &artifact);
    if (artifact)
      m2n_artifact_destroy(artifact);
    return std::make_pair(status, std::string(m2n_last_error()));
  };
  // Two names for one program load as two reshards.
  auto [shared, sharedError] = load({program}, {{"@f#0", 0}, {"@f#1", 0}});
  EXPECT_EQ(shared, M2N_SUCCESS) << sharedError;
  auto [missing, missingError] = load({program}, {{"@f#0", 1}});
  EXPECT_EQ(missing, M2N_INVALID_ARTIFACT);
  EXPECT_EQ(missingError, "artifact reshard @f#0 names program 1 of 1");
  auto [unused, unusedError] = load({program, program}, {{"@f#0", 0}});
  EXPECT_EQ(unused, M2N_INVALID_ARTIFACT);
  EXPECT_EQ(unusedError, "artifact program 1 runs no reshard");
  // A small file of many names for one program: refused before any copy.
  const uint64_t names = m2n::kMaxLoadedProgramBytes / program.size() + 1;
  std::vector<std::pair<std::string, uint32_t>> many(names, {"@f#0", 0});
  auto [huge, hugeError] = load({program}, many);
  EXPECT_EQ(huge, M2N_INVALID_ARTIFACT);
  EXPECT_NE(hugeError.find("bytes of programs, more than the 4294967296 a "
                           "loaded artifact may hold"),
            std::string::npos)
      << hugeError;
}

} // namespace

// Groups: a name and distinct members that exist. A good one loads with
// its merged program; each wrong one is refused by name.
TEST(CorruptedArtifactGroupTest, GroupsNameDistinctReshardsThatExist) {
  auto withGroup = [](std::vector<uint32_t> members) {
    m2n::Artifact artifact;
    artifact.ptx = "// no kernel needed on the host";
    artifact.chip = "sm_90a";
    artifact.reshards = {exampleReshard(), exampleReshard()};
    artifact.reshards[1].name = "@test#1";
    artifact.groups.push_back({"weights", std::move(members), nullptr});
    return m2n::serializeArtifact(artifact);
  };
  m2n_artifact artifact = nullptr;
  std::string good = withGroup({1, 0});
  ASSERT_EQ(m2n_artifact_load(good.data(), good.size(), &artifact),
            M2N_SUCCESS)
      << m2n_last_error();
  EXPECT_EQ(m2n_artifact_group_count(artifact), 1);
  EXPECT_STREQ(m2n_artifact_group_name(artifact, 0), "weights");
  EXPECT_EQ(m2n_artifact_group_name(artifact, 1), nullptr);
  int count = 0;
  int members[2] = {-1, -1};
  EXPECT_EQ(m2n_artifact_group_members(artifact, 0, 0, nullptr, &count),
            M2N_SUCCESS);
  EXPECT_EQ(count, 2);
  EXPECT_EQ(m2n_artifact_group_members(artifact, 0, 1, members, &count),
            M2N_INVALID_ARGUMENT);
  EXPECT_NE(std::string(m2n_last_error()).find("has 2 members, room for 1"),
            std::string::npos);
  EXPECT_EQ(m2n_artifact_group_members(artifact, 0, 2, members, &count),
            M2N_SUCCESS);
  EXPECT_EQ(members[0], 1);
  EXPECT_EQ(members[1], 0);
  EXPECT_EQ(m2n_artifact_group_members(artifact, 1, 2, members, &count),
            M2N_INVALID_ARGUMENT);
  m2n_artifact_destroy(artifact);

  const std::pair<std::vector<uint32_t>, const char *> wrong[] = {
      {{0, 5}, "artifact group weights names reshard 5 of 2"},
      {{1, 1}, "artifact group weights names reshard 1 twice"},
      {{}, "artifact group weights has no member"},
  };
  for (const auto &[members, message] : wrong) {
    std::string bytes = withGroup(members);
    artifact = nullptr;
    EXPECT_EQ(m2n_artifact_load(bytes.data(), bytes.size(), &artifact),
              M2N_INVALID_ARTIFACT)
        << message;
    EXPECT_NE(std::string(m2n_last_error()).find(message), std::string::npos)
        << m2n_last_error();
    EXPECT_EQ(artifact, nullptr);
  }
}

// The kernel's launch fields bound what the runtime computes from them
// (launchShape divided by a wrapped stage size: SIGFPE in
// m2n-artifact-dump).
TEST(CorruptedArtifactKernelTest, LaunchFieldsAreBounded) {
  const std::pair<std::function<void(m2n::KernelLaunch &)>, const char *>
      wrong[] = {
          {[](auto &k) { k.threads = 0; }, "0 threads"},
          {[](auto &k) { k.threads = 96; }, "96 threads"},
          {[](auto &k) { k.ctas = 0; }, "0 CTAs"},
          {[](auto &k) { k.ctas = 1u << 20; }, "1048576 CTAs"},
          {[](auto &k) { k.stageBytes = ~uint64_t{15}; }, "stages of"},
          {[](auto &k) { k.stageBytes = 8; }, "stages of 8 bytes"},
          {[](auto &k) {
             k.stageBytes = 65536;
             k.stages = 8;
           },
           "8 stages of 65536 bytes"},
      };
  for (const auto &[corrupt, message] : wrong) {
    m2n::Artifact artifact;
    artifact.ptx = "// no kernel needed on the host";
    artifact.chip = "sm_90a";
    artifact.reshards.push_back(exampleReshard());
    corrupt(artifact.kernel);
    const std::string bytes = m2n::serializeArtifact(artifact);
    m2n_artifact loaded = nullptr;
    EXPECT_EQ(m2n_artifact_load(bytes.data(), bytes.size(), &loaded),
              M2N_INVALID_ARTIFACT)
        << message;
    EXPECT_NE(std::string(m2n_last_error()).find(message), std::string::npos)
        << m2n_last_error();
    EXPECT_EQ(loaded, nullptr);
  }
}
