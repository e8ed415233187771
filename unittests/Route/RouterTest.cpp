//===- RouterTest.cpp - routing strategies, schedules, cost model -----------===//

#include "m2n/Route/CostModel.h"
#include "m2n/Route/Router.h"
#include "m2n/Route/ScaleSteps.h"
#include "m2n/Route/VerifySchedule.h"
#include "m2n/Sim/HostSimulator.h"
#include "m2n/Sim/QuantizingSimulator.h"

#include "../Layout/RandomLayouts.h"

#include <gtest/gtest.h>

#include <iostream>
#include <set>

using namespace m2n;

namespace {

Topology twoDomains(int64_t first, int64_t total, double nvlink = 450,
                    double network = 50) {
  Topology topology;
  topology.domains.resize(2);
  for (int64_t r = 0; r < total; ++r)
    topology.domains[r < first ? 0 : 1].push_back(r);
  topology.nvlinkGBps = nvlink;
  topology.networkGBps = network;
  return topology;
}

std::vector<std::string> describe(const Schedule &schedule) {
  std::vector<std::string> lines;
  for (const Step &step : schedule.steps)
    lines.push_back(step.str());
  return lines;
}

Layout exampleATrainer() {
  return {Mesh::contiguous({1, 4}, 0),
          {Placement::replicate(), Placement::shard(0)}};
}
Layout exampleAGenerator() {
  return {Mesh::contiguous({2, 2}, 4),
          {Placement::replicate(), Placement::shard(0)}};
}

// The picture in docs/routing.md: each trainer row crosses the network once,
// into a balanced leader, and the leaders complete replication over NVLink.
TEST(RouterTest, PaperExampleAHierarchical) {
  Layout src = exampleATrainer(), dst = exampleAGenerator();
  std::vector<int64_t> shape = {4, 8};
  Topology topology = twoDomains(4, 8);
  ReshardPlan plan = IntersectionPlanner(src, dst, shape).plan();
  Schedule schedule = TopologyRouter(src, dst, shape, topology)
                          .route(plan, Strategy::Hierarchical);
  addDataDependencies(schedule);
  EXPECT_EQ(describe(schedule),
            (std::vector<std::string>{
                "copy src(0) [0:1, 0:8] -> dst(4) [0:1, 0:8] via network",
                "copy dst(4) [0:1, 0:8] -> dst(6) [0:1, 0:8] via nvlink after [0]",
                "copy src(1) [0:1, 0:8] -> dst(6) [1:2, 0:8] via network",
                "copy dst(6) [1:2, 0:8] -> dst(4) [1:2, 0:8] via nvlink after [2]",
                "copy src(2) [0:1, 0:8] -> dst(5) [0:1, 0:8] via network",
                "copy dst(5) [0:1, 0:8] -> dst(7) [0:1, 0:8] via nvlink after [4]",
                "copy src(3) [0:1, 0:8] -> dst(7) [1:2, 0:8] via network",
                "copy dst(7) [1:2, 0:8] -> dst(5) [1:2, 0:8] via nvlink after [6]",
            }));
  Estimate hier = estimateSchedule(schedule, topology, 2);
  Estimate flat = estimateSchedule(
      TopologyRouter(src, dst, shape, topology).route(plan, Strategy::Flat),
      topology, 2);
  EXPECT_EQ(hier.networkBytes, 4 * 8 * 2);
  EXPECT_EQ(flat.networkBytes, 8 * 8 * 2);
  EXPECT_EQ(hier.nvlinkBytes, 4 * 8 * 2);
}

// The NCCL M2N paper's single-layer SOL table (seeds/001, Section VI-B): a
// 7168 MB BF16 expert tensor from a 16-GPU EP group to TP8 x DP{2,4,8}, one
// NVLink domain per group, 50 GB/s per NIC. The paper's 143.36 ms =
// 7168e6 B / 50e9 B/s, so the tensor here has exactly 7.168e9 bytes
// (256 x 2000 x 7000 bf16).
TEST(RouterTest, AutoReduceShareFollowsTheCostModel) {
  // 2 replicas: the same bytes either way, so the direct route; 4: half the
  // NVLink bytes, so reduce-share.
  for (int64_t ranks : {2, 4}) {
    Layout src{Mesh::contiguous({ranks}), {Placement::partial(Reduction::Sum)}};
    Layout dst{Mesh::contiguous({ranks}), {Placement::replicate()}};
    std::vector<int64_t> shape = {16, 4};
    Topology topology = Topology::singleDomain(ranks);
    ReshardPlan plan = IntersectionPlanner(src, dst, shape).plan();
    TopologyRouter router(src, dst, shape, topology);
    int64_t fromDestinations = 0;
    for (const Step &step :
         router.setReduceShare(ReduceShare::Auto).route(plan, Strategy::Hierarchical).steps)
      fromDestinations += step.from.kind == BufferKind::Destination;
    EXPECT_EQ(fromDestinations > 0, ranks == 4) << ranks << " ranks";
  }
  EXPECT_EQ(parseReduceShare("auto"), ReduceShare::Auto);
  EXPECT_EQ(parseReduceShare("true"), ReduceShare::On);
  EXPECT_EQ(parseReduceShare("sometimes"), std::nullopt);
}

TEST(RouterTest, ReduceShareReducesEachChunkOnce) {
  // All-reduce over 4 ranks of one domain: each rank reduces a quarter of
  // every peer's contribution, then copies the other three reduced quarters.
  Layout src{Mesh::contiguous({4}), {Placement::partial(Reduction::Sum)}};
  Layout dst{Mesh::contiguous({4}), {Placement::replicate()}};
  std::vector<int64_t> shape = {8, 4};
  Topology topology = Topology::singleDomain(4);
  ReshardPlan plan = IntersectionPlanner(src, dst, shape).plan();
  TopologyRouter router(src, dst, shape, topology);
  Schedule direct = router.route(plan, Strategy::Hierarchical);
  Schedule shared =
      router.setReduceShare(true).route(plan, Strategy::Hierarchical);
  auto bytesOf = [](const Schedule &schedule, bool reductions) {
    int64_t elements = 0;
    for (const Step &step : schedule.steps)
      if (step.link != LinkClass::Local &&
          step.reduction.has_value() == reductions)
        elements += step.fromBox.volume();
    return elements;
  };
  // Without sharing, every rank pulls 3 whole contributions to reduce.
  EXPECT_EQ(bytesOf(direct, true), 4 * 3 * 32);
  EXPECT_EQ(bytesOf(direct, false), 0);
  // With it, every rank reduces 3 quarters and copies 3 reduced quarters.
  EXPECT_EQ(bytesOf(shared, true), 4 * 3 * 8);
  EXPECT_EQ(bytesOf(shared, false), 4 * 3 * 8);
  addDataDependencies(shared);
  for (auto order : {ReshardSimulator::StepOrder::ListOrder,
                     ReshardSimulator::StepOrder::LastReadyFirst}) {
    ReshardSimulator simulator(src, dst, shape, ElementType::F32);
    ASSERT_EQ(simulator.execute(shared, order), std::nullopt);
    EXPECT_TRUE(simulator.check().passed);
  }
  // Across domains the network route is kept.
  Topology two;
  two.domains = {{0, 1}, {2, 3}};
  TopologyRouter split(src, dst, shape, two);
  EXPECT_EQ(bytesOf(split.setReduceShare(true).route(plan, Strategy::Hierarchical), false),
            bytesOf(split.setReduceShare(false).route(plan, Strategy::Hierarchical), false));
}

TEST(CostModelTest, ReproducesPaperSolTable) {
  std::vector<int64_t> shape = {256, 2000, 7000};
  Layout src{Mesh::contiguous({16}, 0), {Placement::shard(0)}};
  struct Row {
    int64_t dp;
    double flat, gatherBcast, hierarchical;
  } rows[] = {{2, 17.92, 143.36, 8.96},
              {4, 35.84, 143.36, 8.96},
              {8, 71.68, 143.36, 8.96}};
  for (const Row &row : rows) {
    Layout dst{Mesh::contiguous({row.dp, 8}, 16),
               {Placement::replicate(), Placement::shard(1)}};
    Topology topology = twoDomains(16, 16 + 8 * row.dp, /*nvlink=*/900, 50);
    ReshardPlan plan = IntersectionPlanner(src, dst, shape).plan();
    TopologyRouter router(src, dst, shape, topology);
    auto sol = [&](Strategy strategy) {
      return estimateSchedule(router.route(plan, strategy), topology, 2);
    };
    Estimate flat = sol(Strategy::Flat);
    Estimate bcast = sol(Strategy::GatherBroadcast);
    Estimate hier = sol(Strategy::Hierarchical);
    EXPECT_NEAR(flat.solMs(), row.flat, 1e-9) << "DP" << row.dp;
    EXPECT_NEAR(bcast.solMs(), row.gatherBcast, 1e-9) << "DP" << row.dp;
    EXPECT_NEAR(hier.solMs(), row.hierarchical, 1e-9) << "DP" << row.dp;
    // NVLink is never on the critical path (the paper's Section VI-B check).
    EXPECT_LT(hier.nvlinkMs, hier.networkMs);
    EXPECT_EQ(hier.busiestLink().rfind("network", 0), 0u);
  }
}

TEST(TopologyTest, ParsesJsonAndReportsErrors) {
  Topology topology;
  EXPECT_EQ(Topology::parseJson(R"({"name": "2x H200", "domains": [[0, 1], [2, 3]],
                                    "nvlink_gbps": 450, "network_gbps": 50.5})",
                                topology),
            std::nullopt);
  EXPECT_EQ(topology.domains.size(), 2u);
  EXPECT_EQ(topology.domainOf(3), 1);
  EXPECT_EQ(topology.domainOf(7), 9); // In no domain: a domain of its own.
  EXPECT_DOUBLE_EQ(topology.networkGBps, 50.5);
  EXPECT_EQ(topology.linkBetween(0, 1), LinkClass::NVLink);
  EXPECT_EQ(topology.linkBetween(1, 2), LinkClass::Network);
  EXPECT_EQ(topology.validate(4), std::nullopt);
  EXPECT_EQ(topology.domainCount(6), 4); // Ranks 4 and 5: one each.
  EXPECT_NE(topology.validate(3)->find("outside the communicator"),
            std::string::npos);

  EXPECT_NE(Topology::parseJson("{\"domains\": [[0]], \"nvlink_gbps\": 1}",
                                topology)
                ->find("needs 'domains' (or 'domain_size'), 'nvlink_gbps' "
                       "and 'network_gbps'"),
            std::string::npos);
  EXPECT_NE(Topology::parseJson("{\"domains\": [[0.5]], \"nvlink_gbps\": 1, "
                                "\"network_gbps\": 1}",
                                topology)
                ->find("must be integers"),
            std::string::npos);
  EXPECT_NE(Topology::parseJson("{\"links\": 3}", topology)
                ->find("unknown topology key 'links'"),
            std::string::npos);
  EXPECT_NE(Topology::parseJson("{\"domains\": [[0, 1]", topology)
                ->find("invalid JSON"),
            std::string::npos);
  EXPECT_NE(Topology::parseJson("{\"domains\": [[1e300]], \"nvlink_gbps\": 1, "
                                "\"network_gbps\": 1}",
                                topology)
                ->find("must be integers"),
            std::string::npos);
}

