//===- CommTest.cpp - the one-process-per-GPU communicator's bootstrap ------===//
//
// m2n_context_create (CUDA, several processes) first checks, collectively through the caller's
// all-gather, that every process loaded the same artifact and that every
// rank is run by exactly one process; only then does it touch CUDA. These
// tests fork real processes that exchange through shared memory, so they run
// without a GPU (where creation then stops at CUDA, with M2N_CUDA_ERROR).
//
//===----------------------------------------------------------------------===//

#include "m2n/runtime.h"

#include "ExampleArtifact.h"

#include <gtest/gtest.h>

#include <pthread.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <functional>
#include <string>
#include <vector>

namespace {

/// An all-gather among forked processes over anonymous shared memory.
struct SharedExchange {
  pthread_barrier_t barrier;
  int processes = 0;
  char area[1 << 16];
  char messages[4][256];
  int statuses[4];
};

struct Member {
  SharedExchange *shared;
  int process;
};

int allgather(const void *send, void *recv, size_t bytes, void *user) {
  Member *member = static_cast<Member *>(user);
  SharedExchange *shared = member->shared;
  if (bytes * shared->processes > sizeof(shared->area))
    return 1;
  std::memcpy(shared->area + member->process * bytes, send, bytes);
  pthread_barrier_wait(&shared->barrier);
  std::memcpy(recv, shared->area, bytes * shared->processes);
  pthread_barrier_wait(&shared->barrier);
  return 0;
}

/// Runs `body(process, member)` in `processes` forked processes; returns
/// each one's status and message.
std::vector<std::pair<m2n_status, std::string>>
runProcesses(int processes,
             const std::function<m2n_status(int, Member &)> &body) {
  auto *shared = static_cast<SharedExchange *>(
      mmap(nullptr, sizeof(SharedExchange), PROT_READ | PROT_WRITE,
           MAP_SHARED | MAP_ANONYMOUS, -1, 0));
  pthread_barrierattr_t attr;
  pthread_barrierattr_init(&attr);
  pthread_barrierattr_setpshared(&attr, PTHREAD_PROCESS_SHARED);
  pthread_barrier_init(&shared->barrier, &attr, processes);
  shared->processes = processes;
  std::vector<pid_t> children;
  for (int p = 0; p < processes; ++p) {
    pid_t pid = fork();
    if (pid == 0) {
      Member member{shared, p};
      m2n_status status = body(p, member);
      shared->statuses[p] = status;
      std::snprintf(shared->messages[p], sizeof(shared->messages[p]), "%s",
                    m2n_last_error());
      _exit(0);
    }
    children.push_back(pid);
  }
  for (pid_t pid : children)
    waitpid(pid, nullptr, 0);
  std::vector<std::pair<m2n_status, std::string>> results;
  for (int p = 0; p < processes; ++p)
    results.emplace_back(static_cast<m2n_status>(shared->statuses[p]),
                         shared->messages[p]);
  munmap(shared, sizeof(SharedExchange));
  return results;
}

/// Creates (and destroys) a CUDA context of `ranks` ranks over `processes`
/// processes, this one running `localRanks` on device 0.
m2n_status createContext(m2n_artifact artifact, int ranks, int processes,
                         const std::vector<int> &localRanks,
                         m2n_allgather_fn exchange, void *user) {
  std::vector<int> devices(localRanks.size(), 0);
  m2n_context_options options = {};
  options.version = M2N_RUNTIME_API_VERSION;
  options.backend = M2N_BACKEND_CUDA;
  options.ranks = ranks;
  options.processes = processes;
  options.local_count = static_cast<int>(localRanks.size());
  options.local_ranks = localRanks.data();
  options.devices = devices.data();
  options.allgather = exchange;
  options.allgather_user = user;
  options.timeout_ms = 1000;
  m2n_context context = nullptr;
  m2n_status status = m2n_context_create(artifact, &options, &context);
  m2n_context_destroy(context);
  return status;
}

class CommTest : public ::testing::Test {
protected:
  void SetUp() override {
    bytes = exampleArtifact();
    ASSERT_EQ(m2n_artifact_load(bytes.data(), bytes.size(), &artifact),
              M2N_SUCCESS);
    if (createContext(artifact, 3, 1, {0, 1, 2}, nullptr, nullptr) ==
        M2N_UNSUPPORTED)
      GTEST_SKIP() << "runtime built without CUDA";
  }
  void TearDown() override { m2n_artifact_destroy(artifact); }

  /// Process p runs `ranks[p]` (all on device 0) of a 3-rank communicator.
  std::vector<std::pair<m2n_status, std::string>>
  create(const std::vector<std::vector<int>> &ranks) {
    return runProcesses(ranks.size(), [&](int p, Member &member) {
      return createContext(artifact, 3, static_cast<int>(ranks.size()),
                           ranks[p], allgather, &member);
    });
  }

  std::string bytes;
  m2n_artifact artifact = nullptr;
};

TEST_F(CommTest, ProcessesThatAgreeGetPastTheBootstrap) {
  for (const auto &[status, message] : create({{0, 2}, {1}})) {
    // Without a GPU the next step, CUDA, fails; with one, it succeeds.
    EXPECT_TRUE(status == M2N_SUCCESS || status == M2N_CUDA_ERROR)
        << m2n_status_name(status) << ": " << message;
  }
}

TEST_F(CommTest, EveryRankMustBeRunOnce) {
  for (const auto &[status, message] : create({{0, 1}, {1}})) {
    EXPECT_EQ(status, M2N_INVALID_ARGUMENT);
    EXPECT_EQ(message, "rank 1 is run by 2 processes (must be 1)");
  }
  for (const auto &[status, message] : create({{0}, {1}})) {
    EXPECT_EQ(status, M2N_INVALID_ARGUMENT);
    EXPECT_EQ(message, "rank 2 is run by 0 processes (must be 1)");
  }
}

TEST_F(CommTest, EveryProcessMustLoadTheSameArtifact) {
  std::string other = exampleArtifact();
  m2n::Artifact parsed;
  ASSERT_EQ(m2n::deserializeArtifact(other, parsed), std::nullopt);
  parsed.ptx += "// another kernel";
  other = m2n::serializeArtifact(parsed);
  auto results = runProcesses(2, [&](int p, Member &member) {
    m2n_artifact mine = nullptr;
    const std::string &text = p == 0 ? bytes : other;
    if (m2n_status status = m2n_artifact_load(text.data(), text.size(), &mine))
      return status;
    std::vector<int> ranks = p == 0 ? std::vector<int>{0, 2} : std::vector<int>{1};
    m2n_status status = createContext(mine, 3, 2, ranks, allgather, &member);
    m2n_artifact_destroy(mine);
    return status;
  });
  EXPECT_EQ(results[0].first, M2N_INVALID_ARGUMENT);
  EXPECT_EQ(results[0].second, "process 1 loaded a different artifact");
  EXPECT_EQ(results[1].first, M2N_INVALID_ARGUMENT);
  EXPECT_EQ(results[1].second, "process 0 loaded a different artifact");
}

TEST_F(CommTest, AFailingAllGatherIsReported) {
  auto results = runProcesses(1, [&](int, Member &) {
    auto failing = [](const void *, void *, size_t, void *) { return 1; };
    // Two processes are announced, so the all-gather is used, and it fails.
    return createContext(artifact, 3, 2, {0}, failing, nullptr);
  });
  EXPECT_EQ(results[0].first, M2N_EXECUTION_FAILED);
  EXPECT_EQ(results[0].second, "the all-gather callback failed");
}

} // namespace
