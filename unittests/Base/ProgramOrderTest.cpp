//===- ProgramOrderTest.cpp - the waits a program needs, proven ------------===//
//
// Hand-written programs of one small reshard (f32[8], sharded over two
// ranks, to replicated on both), each with one thing wrong, and the message
// checkTransferProgram (its last part, checkProgramOrder) names it by.
//
//===----------------------------------------------------------------------===//

#include "m2n/Artifact/Program.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>

using namespace m2n;

namespace {

BufferRef source(int64_t rank) { return {BufferKind::Source, rank}; }
BufferRef destination(int64_t rank) { return {BufferKind::Destination, rank}; }
BufferRef scratch(int64_t rank, int64_t index) {
  return {BufferKind::Scratch, rank, index};
}

Movement copy(BufferRef from, int64_t fromOffset, BufferRef to,
              int64_t toOffset, int64_t bytes = 16) {
  Movement m;
  m.src = from;
  m.srcOffset = fromOffset;
  m.dst = to;
  m.dstOffset = toOffset;
  m.bytes = bytes;
  return m;
}

Movement signalling(Movement m, int64_t rank, int64_t index) {
  m.signal = CounterRef{rank, index};
  return m;
}

Movement waiting(Movement m, int64_t rank, int64_t index, uint64_t value = 1) {
  m.waits.push_back({CounterRef{rank, index}, value});
  return m;
}

Movement reducing(Movement m, Mechanism mechanism = Mechanism::Bulk) {
  m.reduction = Reduction::Sum;
  m.mechanism = mechanism;
  return m;
}

struct Reshard {
  Layout src, dst;
  std::vector<int64_t> shape{8};
  TransferProgram program;

  Reshard() {
    src.mesh = Mesh::contiguous({2});
    src.placements = {Placement::shard(0)};
    dst.mesh = Mesh::contiguous({2});
    dst.placements = {Placement::replicate()};
    program.type = ElementType::F32;
    program.ranks[0].counters = 2;
    program.ranks[1].counters = 2;
  }

  /// Rank `rank` copies both halves into its destination.
  void gatherOn(int64_t rank) {
    program.ranks[rank].items.push_back(copy(source(0), 0, destination(rank), 0));
    program.ranks[rank].items.push_back(
        copy(source(1), 0, destination(rank), 16));
  }

  /// Whether problem() first adds the reads-done the lowering emits (most
  /// tests are about one execution; one is about the end of it).
  bool reportPeerAccesses = true;

  std::string problem() const {
    TransferProgram checked = program;
    if (reportPeerAccesses)
      addReadsDone(checked);
    std::optional<ProgramIssue> issue =
        checkTransferProgram(checked, src, dst, shape);
    return issue ? issue->message : "";
  }