// Domains of consecutive ranks given by their size: O(1) to describe, to
// validate and to look up, whatever the communicator's size.
TEST(TopologyTest, UniformDomainsCostNothingPerRank) {
  Topology topology;
  ASSERT_EQ(Topology::parseJson(R"({"domain_size": 8, "nvlink_gbps": 450,
                                    "network_gbps": 50})",
                                topology),
            std::nullopt);
  EXPECT_TRUE(topology.domains.empty());
  EXPECT_EQ(topology.domainOf(7), 0);
  EXPECT_EQ(topology.domainOf(8), 1);
  EXPECT_EQ(topology.linkBetween(8, 15), LinkClass::NVLink);
  EXPECT_EQ(topology.linkBetween(7, 8), LinkClass::Network);
  EXPECT_EQ(topology.validate(int64_t{1} << 31), std::nullopt);
  EXPECT_EQ(topology.domainCount(20), 3); // 8 + 8 + a short 4.
  DomainMap map(topology);
  EXPECT_EQ(map.domainOf((int64_t{1} << 31) - 1), (int64_t{1} << 28) - 1);
  EXPECT_EQ(map.linkBetween(16, 23), LinkClass::NVLink);

  Topology one = Topology::singleDomain(int64_t{1} << 24);
  EXPECT_TRUE(one.domains.empty());
  EXPECT_EQ(one.domainOf(0), one.domainOf((int64_t{1} << 24) - 1));
  EXPECT_EQ(one.validate(int64_t{1} << 24), std::nullopt);

  Topology both = topology;
  both.domains = {{0, 1}};
  EXPECT_NE(both.validate(8)->find("not both"), std::string::npos);
  EXPECT_NE(Topology::parseJson(R"({"domain_size": 0, "nvlink_gbps": 1,
                                    "network_gbps": 1})",
                                topology)
                ->find("positive integer"),
            std::string::npos);
  EXPECT_NE(Topology::parseJson(R"({"domain_size": 2, "domains": [[0]],
                                    "nvlink_gbps": 1, "network_gbps": 1})",
                                topology)
                ->find("not both"),
            std::string::npos);
}

