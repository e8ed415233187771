//===- HostBackendTest.cpp - the runtime C API and its host backend
//---------===//

#include "m2n/runtime.h"

#include "ExampleArtifact.h"
#include "HostRun.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

namespace {

/// Runs exampleReshard's artifact on poisoned host buffers and checks
/// every destination element.
void expectExampleMoved(m2n_artifact artifact) {
  // The artifact assumes 16-byte aligned buffers (the default buffer-align).
  alignas(16) float rows0[16], rows1[16], cols1[16], cols2[16];
  for (int i = 0; i < 16; ++i) {
    rows0[i] = static_cast<float>(i);      // Global rows 0-1.
    rows1[i] = static_cast<float>(16 + i); // Global rows 2-3.
  }
  std::memset(cols1, 0xFF, sizeof cols1);
  std::memset(cols2, 0xFF, sizeof cols2);
  const void *src[3] = {rows0, rows1, nullptr};
  void *dst[3] = {nullptr, cols1, cols2};
  size_t srcBytes[3] = {64, 64, 0}, dstBytes[3] = {0, 64, 64};
  ASSERT_EQ(hostRun(artifact, {0}, 3, src, srcBytes, dst, dstBytes),
            M2N_SUCCESS)
      << m2n_last_error();
  // Rank 1 holds columns 0-3 of all 4 rows, rank 2 columns 4-7.
  for (int row = 0; row < 4; ++row)
    for (int col = 0; col < 4; ++col) {
      EXPECT_EQ(cols1[row * 4 + col], static_cast<float>(row * 8 + col));
      EXPECT_EQ(cols2[row * 4 + col], static_cast<float>(row * 8 + 4 + col));
    }
}

class HostBackendTest : public ::testing::Test {
protected:
  void SetUp() override {
    std::string bytes = exampleArtifact();
    ASSERT_EQ(m2n_artifact_load(bytes.data(), bytes.size(), &artifact),
              M2N_SUCCESS)
        << m2n_last_error();
  }
  void TearDown() override { m2n_artifact_destroy(artifact); }
  m2n_artifact artifact = nullptr;
};

TEST_F(HostBackendTest, DescribesTheReshard) {
  EXPECT_EQ(m2n_artifact_reshard_count(artifact), 1);
  EXPECT_STREQ(m2n_artifact_reshard_name(artifact, 0), "@test#0");
  EXPECT_EQ(m2n_artifact_reshard_name(artifact, 1), nullptr);
  int ranks = 0;
  ASSERT_EQ(m2n_artifact_reshard_ranks(artifact, 0, &ranks), M2N_SUCCESS);
  EXPECT_EQ(ranks, 3);
  size_t src = 0, dst = 0;
  ASSERT_EQ(m2n_artifact_buffer_bytes(artifact, 0, 0, &src, &dst), M2N_SUCCESS);
  EXPECT_EQ(src, 2u * 8 * 4);
  EXPECT_EQ(dst, 0u);
  ASSERT_EQ(m2n_artifact_buffer_bytes(artifact, 0, 2, &src, &dst), M2N_SUCCESS);
  EXPECT_EQ(src, 0u);
  EXPECT_EQ(dst, 4u * 4 * 4);
}

TEST_F(HostBackendTest, ExecutesOnUserBuffers) { expectExampleMoved(artifact); }

TEST_F(HostBackendTest, RejectsMissingAndShortBuffers) {
  alignas(16) float a[16], b[16], c[16];
  const void *src[3] = {a, nullptr, nullptr};
  void *dst[3] = {nullptr, b, c};
  size_t srcBytes[3] = {64, 0, 0}, dstBytes[3] = {0, 64, 64};
  EXPECT_EQ(hostRun(artifact, {0}, 3, src, srcBytes, dst, dstBytes),
            M2N_INVALID_ARGUMENT);
  EXPECT_STREQ(
      m2n_last_error(),
      "binding @test#0: rank 1 needs a source buffer of 64 bytes, "
      "got none");
  src[1] = b;
  srcBytes[1] = 32;
  EXPECT_EQ(hostRun(artifact, {0}, 3, src, srcBytes, dst, dstBytes),
            M2N_INVALID_ARGUMENT);
  EXPECT_STREQ(
      m2n_last_error(),
      "binding @test#0: rank 1 needs a source buffer of 64 bytes, "
      "got 32 bytes");
  EXPECT_EQ(hostRun(artifact, {0}, 2, src, srcBytes, dst, dstBytes),
            M2N_INVALID_ARGUMENT);
  EXPECT_STREQ(m2n_last_error(), "binding @test#0: it needs 3 ranks, the "
                                 "context has 2");
  EXPECT_EQ(hostRun(artifact, {5}, 3, src, srcBytes, dst, dstBytes),
            M2N_INVALID_ARGUMENT);
  EXPECT_STREQ(m2n_last_error(), "m2n_group_create: no reshard 5");
}

// The same reshard twice in one group, on two sets of buffers: one merged
// program moves both. A destination that shares bytes with another buffer
// of the group is refused before anything moves.
TEST_F(HostBackendTest, ExecutesAGroupAndRefusesAliasedDestinations) {
  alignas(16) float rows[2][2][16], cols[2][2][16];
  for (int t = 0; t < 2; ++t)
    for (int i = 0; i < 16; ++i) {
      rows[t][0][i] = static_cast<float>(100 * t + i);
      rows[t][1][i] = static_cast<float>(100 * t + 16 + i);
    }
  std::memset(cols, 0xFF, sizeof cols);
  const int reshards[2] = {0, 0};
  const void *src[6] = {rows[0][0], rows[0][1], nullptr,
                        rows[1][0], rows[1][1], nullptr};
  void *dst[6] = {nullptr, cols[0][0], cols[0][1],
                  nullptr, cols[1][0], cols[1][1]};
  size_t srcBytes[6] = {64, 64, 0, 64, 64, 0};
  size_t dstBytes[6] = {0, 64, 64, 0, 64, 64};
  ASSERT_EQ(hostRun(artifact, {reshards, reshards + 2}, 3, src, srcBytes, dst,
                                   dstBytes),
            M2N_SUCCESS)
      << m2n_last_error();
  for (int t = 0; t < 2; ++t)
    for (int row = 0; row < 4; ++row)
      for (int col = 0; col < 4; ++col) {
        EXPECT_EQ(cols[t][0][row * 4 + col],
                  static_cast<float>(100 * t + row * 8 + col));
        EXPECT_EQ(cols[t][1][row * 4 + col],
                  static_cast<float>(100 * t + row * 8 + 4 + col));
      }
  dst[5] = cols[0][1] + 4; // Member 1's destination inside member 0's.
  EXPECT_EQ(hostRun(artifact, {reshards, reshards + 2}, 3, src, srcBytes, dst,
                                   dstBytes),
            M2N_INVALID_ARGUMENT);
  EXPECT_STREQ(m2n_last_error(),
               "@test#0 (member 1): the destination buffer of rank 2 overlaps "
               "@test#0 (member 0): the destination buffer of rank 2 (a "
               "destination may share no byte with another buffer of the "
               "launch)");
  dst[5] = const_cast<float *>(rows[1][1]); // A destination on a source.
  EXPECT_EQ(hostRun(artifact, {reshards, reshards + 2}, 3, src, srcBytes, dst,
                                   dstBytes),
            M2N_INVALID_ARGUMENT);
  const int missing[2] = {0, 7};
  EXPECT_EQ(hostRun(artifact, {missing, missing + 2}, 3, src, srcBytes, dst,
                                   dstBytes),
            M2N_INVALID_ARGUMENT);
  EXPECT_STREQ(m2n_last_error(),
               "m2n_group_create: no reshard 7 (member 1 of the group)");
  EXPECT_EQ(hostRun(artifact, {reshards, reshards + 0}, 3, src, srcBytes, dst,
                                   dstBytes),
            M2N_INVALID_ARGUMENT);
}

// A reshard compiled for 16-byte aligned buffers refuses one that is not,
// naming the option that compiles it for that buffer; one compiled for
// 4-byte alignment takes it. Buffers must hold whole elements.
TEST(HostAlignmentTest, BuffersHaveTheAlignmentTheReshardWasCompiledFor) {
  alignas(16) float storage[4][20] = {};
  for (int i = 0; i < 20; ++i)
    storage[0][i] = storage[1][i] = static_cast<float>(i);
  for (int64_t alignment : {16, 4}) {
    m2n::LoweringOptions options;
    options.bufferAlignment = alignment;
    std::string bytes = exampleArtifact(exampleReshard(options));
    m2n_artifact artifact = nullptr;
    ASSERT_EQ(m2n_artifact_load(bytes.data(), bytes.size(), &artifact),
              M2N_SUCCESS)
        << m2n_last_error();
    // Rank 1's source starts 4 bytes past a 16-byte boundary.
    const void *src[3] = {storage[0], storage[1] + 1, nullptr};
    void *dst[3] = {nullptr, storage[2], storage[3]};
    size_t srcBytes[3] = {64, 64, 0}, dstBytes[3] = {0, 64, 64};
    m2n_status status =
        hostRun(artifact, {0}, 3, src, srcBytes, dst, dstBytes);
    if (alignment == 16) {
      EXPECT_EQ(status, M2N_INVALID_ARGUMENT);
      EXPECT_STREQ(m2n_last_error(),
                   "@test#0: the source buffer of rank 1 is 4-byte aligned, "
                   "and the reshard was compiled for buffers aligned to 16 "
                   "bytes; compile it with buffer-align=4 (the Python "
                   "frontend does this by itself)");
    } else {
      EXPECT_EQ(status, M2N_SUCCESS) << m2n_last_error();
      EXPECT_EQ(storage[2][0], 0.0f); // Row 0, column 0 (rank 0's row 0).
      EXPECT_EQ(storage[2][8], 1.0f); // Row 2 = rank 1's row 0, column 0.
      // Half an element in: never aligned enough.
      src[1] = reinterpret_cast<const char *>(storage[1]) + 2;
      EXPECT_EQ(hostRun(artifact, {0}, 3, src, srcBytes, dst, dstBytes),
                M2N_INVALID_ARGUMENT);
      EXPECT_STREQ(m2n_last_error(), "@test#0: the source buffer of rank 1 is "
                                     "not aligned to its 4-byte f32 elements");
    }
    m2n_artifact_destroy(artifact);
  }
}

TEST(RuntimeArtifactTest, RejectsBadArtifactsWithAReason) {
  m2n_artifact artifact = nullptr;
  EXPECT_EQ(m2n_artifact_load("nonsense", 8, &artifact), M2N_INVALID_ARTIFACT);
  EXPECT_STREQ(m2n_last_error(), "not an m2n artifact (bad magic)");
  std::string bytes = exampleArtifact();
  bytes[bytes.size() / 2] ^= 0x40;
  EXPECT_EQ(m2n_artifact_load(bytes.data(), bytes.size(), &artifact),
            M2N_INVALID_ARTIFACT);
  EXPECT_STREQ(m2n_last_error(), "artifact corrupted: checksum mismatch");
  EXPECT_EQ(m2n_artifact_load(nullptr, 0, &artifact), M2N_INVALID_ARGUMENT);
  EXPECT_EQ(m2n_artifact_load_file("/nonexistent/a.m2n", &artifact),
            M2N_IO_ERROR);
  EXPECT_STREQ(m2n_last_error(), "cannot open '/nonexistent/a.m2n'");
  EXPECT_STREQ(m2n_status_name(M2N_UNSUPPORTED), "M2N_UNSUPPORTED");
  EXPECT_EQ(artifact, nullptr);
}

// Counters are never reset: a wait value that is not exactly what one
// execution adds would let a later execution pass its wait early.
TEST(RuntimeArtifactTest, RejectsWaitsThatDriftAcrossExecutions) {
  m2n::CompiledReshard reshard = exampleReshard();
  m2n::Movement *waiter = nullptr;
  for (auto &[rank, program] : reshard.program.ranks)
    for (m2n::Movement &m : program.items)
      if (!m.waits.empty())
        waiter = &m;
  ASSERT_NE(waiter, nullptr);
  waiter->waits[0].value += 1;
  std::string bytes = exampleArtifact(reshard);
  m2n_artifact artifact = nullptr;
  EXPECT_EQ(m2n_artifact_load(bytes.data(), bytes.size(), &artifact),
            M2N_INVALID_ARTIFACT);
  EXPECT_NE(std::string(m2n_last_error()).find("but one execution adds"),
            std::string::npos)
      << m2n_last_error();
  EXPECT_EQ(artifact, nullptr);
}

// The kernel writes through the counters items name: an artifact naming one
// that does not exist (well formed, checksum and all) is refused at load.
TEST(RuntimeArtifactTest, RejectsCountersThatDoNotExist) {
  m2n::CompiledReshard reshard = exampleReshard();
  m2n::Movement *reader = nullptr;
  for (auto &[rank, program] : reshard.program.ranks)
    for (m2n::Movement &m : program.items)
      if (m.readDone)
        reader = &m;
  ASSERT_NE(reader, nullptr);
  reader->readDone->index = 99;
  std::string bytes = exampleArtifact(reshard);
  m2n_artifact artifact = nullptr;
  EXPECT_EQ(m2n_artifact_load(bytes.data(), bytes.size(), &artifact),
            M2N_INVALID_ARTIFACT);
  EXPECT_NE(
      std::string(m2n_last_error()).find("names a counter that does not exist"),
      std::string::npos)
      << m2n_last_error();
  EXPECT_EQ(artifact, nullptr);

  reshard = exampleReshard();
  m2n::Movement copy = reshard.program.ranks.begin()->second.items.front();
  copy.mechanism = m2n::Mechanism::Engine;
  copy.signal = m2n::CounterRef{copy.dst.rank, 0};
  reshard.program.ranks.begin()->second.engineCopies.push_back(copy);
  bytes = exampleArtifact(reshard);
  EXPECT_EQ(m2n_artifact_load(bytes.data(), bytes.size(), &artifact),
            M2N_INVALID_ARTIFACT);
  EXPECT_NE(std::string(m2n_last_error()).find("is not a plain copy"),
            std::string::npos)
      << m2n_last_error();
}

// The loader checks what the runtime would trust blindly: bytes inside the
// buffers (computed from layouts it validates first), tiles inside their
// maps.
TEST(RuntimeArtifactTest, RejectsMovesOutsideTheirBuffersAndBadLayouts) {
  auto rejects = [](const m2n::CompiledReshard &reshard,
                    const std::string &expected) {
    std::string bytes = exampleArtifact(reshard);
    m2n_artifact artifact = nullptr;
    EXPECT_EQ(m2n_artifact_load(bytes.data(), bytes.size(), &artifact),
              M2N_INVALID_ARTIFACT);
    EXPECT_NE(std::string(m2n_last_error()).find(expected), std::string::npos)
        << m2n_last_error();
    EXPECT_EQ(artifact, nullptr);
  };
  m2n::CompiledReshard reshard = exampleReshard();
  m2n::Movement &first = reshard.program.ranks.begin()->second.items.front();
  first.srcOffset += 1 << 20;
  rejects(reshard, "reaches outside its buffers");

  // An offset and a size whose sum wraps around int64.
  reshard = exampleReshard();
  reshard.program.ranks.begin()->second.items.front().srcOffset = INT64_MAX;
  rejects(reshard, "reaches outside its buffers");

  reshard = exampleReshard();
  reshard.program.ranks.begin()->second.items.front().src.rank = 99;
  rejects(reshard, "names a buffer that does not exist");

  reshard = exampleReshard();
  reshard.dst.mesh.ranks.pop_back(); // The mesh shape no longer fits.
  rejects(reshard, "destination: mesh of");
}

/// Options of a context of `ranks` ranks on `backend`, every rank in this
/// process.
m2n_context_options contextOptions(m2n_backend backend, int ranks) {
  m2n_context_options options = {};
  options.version = M2N_RUNTIME_API_VERSION;
  options.backend = backend;
  options.ranks = ranks;
  return options;
}

// Bad options are named before anything is set up.
TEST_F(HostBackendTest, ContextOptionsAreChecked) {
  m2n_context context = nullptr;
  auto refused = [&](m2n_context_options options, m2n_status status,
                     const char *message) {
    EXPECT_EQ(m2n_context_create(artifact, &options, &context), status);
    EXPECT_STREQ(m2n_last_error(), message);
    EXPECT_EQ(context, nullptr);
  };
  m2n_context_options options = contextOptions(M2N_BACKEND_HOST, 3);
  EXPECT_EQ(m2n_context_create(nullptr, &options, &context),
            M2N_INVALID_ARGUMENT);
  EXPECT_EQ(m2n_context_create(artifact, nullptr, &context),
            M2N_INVALID_ARGUMENT);
  options.version = 6;
  refused(options, M2N_INVALID_ARGUMENT,
          "m2n_context_create: the options are of runtime API version 6, "
          "this runtime's is 7 (set options.version to "
          "M2N_RUNTIME_API_VERSION and rebuild against this runtime's "
          "m2n/runtime.h)");
  options = contextOptions(M2N_BACKEND_HOST, 3);
  options.backend = 5;
  refused(options, M2N_INVALID_ARGUMENT,
          "m2n_context_create: unknown backend 5 (M2N_BACKEND_HOST or "
          "M2N_BACKEND_CUDA)");
  refused(contextOptions(M2N_BACKEND_HOST, 0), M2N_INVALID_ARGUMENT,
          "m2n_context_create: a context needs at least one rank, got 0");
  options = contextOptions(M2N_BACKEND_HOST, 3);
  options.local_count = 1;
  refused(options, M2N_INVALID_ARGUMENT,
          "m2n_context_create: local_count and local_ranks go together (0 "
          "and NULL: every rank)");
  const int twice[3] = {0, 1, 1}, outside[1] = {3};
  options.local_count = 3;
  options.local_ranks = twice;
  refused(options, M2N_INVALID_ARGUMENT,
          "m2n_context_create: local rank 1 is named twice");
  options.local_count = 1;
  options.local_ranks = outside;
  refused(options, M2N_INVALID_ARGUMENT,
          "m2n_context_create: local rank 3 is not one of the 3 ranks");
  options.local_ranks = twice;
  refused(options, M2N_INVALID_ARGUMENT,
          "m2n_context_create: one process runs every rank, but local_ranks "
          "names 1 of 3");
  options.processes = 2;
  refused(options, M2N_INVALID_ARGUMENT,
          "m2n_context_create: several processes exchange through the "
          "caller's all-gather, and none was given");
  options.processes = 4;
  refused(options, M2N_INVALID_ARGUMENT,
          "m2n_context_create: 4 processes for 3 ranks (each process runs at "
          "least one rank)");
  options.processes = 2;
  options.local_count = 0;
  options.local_ranks = nullptr;
  refused(options, M2N_INVALID_ARGUMENT,
          "m2n_context_create: with 2 processes, name this process's ranks "
          "(local_ranks)");
  options.local_count = 1;
  options.local_ranks = twice;
  options.allgather = [](const void *, void *, size_t, void *) { return 1; };
  refused(options, M2N_UNSUPPORTED,
          "the host backend runs every rank in one process, not over 2 "
          "processes");
  const int reversed[3] = {2, 1, 0};
  options = contextOptions(M2N_BACKEND_HOST, 3);
  options.local_count = 3;
  options.local_ranks = reversed;
  refused(options, M2N_UNSUPPORTED,
          "the host backend takes its ranks in order (local_ranks NULL or 0, "
          "1, ...): slot 0 is rank 2");
  options = contextOptions(M2N_BACKEND_HOST, 3);
  options.timeout_ms = -1;
  refused(options, M2N_INVALID_ARGUMENT,
          "m2n_context_create: the timeout must be finite and positive (0: "
          "the default), got -1.000000 ms");
}

// One bind, several launches: each launch moves what the sources hold
// then. Every call on a missing context, group or binding is named.
TEST_F(HostBackendTest, AGroupOfOneIsBoundOnceAndLaunchedOften) {
  m2n_context_options options = contextOptions(M2N_BACKEND_HOST, 3);
  m2n_context context = nullptr;
  ASSERT_EQ(m2n_context_create(artifact, &options, &context), M2N_SUCCESS)
      << m2n_last_error();
  int group = -1;
  const int reshard = 0;
  EXPECT_EQ(m2n_group_create(context, 1, &reshard, &group), M2N_SUCCESS);
  EXPECT_EQ(group, 0);
  EXPECT_EQ(m2n_group_launch(context, group, nullptr), M2N_INVALID_ARGUMENT);
  EXPECT_STREQ(m2n_last_error(), "m2n_group_launch: @test#0 (group 0) is "
                                 "not bound to buffers");
  alignas(16) float rows[2][16], cols[2][16];
  void *src[3] = {rows[0], rows[1], nullptr};
  void *dst[3] = {nullptr, cols[0], cols[1]};
  size_t srcBytes[3] = {64, 64, 0}, dstBytes[3] = {0, 64, 64};
  const m2n_buffers buffers = {src, srcBytes, dst, dstBytes, nullptr, nullptr};
  ASSERT_EQ(m2n_group_bind(context, group, &buffers), M2N_SUCCESS)
      << m2n_last_error();
  for (int launch = 0; launch < 3; ++launch) {
    for (int i = 0; i < 16; ++i) {
      rows[0][i] = static_cast<float>(100 * launch + i);
      rows[1][i] = static_cast<float>(100 * launch + 16 + i);
    }
    std::memset(cols, 0xFF, sizeof cols);
    ASSERT_EQ(m2n_group_launch(context, group, nullptr), M2N_SUCCESS)
        << m2n_last_error();
    EXPECT_EQ(m2n_context_synchronize(context), M2N_SUCCESS);
    for (int row = 0; row < 4; ++row)
      for (int col = 0; col < 4; ++col) {
        EXPECT_EQ(cols[0][row * 4 + col],
                  static_cast<float>(100 * launch + row * 8 + col));
        EXPECT_EQ(cols[1][row * 4 + col],
                  static_cast<float>(100 * launch + row * 8 + 4 + col));
      }
  }
  // A failed bind leaves the group unbound.
  srcBytes[1] = 8;
  EXPECT_EQ(m2n_group_bind(context, group, &buffers), M2N_INVALID_ARGUMENT);
  EXPECT_EQ(m2n_group_launch(context, group, nullptr), M2N_INVALID_ARGUMENT);
  EXPECT_EQ(m2n_group_launch(context, 1, nullptr), M2N_INVALID_ARGUMENT);
  EXPECT_STREQ(m2n_last_error(), "m2n_group_launch: no group 1");
  EXPECT_EQ(m2n_group_bind(context, group, nullptr), M2N_INVALID_ARGUMENT);
  EXPECT_STREQ(m2n_last_error(), "binding @test#0: null buffers");
  // m2n_group_execute binds again where a pointer or a size changed.
  srcBytes[1] = 64;
  ASSERT_EQ(m2n_group_execute(context, group, &buffers, nullptr), M2N_SUCCESS)
      << m2n_last_error();
  dstBytes[2] = 4;
  EXPECT_EQ(m2n_group_execute(context, group, &buffers, nullptr),
            M2N_INVALID_ARGUMENT);
  EXPECT_STREQ(m2n_last_error(), "binding @test#0: rank 2 needs a destination "
                                 "buffer of 64 bytes, got 4 bytes");
  dstBytes[2] = 64;
  const m2n_buffers unsized = {src, srcBytes, dst, dstBytes, dst, nullptr};
  EXPECT_EQ(m2n_group_bind(context, group, &unsized), M2N_INVALID_ARGUMENT);
  EXPECT_STREQ(m2n_last_error(), "binding @test#0: null buffer arrays, or "
                                 "scales without their sizes");
  m2n_context_destroy(context);
  EXPECT_EQ(m2n_group_create(nullptr, 1, &reshard, &group),
            M2N_INVALID_ARGUMENT);
  EXPECT_STREQ(m2n_last_error(), "m2n_group_create: null context or group");
  EXPECT_EQ(m2n_group_bind(nullptr, 0, &buffers), M2N_INVALID_ARGUMENT);
  EXPECT_STREQ(m2n_last_error(), "m2n_group_bind: null context");
  EXPECT_EQ(m2n_group_launch(nullptr, 0, nullptr), M2N_INVALID_ARGUMENT);
  EXPECT_EQ(m2n_group_execute(nullptr, 0, &buffers, nullptr),
            M2N_INVALID_ARGUMENT);
  EXPECT_EQ(m2n_context_synchronize(nullptr), M2N_INVALID_ARGUMENT);
  m2n_context_destroy(nullptr);
}

// Without a GPU (CI) the CUDA backend answers with a status and a message,
// never a crash; with one, a context for the artifact comes up.
TEST_F(HostBackendTest, CudaBackendReportsItsAvailability) {
  m2n_context context = nullptr;
  m2n_context_options options = contextOptions(M2N_BACKEND_CUDA, 3);
  m2n_status status = m2n_context_create(artifact, &options, &context);
  if (status == M2N_SUCCESS) {
    m2n_context_destroy(context);
    return;
  }
  EXPECT_TRUE(status == M2N_CUDA_ERROR || status == M2N_UNSUPPORTED)
      << m2n_status_name(status);
  EXPECT_STRNE(m2n_last_error(), "");
  EXPECT_EQ(context, nullptr);
  int count = -1;
  if (status == M2N_UNSUPPORTED && m2n_cuda_device_count(&count) != M2N_SUCCESS) {
    EXPECT_EQ(count, 0);
    EXPECT_STRNE(m2n_last_error(), "");
  }
}

} // namespace

