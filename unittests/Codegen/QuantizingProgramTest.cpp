//===- QuantizingProgramTest.cpp - quantizing reshards as programs --------===//
//
// The program level of a quantizing reshard (docs/fp8-scaling.md): routed
// schedules with their amax exchange lowered into amax, exchange, scale and
// quantizing moves, verified, and run by the host executor (as the kernel
// deals items to CTAs) against an independent quantization of the tensor.
//
//===----------------------------------------------------------------------===//

#include "m2n/Artifact/KernelABI.h"
#include "m2n/Codegen/ProgramExecutor.h"
#include "m2n/Codegen/TransferProgram.h"
#include "m2n/Route/Router.h"
#include "m2n/Route/ScaleSteps.h"
#include "m2n/Route/VerifySchedule.h"
#include "m2n/Sim/QuantizingSimulator.h"

#include "../Layout/RandomLayouts.h"

#include "KernelTableCheck.h"

#include <gtest/gtest.h>

#include <iostream>
#include <tuple>

using namespace m2n;

namespace {

Topology oneDomain() {
  Topology topology;
  topology.domains.resize(1);
  for (int64_t r = 0; r < kCommSize; ++r)
    topology.domains[0].push_back(r);
  return topology;
}

/// Ranks [0, first) in one NVLink domain, [first, total) in another.
Topology twoDomains(int64_t first, int64_t total) {
  Topology topology;
  topology.domains.resize(2);
  for (int64_t r = 0; r < total; ++r)
    topology.domains[r < first ? 0 : 1].push_back(r);
  return topology;
}

/// A quantizing reshard routed over `topology` by `strategy` and lowered
/// with `options`.
struct LoweredQuantizing {
  Schedule schedule;
  TransferProgram program;
  std::optional<std::string> error;
};

LoweredQuantizing lowerQuantizing(const Scaling &scaling, const Layout &src,
                                  const Layout &dst,
                                  const std::vector<int64_t> &shape,
                                  ElementType from, ElementType to,
                                  Strategy strategy, int64_t chunkBytes,
                                  const LoweringOptions &options,
                                  const Topology &topology = oneDomain(),
                                  bool quantizeOnce = true,
                                  int64_t maxBands = kMaxScaleBands,
                                  bool onSources = false) {
  ReshardPlan plan = IntersectionPlanner(src, dst, shape).plan();
  ScalePlan scalePlan = planScales(scaling, src, dst, shape, plan);
  LoweredQuantizing lowered;
  lowered.schedule = quantizingSchedule(
      TopologyRouter(src, dst, shape, topology)
          .setQuantizeOnce(quantizeOnce)
          .setQuantizeOnSources(onSources, blockShape(scaling, Dims(shape)))
          .route(plan, strategy),
      scaling, src, dst, shape, scalePlan, topology, elementSize(to),
      chunkBytes, maxBands);
  lowered.error = lowerSchedule(lowered.schedule, src, dst, shape, to, options,
                                lowered.program, ElementCast{from, 1.0f});
  return lowered;
}

TEST(QuantizingProgramTest, BlockScaledTensorParallelToDataParallel) {
  // 2 x 4 ranks of a 6 x 40 bf16 weight, TP over columns into rows, with
  // 4 x 16 blocks that straddle both sides' shards and a ragged last
  // block: amaxes exchanged between ranks, every element quantized with
  // its block's scale.
  Layout src{Mesh::contiguous({4}, 0), {Placement::shard(1)}};
  Layout dst{Mesh::contiguous({4}, 4), {Placement::shard(0)}};
  const std::vector<int64_t> shape{6, 40};
  LoweringOptions options;
  options.maxItemBytes = 32; // Pieces of 16 bf16 elements: blocks cut.
  for (Strategy strategy : {Strategy::Flat, Strategy::GatherBroadcast}) {
    LoweredQuantizing lowered = lowerQuantizing(
        Scaling::block(4, 16), src, dst, shape, ElementType::BF16,
        ElementType::F8E4M3FN, strategy, 0, options);
    ASSERT_FALSE(lowered.error) << *lowered.error;
    const TransferProgram &program = lowered.program;
    EXPECT_EQ(verifyTransferProgram(program, src, dst, shape), std::nullopt);
    int64_t amaxes = 0, scales = 0, quantizing = 0;
    for (const auto &[rank, rankProgram] : program.ranks)
      for (const Movement &m : rankProgram.items) {
        amaxes += m.kind == StepKind::Amax;
        scales += m.kind == StepKind::Scale;
        quantizing += program.quantizes(m);
      }
    EXPECT_GT(amaxes, 0);
    EXPECT_GT(scales, 0);
    EXPECT_GT(quantizing, 0);
    for (int64_t ctas : {1, 3}) {
      SimulationReport run =
          simulateQuantizingProgram(program, src, dst, shape, ctas, 7);
      EXPECT_TRUE(run.passed) << run.message;
    }
  }
}

TEST(QuantizingProgramTest, EncodedItemsWalkEveryInstance) {
  // What the runtime uploads (encodeItems): every instance of every kernel
  // item, a band of a lookup movement's rows folded into one item whose
  // rows and strides the kernel walks. Decoded, the items give back each
  // instance's addresses, op and block lookup, in order.
  Layout src{Mesh::contiguous({4}, 0), {Placement::shard(1)}};
  Layout dst{Mesh::contiguous({2}, 4), {Placement::shard(0)}};
  const std::vector<int64_t> shape{64, 96};
  LoweredQuantizing lowered = lowerQuantizing(
      Scaling::block(16, 32), src, dst, shape, ElementType::BF16,
      ElementType::F8E4M3FN, Strategy::Flat, 0, LoweringOptions{});
  ASSERT_FALSE(lowered.error) << *lowered.error;
  const TransferProgram &program = lowered.program;
  // Buffers at distinct bases; counters likewise.
  ItemAddresses addresses;
  addresses.buffer = [](const BufferRef &ref) {
    return (uint64_t{1} << 44) * (static_cast<uint64_t>(ref.kind) + 1) +
           (uint64_t{1} << 36) * static_cast<uint64_t>(ref.rank) +
           (uint64_t{1} << 32) * static_cast<uint64_t>(ref.scratch + 1);
  };
  addresses.counter = [](const CounterRef &counter) {
    return (uint64_t{1} << 50) + 8 * static_cast<uint64_t>(counter.rank * 4096 +
                                                          counter.index);
  };
  addresses.tensorMap = [](int64_t map) { return uint64_t{1} << 20 | map; };
  int64_t folded = 0;
  for (const auto &[rank, rankProgram] : program.ranks) {
    std::vector<KernelItem> items;
    for (const Movement &m : rankProgram.items)
      ASSERT_EQ(encodeItems(m, program, addresses, items), std::nullopt);
    // The instances the kernel walks, decoded.
    std::vector<std::tuple<uint64_t, uint64_t, uint32_t, int64_t>> walked;
    for (const KernelItem &item : items) {
      const bool scaleItem =
          item.op >= kScaleOpBase && item.op < kQuantizeOpBase;
      if (!isQuantizingOp(item.op) || scaleItem) {
        walked.emplace_back(item.src, item.dst, item.op, -1);
        continue;
      }
      const ItemLookup lookup = lookupOf(item);
      folded += lookup.rows > 1;
      for (uint32_t row = 0; row < std::max<uint32_t>(lookup.rows, 1); ++row)
        walked.emplace_back(item.src + uint64_t{row} * lookup.srcStride,
                            item.dst + uint64_t{row} * lookup.dstStride,
                            item.op,
                            lookup.entry + int64_t{row} * lookup.entryStride);
    }
    // Each movement's instances, expanded.
    std::vector<std::tuple<uint64_t, uint64_t, uint32_t, int64_t>> expected;
    for (const Movement &m : rankProgram.items)
      m.forEachInstance([&](const Movement &instance) {
        expected.emplace_back(
            addresses.buffer(instance.src) + instance.srcOffset,
            addresses.buffer(instance.dst) + instance.dstOffset,
            kernelOp(instance, program),
            instance.lookup ? instance.lookup->entry : -1);
      });
    EXPECT_EQ(walked, expected) << "rank " << rank;
  }
  EXPECT_GT(folded, 0); // Bands of 16 rows became one item each.
  // The kernel walks the same items from one template per movement.
  for (uint64_t grid : {1, 3, 8, 100})
    expectWalkMatchesExpansion(program, grid);
}

TEST(QuantizingProgramTest, AcrossNodesTheExchangeIsStagedForTheNetwork) {
  // A trainer on one node, a generator on the other: the amaxes of blocks
  // straddling both source ranks cross the network (strided boxes of f32
  // blocks staged, max reductions received into staging first), and so
  // do the quantized elements (packed by a quantizing move first).
  Layout src{Mesh::contiguous({2}, 0), {Placement::shard(1)}};
  Layout dst{Mesh::contiguous({2}, 2), {Placement::shard(0)}};
  const std::vector<int64_t> shape{8, 96};
  for (const Scaling &scaling :
       {Scaling::mx(), Scaling::block(4, 64), Scaling::tensor()}) {
    SCOPED_TRACE(scaling.str());
    LoweredQuantizing lowered = lowerQuantizing(
        scaling, src, dst, shape, ElementType::BF16, ElementType::F8E4M3FN,
        Strategy::Hierarchical, 0, {}, twoDomains(2, 4));
    ASSERT_FALSE(lowered.error) << *lowered.error;
    const TransferProgram &program = lowered.program;
    EXPECT_EQ(verifyTransferProgram(program, src, dst, shape), std::nullopt);
    int64_t amaxReceives = 0;
    for (const auto &[rank, rankProgram] : program.ranks)
      for (const Movement &m : rankProgram.receives)
        amaxReceives += holdsAmaxes(m.dst, program.scratches);
    EXPECT_GT(amaxReceives, 0);
    for (int64_t ctas : {1, 2}) {
      SimulationReport run =
          simulateQuantizingProgram(program, src, dst, shape, ctas, 11);
      EXPECT_TRUE(run.passed) << run.message;
    }
    // The staged schedule is a schedule like any: verified and simulated.
    Schedule staged =
        stageNetworkSteps(lowered.schedule, src, dst, shape, true);
    std::optional<ScheduleIssue> issue =
        verifySchedule(staged, src, dst, shape);
    EXPECT_FALSE(issue) << issue->message;
    SimulationReport run = simulateQuantizingSchedule(
        scaling, src, dst, shape, ElementType::BF16, ElementType::F8E4M3FN,
        staged, ReshardSimulator::StepOrder::LastReadyFirst, 11);
    EXPECT_TRUE(run.passed) << run.message;
  }
}

TEST(QuantizingProgramTest, AGroupRunsEachMemberWithItsOwnScaling) {
  // Two quantizing reshards launched as one group (mergePrograms): block
  // scales into e4m3 and MX into e5m2, each member's tables, scales and
  // lookups its own. The host executor runs the merged program over both
  // members' buffers, each checked against its own reference.
  Layout srcA{Mesh::contiguous({4}, 0), {Placement::shard(1)}};
  Layout dstA{Mesh::contiguous({4}, 4), {Placement::shard(0)}};
  Layout srcB{Mesh::contiguous({2}, 2), {Placement::shard(0)}};
  Layout dstB{Mesh::contiguous({2}, 6), {Placement::shard(1)}};
  const std::vector<int64_t> shapeA{6, 40}, shapeB{4, 96};
  LoweringOptions options;
  options.maxItemBytes = 48;
  LoweredQuantizing a = lowerQuantizing(
      Scaling::block(4, 16), srcA, dstA, shapeA, ElementType::BF16,
      ElementType::F8E4M3FN, Strategy::Flat, 0, options);
  LoweredQuantizing b = lowerQuantizing(
      Scaling::mx(), srcB, dstB, shapeB, ElementType::F32,
      ElementType::F8E5M2, Strategy::Hierarchical, 0, options);
  ASSERT_FALSE(a.error) << *a.error;
  ASSERT_FALSE(b.error) << *b.error;
  const TransferProgram merged = mergePrograms({&a.program, &b.program});
  const int64_t scratchBase = static_cast<int64_t>(a.program.scratches.size());
  for (int64_t ctas : {1, 3}) {
    SimulationReport second;
    SimulationReport first = simulateQuantizingBuffers(
        Scaling::block(4, 16), srcA, dstA, shapeA, ElementType::BF16,
        ElementType::F8E4M3FN, a.program.scratches, 3,
        [&](const QuantizedBufferResolver &resolveA) {
          second = simulateQuantizingBuffers(
              Scaling::mx(), srcB, dstB, shapeB, ElementType::F32,
              ElementType::F8E5M2, b.program.scratches, 4,
              [&](const QuantizedBufferResolver &resolveB) {
                // Each member's buffers, by tensor, scratch indices its own.
                QuantizedBufferResolver both = [&](BufferRef ref) {
                  const bool second = ref.tensor == 1;
                  ref.tensor = 0;
                  if (second && ref.kind == BufferKind::Scratch)
                    ref.scratch -= scratchBase;
                  return second ? resolveB(ref) : resolveA(ref);
                };
                return executeProgram(merged, both, ctas);
              });
          return second.passed ? std::nullopt
                               : std::optional<std::string>(second.message);
        });
    EXPECT_TRUE(first.passed) << first.message;
    EXPECT_TRUE(second.passed) << second.message;
  }
}

TEST(QuantizingProgramPropertyTest, LoweredProgramQuantizesLikeTheReference) {
  const uint64_t seed = propertySeed();
  const int64_t cases = propertyCases(400);
  RandomLayouts random(seed);
  int64_t moves = 0, mutations = 0, stagedCases = 0;
  for (int64_t n = 0; n < cases; ++n) {
    const int64_t tensorRank = random.uniform(1, 3);
    std::vector<int64_t> shape;
    const Scaling scaling = random.quantizing(tensorRank, shape);
    const Layout src =
        random.withBoundaries(random.layout(tensorRank, /*allowPartial=*/false), shape);
    const Layout dst =
        random.withBoundaries(random.layout(tensorRank, /*allowPartial=*/false), shape);
    const Strategy strategy = std::vector<Strategy>{
        Strategy::Flat, Strategy::Hierarchical,
        Strategy::GatherBroadcast}[random.uniform(0, 2)];
    const ElementType from = std::vector<ElementType>{
        ElementType::BF16, ElementType::F16,
        ElementType::F32}[random.uniform(0, 2)];
    const ElementType to =
        random.uniform(0, 1) ? ElementType::F8E4M3FN : ElementType::F8E5M2;
    LoweringOptions options;
    // Small items cut runs inside blocks and across them.
    options.maxItemBytes = 16 * random.uniform(1, 8);
    const int64_t chunkBytes = random.uniform(0, 1) ? 0 : random.uniform(1, 24);
    SCOPED_TRACE("M2N_PROPERTY_SEED=" + std::to_string(seed) + " case " +
                 std::to_string(n) + ": " + src.str() + " -> " + dst.str() +
                 " " + scaling.str() + " " + toString(strategy) + " items of " +
                 std::to_string(options.maxItemBytes) + " B");
    // One NVLink domain, or two (amaxes and quantized elements cross the
    // network through staging).
    const Topology topology =
        random.uniform(0, 1)
            ? oneDomain()
            : twoDomains(random.uniform(1, kCommSize - 1), kCommSize);
    // Half the cases quantize each region once per domain (the passes'
    // default), the others once per destination.
    const bool quantizeOnce = random.uniform(0, 1);
    // Half of those share the quantizing with the source replicas.
    const bool onSources = quantizeOnce && random.uniform(0, 1);
    // One band (the passes' default) or up to 8.
    const int64_t maxBands = random.uniform(0, 1) ? 1 : random.uniform(2, 8);
    SCOPED_TRACE(std::string(quantizeOnce ? "quantize-once" : "quantizing twice") +
                 (onSources ? " on sources" : "") +
                 ", chunk-bytes " + std::to_string(chunkBytes) +
                 ", scale-bands " + std::to_string(maxBands));
    LoweredQuantizing lowered =
        lowerQuantizing(scaling, src, dst, shape, from, to, strategy,
                        chunkBytes, options, topology, quantizeOnce, maxBands,
                        onSources);
    ASSERT_FALSE(lowered.error) << *lowered.error;
    std::optional<std::string> wrong =
        verifyTransferProgram(lowered.program, src, dst, shape);
    ASSERT_FALSE(wrong) << *wrong;
    for (const auto &[rank, rankProgram] : lowered.program.ranks)
      moves += static_cast<int64_t>(rankProgram.items.size());
    SimulationReport run = simulateQuantizingProgram(
        lowered.program, src, dst, shape, random.uniform(1, 3), seed + n);
    ASSERT_TRUE(run.passed) << run.message;
    if (topology.domains.size() > 1) {
      // What the lowering staged, as a schedule: verified and simulated.
      Schedule staged =
          stageNetworkSteps(lowered.schedule, src, dst, shape, true);
      std::optional<ScheduleIssue> issue =
          verifySchedule(staged, src, dst, shape);
      ASSERT_FALSE(issue) << "staged step " << issue->step << ": "
                          << issue->message;
      SimulationReport steps = simulateQuantizingSchedule(
          scaling, src, dst, shape, from, to, staged,
          ReshardSimulator::StepOrder::LastReadyFirst, seed + n);
      ASSERT_TRUE(steps.passed) << steps.message;
      ++stagedCases;
    }

    // One move broken: a quantizing or exchange move stripped of its
    // waits (it may now read a table before its amaxes arrive), or a
    // lookup pointed at the next block. The verifier must name it.
    std::vector<std::pair<int64_t, size_t>> candidates;
    const bool strip = random.uniform(0, 1);
    for (const auto &[rank, rankProgram] : lowered.program.ranks)
      for (size_t i = 0; i < rankProgram.items.size(); ++i) {
        const Movement &m = rankProgram.items[i];
        if (strip ? (lowered.program.quantizes(m) ||
                     m.src.kind == BufferKind::Slots) &&
                        m.bytes > 0 && !m.waits.empty()
                  : m.lookup.has_value())
          candidates.push_back({rank, i});
      }
    if (candidates.empty())
      continue;
    TransferProgram broken = lowered.program;
    const auto [rank, index] = candidates[random.uniform(
        0, static_cast<int64_t>(candidates.size()) - 1)];
    Movement &victim = broken.ranks[rank].items[index];
    const std::string before = victim.str(broken.type);
    if (strip)
      victim.waits.clear();
    else
      ++victim.lookup->entry;
    std::optional<std::string> caught =
        verifyTransferProgram(broken, src, dst, shape);
    ASSERT_TRUE(caught) << (strip ? "stripped " : "shifted ") << before
                        << " not caught";
    ++mutations;
  }
  std::cout << "[ property ] seed " << seed << ": " << cases
            << " quantizing programs, " << moves
            << " moves (" << stagedCases
            << " across two NVLink domains, staged), run bit-exact; "
            << mutations << " broken moves caught\n";
}

} // namespace
