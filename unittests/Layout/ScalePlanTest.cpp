//===- ScalePlanTest.cpp - the amax exchange on random layouts -----------===//

#include "RandomLayouts.h"

#include "m2n/Plan/ScalePlan.h"
#include "m2n/Sim/QuantizingSimulator.h"

#include <gtest/gtest.h>

#include <cmath>
#include <iostream>

using namespace m2n;

namespace {

Dims minus(Dims index, const Dims &origin) {
  for (size_t d = 0; d < index.size(); ++d)
    index[d] -= origin[d];
  return index;
}

Box shifted(Box box, const Dims &by) {
  for (size_t d = 0; d < box.offsets.size(); ++d)
    box.offsets[d] += by[d];
  return box;
}

std::string describe(const std::vector<AmaxTransfer> &exchange) {
  std::string text;
  for (const AmaxTransfer &t : exchange)
    text += t.transfer.str() +
            (t.table == ScaleTable::Quantizer ? " quantizer\n" : " holder\n");
  return text;
}

TEST(ScalePlanTest, BlocksStraddlingSourceShardsAreReducedFromEachRank) {
  // 4 x 6 in 2 x 4 blocks; source TP3 over columns (2 each), destination
  // TP2 over rows on ranks 3, 4: block (0, 0) (cols 0-3) spans source ranks
  // 0 and 1, block (0, 1) (cols 4-5, an edge block) lies on rank 2 alone.
  Layout src{Mesh::contiguous({3}), {Placement::shard(1)}};
  Layout dst{Mesh::contiguous({2}, 3), {Placement::shard(0)}};
  std::vector<int64_t> shape{4, 6};
  ReshardPlan plan = IntersectionPlanner(src, dst, shape).plan();
  ScalePlan scales = planScales(Scaling::block(2, 4), src, dst, shape, plan);
  EXPECT_EQ(scales.scaleShape, Dims({2, 2}));
  EXPECT_EQ(scales.slotBoxes[1], (Box{{0, 0}, {2, 1}}));
  EXPECT_EQ(scales.slotBoxes[2], (Box{{0, 1}, {2, 1}}));
  EXPECT_EQ(scales.holderBoxes[4], (Box{{1, 0}, {1, 2}}));
  EXPECT_EQ(describe(scales.exchange),
            // Quantizer tables: each source rank's own blocks.
            "0 [0:2, 0:1] -> 0 [0:2, 0:1] copy quantizer\n"
            "1 [0:2, 0:1] -> 1 [0:2, 0:1] copy quantizer\n"
            "2 [0:2, 0:1] -> 2 [0:2, 0:1] copy quantizer\n"
            // Holder tables: block row 0 on rank 3, row 1 on rank 4.
            "0 [0:1, 0:1] -> 3 [0:1, 0:1] copy holder\n"
            "2 [0:1, 0:1] -> 3 [0:1, 1:2] copy holder\n"
            "0 [1:2, 0:1] -> 4 [0:1, 0:1] copy holder\n"
            "2 [1:2, 0:1] -> 4 [0:1, 1:2] copy holder\n"
            // Block column 0 straddles ranks 0 and 1.
            "1 [0:2, 0:1] -> 0 [0:2, 0:1] max quantizer\n"
            "0 [0:2, 0:1] -> 1 [0:2, 0:1] max quantizer\n"
            "1 [0:1, 0:1] -> 3 [0:1, 0:1] max holder\n"
            "1 [1:2, 0:1] -> 4 [0:1, 0:1] max holder\n");
}

TEST(ScalePlanTest, VerifierNamesEachProblem) {
  Layout src{Mesh::contiguous({3}), {Placement::shard(1)}};
  Layout dst{Mesh::contiguous({2}, 3), {Placement::shard(0)}};
  std::vector<int64_t> shape{4, 6};
  Scaling scaling = Scaling::block(2, 4);
  ReshardPlan plan = IntersectionPlanner(src, dst, shape).plan();
  const ScalePlan good = planScales(scaling, src, dst, shape, plan);
  auto firstIssue = [&](const ScalePlan &scales) {
    std::vector<PlanIssue> issues =
        verifyScalePlan(scaling, src, dst, shape, plan, scales);
    return issues.empty() ? std::string() : issues.front().message;
  };
  EXPECT_EQ(firstIssue(good), "");

  ScalePlan missing = good; // Rank 1's max-reduction into rank 3's table.
  missing.exchange.erase(missing.exchange.begin() + 9);
  EXPECT_EQ(firstIssue(missing),
            "the holder table of rank 3 gets block [0:1, 0:1] from 1 of its "
            "2 shares with 1 copies (expected every share once, one copy)");
  ScalePlan twice = good;
  twice.exchange.push_back(twice.exchange[3]);
  EXPECT_EQ(firstIssue(twice), "brings blocks [0:1, 0:1] of rank 0's share "
                               "into this table a second time");
  ScalePlan shrunk = good; // Rank 2 computes nothing: its elements lack.
  shrunk.amaxBoxes[2] = Box{{0, 1}, {0, 1}};
  EXPECT_EQ(firstIssue(shrunk),
            "the amax shares cover 0 of the 4 elements of block [0:1, 1:2]");
  ScalePlan outside = good;
  outside.amaxBoxes[0] = Box{{0, 0}, {2, 2}};
  EXPECT_EQ(firstIssue(outside),
            "rank 0 computes the amaxes of blocks [0:2, 0:2], not all of "
            "which its local box touches");
  ScalePlan unread = good; // Reads slots rank 0 does not compute.
  unread.exchange[0].transfer.srcRank = 2;
  std::vector<PlanIssue> issues =
      verifyScalePlan(scaling, src, dst, shape, plan, unread);
  ASSERT_FALSE(issues.empty());
  EXPECT_EQ(issues.front().transfer, 0);
  EXPECT_EQ(issues.front().message,
            "writes blocks [0:2, 0:1] of the quantizer table of rank 0 from "
            "blocks [0:2, 1:2] (table [0:2, 0:1])");
  ScalePlan noTable = good;
  noTable.exchange[3].transfer.dstRank = 7;
  EXPECT_EQ(verifyScalePlan(scaling, src, dst, shape, plan, noTable)
                .front()
                .message,
            "writes blocks [0:1, 0:1] of the holder table of rank 7, which "
            "has none");
}

TEST(ScalePlanPropertyTest, TheExchangeGivesEveryTableItsBlocksAmax) {
  const uint64_t seed = propertySeed();
  const int64_t cases = propertyCases(2000);
  RandomLayouts random(seed);
  int64_t reductions = 0, replicated = 0, entries = 0;
  for (int64_t n = 0; n < cases; ++n) {
    int64_t tensorRank = random.uniform(1, 3);
    std::vector<int64_t> shape;
    Scaling scaling = random.quantizing(tensorRank, shape);
    Layout src =
        random.withBoundaries(random.layout(tensorRank, /*allowPartial=*/false), shape);
    Layout dst =
        random.withBoundaries(random.layout(tensorRank, /*allowPartial=*/false), shape);
    SCOPED_TRACE("M2N_PROPERTY_SEED=" + std::to_string(seed) + " case " +
                 std::to_string(n) + ": " + src.str() + " -> " + dst.str() +
                 " " + scaling.str());
    ASSERT_EQ(validateReshard(src, dst, shape, kCommSize), std::nullopt);
    Dims dims(shape.begin(), shape.end());
    ReshardPlan plan = IntersectionPlanner(src, dst, shape).plan();
    ScalePlan scales = planScales(scaling, src, dst, shape, plan);
    ASSERT_EQ(describe(planScales(scaling, src, dst, shape, plan).exchange),
              describe(scales.exchange))
        << "planning is not deterministic";
    std::vector<PlanIssue> issues =
        verifyScalePlan(scaling, src, dst, shape, plan, scales);
    ASSERT_TRUE(issues.empty()) << issues.front().message;
    // The plan run end to end on the host, from bf16 or f16 or f32 into
    // either fp8 format, against the reference quantizer.
    ElementType from = std::vector<ElementType>{
        ElementType::BF16, ElementType::F16, ElementType::F32}[random.uniform(0, 2)];
    ElementType to = random.uniform(0, 1) ? ElementType::F8E4M3FN
                                          : ElementType::F8E5M2;
    SimulationReport run = simulateQuantizingPlan(scaling, src, dst, shape, from,
                                                  to, plan, scales, seed + n);
    ASSERT_TRUE(run.passed) << run.message;

    // Random data with NaNs, zero blocks and a wide range of magnitudes.
    int64_t elements = 1;
    for (int64_t extent : shape)
      elements *= extent;
    std::vector<float> data(elements);
    for (float &value : data) {
      int64_t kind = random.uniform(0, 19);
      value = kind == 0  ? NAN
              : kind < 4 ? 0.0f
                         : std::ldexp(static_cast<float>(random.uniform(-999, 999)),
                                      static_cast<int>(random.uniform(-20, 10)));
    }
    std::vector<uint8_t> quantized(elements);
    std::vector<float> reference;
    quantizeTensor(scaling, ElementType::F32, ElementType::F8E4M3FN, dims,
                   reinterpret_cast<const uint8_t *>(data.data()),
                   quantized.data(), reference);

    // Phase 1 on every source rank: the amaxes of its share into its
    // slots (NaN: a slot nobody computed). Every element is read once.
    std::vector<int> reads(elements, 0);
    std::map<int64_t, std::vector<float>> slots;
    for (int64_t position = 0; position < src.mesh.size(); ++position) {
      int64_t rank = src.mesh.rankAt(position);
      Box box = src.localBox(shape, position);
      const Box &slotBox = scales.slotBoxes[rank];
      ASSERT_TRUE(slotBox.contains(scales.amaxBoxes[rank]) ||
                  scales.amaxBoxes[rank].empty());
      std::vector<float> &own = slots[rank];
      own.assign(slotBox.volume(), NAN);
      forEachIndex(scales.amaxBoxes[rank], [&](const Dims &block) {
        float amax = 0.0f;
        forEachIndex(box.intersect(blockElements(scaling, dims, block)),
                     [&](const Dims &index) {
                       int64_t at = linearize(index, dims);
                       ++reads[at];
                       amax = std::fmax(amax, std::fabs(data[at]));
                     });
        own[linearize(minus(block, slotBox.offsets), slotBox.sizes)] = amax;
      });
    }
    for (int64_t at = 0; at < elements; ++at)
      ASSERT_EQ(reads[at], 1) << "element " << at;

    // Phase 2: copies, then max-reductions, from slots into tables.
    std::map<std::pair<int64_t, ScaleTable>, std::vector<float>> tables;
    for (const AmaxTransfer &exchange : scales.exchange) {
      const Transfer &t = exchange.transfer;
      Box table = scales.tableBox(t.dstRank, exchange.table);
      std::vector<float> &into = tables[{t.dstRank, exchange.table}];
      into.resize(table.volume(), NAN);
      const Box &slotBox = scales.slotBoxes[t.srcRank];
      ASSERT_EQ(t.srcBox.sizes, t.dstBox.sizes);
      Dims delta(dims.size());
      for (size_t d = 0; d < dims.size(); ++d)
        delta[d] = t.dstBox.offsets[d] - t.srcBox.offsets[d];
      reductions += t.reduction.has_value();
      forEachIndex(t.srcBox, [&](const Dims &index) {
        float value = slots[t.srcRank][linearize(index, slotBox.sizes)];
        ASSERT_FALSE(std::isnan(value)) << "reads a slot nobody computed: "
                                        << t.str();
        float &entry = into[linearize(shifted(Box{index, {}}, delta).offsets,
                                      table.sizes)];
        if (t.reduction) {
          ASSERT_FALSE(std::isnan(entry)) << "reduces before a copy: " << t.str();
          entry = std::fmax(entry, value);
        } else {
          ASSERT_TRUE(std::isnan(entry)) << "copies twice: " << t.str();
          entry = value;
        }
      });
    }
    // Every table a rank needs is complete and gives the reference scales.
    auto checkTable = [&](int64_t rank, ScaleTable kind) {
      Box table = scales.tableBox(rank, kind);
      if (table.empty())
        return;
      std::vector<float> &values = tables[{rank, kind}];
      ASSERT_EQ(static_cast<int64_t>(values.size()), table.volume())
          << "rank " << rank << " has no table";
      forEachIndex(table, [&](const Dims &block) {
        float amax = values[linearize(minus(block, table.offsets), table.sizes)];
        ASSERT_EQ(scaleFromAmax(scaling, ElementType::F8E4M3FN, amax),
                  reference[linearize(block, scales.scaleShape)])
            << "rank " << rank << " block " << Box{block, {}}.str();
        ++entries;
      });
    };
    for (const Transfer &transfer : plan.transfers)
      checkTable(transfer.srcRank, ScaleTable::Quantizer);
    for (int64_t position = 0; position < dst.mesh.size(); ++position) {
      int64_t rank = dst.mesh.rankAt(position);
      ASSERT_EQ(scales.holderBoxes[rank],
                blocksTouching(scaling, dims, dst.localBox(shape, position)));
      checkTable(rank, ScaleTable::Holder);
    }
    for (const auto &[rank, box] : scales.amaxBoxes)
      replicated += !(box == scales.slotBoxes[rank]);
    if (HasFailure())
      return;
  }
  EXPECT_GT(reductions, cases);
  EXPECT_GT(replicated, cases / 10);
  std::cout << "[ property ] seed " << seed << ": " << cases << " cases, "
            << entries << " table entries checked, " << reductions
            << " max-reductions of straddling blocks, " << replicated
            << " replicas sharing their blocks\n";
}

} // namespace