namespace {
// An artifact's repeated movements stay compact when it is loaded: a move
// standing for 2^27 instances loads at once (expanding it would take 16
// GiB), a repeated program executes as its instances, and what a rank
// would expand is bounded (2^28 items) as well as each movement (2^32).
TEST(RepeatedMovementsTest, LoadCompactAndExecuteExpanded) {
  m2n::LoweringOptions options;
  options.maxItemBytes = 16; // Rows of 16 bytes cut into 16-byte items.
  options.tileBelowRunBytes = 0;
  m2n::CompiledReshard reshard = exampleReshard(options);
  int64_t repeated = 0;
  for (const auto &[rank, program] : reshard.program.ranks)
    for (const m2n::Movement &m : program.items)
      repeated += !m.repeats.empty();
  ASSERT_GT(repeated, 0);
  {
    std::string bytes = exampleArtifact(reshard);
    m2n_artifact artifact = nullptr;
    ASSERT_EQ(m2n_artifact_load(bytes.data(), bytes.size(), &artifact),
              M2N_SUCCESS)
        << m2n_last_error();
    expectExampleMoved(artifact);
    m2n_artifact_destroy(artifact);
  }
  // Zero strides keep 2^27 instances inside the buffers, but each writes
  // the same bytes: refused by name, without expanding them.
  m2n::Movement &huge = reshard.program.ranks.at(1).items.front();
  huge.repeats = {{int64_t{1} << 14, 0, 0, -1}, {int64_t{1} << 13, 0, 0, -1}};
  huge.readDone.reset();
  huge.signal.reset();
  for (auto &[rank, program] : reshard.program.ranks)
    for (m2n::Movement &m : program.items)
      if (!m.waits.empty() && m.bytes == 0)
        m.waits.clear(); // The reads-done waits no longer add up.
  for (auto &[rank, program] : reshard.program.ranks)
    for (m2n::Movement &m : program.items)
      m.readDone.reset();
  std::string bytes = exampleArtifact(reshard);
  m2n_artifact artifact = nullptr;
  EXPECT_EQ(m2n_artifact_load(bytes.data(), bytes.size(), &artifact),
            M2N_INVALID_ARTIFACT);
  EXPECT_NE(std::string(m2n_last_error())
                .find("writes the same bytes 16384 times (a repeat of "
                      "destination stride 0)"),
            std::string::npos)
      << m2n_last_error();
  // 2^32 instances are more than a rank may expand to; 2^33, more than a
  // movement may stand for: the loader refuses both, by name.
  huge.repeats = {{int64_t{1} << 16, 0, 0, -1}, {int64_t{1} << 16, 0, 0, -1}};
  bytes = exampleArtifact(reshard);
  EXPECT_EQ(m2n_artifact_load(bytes.data(), bytes.size(), &artifact),
            M2N_INVALID_ARTIFACT);
  EXPECT_NE(std::string(m2n_last_error())
                .find("rank 1 has more than 268435456 kernel items"),
            std::string::npos)
      << m2n_last_error();
  huge.repeats.push_back({2, 0, 0, -1});
  bytes = exampleArtifact(reshard);
  EXPECT_EQ(m2n_artifact_load(bytes.data(), bytes.size(), &artifact),
            M2N_INVALID_ARTIFACT);
  EXPECT_NE(std::string(m2n_last_error()).find("repeats more than 4294967296"),
            std::string::npos)
      << m2n_last_error();
}

// The host backend walks repeated movements instance by instance instead of
// expanding them: a reshard of 2^21 16-byte instances runs (values checked)
// in a fraction of the memory its expansion would take. Run in a child
// process so that its peak resident memory is its own.
TEST(RepeatedMovementsTest, HostBackendWalksInstancesWithoutExpandingThem) {
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  GTEST_SKIP() << "a sanitizer's shadow memory hides the peak";
#endif
#if defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) ||     \
    __has_feature(memory_sanitizer)
  GTEST_SKIP() << "a sanitizer's shadow memory hides the peak";
#endif
#endif
  m2n::LoweringOptions options;
  options.maxItemBytes = 16;
  options.tileBelowRunBytes = 0;
  const int64_t columns = int64_t{1} << 21;
  m2n::CompiledReshard reshard = exampleReshard(options, columns);
  const int64_t instances = reshard.program.itemCount();
  ASSERT_GE(instances, int64_t{1} << 21);
  const int64_t bufferBytes = 2 * 4 * columns * sizeof(float);
  const int64_t bound = bufferBytes + (int64_t{96} << 20);
  // What expanding the repeats would hold, the movements alone.
  ASSERT_GT(instances * static_cast<int64_t>(sizeof(m2n::Movement)), 2 * bound);
  const std::string bytes = exampleArtifact(reshard);
  reshard = {};

  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    // Exit codes: 0 moved and checked, 1 a failed call, 2 a wrong value.
    m2n_artifact artifact = nullptr;
    if (m2n_artifact_load(bytes.data(), bytes.size(), &artifact) != M2N_SUCCESS)
      _exit(1);
    const int64_t half = 2 * columns; // Elements of two rows or columns.
    std::vector<float> rows0(half), rows1(half), cols1(half), cols2(half);
    for (int64_t i = 0; i < half; ++i) {
      rows0[i] = static_cast<float>(i);
      rows1[i] = static_cast<float>(half + i);
    }
    std::memset(cols1.data(), 0xFF, half * sizeof(float));
    std::memset(cols2.data(), 0xFF, half * sizeof(float));
    const void *src[3] = {rows0.data(), rows1.data(), nullptr};
    void *dst[3] = {nullptr, cols1.data(), cols2.data()};
    const size_t side = half * sizeof(float);
    size_t srcBytes[3] = {side, side, 0}, dstBytes[3] = {0, side, side};
    if (hostRun(artifact, {0}, 3, src, srcBytes, dst, dstBytes) !=
        M2N_SUCCESS)
      _exit(1);
    const int64_t width = columns / 2;
    for (int64_t row = 0; row < 4; ++row)
      for (int64_t col = 0; col < width; ++col)
        if (cols1[row * width + col] !=
                static_cast<float>(row * columns + col) ||
            cols2[row * width + col] !=
                static_cast<float>(row * columns + width + col))
          _exit(2);
    m2n_artifact_destroy(artifact);
    _exit(0);
  }
  int status = 0;
  struct rusage usage {};
  ASSERT_EQ(wait4(child, &status, 0, &usage), child);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << "1: a call failed, 2: a wrong value";
  // ru_maxrss is in KiB on Linux.
  EXPECT_LT(static_cast<int64_t>(usage.ru_maxrss) * 1024, bound)
      << instances << " instances";
}