TEST(ScheduleTest, ChunkingSplitsTheOutermostNonUnitDimension) {
  Schedule schedule;
  Step step;
  step.from = {BufferKind::Source, 0, -1};
  step.to = {BufferKind::Destination, 1, -1};
  step.fromBox = {Dims{0, 0, 0}, Dims{1, 10, 4}};
  step.toBox = {Dims{0, 2, 0}, Dims{1, 10, 4}};
  schedule.steps.push_back(step);
  // 4 elements x 4 bytes per row of dim 1; 48-byte chunks hold 3 rows.
  Schedule chunked = chunkSchedule(schedule, 4, 48);
  ASSERT_EQ(chunked.steps.size(), 4u);
  EXPECT_EQ(chunked.steps[0].toBox.str(), "[0:1, 2:5, 0:4]");
  EXPECT_EQ(chunked.steps[3].fromBox.str(), "[0:1, 9:10, 0:4]");
}

// A 4 TiB step (2^40 f32) in 4 MiB chunks would be 2^20 steps: the chunks
// grow so that one step makes at most kMaxChunksPerStep.
TEST(ScheduleTest, ChunkingBoundsThePiecesOfAHugeStep) {
  Schedule schedule;
  Step step;
  step.from = {BufferKind::Source, 0, -1};
  step.to = {BufferKind::Destination, 1, -1};
  const int64_t elements = int64_t{1} << 40;
  step.fromBox = {Dims{0}, Dims{elements}};
  step.toBox = {Dims{0}, Dims{elements}};
  schedule.steps.push_back(step);
  Schedule chunked = chunkSchedule(schedule, 4, int64_t{4} << 20);
  ASSERT_EQ(static_cast<int64_t>(chunked.steps.size()), kMaxChunksPerStep);
  int64_t covered = 0;
  for (const Step &piece : chunked.steps) {
    EXPECT_EQ(piece.fromBox.offsets[0], covered);
    covered += piece.fromBox.sizes[0];
  }
  EXPECT_EQ(covered, elements);
  // An odd extent: the last piece is short, none is empty.
  schedule.steps[0].fromBox = {Dims{0}, Dims{elements + 3}};
  schedule.steps[0].toBox = {Dims{0}, Dims{elements + 3}};
  chunked = chunkSchedule(schedule, 4, int64_t{4} << 20);
  EXPECT_LE(static_cast<int64_t>(chunked.steps.size()), kMaxChunksPerStep);
  EXPECT_GT(chunked.steps.back().fromBox.sizes[0], 0);
}

