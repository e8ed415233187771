//===- CollectiveLayoutTest.cpp - result layouts of the collectives ---------===//

#include "TestUtils.h"

#include "m2n/Dialect/M2N/IR/M2NOps.h"

using namespace mlir;
using namespace mlir::m2n;

namespace {

class CollectiveLayoutTest : public m2n_test::M2NTest {
protected:
  DistType dist(const std::string &placements,
                const std::string &mesh = "[2, 4]") {
    auto type = dyn_cast_or_null<DistType>(
        parseType("!m2n.dist<16x32xf32, #m2n.layout<#m2n.mesh<" + mesh +
                  ">, [" + placements + "]>>"));
    EXPECT_TRUE(type) << "failed to parse " << placements;
    return type;
  }
  llvm::function_ref<InFlightDiagnostic()> emit() { return emitter(); }
};

TEST_F(CollectiveLayoutTest, AllGatherReplicatesTheGatheredAxes) {
  auto result = AllGatherOp::inferResultType(dist("shard<0>, shard<1>"), {1},
                                             emit());
  ASSERT_TRUE(succeeded(result));
  EXPECT_EQ(*result, dist("shard<0>, replicate"));
}

TEST_F(CollectiveLayoutTest, AllGatherRejectsPartialInput) {
  auto result =
      AllGatherOp::inferResultType(dist("partial<sum>, shard<1>"), {0}, emit());
  EXPECT_TRUE(failed(result));
  EXPECT_NE(lastDiagnostic().find("all_gather expects a shard placement on "
                                  "mesh axis 0"),
            std::string::npos)
      << lastDiagnostic();
}

TEST_F(CollectiveLayoutTest, ReduceScatterShardsTheReducedAxes) {
  auto result = ReduceScatterOp::inferResultType(
      dist("partial<sum>, partial<sum>"), {0, 1}, /*scatterDim=*/1, emit());
  ASSERT_TRUE(succeeded(result));
  EXPECT_EQ(*result, dist("shard<1>, shard<1>"));
}

TEST_F(CollectiveLayoutTest, ReduceScatterChecksScatterDim) {
  auto result = ReduceScatterOp::inferResultType(dist("partial<sum>, replicate"),
                                                 {0}, 2, emit());
  EXPECT_TRUE(failed(result));
  EXPECT_NE(lastDiagnostic().find("scatter_dim 2 is out of range"),
            std::string::npos);
}

TEST_F(CollectiveLayoutTest, AllReduceKeepsOtherAxes) {
  auto result = AllReduceOp::inferResultType(dist("partial<max>, shard<0>"),
                                             {0}, emit());
  ASSERT_TRUE(succeeded(result));
  EXPECT_EQ(*result, dist("replicate, shard<0>"));
}

TEST_F(CollectiveLayoutTest, AllToAllMovesTheSplit) {
  auto result = AllToAllOp::inferResultType(dist("replicate, shard<0>"), {1},
                                            /*splitDim=*/1, emit());
  ASSERT_TRUE(succeeded(result));
  EXPECT_EQ(*result, dist("replicate, shard<1>"));

  EXPECT_TRUE(failed(
      AllToAllOp::inferResultType(dist("replicate, shard<1>"), {1}, 1, emit())));
  EXPECT_NE(lastDiagnostic().find("already shards split_dim 1"),
            std::string::npos);
}

TEST_F(CollectiveLayoutTest, MeshAxesMustBeDistinctAndInRange) {
  EXPECT_TRUE(failed(
      AllGatherOp::inferResultType(dist("shard<0>, shard<1>"), {}, emit())));
  EXPECT_NE(lastDiagnostic().find("at least one mesh axis"), std::string::npos);
  EXPECT_TRUE(failed(
      AllGatherOp::inferResultType(dist("shard<0>, shard<1>"), {2}, emit())));
  EXPECT_NE(lastDiagnostic().find("mesh axis 2 is out of range"),
            std::string::npos);
  EXPECT_TRUE(failed(AllGatherOp::inferResultType(dist("shard<0>, shard<1>"),
                                                  {1, 1}, emit())));
  EXPECT_NE(lastDiagnostic().find("listed twice"), std::string::npos);
}

} // namespace