  /// What the lowering emits so that a rank's execution ends only once
  /// its peers are done with its buffers: every move that reads or writes
  /// another rank's buffer reports to a counter of that rank (a copy-engine
  /// copy through a join first in its rank's kernel), and the owner's last
  /// item waits for all the reports.
  static constexpr int64_t kReadsDone = 2; // After the tests' counters 0, 1.
  static void addReadsDone(TransferProgram &program) {
    std::map<int64_t, uint64_t> reports;
    auto join = [](int64_t rank) {
      Movement m = copy(destination(rank), 0, destination(rank), 0, 0);
      return m;
    };
    for (auto &[rank, rankProgram] : program.ranks) {
      for (Movement &m : rankProgram.items) {
        const int64_t peer = m.src.rank != rank ? m.src.rank : m.dst.rank;
        if (peer == rank || m.bytes <= 0 || m.readDone)
          continue;
        m.readDone = CounterRef{peer, kReadsDone};
        reports[peer] += static_cast<uint64_t>(m.instances());
      }
      for (const Movement &m : rankProgram.engineCopies)
        if (m.src.rank != rank) {
          Movement first = join(rank);
          first.readDone = CounterRef{m.src.rank, kReadsDone};
          rankProgram.items.insert(rankProgram.items.begin(), first);
          ++reports[m.src.rank];
        }
    }
    for (const auto &[owner, count] : reports) {
      RankProgram &ownerProgram = program.ranks[owner];
      ownerProgram.counters = std::max<int64_t>(ownerProgram.counters,
                                                kReadsDone + 1);
      ownerProgram.items.push_back(
          waiting(join(owner), owner, kReadsDone, count));
    }
  }
};

void expectProblem(const Reshard &reshard, const std::string &expected) {
  const std::string problem = reshard.problem();
  EXPECT_NE(problem.find(expected), std::string::npos)
      << "expected \"" << expected << "\", got \"" << problem << "\"";
}

TEST(ProgramOrderTest, AGatherIsValid) {
  Reshard reshard;
  reshard.gatherOn(0);
  reshard.gatherOn(1);
  EXPECT_EQ(reshard.problem(), "");
}

TEST(ProgramOrderTest, EveryDestinationByteIsCopied) {
  Reshard reshard;
  reshard.gatherOn(0);
  reshard.program.ranks[1].items.push_back(
      copy(source(0), 0, destination(1), 0));
  expectProblem(reshard, "no move copies bytes [16, 32) of dst(1): every "
                         "destination byte is written once");
}

TEST(ProgramOrderTest, EveryByteIsCopiedOnce) {
  Reshard reshard;
  reshard.gatherOn(0);
  reshard.gatherOn(1);
  Movement again = copy(source(1), 0, destination(1), 8, 16);
  again.mechanism = Mechanism::Vector; // Any offset on the SM path.
  reshard.program.ranks[1].items.push_back(again);
  expectProblem(reshard, "copies onto bytes [8, 16) of dst(1), which rank 1: "
                         "copy src(0)+0 -> dst(1)+0 16B read-done 0:2 copies "
                         "onto too: "
                         "every byte is written once");
  // A repeat that writes its bytes again, found without expanding it.
  reshard = Reshard();
  reshard.gatherOn(0);
  reshard.gatherOn(1);
  reshard.program.ranks[1].items[0].repeats = {{1 << 20, 0, 0, -1}};
  expectProblem(reshard, "writes the same bytes 1048576 times (a repeat of "
                         "destination stride 0)");
}

TEST(ProgramOrderTest, StagedBytesAreReadAfterTheyAreWritten) {
  Reshard reshard;
  reshard.gatherOn(0);
  reshard.program.scratches.push_back({1, Dims{4}});
  auto &items = reshard.program.ranks[1].items;
  items.push_back(signalling(copy(source(0), 0, scratch(1, 0), 0), 1, 0));
  items.push_back(copy(source(1), 0, destination(1), 16));
  items.push_back(copy(scratch(1, 0), 0, destination(1), 0));
  expectProblem(reshard, "rank 1: copy scratch0(1)+0 -> dst(1)+0 16B reads "
                         "bytes [0, 16) of scratch0(1) without waiting for "
                         "rank 1: copy src(0)+0 -> scratch0(1)+0 16B signal "
                         "1:0 read-done 0:2, which writes them");
  items.back() = waiting(items.back(), 1, 0);
  EXPECT_EQ(reshard.problem(), "");
  // Through another move: the wait is proven transitively.
  items.back() = waiting(copy(scratch(1, 0), 0, destination(1), 0), 1, 1);
  items[1] = signalling(waiting(items[1], 1, 0), 1, 1);
  EXPECT_EQ(reshard.problem(), "");
  // Bytes of a scratch nothing writes.
  reshard = Reshard();
  reshard.gatherOn(0);
  reshard.program.scratches.push_back({1, Dims{4}});
  reshard.program.ranks[1].items.push_back(
      copy(scratch(1, 0), 0, destination(1), 0));
  reshard.program.ranks[1].items.push_back(
      copy(source(1), 0, destination(1), 16));
  expectProblem(reshard, "reads bytes [0, 16) of scratch0(1), which no move "
                         "writes");
}

TEST(ProgramOrderTest, ReductionsFollowTheCopyTheyReduceInto) {
  Reshard reshard;
  reshard.gatherOn(0);
  reshard.gatherOn(1);
  auto &items = reshard.program.ranks[1].items;
  items[0] = signalling(items[0], 1, 0);
  items.push_back(reducing(copy(source(1), 0, destination(1), 0)));
  expectProblem(reshard, "rank 1: add.f32 src(1)+0 -> dst(1)+0 16B reduces "
                         "onto bytes [0, 16) of dst(1) without waiting for "
                         "rank 1: copy src(0)+0 -> dst(1)+0 16B signal 1:0 "
                         "read-done 0:2, which copies them first");
  items.back() = waiting(items.back(), 1, 0);
  EXPECT_EQ(reshard.problem(), "");
  // TMA reductions are atomic: two of them need no order between them.
  items.push_back(
      waiting(reducing(copy(source(1), 0, destination(1), 0)), 1, 0));
  EXPECT_EQ(reshard.problem(), "");
  // One on the SM path (load, combine, store) does.
  items.back().mechanism = Mechanism::Vector;
  expectProblem(reshard, "reduces on the SM path (load, combine, store) onto "
                         "bytes [0, 16) of dst(1)");
  items.back() = waiting(items.back(), 1, 1);
  items[2] = signalling(items[2], 1, 1);
  EXPECT_EQ(reshard.problem(), "");
}

TEST(ProgramOrderTest, AReductionNeedsACopyFirst) {
  Reshard reshard;
  reshard.gatherOn(0);
  reshard.gatherOn(1);
  reshard.program.scratches.push_back({1, Dims{4}});
  reshard.program.ranks[1].items.push_back(
      reducing(copy(source(0), 0, scratch(1, 0), 0)));
  expectProblem(reshard, "reduces onto bytes [0, 16) of scratch0(1), which no "
                         "move copies first");
}

TEST(ProgramOrderTest, WaitsInACycleNeverRun) {
  Reshard reshard;
  reshard.gatherOn(0);
  auto &items = reshard.program.ranks[1].items;
  items.push_back(waiting(signalling(copy(source(0), 0, destination(1), 0), 1,
                                     0),
                          1, 1));
  items.push_back(waiting(signalling(copy(source(1), 0, destination(1), 16),
                                     1, 1),
                          1, 0));
  expectProblem(reshard, "never runs: its waits depend on each other in a "
                         "cycle");
}

TEST(ProgramOrderTest, CopyEngineCopiesComeBeforeTheKernel) {
  Reshard reshard;
  reshard.gatherOn(0);
  reshard.program.scratches.push_back({1, Dims{4}});
  Movement engineCopy = copy(source(0), 0, scratch(1, 0), 0);
  engineCopy.mechanism = Mechanism::Engine;
  reshard.program.ranks[1].engineCopies.push_back(engineCopy);
  reshard.program.ranks[1].items.push_back(
      copy(scratch(1, 0), 0, destination(1), 0));
  reshard.program.ranks[1].items.push_back(
      copy(source(1), 0, destination(1), 16));
  EXPECT_EQ(reshard.problem(), "");
  // ... but not before another rank's.
  reshard.program.ranks[0].items[0] = copy(scratch(1, 0), 0, destination(0), 0);
  expectProblem(reshard, "rank 0: copy scratch0(1)+0 -> dst(0)+0 16B "
                         "read-done 1:2 reads bytes [0, 16) of scratch0(1) "
                         "without waiting for rank 1: copy-engine copy");
}

// Between executions: once a rank's stream passes its execution, its next
// one or its caller may overwrite its buffers, so a peer's move on them must
// happen before one of the owner's kernel items.
TEST(ProgramOrderTest, PeerAccessesEndBeforeTheOwnersExecution) {
  Reshard reshard;
  reshard.gatherOn(0);
  reshard.gatherOn(1);
  reshard.reportPeerAccesses = false;
  expectProblem(reshard, "rank 1: copy src(0)+0 -> dst(1)+0 16B reads src(0), "
                         "but no kernel item of rank 0 waits for it (a "
                         "read-done counter of rank 0): once rank 0's "
                         "execution ends, its next one or its caller may "
                         "overwrite the bytes while this move still uses "
                         "them");
  // Reported, but the owner never waits for the report.
  Reshard::addReadsDone(reshard.program);
  reshard.program.ranks[0].items.pop_back();
  expectProblem(reshard, "reads src(0), but no kernel item of rank 0 waits "
                         "for it");
  // Waited for through another move: the owner's item waits for a counter
  // that a move after the read adds to.
  reshard = Reshard();
  reshard.gatherOn(0);
  reshard.gatherOn(1);
  reshard.reportPeerAccesses = false;
  auto &reader = reshard.program.ranks[0].items;
  reader[1] = signalling(reader[1], 0, 0);
  reader.push_back(signalling(
      waiting(copy(destination(0), 0, destination(0), 0, 0), 0, 0), 1, 0));
  auto &owner = reshard.program.ranks[1].items;
  owner.push_back(waiting(copy(destination(1), 0, destination(1), 0, 0), 1, 0));
  reader.push_back(waiting(copy(destination(0), 0, destination(0), 0, 0), 0,
                           1));
  owner[0] = signalling(owner[0], 0, 1);
  EXPECT_EQ(reshard.problem(), "");
  // A copy-engine copy of a peer's buffer is reported by a join first in
  // its rank's kernel (the copies run before it).
  reshard = Reshard();
  reshard.gatherOn(1);
  Movement engineCopy = copy(source(1), 0, destination(0), 16);
  engineCopy.mechanism = Mechanism::Engine;
  reshard.program.ranks[0].engineCopies.push_back(engineCopy);
  reshard.program.ranks[0].items.push_back(
      copy(source(0), 0, destination(0), 0));
  reshard.program.ranks[1].items.clear();
  reshard.program.ranks[1].engineCopies.push_back(
      copy(source(0), 0, destination(1), 0));
  reshard.program.ranks[1].engineCopies.back().mechanism = Mechanism::Engine;
  reshard.program.ranks[1].engineCopies.push_back(
      copy(source(1), 0, destination(1), 16));
  reshard.program.ranks[1].engineCopies.back().mechanism = Mechanism::Engine;
  EXPECT_EQ(reshard.problem(), "");
  reshard.reportPeerAccesses = false;
  expectProblem(reshard, "rank 1: copy-engine copy copy src(0)+0 -> dst(1)+0 "
                         "16B reads src(0), but no kernel item of rank 0 "
                         "waits for it");
}

TEST(ProgramOrderTest, MoreInstancesThanItExpandsAreRefused) {
  // 2^25 distinct 16-byte instances inside a 512 MiB destination.
  Reshard reshard;
  reshard.shape = {int64_t{1} << 27};
  reshard.src.mesh = Mesh::contiguous({1});
  reshard.dst.mesh = Mesh::contiguous({1});
  reshard.program.ranks.erase(1);
  Movement whole = copy(source(0), 0, destination(0), 0);
  whole.repeats = {{int64_t{1} << 25, 16, 16, -1}};
  reshard.program.ranks[0].items.push_back(whole);
  expectProblem(reshard, "the program has 33554432 move instances, more than "
                         "the 16777216 whose order m2n proves");
}

TEST(ProgramOrderTest, TheBoundIsOnTheWholeProgramNotEachRank) {
  // Four ranks of 2^23 instances each, every rank within its own bound
  // (kMaxRankItems): the program's 2^25 are refused before any expansion
  // (the 2026-12-03 campaign's 64 ranks x 2^22 grew the host backend to
  // "out of memory").
  Reshard reshard;
  reshard.shape = {int64_t{1} << 27};
  reshard.src.mesh = Mesh::contiguous({4});
  reshard.dst.mesh = Mesh::contiguous({4});
  reshard.src.placements = {Placement::shard(0)};
  reshard.dst.placements = {Placement::shard(0)};
  reshard.program.ranks.clear();
  for (int64_t rank = 0; rank < 4; ++rank) {
    Movement part = copy(source(rank), 0, destination(rank), 0);
    part.repeats = {{int64_t{1} << 23, 16, 16, -1}};
    reshard.program.ranks[rank].items.push_back(part);
  }
  expectProblem(reshard, "the program has 33554432 move instances, more than "
                         "the 16777216 whose order m2n proves");
}

} // namespace