// A missing dependency shows up as a wrong value in one of the two orders.
TEST(ScheduleTest, SimulatorExposesMissingDependencies) {
  Layout src = exampleATrainer(), dst = exampleAGenerator();
  std::vector<int64_t> shape = {4, 8};
  Topology topology = twoDomains(4, 8);
  ReshardPlan plan = IntersectionPlanner(src, dst, shape).plan();
  Schedule schedule = TopologyRouter(src, dst, shape, topology)
                          .route(plan, Strategy::Hierarchical);
  // No dependencies at all: forwarding may run before the data arrived.
  ReshardSimulator simulator(src, dst, shape, ElementType::F32);
  ASSERT_EQ(simulator.execute(schedule,
                              ReshardSimulator::StepOrder::LastReadyFirst),
            std::nullopt);
  EXPECT_FALSE(simulator.check().passed);
  addDataDependencies(schedule);
  simulator.reset();
  ASSERT_EQ(simulator.execute(schedule,
                              ReshardSimulator::StepOrder::LastReadyFirst),
            std::nullopt);
  EXPECT_TRUE(simulator.check().passed);
  // The coverage proof needs no order to try: it names the race.
  Schedule racy = schedule;
  for (Step &step : racy.steps)
    step.deps.clear();
  std::optional<ScheduleIssue> race = verifySchedule(racy, src, dst, shape);
  ASSERT_TRUE(race);
  EXPECT_NE(race->message.find("without waiting for step"), std::string::npos)
      << race->message;
  EXPECT_EQ(verifySchedule(schedule, src, dst, shape), std::nullopt);
  // A cycle is reported, not run.
  schedule.steps[0].deps.push_back(1);
  ASSERT_TRUE(verifySchedule(schedule, src, dst, shape));
  EXPECT_EQ(verifySchedule(schedule, src, dst, shape)->message,
            "the steps' dependencies form a cycle");
  simulator.reset();
  EXPECT_NE(simulator.execute(schedule)->find("dependency cycle"),
            std::string::npos);
}

