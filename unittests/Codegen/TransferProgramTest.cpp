//===- TransferProgramTest.cpp - schedules lowered to kernel work items -----===//

#include "m2n/Codegen/ProgramExecutor.h"
#include "m2n/Codegen/TransferProgram.h"
#include "m2n/Route/Router.h"

#include "../Layout/RandomLayouts.h"
#include "KernelTableCheck.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <memory>
#include <set>

#include <iostream>

using namespace m2n;

namespace {

/// Plans, routes and lowers one reshard: how every example below starts.
std::optional<std::string> lower(const Layout &src, const Layout &dst,
                                 const std::vector<int64_t> &shape,
                                 const Topology &topology, Strategy strategy,
                                 ElementType type, const LoweringOptions &options,
                                 TransferProgram &program,
                                 std::optional<ElementCast> cast = std::nullopt) {
  ReshardPlan plan = IntersectionPlanner(src, dst, shape).plan();
  Schedule schedule =
      TopologyRouter(src, dst, shape, topology).route(plan, strategy);
  addDataDependencies(schedule);
  return lowerSchedule(schedule, src, dst, shape, type, options, program, cast);
}

/// The reads-done contract: every kernel item reading another rank's buffer
/// increments one counter of that rank, and a rank whose buffers are read
/// ends with a zero-byte item waiting for exactly that many reads.
std::optional<std::string> readsDoneProblem(const TransferProgram &program) {
  std::map<int64_t, uint64_t> reads;
  std::map<int64_t, CounterRef> counters;
  for (const auto &[rank, rp] : program.ranks) {
    // Copy-engine copies from peers: one zero-byte report per peer.
    std::set<int64_t> enginePeers, reported;
    for (const Movement &copy : rp.engineCopies)
      if (copy.src.rank != rank)
        enginePeers.insert(copy.src.rank);
    for (const Movement &m : rp.items) {
      bool report = m.bytes == 0 && m.src.rank != rank &&
                    enginePeers.count(m.src.rank) && m.waits.empty() &&
                    !m.signal && reported.insert(m.src.rank).second;
      bool remote = (m.bytes > 0 && m.src.rank != rank) || report;
      if (remote != m.readDone.has_value())
        return "rank " + std::to_string(rank) + ": " + m.str(program.type);
      if (!remote)
        continue;
      if (m.readDone->rank != m.src.rank)
        return "read-done on the wrong rank: " + m.str(program.type);
      auto [it, fresh] = counters.emplace(m.src.rank, *m.readDone);
      if (!fresh && !(it->second == *m.readDone))
        return "two read-done counters for rank " + std::to_string(m.src.rank);
      reads[m.src.rank] += static_cast<uint64_t>(m.instances());
    }
    if (reported != enginePeers)
      return "rank " + std::to_string(rank) +
             " does not report each peer its copy-engine copies read";
  }
  for (const auto &[owner, count] : reads) {
    const Movement &last = program.ranks.at(owner).items.back();
    if (last.bytes != 0 || last.waits.size() != 1 ||
        !(last.waits[0].counter == counters.at(owner)) ||
        last.waits[0].value != count)
      return "rank " + std::to_string(owner) + " does not end waiting for " +
             std::to_string(count) + " reads: " + last.str(program.type);
  }
  return std::nullopt;
}

/// What a merged launch of `ranks` elides (readsDoneWithin): counters of
/// those ranks that only their own items read through, that nothing
/// signals and that only their owner's last item waits for; with every
/// rank in `ranks` and no network step, every reads-done counter.
std::optional<std::string>
readsDoneWithinProblem(const TransferProgram &program,
                       const std::vector<int64_t> &ranks) {
  const std::vector<CounterRef> within = readsDoneWithin(program, ranks);
  auto in = [&](int64_t rank) {
    return std::find(ranks.begin(), ranks.end(), rank) != ranks.end();
  };
  bool network = false;
  std::vector<CounterRef> every;
  for (const auto &[rank, rp] : program.ranks) {
    network |= !rp.receives.empty();
    for (const Movement &m : rp.items) {
      if (m.readDone &&
          std::find(every.begin(), every.end(), *m.readDone) == every.end())
        every.push_back(*m.readDone);
      for (const CounterRef &counter : within) {
        if (m.signal && *m.signal == counter)
          return "a signalled counter: " + m.str(program.type);
        if (m.readDone && *m.readDone == counter && !in(rank))
          return "read by rank " + std::to_string(rank) + " outside the launch";
        for (const CounterWait &wait : m.waits)
          if (wait.counter == counter &&
              (rank != counter.rank || &m != &rp.items.back()))
            return "waited for by more than its owner's last item: " +
                   m.str(program.type);
      }
    }
  }
  if (network && !within.empty())
    return "counters elided with network steps";
  if (!network && ranks.size() == program.ranks.size() &&
      within.size() != every.size())
    return "every rank in the launch, but " + std::to_string(within.size()) +
           " of " + std::to_string(every.size()) + " reads-done counters";
  return std::nullopt;
}

/// A vector reduction loads, combines and stores: no other write of its
/// destination bytes may run at the same time. Returns the first vector
/// reduction that overlaps another item's destination bytes without a
/// dependency path between the two (through counters: an item waiting for
/// a counter's full count comes after every item signalling it). The order
/// of a CTA's items does not count: the CTA count is the runtime's.
std::optional<std::string> unorderedVectorReduction(const TransferProgram &program) {
  std::vector<std::pair<int64_t, const Movement *>> items;
  for (const auto &[rank, rp] : program.ranks)
    for (const Movement &m : rp.items)
      items.push_back({rank, &m});
  std::map<std::pair<int64_t, int64_t>, std::vector<size_t>> signalers;
  for (size_t i = 0; i < items.size(); ++i)
    if (items[i].second->signal)
      signalers[{items[i].second->signal->rank, items[i].second->signal->index}]
          .push_back(i);
  std::map<size_t, std::set<size_t>> memo;
  auto ancestors = [&](size_t start) -> const std::set<size_t> & {
    auto found = memo.find(start);
    if (found != memo.end())
      return found->second;
    std::set<size_t> &seen = memo[start];
    std::vector<size_t> stack = {start};
    while (!stack.empty()) {
      size_t at = stack.back();
      stack.pop_back();
      for (const CounterWait &wait : items[at].second->waits)
        for (size_t before : signalers[{wait.counter.rank, wait.counter.index}])
          if (seen.insert(before).second)
            stack.push_back(before);
    }
    return seen;
  };
  auto dstRange = [](const Movement &m) {
    return std::make_pair(m.dstOffset, m.dstOffset + m.bytes);
  };
  for (size_t v = 0; v < items.size(); ++v) {
    const Movement &vector = *items[v].second;
    if (vector.mechanism != Mechanism::Vector || !vector.reduction || !vector.bytes)
      continue;
    const std::set<size_t> &before = ancestors(v);
    for (size_t w = 0; w < items.size(); ++w) {
      const Movement &other = *items[w].second;
      if (w == v || !other.bytes || other.isTile() || !(other.dst == vector.dst))
        continue;
      auto [a0, a1] = dstRange(vector);
      auto [b0, b1] = dstRange(other);
      if (a1 <= b0 || b1 <= a0 || before.count(w) || ancestors(w).count(v))
        continue;
      return vector.str(program.type) + " races with " + other.str(program.type);
    }
  }
  return std::nullopt;
}

TEST(TransferProgramTest, PaperExampleAHierarchical) {
  Layout src{Mesh::contiguous({1, 4}, 0),
             {Placement::replicate(), Placement::shard(0)}};
  Layout dst{Mesh::contiguous({2, 2}, 4),
             {Placement::replicate(), Placement::shard(0)}};
  std::vector<int64_t> shape = {4, 8};
  Topology topology;
  topology.domains = {{0, 1, 2, 3}, {4, 5, 6, 7}};
  TransferProgram program;
  ASSERT_EQ(lower(src, dst, shape, topology, Strategy::Hierarchical,
                  ElementType::BF16, {}, program),
            std::nullopt);
  // Rank 4 receives row 0 over the network (signalling counter 0) and pulls
  // row 1 from rank 6 once rank 6's receive has signalled.
  const RankProgram &rank4 = program.ranks.at(4);
  ASSERT_EQ(rank4.receives.size(), 1u);
  EXPECT_EQ(rank4.receives[0].str(program.type),
            "copy src(0)+0 -> dst(4)+0 16B signal 4:0");
  // It tells rank 6 once it has read, and waits (its last item) until rank
  // 6 has read row 0 from it.
  ASSERT_EQ(rank4.items.size(), 2u);
  EXPECT_EQ(rank4.items[0].str(program.type),
            "copy dst(6)+16 -> dst(4)+16 16B wait 6:0>=1 read-done 6:1");
  EXPECT_EQ(rank4.items[1].str(program.type), "copy dst(4)+0 -> dst(4)+0 0B wait 4:1>=1");

  ReshardSimulator simulator(src, dst, shape, ElementType::BF16);
  ASSERT_EQ(executeProgram(program, simulator, 2), std::nullopt);
  EXPECT_TRUE(simulator.check().passed);
}

// A strided box crossing the network moves as one NCCL transfer per network
// step (per pair of ranks and chunk), not one per contiguous run: the
// sender packs it into staging, the receiver unpacks it. Here a 4x32x32 f32
// tensor goes from column shards on one domain to row shards on another:
// each of the 4 pairs exchanges a 4x16x16 box, 64 runs of 64 bytes.
TEST(TransferProgramTest, NetworkStepsMoveOneTransferPerPairAndChunk) {
  Layout src{Mesh::contiguous({2}, 0), {Placement::shard(2)}};
  Layout dst{Mesh::contiguous({2}, 2), {Placement::shard(1)}};
  std::vector<int64_t> shape = {4, 32, 32};
  Topology topology;
  topology.domains = {{0, 1}, {2, 3}};
  for (int64_t chunkBytes : {int64_t{0}, int64_t{1024}}) {
    SCOPED_TRACE("chunk-bytes " + std::to_string(chunkBytes));
    ReshardPlan plan = IntersectionPlanner(src, dst, shape).plan();
    Schedule schedule = TopologyRouter(src, dst, shape, topology)
                            .route(plan, Strategy::Flat);
    if (chunkBytes)
      schedule = chunkSchedule(schedule, 4, chunkBytes);
    addDataDependencies(schedule);
    TransferProgram program;
    ASSERT_EQ(lowerSchedule(schedule, src, dst, shape, ElementType::F32, {},
                            program),
              std::nullopt);
    ASSERT_EQ(verifyTransferProgram(program, src, dst, shape), std::nullopt);
    const int64_t pairs = 4, chunks = chunkBytes ? 4096 / chunkBytes : 1;
    std::vector<std::pair<int64_t, const Movement *>> transfers =
        networkOrder(program);
    // NCCL transfers: one per instance of a (possibly repeated) receive.
    int64_t posted = 0;
    for (const auto &[rank, receive] : transfers)
      posted += receive->instances();
    EXPECT_EQ(posted, pairs * chunks);
    EXPECT_EQ(static_cast<int64_t>(transfers.size()), pairs * chunks);
    for (const auto &[rank, receive] : transfers) {
      // Whole: 4096 bytes a pair, or one chunk of it. Unchunked, the box is
      // strided on both sides: staging to staging. A 1x16x16 chunk is
      // contiguous in the source and goes from there.
      EXPECT_EQ(receive->bytes, 4096 / chunks) << receive->str(program.type);
      EXPECT_EQ(receive->src.kind,
                chunkBytes ? BufferKind::Source : BufferKind::Scratch);
      EXPECT_EQ(receive->dst.kind, BufferKind::Scratch);
    }
    ReshardSimulator simulator(src, dst, shape, ElementType::F32);
    ASSERT_EQ(executeProgram(program, simulator, 2), std::nullopt);
    EXPECT_TRUE(simulator.check().passed);
  }
}

TEST(TransferProgramTest, StridedBoxesBecomeRowsAndItemsAreCut) {
  // Column halves of a 4 x 16 f32 tensor move between two ranks: 4 rows of
  // 32 bytes each, cut into 16-byte items.
  Layout src{Mesh::contiguous({2}), {Placement::shard(0)}};
  Layout dst{Mesh::contiguous({2}), {Placement::shard(1)}};
  std::vector<int64_t> shape = {4, 16};
  Topology topology = Topology::singleDomain(2);
  TransferProgram program;
  LoweringOptions options;
  options.maxItemBytes = 16;
  options.tileBelowRunBytes = 0; // Rows, however short.
  ASSERT_EQ(lower(src, dst, shape, topology, Strategy::Flat,
                  ElementType::F32, options, program),
            std::nullopt);
  // Each rank receives 2 rows x 8 columns from itself and from the other,
  // then waits until the other has read its part (reads-done). A step is
  // one movement repeated over its rows and its pieces of a row.
  EXPECT_EQ(program.ranks.at(0).items.size(), 2u + 1);
  EXPECT_EQ(program.itemCount(), 2 * (2 * 2 * 2 + 1));
  EXPECT_EQ(program.ranks.at(1).items[0].str(program.type),
            "copy src(0)+32 -> dst(1)+0 16B times 2 by (+64,+32) times 2 by "
            "(+16,+16) read-done 0:0");
  EXPECT_EQ(program.ranks.at(0).items.back().str(program.type),
            "copy src(0)+0 -> src(0)+0 0B wait 0:0>=4");
  // Expanded, as the runtime runs it: rows, then the pieces of each row.
  TransferProgram expanded = program;
  expandRepeats(expanded);
  ASSERT_EQ(expanded.ranks.at(1).items.size(), 2u * 2 * 2 + 1);
  EXPECT_EQ(expanded.ranks.at(1).items[0].str(program.type),
            "copy src(0)+32 -> dst(1)+0 16B read-done 0:0");
  EXPECT_EQ(expanded.ranks.at(1).items[1].str(program.type),
            "copy src(0)+48 -> dst(1)+16 16B read-done 0:0");
  EXPECT_EQ(expanded.ranks.at(1).items[2].str(program.type),
            "copy src(0)+96 -> dst(1)+32 16B read-done 0:0");
  ReshardSimulator simulator(src, dst, shape, ElementType::F32);
  ASSERT_EQ(executeProgram(program, simulator, 3), std::nullopt);
  EXPECT_TRUE(simulator.check().passed);
}

// Short rows move as tiles: one TMA tensor copy per box of up to 256
// elements per dimension, through tensor maps over the two buffers.
TEST(TransferProgramTest, ShortRowsBecomeTiles) {
  Layout src{Mesh::contiguous({2}), {Placement::shard(0)}};
  Layout dst{Mesh::contiguous({2}), {Placement::shard(1)}};
  std::vector<int64_t> shape = {600, 16};
  Topology topology = Topology::singleDomain(2);
  TransferProgram program;
  ASSERT_EQ(lower(src, dst, shape, topology, Strategy::Flat,
                  ElementType::F32, {}, program),
            std::nullopt);
  // Rank 1 pulls rows [0, 300) x columns [8, 16) of rank 0: 300 rows in
  // tiles of 256 and 44 rows.
  const RankProgram &rank1 = program.ranks.at(1);
  ASSERT_EQ(rank1.items.size(), 5u);
  EXPECT_EQ(rank1.items[0].str(program.type),
            "copy tile src(0) map0(0,8) -> dst(1) map6(0,0) 8192B read-done 0:0");
  EXPECT_EQ(rank1.items[1].str(program.type),
            "copy tile src(0) map2(256,8) -> dst(1) map7(256,0) 1408B read-done 0:0");
  // Maps are shared: rank 0's own columns use the same source map.
  EXPECT_EQ(program.maps[0].box, (Dims{256, 8}));
  EXPECT_EQ(program.maps[2].box, (Dims{44, 8}));
  EXPECT_EQ(program.maps[2].extents, (Dims{300, 16}));
  EXPECT_EQ(program.maps[7].extents, (Dims{600, 8}));
  ReshardSimulator simulator(src, dst, shape, ElementType::F32);
  ASSERT_EQ(executeProgram(program, simulator, 2), std::nullopt);
  EXPECT_TRUE(simulator.check().passed);
}

// A rank whose buffers peers read does not finish before they have read:
// without a reader's item, its last item would wait forever (a deadlock the
// executor reports; the GPU reports the timeout).
TEST(TransferProgramTest, ReadsDoneHoldsTheReadRankUntilPeersRead) {
  Layout src{Mesh::contiguous({2}), {Placement::shard(0)}};
  Layout dst{Mesh::contiguous({2}), {Placement::replicate()}};
  std::vector<int64_t> shape = {64, 16};
  TransferProgram program;
  ASSERT_EQ(lower(src, dst, shape, Topology::singleDomain(2), Strategy::Flat,
                  ElementType::F32, {}, program),
            std::nullopt);
  ASSERT_EQ(readsDoneProblem(program), std::nullopt);
  EXPECT_EQ(program.ranks.at(0).items.back().str(program.type),
            "copy src(0)+0 -> src(0)+0 0B wait 0:0>=1");
  {
    ReshardSimulator simulator(src, dst, shape, ElementType::F32);
    ASSERT_EQ(executeProgram(program, simulator, 2), std::nullopt);
    EXPECT_TRUE(simulator.check().passed);
  }
  // Rank 1 never pulls rank 0's half.
  std::vector<Movement> &rank1 = program.ranks.at(1).items;
  rank1.erase(std::remove_if(rank1.begin(), rank1.end(),
                             [](const Movement &m) { return m.src.rank == 0; }),
              rank1.end());
  ReshardSimulator simulator(src, dst, shape, ElementType::F32);
  std::optional<std::string> error = executeProgram(program, simulator, 2);
  ASSERT_TRUE(error.has_value());
  EXPECT_NE(error->find("deadlock"), std::string::npos) << *error;
}

/// A Partial(sum) -> Replicate of `ranks` ranks lowered with copy-engine
/// copies, then run and checked on the host.
void lowerAllReduceWithCopyEngine(int64_t ranks, int64_t elements,
                                  bool reduceShare, int64_t chunkBytes,
                                  TransferProgram &program) {
  Layout src{Mesh::contiguous({ranks}), {Placement::partial(Reduction::Sum)}};
  Layout dst{Mesh::contiguous({ranks}), {Placement::replicate()}};
  std::vector<int64_t> shape = {elements};
  ReshardPlan plan = IntersectionPlanner(src, dst, shape).plan();
  Schedule schedule = chunkSchedule(
      TopologyRouter(src, dst, shape, Topology::singleDomain(ranks))
          .setReduceShare(reduceShare)
          .route(plan, Strategy::Hierarchical),
      4, chunkBytes);
  addDataDependencies(schedule);
  LoweringOptions options;
  options.copyEngine = CopyEngineUse::Always;
  options.engineMinBytes = 0;
  ASSERT_EQ(lowerSchedule(schedule, src, dst, shape, ElementType::F32, options,
                          program),
            std::nullopt);
  ASSERT_EQ(readsDoneProblem(program), std::nullopt);
  ReshardSimulator simulator(src, dst, shape, ElementType::F32);
  ASSERT_EQ(executeProgram(program, simulator, 3), std::nullopt);
  EXPECT_TRUE(simulator.check().passed);
}

// With the copy engine, a rank's own partial is copied before its kernel
// (one copy: the chunks are adjacent), and the reductions onto it wait for
// nothing: stream order puts the copy first.
TEST(TransferProgramTest, CopyEngineTakesTheOwnCopy) {
  TransferProgram program;
  lowerAllReduceWithCopyEngine(2, 64, /*reduceShare=*/false, 64, program);
  const RankProgram &rank0 = program.ranks.at(0);
  ASSERT_EQ(rank0.engineCopies.size(), 1u);
  EXPECT_EQ(rank0.engineCopies[0].str(program.type), "copy src(0)+0 -> dst(0)+0 256B");
  ASSERT_EQ(rank0.items.size(), 5u); // 4 chunks reduced, then reads-done.
  EXPECT_EQ(rank0.items[0].str(program.type),
            "add.f32 src(1)+0 -> dst(0)+0 64B read-done 1:0");
}

// Reduce-share: peers gather the reduced chunks after the reductions, which
// follow the engine copy; the peers see the copy through a zero-byte item
// that signals once (the copy is done before the kernel starts).
TEST(TransferProgramTest, CopyEngineSignalsPeersThatWait) {
  TransferProgram program;
  lowerAllReduceWithCopyEngine(4, 256, /*reduceShare=*/true, 0, program);
  for (const auto &[rank, rp] : program.ranks) {
    EXPECT_EQ(rp.engineCopies.size(), 1u) << "rank " << rank;
    bool signals = false;
    for (const Movement &m : rp.items)
      signals |= m.bytes == 0 && m.signal && m.waits.empty();
    EXPECT_TRUE(signals) << "rank " << rank << " has no copy-done item";
  }
}

// copy-engine=auto: a rank's own copy goes to the copy engine once it is
// large enough to pay for the enqueue, later the more CTAs the kernel has,
// never where the kernel's CTAs reach the engine's bandwidth; a peer's,
// which NVLink bounds either way, only when the kernel has too few CTAs to
// fill the link or the copy is large enough for the engine's small edge.
TEST(TransferProgramTest, CopyEngineByCost) {
  // 16 CTAs (800 GB/s) against 2,000 GB/s and 5 us: from ~6.7 MB.
  EXPECT_FALSE(copyEngineIsFaster(4 << 20, /*sameRank=*/true, 16));
  EXPECT_TRUE(copyEngineIsFaster(8 << 20, true, 16));
  // From 23 CTAs the kernel is at the memory system's ~1,150 GB/s: from
  // ~13.5 MB, whatever the CTAs.
  EXPECT_FALSE(copyEngineIsFaster(12 << 20, true, 32));
  EXPECT_TRUE(copyEngineIsFaster(16 << 20, true, 32));
  EXPECT_FALSE(copyEngineIsFaster(12 << 20, true, 128));
  EXPECT_TRUE(copyEngineIsFaster(16 << 20, true, 128));
  // A peer's copy: 4 CTAs (200 GB/s) leave the link idle, 8 fill it and
  // the engine's 394 against 370 GB/s pays only from ~30 MB.
  EXPECT_TRUE(copyEngineIsFaster(4 << 20, false, 4));
  EXPECT_FALSE(copyEngineIsFaster(16 << 20, false, 8));
  EXPECT_FALSE(copyEngineIsFaster(16 << 20, false, 16));
  EXPECT_TRUE(copyEngineIsFaster(64 << 20, false, 16));

  // By default (auto), the lowering asks the model: a 64 MiB own copy at 16
  // CTAs goes to the engine, a 4 MiB one stays a kernel item, and a tiny
  // one stays whatever the CTAs.
  for (auto [elements, ctas, engine] :
       {std::tuple<int64_t, int64_t, bool>{16 << 20, 16, true},
        {1 << 20, 16, false},
        {1 << 10, 1, false}}) {
    Layout src{Mesh::contiguous({1}), {Placement::replicate()}};
    std::vector<int64_t> shape = {elements};
    ReshardPlan plan = IntersectionPlanner(src, src, shape).plan();
    Schedule schedule =
        TopologyRouter(src, src, shape, Topology::singleDomain(1))
            .route(plan, Strategy::Flat);
    addDataDependencies(schedule);
    LoweringOptions options;
    options.kernelCtas = ctas;
    TransferProgram program;
    ASSERT_EQ(lowerSchedule(schedule, src, src, shape, ElementType::F32,
                            options, program),
              std::nullopt);
    EXPECT_EQ(program.ranks.at(0).engineCopies.size(), engine ? 1u : 0u)
        << elements << " elements, " << ctas << " CTAs";
  }
}

/// The items of every rank, printed, in rank order.
std::vector<std::string> itemsOf(const TransferProgram &program) {
  std::vector<std::string> lines;
  for (const auto &[rank, rp] : program.ranks)
    for (const Movement &m : rp.items)
      lines.push_back(m.str(program.type));
  return lines;
}

TEST(TransferProgramTest, ReductionsTmaLacksTakeTheVectorPath) {
  // f32 max has no TMA reduction: the reduction runs on the SM path; the
  // copy of the own contribution stays a bulk item.
  Layout src{Mesh::contiguous({2}), {Placement::partial(Reduction::Max)}};
  Layout dst{Mesh::contiguous({2}), {Placement::replicate()}};
  Topology topology = Topology::singleDomain(2);
  TransferProgram program;
  ASSERT_EQ(lower(src, dst, {1024}, topology, Strategy::Flat,
                  ElementType::F32, {}, program),
            std::nullopt);
  const RankProgram &rank0 = program.ranks.at(0);
  ASSERT_EQ(rank0.items.size(), 3u);
  EXPECT_EQ(rank0.items[0].str(program.type),
            "copy src(0)+0 -> dst(0)+0 4096B signal 0:0");
  EXPECT_EQ(rank0.items[1].str(program.type),
            "max.f32 vector src(1)+0 -> dst(0)+0 4096B wait 0:0>=1 "
            "read-done 1:1");
  // 8-bit integer sums too.
  Layout sums{Mesh::contiguous({2}), {Placement::partial(Reduction::Sum)}};
  ASSERT_EQ(lower(sums, dst, {64}, topology,
                  Strategy::Flat, ElementType::I8, {}, program),
            std::nullopt);
  EXPECT_EQ(program.ranks.at(0).items[1].mechanism, Mechanism::Vector);
}

TEST(TransferProgramTest, FusedReductionsReadTheirOwnPartial) {
  // Four ranks' partial sums into a shard each: fused, each rank's first
  // reduction reads its own partial as the accumulator (no copy of it), the
  // other two reductions onto those bytes wait for it; unfused by the cost
  // model at 16 CTAs a rank, fused by it at 64.
  Layout src{Mesh::contiguous({4}), {Placement::partial(Reduction::Sum)}};
  Layout dst{Mesh::contiguous({4}), {Placement::shard(0)}};
  Topology topology = Topology::singleDomain(4);
  auto fusedOf = [](const RankProgram &rank) {
    int64_t fused = 0;
    for (const Movement &m : rank.items)
      fused += m.accumulator.has_value();
    return fused;
  };
  TransferProgram program;
  LoweringOptions options;
  ASSERT_EQ(lower(src, dst, {64, 8}, topology, Strategy::Flat,
                  ElementType::BF16, options, program),
            std::nullopt);
  EXPECT_EQ(fusedOf(program.ranks.at(0)), 0);
  options.kernelCtas = 64;
  ASSERT_EQ(lower(src, dst, {64, 8}, topology, Strategy::Flat,
                  ElementType::BF16, options, program),
            std::nullopt);
  const RankProgram &rank0 = program.ranks.at(0);
  EXPECT_EQ(fusedOf(rank0), 1);
  const Movement *fused = nullptr;
  for (const Movement &m : rank0.items) {
    const bool ownCopy = m.bytes > 0 && !m.accumulator &&
                         m.src == BufferRef{BufferKind::Source, 0};
    EXPECT_FALSE(ownCopy)
        << "rank 0 still copies its own partial: " << m.str(program.type);
    if (m.accumulator)
      fused = &m;
  }
  ASSERT_NE(fused, nullptr);
  EXPECT_EQ(fused->mechanism, Mechanism::Vector);
  EXPECT_EQ(*fused->accumulator, (BufferRef{BufferKind::Source, 0}));
  EXPECT_TRUE(fused->waits.empty());
  ASSERT_TRUE(fused->signal.has_value());
  for (const Movement &m : rank0.items)
    if (m.reduction && !m.accumulator && m.bytes > 0) {
      ASSERT_EQ(m.waits.size(), 1u) << m.str(program.type);
      EXPECT_EQ(m.waits[0].counter, *fused->signal);
    }
  // The kernel item: flag and the accumulator's distance from the source.
  const ItemAddresses addresses = distinctAddresses();
  const KernelItem item = encodeItem(*fused, program, addresses);
  EXPECT_TRUE(item.flags & kAccumulates);
  EXPECT_EQ(item.src + static_cast<uint64_t>(accumulatorDeltaOf(item)),
            addresses.buffer(*fused->accumulator) +
                static_cast<uint64_t>(fused->srcOffset));
  std::optional<ProgramIssue> issue =
      checkTransferProgram(program, src, dst, {64, 8});
  EXPECT_FALSE(issue) << issue->message;
  options.fuseReductions = ReductionFusion::Never;
  ASSERT_EQ(lower(src, dst, {64, 8}, topology, Strategy::Flat,
                  ElementType::BF16, options, program),
            std::nullopt);
  EXPECT_EQ(fusedOf(program.ranks.at(0)), 0);
}

TEST(TransferProgramTest, UnalignedRunsSplitIntoVectorHeadBulkBodyVectorTail) {
  // 3 bf16 elements per shard: 6-byte runs, neither bulk nor tiles.
  Layout shards{Mesh::contiguous({2}), {Placement::shard(0)}};
  Layout whole{Mesh::contiguous({2}), {Placement::replicate()}};
  Topology topology = Topology::singleDomain(2);
  TransferProgram program;
  ASSERT_EQ(lower(shards, whole, {6}, topology, Strategy::Flat,
                  ElementType::BF16, {}, program),
            std::nullopt);
  EXPECT_EQ(program.ranks.at(0).items[1].str(program.type),
            "copy vector src(1)+0 -> dst(0)+6 6B read-done 1:0");

  // 2 x 1001 f32 to rank 1's half: the run from element 1001 starts 4 bytes
  // past a 16-byte boundary in the destination, at 0 in the source; from
  // rank 0's part: both at 0, 4004 bytes: a bulk body and a 4-byte tail.
  LoweringOptions options;
  options.vectorBelowBytes = 64;
  ASSERT_EQ(lower(shards, whole, {2002}, topology, Strategy::Flat,
                  ElementType::F32, options, program),
            std::nullopt);
  std::vector<std::string> lines = itemsOf(program);
  auto has = [&](const std::string &line) {
    return std::find(lines.begin(), lines.end(), line) != lines.end();
  };
  // Rank 1's shard lands 4004 bytes into rank 0's destination (4 mod 16):
  // the addresses disagree modulo 16, so all of it is vector.
  EXPECT_TRUE(has("copy vector src(1)+0 -> dst(0)+4004 4004B read-done 1:0"));
  // Rank 0's shard lands at 0 of rank 1's: an aligned bulk body and a
  // 4-byte vector tail.
  EXPECT_TRUE(has("copy src(0)+0 -> dst(1)+0 4000B read-done 0:0"));
  EXPECT_TRUE(has("copy vector src(0)+4000 -> dst(1)+4000 4B read-done 0:0"));
}

TEST(TransferProgramTest, VectorThresholdDecidesShortRuns) {
  // 64 f32 elements per rank (256 bytes, aligned): at the default threshold
  // (256) a bulk item, below it a vector item.
  Layout shards{Mesh::contiguous({2}), {Placement::shard(0)}};
  Layout whole{Mesh::contiguous({2}), {Placement::replicate()}};
  Topology topology = Topology::singleDomain(2);
  for (int64_t threshold : {256, 257}) {
    LoweringOptions options;
    options.vectorBelowBytes = threshold;
    TransferProgram program;
    ASSERT_EQ(lower(shards, whole, {128}, topology, Strategy::Flat,
                    ElementType::F32, options, program),
              std::nullopt);
    EXPECT_EQ(program.ranks.at(0).items[0].mechanism,
              threshold == 256 ? Mechanism::Bulk : Mechanism::Vector);
  }
}

TEST(TransferProgramTest, OnlyLoadsFromSourcesRunAheadOfTheirWaits) {
  // Example A: rank 4's pull from rank 6 reads what rank 6 received, so its
  // load waits; a reduction from a peer's source only orders its store.
  Layout src{Mesh::contiguous({1, 4}, 0),
             {Placement::replicate(), Placement::shard(0)}};
  Layout dst{Mesh::contiguous({2, 2}, 4),
             {Placement::replicate(), Placement::shard(0)}};
  Topology domains;
  domains.domains = {{0, 1, 2, 3}, {4, 5, 6, 7}};
  TransferProgram program;
  ASSERT_EQ(lower(src, dst, {4, 8}, domains, Strategy::Hierarchical,
                  ElementType::BF16, {}, program),
            std::nullopt);
  EXPECT_FALSE(program.ranks.at(4).items[0].waitsOrderOnlyTheStore());

  Layout partial{Mesh::contiguous({2}), {Placement::partial(Reduction::Sum)}};
  Layout replicated{Mesh::contiguous({2}), {Placement::replicate()}};
  ASSERT_EQ(lower(partial, replicated, {64}, Topology::singleDomain(2),
                  Strategy::Flat, ElementType::F32, {}, program),
            std::nullopt);
  int64_t reductions = 0;
  for (const Movement &m : program.ranks.at(0).items)
    if (!m.isCopy()) {
      ++reductions;
      EXPECT_FALSE(m.waits.empty());
      EXPECT_TRUE(m.waitsOrderOnlyTheStore());
    }
  EXPECT_GT(reductions, 0);

  // A schedule that writes a source is rejected: loads run ahead of it.
  Schedule schedule;
  Step step;
  step.from = {BufferKind::Source, 0, -1};
  step.fromBox = Box{{0}, {8}};
  step.to = {BufferKind::Source, 1, -1};
  step.toBox = Box{{0}, {8}};
  schedule.steps.push_back(step);
  std::optional<std::string> error =
      lowerSchedule(schedule, partial, replicated, {16}, ElementType::F32, {},
                    program);
  ASSERT_TRUE(error);
  EXPECT_NE(error->find("writes a source buffer"), std::string::npos);

  // Dependencies that form a cycle are rejected, not ordered.
  Schedule cyclic;
  Step first;
  first.from = {BufferKind::Source, 0, -1};
  first.fromBox = Box{{0}, {8}};
  first.to = {BufferKind::Destination, 0, -1};
  first.toBox = Box{{0}, {8}};
  first.deps = {1};
  Step second = first;
  second.to = {BufferKind::Destination, 1, -1};
  second.deps = {0};
  cyclic.steps = {first, second};
  error = lowerSchedule(cyclic, partial, replicated, {16}, ElementType::F32, {},
                        program);
  ASSERT_TRUE(error);
  EXPECT_NE(error->find("form a cycle"), std::string::npos);
}

TEST(TransferProgramTest, ManyDependenciesAreJoined) {
  // Gather-bcast: the ring's first hop reads the root's full tensor, which
  // four gather steps wrote: two join items combine the waits.
  Layout src{Mesh::contiguous({4}), {Placement::shard(0)}};
  Layout dst{Mesh::contiguous({1}, 4), {Placement::replicate()}};
  std::vector<int64_t> shape = {16};
  Topology topology = Topology::singleDomain(5);
  TransferProgram program;
  ASSERT_EQ(lower(src, dst, shape, topology, Strategy::GatherBroadcast,
                  ElementType::F32, {}, program),
            std::nullopt);
  int64_t joins = 0;
  for (const Movement &m : program.ranks.at(4).items)
    joins += m.step < 0;
  EXPECT_EQ(joins, 2);
  ReshardSimulator simulator(src, dst, shape, ElementType::F32);
  ASSERT_EQ(executeProgram(program, simulator, 1), std::nullopt);
  EXPECT_TRUE(simulator.check().passed);
}

// The runtime posts network receives in step order on one stream per
// device; a schedule whose network step waits for a later step (a detour
// through rank 1: 1 -> scratch over the network, a local copy, back over
// the network, listed backwards) is renumbered so that it cannot deadlock,
// and network steps that reduce receive into staging, then reduce.
// A packed network step keeps the dependencies that order its target:
// here the transfer into scratch B must wait for the local copy that
// writes B first (a write after write), also when staging another step
// renumbers the steps in front of it.
TEST(TransferProgramTest, PackedNetworkStepsKeepTheirTargetOrder) {
  Layout src{Mesh::contiguous({1}, 0), {Placement::replicate()}};
  Layout dst{Mesh::contiguous({1}, 1), {Placement::replicate()}};
  Schedule schedule;
  const BufferRef a{BufferKind::Scratch, 1, 0}, b{BufferKind::Scratch, 1, 1};
  schedule.scratches = {{1, {2, 2}}, {1, {2, 2}}};
  const Box quarter{{0, 0}, {2, 2}};
  auto step = [&](BufferRef from, Box fromBox, BufferRef to, Box toBox,
                  LinkClass link, std::vector<int64_t> deps) {
    Step s;
    s.from = from;
    s.fromBox = std::move(fromBox);
    s.to = to;
    s.toBox = std::move(toBox);
    s.link = link;
    s.deps = std::move(deps);
    return s;
  };
  const BufferRef source{BufferKind::Source, 0, -1};
  const BufferRef destination{BufferKind::Destination, 1, -1};
  schedule.steps = {
      // Strided in the source (columns 0-1 of 2x4): packed, then sent.
      step(source, {{0, 0}, {2, 2}}, a, quarter, LinkClass::Network, {}),
      step(a, quarter, b, quarter, LinkClass::Local, {0}),
      // Columns 2-3 into B, after step 1 wrote it.
      step(source, {{0, 2}, {2, 2}}, b, quarter, LinkClass::Network, {1}),
      step(b, quarter, destination, {{0, 2}, {2, 2}}, LinkClass::Local, {2}),
      step(a, quarter, destination, {{0, 0}, {2, 2}}, LinkClass::Local, {0})};
  TransferProgram program;
  ASSERT_EQ(lowerSchedule(schedule, src, dst, {2, 4}, ElementType::F32, {},
                          program),
            std::nullopt);
  const RankProgram &rank1 = program.ranks.at(1);
  std::optional<CounterRef> copyIntoB;
  for (const Movement &m : rank1.items)
    if (m.src == a && m.dst == b && m.bytes > 0)
      copyIntoB = m.signal;
  ASSERT_TRUE(copyIntoB.has_value());
  int64_t transfersIntoB = 0;
  for (const Movement &receive : rank1.receives) {
    if (!(receive.dst == b))
      continue;
    ++transfersIntoB;
    EXPECT_TRUE(std::any_of(receive.waits.begin(), receive.waits.end(),
                            [&](const CounterWait &wait) {
                              return wait.counter == *copyIntoB;
                            }))
        << receive.str(program.type);
  }
  EXPECT_EQ(transfersIntoB, 1);
  ReshardSimulator simulator(src, dst, {2, 4}, ElementType::F32);
  ASSERT_EQ(executeProgram(program, simulator, 1), std::nullopt);
  EXPECT_TRUE(simulator.check().passed);
}

TEST(TransferProgramTest, NetworkStepsPostInATopologicalOrder) {
  Layout src{Mesh::contiguous({1}, 0), {Placement::replicate()}};
  Layout dst{Mesh::contiguous({1}, 0), {Placement::replicate()}};
  const Box whole{{0}, {4}};
  Schedule schedule;
  schedule.scratches = {{1, {4}}, {1, {4}}};
  auto step = [&](BufferRef from, BufferRef to, LinkClass link,
                  std::vector<int64_t> deps) {
    Step s;
    s.from = from;
    s.fromBox = whole;
    s.to = to;
    s.toBox = whole;
    s.link = link;
    s.deps = std::move(deps);
    return s;
  };
  const BufferRef back{BufferKind::Scratch, 1, 0}, there{BufferKind::Scratch, 1, 1};
  schedule.steps = {
      step(back, {BufferKind::Destination, 0, -1}, LinkClass::Network, {2}),
      step({BufferKind::Source, 0, -1}, there, LinkClass::Network, {}),
      step(there, back, LinkClass::Local, {1})};
  TransferProgram program;
  ASSERT_EQ(lowerSchedule(schedule, src, dst, {4}, ElementType::F32, {},
                          program),
            std::nullopt);
  std::vector<int64_t> posted;
  for (const auto &[rank, receive] : networkOrder(program))
    posted.push_back(receive->step);
  EXPECT_EQ(posted, (std::vector<int64_t>{0, 2})); // Renumbered: 1, 2, 0.
  ReshardSimulator simulator(src, dst, {4}, ElementType::F32);
  ASSERT_EQ(executeProgram(program, simulator, 1), std::nullopt);
  EXPECT_TRUE(simulator.check().passed);
}

// The kernel's table: a repeated movement is one template, and walker w of
// G walks items w, w + G, ... of the expansion. Rows of boxes (bulk, two
// levels where items are cut) and tile grids, walked by grids smaller and
// larger than the instances.
TEST(KernelTableTest, RepeatedMovementsAreOneTemplateEach) {
  Layout src{Mesh::contiguous({2}), {Placement::shard(0)}};
  Layout dst{Mesh::contiguous({2}), {Placement::shard(1)}};
  for (bool tiles : {false, true}) {
    SCOPED_TRACE(tiles ? "tiles" : "rows");
    std::vector<int64_t> shape =
        tiles ? std::vector<int64_t>{600, 16} : std::vector<int64_t>{64, 256};
    LoweringOptions options;
    options.maxItemBytes = 256; // Rows of 512 B: two pieces each.
    TransferProgram program;
    ASSERT_EQ(lower(src, dst, shape, Topology::singleDomain(2),
                    Strategy::Flat, ElementType::F32, options, program),
              std::nullopt);
    int64_t repeated = 0, templates = 0, instances = 0;
    for (const auto &[rank, rp] : program.ranks)
      for (const Movement &m : rp.items) {
        repeated += !m.repeats.empty();
        instances += m.instances();
        std::vector<KernelTemplate> own;
        ASSERT_EQ(encodeTemplates(m, program, distinctAddresses(), own),
                  std::nullopt);
        templates += static_cast<int64_t>(own.size());
      }
    EXPECT_GT(repeated, 0);
    EXPECT_LT(templates, instances);
    for (uint64_t grid : {1, 2, 3, 7, 64, 1000})
      expectWalkMatchesExpansion(program, grid);
  }
}

// Movements with more levels than a template holds (two): the outer ones
// become one template per instance; tiles walk their coordinates.
TEST(KernelTableTest, OuterLevelsBeyondTwoAreExpanded) {
  Layout src{Mesh::contiguous({2}), {Placement::shard(0)}};
  Layout dst{Mesh::contiguous({2}), {Placement::shard(1)}};
  for (std::vector<int64_t> shape :
       {std::vector<int64_t>{600, 16}, std::vector<int64_t>{64, 256}}) {
    TransferProgram program;
    LoweringOptions options;
    options.maxItemBytes = 256;
    ASSERT_EQ(lower(src, dst, shape, Topology::singleDomain(2),
                    Strategy::Flat, ElementType::F32, options, program),
              std::nullopt);
    // Two more outer levels on every movement (strides that keep the
    // arithmetic visible; the program is not run, only encoded).
    for (auto &[rank, rp] : program.ranks)
      for (Movement &m : rp.items) {
        Repeats more;
        more.push_back(Repeat{2, 1 << 20, 3 << 20,
                              m.isTile() ? int64_t{0} : int64_t{-1}, 0});
        more.push_back(Repeat{3, 4096, 8192,
                              m.isTile() ? int64_t{1} : int64_t{-1}, 0});
        if (m.isTile()) { // Coordinates: small strides.
          more[0].srcStride = 5, more[0].dstStride = 7;
          more[1].srcStride = 2, more[1].dstStride = 1;
        }
        for (const Repeat &r : m.repeats)
          more.push_back(r);
        m.repeats = more;
        std::vector<KernelTemplate> own;
        ASSERT_EQ(encodeTemplates(m, program, distinctAddresses(), own),
                  std::nullopt);
        EXPECT_EQ(own.size(), static_cast<size_t>(
                                  m.instances() / own.front().instances()));
      }
    for (uint64_t grid : {1, 4, 5, 33})
      expectWalkMatchesExpansion(program, grid);
  }
}

// What a template cannot hold is refused with a message, not truncated:
// a level of more than 2^32 - 1 instances, tile coordinates past 32 bits.
TEST(KernelTableTest, LevelsBeyondTheFieldsAreRefused) {
  Layout src{Mesh::contiguous({2}), {Placement::shard(0)}};
  Layout dst{Mesh::contiguous({2}), {Placement::shard(1)}};
  for (std::vector<int64_t> shape :
       {std::vector<int64_t>{600, 16}, std::vector<int64_t>{64, 256}}) {
    TransferProgram program;
    ASSERT_EQ(lower(src, dst, shape, Topology::singleDomain(2),
                    Strategy::Flat, ElementType::F32, {}, program),
              std::nullopt);
    Movement m = program.ranks.at(1).items.front();
    std::vector<KernelTemplate> own;
    Movement many = m;
    many.repeats = {};
    many.repeats.push_back(Repeat{int64_t{1} << 33, 16, 16,
                                  m.isTile() ? int64_t{0} : int64_t{-1}, 0});
    std::optional<std::string> refused =
        encodeTemplates(many, program, distinctAddresses(), own);
    ASSERT_TRUE(refused.has_value());
    EXPECT_NE(refused->find("the kernel walks at most 2^32 - 1 a level"),
              std::string::npos)
        << *refused;
    EXPECT_TRUE(own.empty());
    if (!m.isTile())
      continue;
    Movement far = m;
    far.repeats = {};
    far.repeats.push_back(Repeat{3, int64_t{1} << 31, 1, 0, 0});
    refused = encodeTemplates(far, program, distinctAddresses(), own);
    ASSERT_TRUE(refused.has_value());
    EXPECT_NE(refused->find("its tiles' coordinates exceed 32 bits"),
              std::string::npos)
        << *refused;
    EXPECT_TRUE(own.empty());
  }
}

TEST(KernelTableTest, PlainItemsGoRoundRobin) {
  std::vector<KernelItem> items(11);
  for (size_t i = 0; i < items.size(); ++i)
    items[i].src = 100 + i;
  KernelTable table = plainTable(items, 4);
  ASSERT_EQ(table.walkers.size(), 4u);
  EXPECT_EQ(table.items, 11u);
  EXPECT_EQ(table.walkers[3].items, 2u); // Items 3 and 7.
  std::vector<KernelItem> third = walkerItems(table, 3);
  ASSERT_EQ(third.size(), 2u);
  EXPECT_EQ(third[0].src, 103u);
  EXPECT_EQ(third[1].src, 107u);
  // More walkers than items: the last ones have none.
  table = plainTable(items, 16);
  EXPECT_EQ(table.walkers[12].items, 0u);
  EXPECT_EQ(table.bytes(), 11 * sizeof(KernelTemplate) +
                               16 * sizeof(KernelWalker) +
                               11 * sizeof(KernelVisit));
}

TEST(KernelTableTest, RanksWithFewItemsLaunchFewerCtas) {
  std::vector<KernelItem> items(11);
  for (size_t i = 0; i < items.size(); ++i)
    items[i].src = 100 + i;
  // 16 CTAs of 4 walkers for 11 items: 3 CTAs, each of the first 11
  // walkers with the item it has in the whole grid of 64.
  KernelTable table = plainTable(items, 1);
  EXPECT_EQ(walkRankTable(table, 16, 4), 3u);
  const KernelTable whole = plainTable(items, 64);
  ASSERT_EQ(table.walkers.size(), 12u);
  for (uint64_t w = 0; w < 12; ++w) {
    const std::vector<KernelItem> mine = walkerItems(table, w),
                                  there = walkerItems(whole, w);
    ASSERT_EQ(mine.size(), there.size()) << "walker " << w;
    for (size_t k = 0; k < mine.size(); ++k)
      EXPECT_EQ(mine[k].src, there[k].src) << "walker " << w;
  }
  // As many items as walkers or more: every CTA; none: one.
  table = plainTable(items, 1);
  EXPECT_EQ(walkRankTable(table, 2, 4), 2u);
  EXPECT_EQ(table.walkers.size(), 8u);
  table = plainTable({}, 1);
  EXPECT_EQ(walkRankTable(table, 16, 4), 1u);
  EXPECT_EQ(table.items, 0u);
}

TEST(KernelTableTest, WalkerRecordsNameTheirRankAndPlace) {
  // Two ranks' walkers laid end to end, as a merged launch has them: each
  // record still says where its rank's table is and which of the rank's
  // walkers it is, so walking it gives the rank's own items.
  std::vector<KernelItem> items(7);
  for (size_t i = 0; i < items.size(); ++i)
    items[i].src = 100 + i;
  KernelTable first = plainTable(items, 1), second = plainTable(items, 1);
  EXPECT_EQ(walkRankTable(first, 2, 2), 2u);
  EXPECT_EQ(walkRankTable(second, 1, 2), 1u);
  placeWalkers(first, 0x10000, 0x90000);
  placeWalkers(second, 0x20000, 0x90100);
  std::vector<KernelWalker> launch = first.walkers;
  launch.insert(launch.end(), second.walkers.begin(), second.walkers.end());
  ASSERT_EQ(launch.size(), 6u);
  for (size_t i = 0; i < launch.size(); ++i) {
    const bool ofFirst = i < 4;
    const KernelTable &rank = ofFirst ? first : second;
    const KernelWalker &record = launch[i];
    EXPECT_EQ(record.index, ofFirst ? i : i - 4);
    EXPECT_EQ(record.grid, ofFirst ? 4u : 2u);
    EXPECT_EQ(record.templates, ofFirst ? 0x10000u : 0x20000u);
    EXPECT_EQ(record.visits,
              record.templates + 7 * sizeof(KernelTemplate) +
                  rank.walkers.size() * sizeof(KernelWalker));
    EXPECT_EQ(record.epochWords, ofFirst ? 0x90000u : 0x90100u);
    // The instances the record's walker runs: its rank's items w, w + G...
    std::vector<KernelItem> walked = walkerItems(rank, record.index);
    size_t k = 0;
    for (uint64_t g = record.index; g < items.size(); g += record.grid, ++k) {
      ASSERT_LT(k, walked.size());
      EXPECT_EQ(walked[k].src, 100 + g);
    }
    EXPECT_EQ(k, walked.size());
  }
}

TEST(KernelTableTest, AMergedLaunchDropsTheWaitsItsEndMeets) {
  // Two ranks of an all_gather: each ends waiting for the other's reads.
  // Run as one launch, those waits go (the kernel's end orders the reads);
  // a wait on another counter stays, moved into the first slot.
  Layout src{Mesh::contiguous({2}), {Placement::shard(0)}};
  Layout dst{Mesh::contiguous({2}), {Placement::replicate()}};
  TransferProgram program;
  ASSERT_EQ(lower(src, dst, {64, 16}, Topology::singleDomain(2),
                  Strategy::Flat, ElementType::F32, LoweringOptions{}, program),
            std::nullopt);
  const std::vector<CounterRef> within = readsDoneWithin(program, {0, 1});
  ASSERT_EQ(within.size(), 2u);
  EXPECT_TRUE(readsDoneWithin(program, {0}).empty()); // Rank 1 reads rank 0.
  const ItemAddresses addresses = distinctAddresses();
  std::vector<uint64_t> met;
  for (const CounterRef &counter : within)
    met.push_back(addresses.counter(counter));
  for (const auto &[rank, rp] : program.ranks) {
    std::vector<KernelTemplate> templates;
    for (const Movement &m : rp.items)
      ASSERT_EQ(encodeTemplates(m, program, addresses, templates), std::nullopt);
    ASSERT_NE(templates.back().item.wait0, 0u) << "rank " << rank;
    const std::vector<KernelTemplate> merged = withoutWaitsOn(templates, met);
    ASSERT_EQ(merged.size(), templates.size());
    EXPECT_EQ(merged.back().item.wait0, 0u);
    EXPECT_EQ(merged.back().item.wait1, 0u);
    for (size_t t = 0; t + 1 < merged.size(); ++t)
      EXPECT_EQ(std::memcmp(&merged[t], &templates[t], sizeof(KernelTemplate)), 0);
  }
  KernelTemplate two;
  two.item.wait0 = met[0];
  two.item.value0 = 3;
  two.item.wait1 = 0x1000;
  two.item.value1 = 5;
  const KernelTemplate kept = withoutWaitsOn({two}, met)[0];
  EXPECT_EQ(kept.item.wait0, 0x1000u);
  EXPECT_EQ(kept.item.value0, 5u);
  EXPECT_EQ(kept.item.wait1, 0u);
  EXPECT_EQ(kept.item.value1, 0u);
}

// Random reshards x topologies x strategies, lowered with tiny items and run
// the way CTAs run them (round-robin, in order, waiting on counters).
TEST(TransferProgramPropertyTest, EveryScheduleLowersAndRunsCorrectly) {
  const uint64_t seed = propertySeed();
  const int64_t cases = propertyCases(10000);
  RandomLayouts random(seed ^ 0xc0de);
  int64_t items = 0, movements = 0, tileItems = 0, vectorItems = 0, bulkItems = 0,
          raceChecked = 0, fusedMovements = 0;
  for (int64_t n = 0; n < cases; ++n) {
    std::vector<int64_t> shape = random.shape();
    // Half the cases with 16-byte rows (bulk and tiles), half with odd
    // inner extents (vector heads and tails).
    if (!shape.empty() && random.uniform(0, 1))
      shape.back() = 16 * random.uniform(1, 2);
    int64_t rank = static_cast<int64_t>(shape.size());
    Layout src =
        random.withBoundaries(random.layout(rank, /*allowPartial=*/true), shape);
    Layout dst =
        random.withBoundaries(random.destination(src, rank), shape);
    ElementType type = random.elementType();
    // The 8-bit floats too, where nothing is reduced (the verifier refuses
    // partial fp8 layouts).
    if (!src.hasPartial() && random.uniform(0, 4) == 0)
      type = random.uniform(0, 1) ? ElementType::F8E4M3FN : ElementType::F8E5M2;
    Topology topology;
    topology.domains = {{0, 1, 2, 3, 4, 5, 6, 7}, {8, 9, 10, 11}};
    Strategy strategy = static_cast<Strategy>(random.uniform(0, 2));
    SCOPED_TRACE("M2N_PROPERTY_SEED=" + std::to_string(seed) + " case " +
                 std::to_string(n) + ": " + src.str() + " -> " + dst.str() +
                 " " + toString(type) + " " + toString(strategy));
    ReshardPlan plan = IntersectionPlanner(src, dst, shape).plan();
    const bool share = random.uniform(0, 1) == 1;
    Schedule schedule = chunkSchedule(TopologyRouter(src, dst, shape, topology)
                                          .setReduceShare(share)
                                          .route(plan, strategy),
                                      elementSize(type), 64 * random.uniform(0, 2));
    addDataDependencies(schedule);
    TransferProgram program;
    LoweringOptions options;
    options.maxItemBytes = 16 * random.uniform(1, 4);
    options.preferTiles = random.uniform(0, 2) == 0;
    options.tileBelowRunBytes = 16 * random.uniform(0, 4);
    options.vectorBelowBytes = 16 * random.uniform(0, 3);
    options.copyEngine = random.uniform(0, 1) == 1 ? CopyEngineUse::Always
                                                   : CopyEngineUse::Never;
    options.engineMinBytes = 16 * random.uniform(0, 4);
    // Half the cases read a rank's own partial as its first reduction's
    // accumulator.
    options.fuseReductions = random.uniform(0, 1) == 1
                                 ? ReductionFusion::Always
                                 : ReductionFusion::Never;
    // One case in four for buffers promised less than 16-byte alignment.
    if (random.uniform(0, 3) == 0)
      options.bufferAlignment = int64_t{1} << random.uniform(0, 3);
    ASSERT_EQ(lowerSchedule(schedule, src, dst, shape, type, options, program),
              std::nullopt);
    ASSERT_EQ(verifyTransferProgram(program, src, dst, shape), std::nullopt);
    ASSERT_EQ(readsDoneProblem(program), std::nullopt);
    // A merged launch of every rank, and of the even ones.
    std::vector<int64_t> all, even;
    for (const auto &[r, rp] : program.ranks) {
      all.push_back(r);
      if (r % 2 == 0)
        even.push_back(r);
    }
    ASSERT_EQ(readsDoneWithinProblem(program, all), std::nullopt);
    ASSERT_EQ(readsDoneWithinProblem(program, even), std::nullopt);
    // The race check is quadratic: on the small programs only (most).
    if (program.itemCount() <= 1000) {
      ASSERT_EQ(unorderedVectorReduction(program), std::nullopt);
      ++raceChecked;
    }
    // What the kernel walks is the expansion, for any grid.
    expectWalkMatchesExpansion(program, random.uniform(1, 9));
    if (HasFailure())
      return;
    items += program.itemCount();
    for (const auto &[r, rp] : program.ranks)
      for (const Movement &repeated : rp.items) {
        ++movements;
        fusedMovements += repeated.accumulator.has_value();
        repeated.forEachInstance([&](const Movement &m) {
        tileItems += m.isTile();
        vectorItems += m.mechanism == Mechanism::Vector;
        bulkItems += m.mechanism == Mechanism::Bulk && m.bytes > 0;
        // What each mechanism can take.
        if (m.mechanism == Mechanism::Bulk && m.bytes > 0) {
          ASSERT_EQ(m.srcOffset % 16, 0) << m.str(type);
          ASSERT_EQ(m.dstOffset % 16, 0) << m.str(type);
          ASSERT_EQ(m.bytes % 16, 0) << m.str(type);
          ASSERT_TRUE(!m.reduction || tmaBulkReduces(*m.reduction, type));
        }
        if (m.isTile()) {
          ASSERT_TRUE(!m.reduction || tmaTileReduces(*m.reduction, type));
        }
        // TMA touches caller buffers only where they are 16-byte aligned.
        if (options.bufferAlignment < 16 && m.mechanism != Mechanism::Vector &&
            m.bytes > 0) {
          ASSERT_EQ(m.src.kind, BufferKind::Scratch) << m.str(type);
          ASSERT_EQ(m.dst.kind, BufferKind::Scratch) << m.str(type);
        }
        });
      }
    if (HasFailure())
      return;
    ReshardSimulator simulator(src, dst, shape, type);
    ASSERT_EQ(executeProgram(program, simulator, random.uniform(1, 3)),
              std::nullopt);
    SimulationReport report = simulator.check();
    ASSERT_TRUE(report.passed) << report.message;
    if (HasFailure())
      return;
  }
  EXPECT_GT(tileItems, items / 50);
  EXPECT_GT(vectorItems, items / 50);
  EXPECT_GT(bulkItems, items / 50);
  EXPECT_GT(raceChecked, cases * 9 / 10);
  EXPECT_GT(fusedMovements, 0);
  std::cout << "[ property ] seed " << seed << ": " << cases
            << " reshards lowered and run (" << items << " items in "
            << movements << " movements: "
            << bulkItems << " bulk, " << tileItems << " tiles, "
            << vectorItems << " vector; " << fusedMovements
            << " fused reductions); " << raceChecked
            << " checked for unordered vector reductions\n";
}

// In-flight casts: random layouts (no Partial: casts do not reduce) between
// every pair of castable types with a few scales, over two NVLink domains
// (network steps out of sources are packed, converting), lowered, verified
// and run; every destination element must be castElement of its source.
TEST(TransferProgramPropertyTest, CastsConvertOnTheWay) {
  const uint64_t seed = propertySeed();
  const int64_t cases = propertyCases(10000) / 10;
  RandomLayouts random(seed ^ 0xca57);
  const ElementType castable[] = {ElementType::F32, ElementType::F16,
                                  ElementType::BF16, ElementType::F8E4M3FN,
                                  ElementType::F8E5M2};
  const float scales[] = {1.0f, 0.5f, 3.0f, 1.0f / 448};
  int64_t castItems = 0, packed = 0;
  for (int64_t n = 0; n < cases; ++n) {
    std::vector<int64_t> shape = random.shape();
    int64_t rank = static_cast<int64_t>(shape.size());
    Layout src =
        random.withBoundaries(random.layout(rank, /*allowPartial=*/false), shape);
    Layout dst =
        random.withBoundaries(random.destination(src, rank), shape);
    ElementType from = castable[random.uniform(0, 4)];
    ElementType to = castable[random.uniform(0, 4)];
    float scale = scales[random.uniform(0, 3)];
    Topology topology;
    topology.domains = {{0, 1, 2, 3, 4, 5, 6, 7}, {8, 9, 10, 11}};
    Strategy strategy = static_cast<Strategy>(random.uniform(0, 2));
    SCOPED_TRACE("M2N_PROPERTY_SEED=" + std::to_string(seed) + " case " +
                 std::to_string(n) + ": " + src.str() + " -> " + dst.str() +
                 " " + toString(from) + " -> " + toString(to) + " x" +
                 std::to_string(scale) + " " + toString(strategy));
    LoweringOptions options;
    options.maxItemBytes = 16 * random.uniform(1, 4);
    options.copyEngine = random.uniform(0, 1) == 1 ? CopyEngineUse::Always
                                                   : CopyEngineUse::Never;
    TransferProgram program;
    ASSERT_EQ(lower(src, dst, shape, topology, strategy, to, options, program,
                    ElementCast{from, scale}),
              std::nullopt);
    ASSERT_EQ(verifyTransferProgram(program, src, dst, shape), std::nullopt);
    for (const auto &[r, rp] : program.ranks) {
      for (const Movement &m : rp.items)
        if (program.casts(m) && m.bytes > 0) {
          ++castItems;
          ASSERT_EQ(m.mechanism, Mechanism::Vector) << m.str(to);
        }
      for (const Movement &m : rp.receives) {
        if (from != to) {
          ASSERT_NE(m.src.kind, BufferKind::Source)
              << "a network transfer sends unconverted source bytes";
        }
      }
      packed += !rp.receives.empty() && from != to;
    }
    ReshardSimulator simulator(src, dst, shape, to);
    simulator.setCast(from, scale);
    ASSERT_EQ(executeProgram(program, simulator, random.uniform(1, 3)),
              std::nullopt);
    SimulationReport report = simulator.check();
    ASSERT_TRUE(report.passed) << report.message;
    if (HasFailure())
      return;
  }
  EXPECT_GT(castItems, cases);
  EXPECT_GT(packed, 0);
  std::cout << "[ property ] seed " << seed << ": " << cases
            << " casting reshards lowered and run (" << castItems
            << " cast items; " << packed
            << " ranks receiving packed, converted network steps)\n";
}

// A cast that reduces (a Partial source of another type) is refused by name.
TEST(TransferProgramTest, CastsDoNotReduce) {
  Layout src{Mesh{{2}, {0, 1}}, {Placement::partial(Reduction::Sum)}};
  Layout dst{Mesh{{2}, {0, 1}}, {Placement::replicate()}};
  Topology topology;
  topology.domains = {{0, 1}};
  TransferProgram program;
  std::optional<std::string> error =
      lower(src, dst, {64}, topology, Strategy::Hierarchical, ElementType::F32,
            {}, program, ElementCast{ElementType::BF16, 1.0f});
  ASSERT_TRUE(error.has_value());
  EXPECT_NE(error->find("reduces while it casts"), std::string::npos) << *error;
  EXPECT_EQ(lower(src, dst, {64}, topology, Strategy::Hierarchical,
                  ElementType::I32, {}, program,
                  ElementCast{ElementType::BF16, 1.0f}),
            std::string("no cast from bf16 to i32 (casts convert between f32, "
                        "f16, bf16, f8E4M3FN and f8E5M2)"));
}

// The verifier pins casts down: whole elements at aligned offsets (the
// kernel loads and stores them naturally aligned), read from a source.
TEST(TransferProgramTest, CastsReadSourcesAtAlignedElements) {
  Layout src{Mesh{{2}, {0, 1}}, {Placement::shard(0)}};
  Layout dst{Mesh{{2}, {2, 3}}, {Placement::replicate()}};
  Topology topology;
  topology.domains = {{0, 1, 2, 3}};
  TransferProgram program;
  ASSERT_EQ(lower(src, dst, {64}, topology, Strategy::Flat,
                  ElementType::F8E4M3FN, {}, program,
                  ElementCast{ElementType::F32, 0.5f}),
            std::nullopt);
  ASSERT_EQ(verifyTransferProgram(program, src, dst, {64}), std::nullopt);
  auto first = [](TransferProgram &p) -> Movement & {
    for (auto &[rank, rp] : p.ranks)
      for (Movement &m : rp.items)
        if (m.bytes > 0)
          return m;
    return p.ranks.begin()->second.items.front();
  };
  TransferProgram misaligned = program;
  first(misaligned).srcOffset += 2; // Half an f32.
  std::optional<std::string> error =
      verifyTransferProgram(misaligned, src, dst, {64});
  ASSERT_TRUE(error.has_value());
  EXPECT_NE(error->find("casts a partial or misaligned element"),
            std::string::npos)
      << *error;
  TransferProgram reversed = program;
  Movement &m = first(reversed);
  std::swap(m.src, m.dst);
  error = verifyTransferProgram(reversed, src, dst, {64});
  ASSERT_TRUE(error.has_value());
  EXPECT_NE(error->find("casts, but does not read a source buffer"),
            std::string::npos)
      << *error;
}

// Groups: random reshards lowered one by one, merged into one program
// (mergePrograms) and run as one launch, each member checked against its
// own reference; members use every strategy, network steps and scratch.
TEST(TransferProgramPropertyTest, GroupsOfReshardsRunAsOneProgram) {
  const uint64_t seed = propertySeed();
  const int64_t cases = propertyCases(10000) / 25;
  RandomLayouts random(seed ^ 0x96009);
  int64_t members = 0, networkGroups = 0;
  for (int64_t n = 0; n < cases; ++n) {
    const int64_t count = random.uniform(1, 5);
    std::vector<Layout> srcs, dsts;
    std::vector<std::vector<int64_t>> shapes;
    std::vector<ElementType> types;
    std::vector<TransferProgram> programs(count);
    std::string trace;
    for (int64_t t = 0; t < count; ++t) {
      std::vector<int64_t> shape = random.shape();
      int64_t rank = static_cast<int64_t>(shape.size());
      Layout src =
          random.withBoundaries(random.layout(rank, /*allowPartial=*/true), shape);
      Layout dst =
          random.withBoundaries(random.destination(src, rank), shape);
      ElementType type = random.elementType();
      Topology topology;
      topology.domains = {{0, 1, 2, 3, 4, 5, 6, 7}, {8, 9, 10, 11}};
      Strategy strategy = static_cast<Strategy>(random.uniform(0, 2));
      trace += " [" + src.str() + " -> " + dst.str() + " " + toString(type) +
               " " + toString(strategy) + "]";
      LoweringOptions options;
      options.maxItemBytes = 16 * random.uniform(1, 4);
      options.copyEngine = random.uniform(0, 3) == 0 ? CopyEngineUse::Always
                                                     : CopyEngineUse::Never;
      options.fuseReductions = random.uniform(0, 1) == 1
                                   ? ReductionFusion::Always
                                   : ReductionFusion::Never;
      ASSERT_EQ(lower(src, dst, shape, topology, strategy, type, options,
                      programs[t]),
                std::nullopt)
          << trace;
      srcs.push_back(src);
      dsts.push_back(dst);
      shapes.push_back(shape);
      types.push_back(type);
    }
    SCOPED_TRACE("M2N_PROPERTY_SEED=" + std::to_string(seed) + " case " +
                 std::to_string(n) + ":" + trace);
    std::vector<const TransferProgram *> pointers;
    for (const TransferProgram &program : programs)
      pointers.push_back(&program);
    TransferProgram group = mergePrograms(pointers);
    // The merged program keeps every item, counter and tensor map.
    int64_t items = 0, maps = 0, scratches = 0;
    std::map<int64_t, int64_t> counters;
    for (const TransferProgram &program : programs) {
      items += program.itemCount();
      maps += static_cast<int64_t>(program.maps.size());
      scratches += static_cast<int64_t>(program.scratches.size());
      for (const auto &[rank, rp] : program.ranks)
        counters[rank] += rp.counters;
    }
    ASSERT_EQ(group.itemCount(), items);
    ASSERT_EQ(static_cast<int64_t>(group.maps.size()), maps);
    ASSERT_EQ(static_cast<int64_t>(group.scratches.size()), scratches);
    for (const auto &[rank, rp] : group.ranks)
      ASSERT_EQ(rp.counters, counters[rank]);
    // The network posts one member after the other.
    int64_t lastTensor = 0;
    bool network = false;
    for (const auto &[rank, m] : networkOrder(group)) {
      ASSERT_GE(m->dst.tensor, lastTensor);
      lastTensor = m->dst.tensor;
      network = true;
    }
    networkGroups += network && count > 1;
    std::vector<std::unique_ptr<ReshardSimulator>> simulators;
    std::vector<int64_t> scratchBase;
    for (int64_t t = 0; t < count; ++t) {
      simulators.push_back(std::make_unique<ReshardSimulator>(
          srcs[t], dsts[t], shapes[t], types[t]));
      simulators.back()->allocateScratch(programs[t].scratches);
      scratchBase.push_back(t == 0 ? 0
                                   : scratchBase.back() +
                                         static_cast<int64_t>(
                                             programs[t - 1].scratches.size()));
    }
    auto resolve = [&](const BufferRef &ref) {
      BufferRef local = ref;
      local.tensor = 0;
      if (local.kind == BufferKind::Scratch)
        local.scratch -= scratchBase.at(ref.tensor);
      return simulators.at(ref.tensor)->bytesOf(local);
    };
    ASSERT_EQ(executeProgram(group, resolve, random.uniform(1, 3)),
              std::nullopt);
    for (int64_t t = 0; t < count; ++t) {
      SimulationReport report = simulators[t]->check();
      ASSERT_TRUE(report.passed) << "member " << t << ": " << report.message;
    }
    members += count;
  }
  EXPECT_GT(networkGroups, cases / 10);
  std::cout << "[ property ] seed " << seed << ": " << cases << " groups of "
            << members << " reshards merged and run as one program ("
            << networkGroups << " with network steps in several members)\n";
}

} // namespace