// m2n_layout_local_box: the compiler's split rule without compiling, for
// explicit rank lists, explicit boundaries over two axes, and a mesh of
// 2^31 positions answered without listing them; a layout that does not fit
// is named.
TEST(LayoutLocalBoxTest, AnswersWithTheCompilersRule) {
  int64_t mesh[2] = {2, 2}, shape[2] = {8, 3}, offsets[2], sizes[2];
  int64_t boundaries[5] = {0, 1, 1, 5, 8};
  m2n_placement placements[2] = {{0, 0, 0, boundaries, 5}, {0, 0, 0, nullptr, 0}};
  int64_t ranks[4] = {7, 5, 3, 1};
  int present = -1;
  // Rank 3 is grid position 2 = (1, 0): part 2 of dim 0, rows [1, 5).
  ASSERT_EQ(m2n_layout_local_box(mesh, 2, ranks, 0, placements, shape, 2, 3,
                                 &present, offsets, sizes),
            M2N_SUCCESS)
      << m2n_last_error();
  EXPECT_EQ(present, 1);
  EXPECT_EQ(offsets[0], 1);
  EXPECT_EQ(sizes[0], 4);
  EXPECT_EQ(sizes[1], 3);
  ASSERT_EQ(m2n_layout_local_box(mesh, 2, ranks, 0, placements, shape, 2, 4,
                                 &present, offsets, sizes),
            M2N_SUCCESS);
  EXPECT_EQ(present, 0);

  int64_t huge[2] = {int64_t(1) << 16, int64_t(1) << 15};
  m2n_placement chunked[2] = {{0, 1, 0, nullptr, 0}, {1, -1, 0, nullptr, 0}};
  // Position 2^15 + 5 = (1, 5): chunk 1 of 3 columns over 2^16 ranks.
  ASSERT_EQ(m2n_layout_local_box(huge, 2, nullptr, 10, chunked, shape, 2,
                                 10 + (int64_t(1) << 15) + 5, &present,
                                 offsets, sizes),
            M2N_SUCCESS)
      << m2n_last_error();
  EXPECT_EQ(present, 1);
  EXPECT_EQ(offsets[1], 1);
  EXPECT_EQ(sizes[1], 1);

  shape[0] = 9; // The boundaries end at 8.
  EXPECT_EQ(m2n_layout_local_box(mesh, 2, ranks, 0, placements, shape, 2, 3,
                                 &present, offsets, sizes),
            M2N_INVALID_ARGUMENT);
  EXPECT_STREQ(m2n_last_error(), "mesh axis 0: the boundaries of dimension 0 "
                                 "end at 8, not at its extent 9");
  placements[0].kind = 7;
  EXPECT_EQ(m2n_layout_local_box(mesh, 2, ranks, 0, placements, shape, 2, 3,
                                 &present, offsets, sizes),
            M2N_INVALID_ARGUMENT);
}

} // namespace