Topology randomTopology(RandomLayouts &random) {
  Topology topology;
  int64_t domains = random.uniform(1, 4);
  topology.domains.resize(domains);
  std::vector<int64_t> ranks(16);
  for (int64_t r = 0; r < 16; ++r)
    ranks[r] = r;
  std::shuffle(ranks.begin(), ranks.end(), random.rng);
  for (int64_t r : ranks) {
    int64_t d = random.uniform(0, domains); // == domains: in no domain.
    if (d < domains)
      topology.domains[d].push_back(r);
  }
  topology.domains.erase(
      std::remove_if(topology.domains.begin(), topology.domains.end(),
                     [](const std::vector<int64_t> &d) { return d.empty(); }),
      topology.domains.end());
  return topology;
}

// all_reduce over mesh axis 1 of [P, P]: axis 0 stays partial, so the two
// replicas of each row of the mesh share the reduction of their own column
// contributions only, and every route keeps the rows apart.
TEST(RouterTest, PartlyReducedPartialsShareOnlyTheirOwnContributions) {
  Mesh mesh = Mesh::contiguous({2, 2});
  Layout src{mesh, {Placement::partial(Reduction::Sum),
                    Placement::partial(Reduction::Sum)}};
  Layout dst{mesh, {Placement::partial(Reduction::Sum),
                    Placement::replicate()}};
  std::vector<int64_t> shape = {8, 3};
  Topology topology = Topology::singleDomain(4);
  ReshardPlan plan = IntersectionPlanner(src, dst, shape).plan();
  TopologyRouter router(src, dst, shape, topology);
  for (int variant = 0; variant < 4; ++variant) {
    Strategy strategy = static_cast<Strategy>(std::min(variant, 2));
    router.setReduceShare(variant == 3);
    Schedule schedule = router.route(plan, strategy);
    if (variant == 3) {
      int64_t shared = 0;
      for (const Step &step : schedule.steps)
        shared += step.from.kind == BufferKind::Destination;
      EXPECT_EQ(shared, 4) << "each replica copies one reduced half";
    }
    addDataDependencies(schedule);
    ReshardSimulator simulator(src, dst, shape, ElementType::I64);
    ASSERT_EQ(simulator.execute(schedule), std::nullopt);
    SimulationReport report = simulator.check();
    EXPECT_TRUE(report.passed) << toString(strategy) << ": " << report.message;
  }
}

TEST(RouterPropertyTest, EveryStrategyDeliversTheReshard) {
  const uint64_t seed = propertySeed();
  const int64_t cases = propertyCases(3000);
  RandomLayouts random(seed ^ 0x5eed);
  int64_t steps = 0, networkSaved = 0;
  for (int64_t n = 0; n < cases; ++n) {
    std::vector<int64_t> shape = random.shape();
    int64_t rank = static_cast<int64_t>(shape.size());
    Layout src =
        random.withBoundaries(random.layout(rank, /*allowPartial=*/true), shape);
    Layout dst =
        random.withBoundaries(random.destination(src, rank), shape);
    ElementType type = random.elementType();
    Topology topology = randomTopology(random);
    int64_t chunkBytes = random.uniform(0, 2) * elementSize(type) *
                         random.uniform(1, 12);
    SCOPED_TRACE("M2N_PROPERTY_SEED=" + std::to_string(seed) + " case " +
                 std::to_string(n) + ": " + src.str() + " -> " + dst.str() +
                 " " + toString(type) + " chunk " +
                 std::to_string(chunkBytes));
    ASSERT_EQ(topology.validate(16), std::nullopt);
    ReshardPlan plan = IntersectionPlanner(src, dst, shape).plan();
    TopologyRouter router(src, dst, shape, topology);
    int64_t networkBytes[3] = {0, 0, 0};
    for (int variant = 0; variant < 4; ++variant) {
      // The three strategies, then hierarchical with reduce-share.
      Strategy strategy = static_cast<Strategy>(std::min(variant, 2));
      router.setReduceShare(variant == 3);
      SCOPED_TRACE(std::string(toString(strategy)) +
                   (variant == 3 ? " reduce-share" : ""));
      Schedule schedule = chunkSchedule(router.route(plan, strategy),
                                        elementSize(type), chunkBytes);
      addDataDependencies(schedule);
      steps += static_cast<int64_t>(schedule.steps.size());
      if (variant < 3)
        networkBytes[static_cast<int>(strategy)] =
            estimateSchedule(schedule, topology, elementSize(type)).networkBytes;
      for (auto order : {ReshardSimulator::StepOrder::ListOrder,
                         ReshardSimulator::StepOrder::LastReadyFirst}) {
        ReshardSimulator simulator(src, dst, shape, type);
        ASSERT_EQ(simulator.execute(schedule, order), std::nullopt);
        SimulationReport report = simulator.check();
        ASSERT_TRUE(report.passed) << report.message;
      }
      // The coverage proof accepts every route, and refuses it without
      // any one of its steps that moves something into a destination
      // (gather-bcast also moves what no destination reads).
      std::optional<ScheduleIssue> issue =
          verifySchedule(schedule, src, dst, shape);
      ASSERT_FALSE(issue) << "step " << issue->step << ": " << issue->message;
      const int64_t dropped =
          schedule.steps.empty()
              ? -1
              : random.uniform(0, schedule.steps.size() - 1);
      if (dropped >= 0 && !schedule.steps[dropped].fromBox.empty() &&
          schedule.steps[dropped].to.kind == BufferKind::Destination) {
        Schedule without = schedule;
        without.steps.erase(without.steps.begin() + dropped);
        for (Step &step : without.steps) {
          std::vector<int64_t> deps;
          for (int64_t dep : step.deps)
            if (dep != dropped)
              deps.push_back(dep > dropped ? dep - 1 : dep);
          step.deps = deps;
        }
        ASSERT_TRUE(verifySchedule(without, src, dst, shape))
            << "without step " << dropped << ": "
            << schedule.steps[dropped].str();
      }
    }
    // The hierarchical route never puts more on the network than flat.
    int flat = static_cast<int>(Strategy::Flat);
    int hier = static_cast<int>(Strategy::Hierarchical);
    ASSERT_LE(networkBytes[hier], networkBytes[flat]);
    networkSaved += networkBytes[flat] - networkBytes[hier];
    if (HasFailure())
      return;
  }
  EXPECT_GT(networkSaved, 0);
  std::cout << "[ property ] seed " << seed << ": " << cases
            << " cases x 4 routes x 2 orders, " << steps << " steps\n";
}


// Quantizing reshards routed by every strategy over one or two NVLink
// domains (docs/fp8-scaling.md): every random plan's schedule, with its
// amax exchange steps and chunked data steps, passes verifySchedule and
// runs bit-exact against the reference quantizer in both dependency orders;
// a data step or an exchange step stripped of its dependencies is caught
// by both.
TEST(ScaleStepsTest, BandCountFollowsTheChunksUpToEight) {
  // 7168 x 18432 fp8 over 4 MiB chunks: 32 chunks, capped at 8 bands.
  EXPECT_EQ(scaleBandCount({7168, 18432}, 1, int64_t{4} << 20), 8);
  // Three chunks, rounded up; one where nothing is cut.
  EXPECT_EQ(scaleBandCount({3, 1000}, 4, 4000), 3);
  EXPECT_EQ(scaleBandCount({3, 1000}, 4, 0), 1);
  EXPECT_EQ(scaleBandCount({0, 1000}, 4, 16), 1);
  // Saturating instead of overflowing, in the tensor and in the chunk.
  EXPECT_EQ(scaleBandCount({int64_t{1} << 40, int64_t{1} << 40}, 4, 1), 8);
  EXPECT_EQ(scaleBandCount({4, 4}, 1, INT64_MAX), 1);
}

TEST(ScaleStepsTest, QuantizingSchedulesNeedTheirBlocksToOrderTheMoves) {
  // TP2 over columns into TP2 over rows, 4 x 4 blocks of an 8 x 8 bf16
  // weight, in two bands: with the layout each move waits for its band's
  // quantizer blocks and verifies; without it (the form for schedules
  // without scaling) the verifier names the move that does not wait.
  Layout src{Mesh::contiguous({2}, 0), {Placement::shard(1)}};
  Layout dst{Mesh::contiguous({2}, 2), {Placement::shard(0)}};
  std::vector<int64_t> shape{8, 8};
  Scaling scaling = Scaling::block(4, 4);
  Topology topology = Topology::singleDomain(4);
  ReshardPlan plan = IntersectionPlanner(src, dst, shape).plan();
  ScalePlan scalePlan = planScales(scaling, src, dst, shape, plan);
  Schedule schedule = quantizingSchedule(
      TopologyRouter(src, dst, shape, topology).route(plan, Strategy::Flat),
      scaling, src, dst, shape, scalePlan, topology, 1, 16, kMaxScaleBands);
  int64_t amaxSteps = 0;
  for (const Step &step : schedule.steps)
    amaxSteps += step.kind == StepKind::Amax;
  EXPECT_EQ(amaxSteps, 4); // Two ranks, two bands.
  EXPECT_FALSE(verifySchedule(schedule, src, dst, shape));
  addDataDependencies(schedule);
  std::optional<ScheduleIssue> issue = verifySchedule(schedule, src, dst, shape);
  ASSERT_TRUE(issue);
  EXPECT_NE(issue->message.find("without waiting for step"), std::string::npos)
      << issue->message;
}

TEST(QuantizingSchedulePropertyTest, RoutedScheduleQuantizesLikeTheReference) {
  const uint64_t seed = propertySeed();
  const int64_t cases = propertyCases(600);
  RandomLayouts random(seed);
  Topology oneDomain;
  oneDomain.domains.resize(1);
  for (int64_t r = 0; r < kCommSize; ++r)
    oneDomain.domains[0].push_back(r);
  int64_t steps = 0, mutations = 0, forwarded = 0, sourceQuantized = 0;
  for (int64_t n = 0; n < cases; ++n) {
    int64_t tensorRank = random.uniform(1, 3);
    std::vector<int64_t> shape;
    Scaling scaling = random.quantizing(tensorRank, shape);
    Layout src =
        random.withBoundaries(random.layout(tensorRank, /*allowPartial=*/false), shape);
    Layout dst =
        random.withBoundaries(random.layout(tensorRank, /*allowPartial=*/false), shape);
    Strategy strategy = std::vector<Strategy>{
        Strategy::Flat, Strategy::Hierarchical,
        Strategy::GatherBroadcast}[random.uniform(0, 2)];
    // One NVLink domain, or two (moves out of a source cross the network,
    // so do amaxes of blocks straddling sources of both).
    Topology topology = random.uniform(0, 1)
                            ? oneDomain
                            : twoDomains(random.uniform(1, kCommSize - 1),
                                         kCommSize);
    SCOPED_TRACE("M2N_PROPERTY_SEED=" + std::to_string(seed) + " case " +
                 std::to_string(n) + ": " + src.str() + " -> " + dst.str() +
                 " " + scaling.str() + " " + toString(strategy) + ", " +
                 std::to_string(topology.domains.size()) + " domain(s)");
    ReshardPlan plan = IntersectionPlanner(src, dst, shape).plan();
    ScalePlan scalePlan = planScales(scaling, src, dst, shape, plan);
    ElementType from = std::vector<ElementType>{
        ElementType::BF16, ElementType::F16, ElementType::F32}[random.uniform(0, 2)];
    ElementType to = random.uniform(0, 1) ? ElementType::F8E4M3FN
                                          : ElementType::F8E5M2;
    // Half the hierarchical routes quantize each region once per domain
    // (the passes' default), the others once per destination; one band
    // (the default) or up to 8.
    const bool quantizeOnce = random.uniform(0, 1);
    // Half of those share the quantizing with the source replicas.
    const bool onSources = quantizeOnce && random.uniform(0, 1);
    const int64_t chunkBytes = random.uniform(0, 1) ? 0 : random.uniform(1, 24);
    const int64_t maxBands = random.uniform(0, 1) ? 1 : random.uniform(2, 8);
    SCOPED_TRACE(std::string(quantizeOnce ? "quantize-once" : "quantizing twice") +
                 (onSources ? " on sources" : "") +
                 ", chunk-bytes " + std::to_string(chunkBytes) +
                 ", scale-bands " + std::to_string(maxBands));
    Schedule schedule = quantizingSchedule(
        TopologyRouter(src, dst, shape, topology)
            .setQuantizeOnce(quantizeOnce)
            .setQuantizeOnSources(onSources,
                                  blockShape(scaling, Dims(shape)))
            .route(plan, strategy),
        scaling, src, dst, shape, scalePlan, topology, elementSize(to),
        chunkBytes, maxBands);
    steps += static_cast<int64_t>(schedule.steps.size());
    // Within one domain, hierarchical: every element of the source is
    // quantized once per destination (quantizing twice) or once in all
    // (quantize-once: the other replicas copy fp8 bytes, the only moves
    // between destinations there).
    if (strategy == Strategy::Hierarchical && topology.domains.size() == 1) {
      // Elements quantized (into a destination, or into a source
      // replica's scratch when on sources) and delivered in fp8 bytes.
      int64_t quantized = 0, landed = 0, copied = 0, delivered = 0;
      for (const Step &step : schedule.steps) {
        if (step.kind != StepKind::Move || isScaleBuffer(step.to.kind) ||
            holdsAmaxes(step.to, schedule.scratches))
          continue;
        const bool fromSource = step.from.kind == BufferKind::Source;
        quantized += fromSource ? step.fromBox.volume() : 0;
        if (step.to.kind != BufferKind::Destination) {
          EXPECT_TRUE(onSources && fromSource) << step.str();
          continue;
        }
        landed += fromSource ? step.fromBox.volume() : 0;
        copied += fromSource ? 0 : step.fromBox.volume();
      }
      for (const Transfer &t : plan.transfers)
        delivered += t.dstBox.volume();
      EXPECT_EQ(landed + copied, delivered);
      if (!quantizeOnce)
        EXPECT_EQ(copied, 0);
      forwarded += copied > 0;
      sourceQuantized += quantized > landed;
      // Each region once: no more than the distinct regions of the plan.
      std::set<std::vector<int64_t>> regions;
      for (const Transfer &t : plan.transfers) {
        std::vector<int64_t> key{t.srcRank};
        key.insert(key.end(), t.srcBox.offsets.begin(), t.srcBox.offsets.end());
        key.insert(key.end(), t.srcBox.sizes.begin(), t.srcBox.sizes.end());
        regions.insert(key);
      }
      if (quantizeOnce) {
        int64_t distinct = 0;
        for (const std::vector<int64_t> &key : regions) {
          int64_t volume = 1;
          for (size_t d = 0; d < (key.size() - 1) / 2; ++d)
            volume *= key[1 + (key.size() - 1) / 2 + d];
          distinct += volume;
        }
        EXPECT_LE(quantized, distinct);
      }
    }
    std::optional<ScheduleIssue> issue = verifySchedule(schedule, src, dst, shape);
    ASSERT_FALSE(issue) << "step " << issue->step << ": " << issue->message;
    for (auto order : {ReshardSimulator::StepOrder::ListOrder,
                       ReshardSimulator::StepOrder::LastReadyFirst}) {
      SimulationReport run = simulateQuantizingSchedule(
          scaling, src, dst, shape, from, to, schedule, order, seed + n);
      ASSERT_TRUE(run.passed) << run.message;
    }

    // Strip a quantizing data step, or an exchange step, of its
    // dependencies: it now may run before the scales or amaxes it reads.
    std::vector<size_t> candidates;
    const bool dataStep = random.uniform(0, 1);
    for (size_t i = 0; i < schedule.steps.size(); ++i) {
      const Step &step = schedule.steps[i];
      if (dataStep ? step.kind == StepKind::Move &&
                         step.from.kind == BufferKind::Source &&
                         !step.fromBox.empty()
                   : step.from.kind == BufferKind::Slots)
        candidates.push_back(i);
    }
    if (candidates.empty())
      continue;
    Schedule broken = schedule;
    const size_t victim =
        candidates[random.uniform(0, static_cast<int64_t>(candidates.size()) - 1)];
    broken.steps[victim].deps.clear();
    // Nothing else orders it (no step is both a dependency of it and
    // after what it reads): the verifier must name it.
    std::optional<ScheduleIssue> caught = verifySchedule(broken, src, dst, shape);
    ASSERT_TRUE(caught) << "stripped step " << victim << " ("
                        << broken.steps[victim].str() << ") not caught";
    EXPECT_EQ(caught->step, static_cast<int64_t>(victim)) << caught->message;
    // Last ready first runs the stripped step (ready at once, and after the
    // amax steps in the list) before what it reads: the simulator sees
    // the poison.
    SimulationReport run = simulateQuantizingSchedule(
        scaling, src, dst, shape, from, to, broken,
        ReshardSimulator::StepOrder::LastReadyFirst, seed + n);
    EXPECT_FALSE(run.passed) << "stripped step " << victim << " ("
                             << broken.steps[victim].str()
                             << ") ran without reading poison";
    ++mutations;
  }
  std::cout << "[ property ] seed " << seed << ": " << cases
 << " quantizing schedules, " << steps << " steps ("
            << forwarded << " one-domain routes copying quantized bytes between "
            << "destinations, " << sourceQuantized
            << " with source replicas quantizing bands), " << mutations
            << " stripped dependencies caught\n";
  EXPECT_GT(forwarded, 0);
  EXPECT_GT(sourceQuantized, 0);
}

} // namespace
