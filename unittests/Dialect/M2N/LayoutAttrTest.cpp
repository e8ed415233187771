//===- LayoutAttrTest.cpp - meshes, layouts, dist types ---------------------===//

#include "TestUtils.h"

#include "mlir/IR/Builders.h"

using namespace mlir;
using namespace mlir::m2n;
using m2n_test::M2NTest;

namespace {

using MeshTest = M2NTest;

TEST_F(MeshTest, ContiguousMeshMapsGridPositionsToRanks) {
  auto mesh = MeshAttr::get(&ctx, {2, 2}, /*base=*/4);
  EXPECT_EQ(mesh.getNumRanks(), 4);
  EXPECT_EQ(mesh.getMeshRank(), 2);
  EXPECT_EQ(mesh.getRank(0), 4);
  EXPECT_EQ(mesh.getRank(3), 7);
  EXPECT_EQ(mesh.getMaxRank(), 7);
  EXPECT_EQ(mesh.getLinearIndex(6), std::optional<int64_t>(2));
  EXPECT_EQ(mesh.getLinearIndex(3), std::nullopt);
  EXPECT_EQ(mesh.getLinearIndex(8), std::nullopt);
  EXPECT_EQ(mesh.delinearize(2), (SmallVector<int64_t>{1, 0}));
  EXPECT_EQ(mesh.delinearize(3), (SmallVector<int64_t>{1, 1}));
}

TEST_F(MeshTest, ExplicitRankListIsRowMajor) {
  auto mesh = MeshAttr::get(&ctx, {2, 2}, 0, {7, 1, 5, 3});
  EXPECT_EQ(mesh.getRank(1), 1);
  EXPECT_EQ(mesh.getRank(2), 5);
  EXPECT_EQ(mesh.getMaxRank(), 7);
  EXPECT_EQ(mesh.getLinearIndex(3), std::optional<int64_t>(3));
  EXPECT_EQ(mesh.getLinearIndex(0), std::nullopt);
}

TEST_F(MeshTest, SameGridComparesRanksNotSpelling) {
  auto contiguous = MeshAttr::get(&ctx, {2, 2}, 4);
  auto listed = MeshAttr::get(&ctx, {2, 2}, 0, {4, 5, 6, 7});
  auto transposed = MeshAttr::get(&ctx, {2, 2}, 0, {4, 6, 5, 7});
  auto flat = MeshAttr::get(&ctx, {4}, 4);
  EXPECT_NE(contiguous, listed);
  EXPECT_TRUE(contiguous.isSameGrid(listed));
  EXPECT_FALSE(contiguous.isSameGrid(transposed));
  EXPECT_FALSE(contiguous.isSameGrid(flat));
}

TEST_F(MeshTest, VerifierRejectsBadMeshes) {
  auto check = [&](ArrayRef<int64_t> shape, int64_t base,
                   ArrayRef<int64_t> ranks, StringRef message) {
    diagnostics.clear();
    EXPECT_FALSE(MeshAttr::getChecked(emitter(), &ctx, shape, base, ranks));
    EXPECT_NE(lastDiagnostic().find(message.str()), std::string::npos)
        << "got: " << lastDiagnostic();
  };
  check({}, 0, {}, "at least one axis");
  check({2, 0}, 0, {}, "mesh axis 1 has size 0");
  check({2}, -1, {}, "base rank must be non-negative");
  check({2}, 3, {0, 1}, "either a base rank or an explicit rank list");
  check({2, 2}, 0, {0, 1, 2}, "mesh of 4 ranks has a rank list of 3 entries");
  check({2}, 0, {0, -1}, "negative rank -1");
  check({2}, 0, {1, 1}, "rank 1 more than once");
  check({1 << 16, 1 << 16}, 0, {}, "more than 2147483648 ranks");
  check({1 << 10, 1 << 11}, 0, {}, "at most 1048576 ranks");
  // The largest mesh, on the last ranks a communicator numbers.
  EXPECT_TRUE(MeshAttr::getChecked(emitter(), &ctx, {1 << 20},
                                   (int64_t{1} << 31) - (1 << 20), {}));
}

using LayoutTest = M2NTest;

TEST_F(LayoutTest, ParsesAndPrintsPaperExampleA) {
  auto layout = dyn_cast_or_null<LayoutAttr>(parseAttr(
      "#m2n.layout<#m2n.mesh<[2, 2], base = 4>, [replicate, shard<0>]>"));
  ASSERT_TRUE(layout);
  EXPECT_EQ(layout.getMesh().getBase(), 4);
  ASSERT_EQ(layout.getPlacements().size(), 2u);
  EXPECT_TRUE(isa<ReplicateAttr>(layout.getPlacements()[0]));
  EXPECT_EQ(layout.getShardDim(1), std::optional<int64_t>(0));
  EXPECT_EQ(layout.getShardDim(0), std::nullopt);
  EXPECT_EQ(layout.getPartialReduction(), std::nullopt);

  std::string text;
  llvm::raw_string_ostream os(text);
  Attribute(layout).print(os);
  EXPECT_EQ(text,
            "#m2n.layout<#m2n.mesh<[2, 2], base = 4>, [replicate, shard<0>]>");
}

TEST_F(LayoutTest, PartialAxesAndReduction) {
  auto layout = cast<LayoutAttr>(parseAttr(
      "#m2n.layout<#m2n.mesh<[2, 3, 2]>, [partial<max>, shard<1>, "
      "partial<max>]>"));
  EXPECT_EQ(layout.getPartialAxes(), (SmallVector<int64_t>{0, 2}));
  EXPECT_EQ(layout.getPartialReduction(),
            std::optional<ReductionKind>(ReductionKind::Max));
  EXPECT_FALSE(layout.getPlacements()[0].holdsFinalValues());
  EXPECT_TRUE(layout.getPlacements()[1].holdsFinalValues());
}

TEST_F(LayoutTest, VerifierRejectsPlacementCountAndMixedReductions) {
  auto mesh = MeshAttr::get(&ctx, {2, 2});
  SmallVector<PlacementAttrInterface> one = {ReplicateAttr::get(&ctx)};
  EXPECT_FALSE(
      LayoutAttr::getChecked(emitter(), &ctx, mesh,
                                         ArrayRef<PlacementAttrInterface>(one)));
  EXPECT_NE(lastDiagnostic().find("1 placements but its mesh has 2 axes"),
            std::string::npos);

  SmallVector<PlacementAttrInterface> mixed = {
      PartialAttr::get(&ctx, ReductionKind::Sum),
      PartialAttr::get(&ctx, ReductionKind::Min)};
  EXPECT_FALSE(
      LayoutAttr::getChecked(emitter(), &ctx, mesh,
                                         ArrayRef<PlacementAttrInterface>(mixed)));
  EXPECT_NE(lastDiagnostic().find("different reductions (sum and min)"),
            std::string::npos);
}

// Null parameters can only come from C++ builders; the verifiers still name
// them instead of crashing.
TEST_F(LayoutTest, VerifierRejectsNullParametersFromCpp) {
  SmallVector<PlacementAttrInterface> placements = {ReplicateAttr::get(&ctx)};
  EXPECT_FALSE(LayoutAttr::getChecked(emitter(), &ctx, MeshAttr(),
                                      ArrayRef<PlacementAttrInterface>(placements)));
  EXPECT_NE(lastDiagnostic().find("layout needs a mesh"), std::string::npos);

  SmallVector<PlacementAttrInterface> withNull = {PlacementAttrInterface()};
  EXPECT_FALSE(LayoutAttr::getChecked(emitter(), &ctx, MeshAttr::get(&ctx, {2}),
                                      ArrayRef<PlacementAttrInterface>(withNull)));
  EXPECT_NE(lastDiagnostic().find("layout placement 0 is null"),
            std::string::npos);
}

using DistTypeTest = M2NTest;

TEST_F(DistTypeTest, ParsesGlobalShapeElementTypeAndLayout) {
  auto type = dyn_cast_or_null<DistType>(parseType(
      "!m2n.dist<4096x8192xbf16, #m2n.layout<#m2n.mesh<[8]>, [shard<1>]>>"));
  ASSERT_TRUE(type);
  EXPECT_EQ(type.getShape(), (ArrayRef<int64_t>{4096, 8192}));
  EXPECT_TRUE(type.getElementType().isBF16());
  EXPECT_EQ(type.getLayout().getShardDim(0), std::optional<int64_t>(1));
}

TEST_F(DistTypeTest, ZeroDimensionalTensorsAreAllowed) {
  auto type = dyn_cast_or_null<DistType>(
      parseType("!m2n.dist<f32, #m2n.layout<#m2n.mesh<[4]>, [partial<sum>]>>"));
  ASSERT_TRUE(type);
  EXPECT_EQ(type.getRank(), 0);
}

TEST_F(DistTypeTest, VerifierRejectsBadElementTypesAndShardDims) {
  auto layout = cast<LayoutAttr>(
      parseAttr("#m2n.layout<#m2n.mesh<[2]>, [shard<1>]>"));
  auto emit = emitter();
  EXPECT_FALSE(DistType::getChecked(emit, &ctx, ArrayRef<int64_t>{4},
                                    Type(Float32Type::get(&ctx)), layout));
  EXPECT_NE(lastDiagnostic().find("shards tensor dimension 1, but the tensor "
                                  "has rank 1"),
            std::string::npos);
  EXPECT_FALSE(DistType::getChecked(emit, &ctx, ArrayRef<int64_t>{4, 4},
                                    Type(IntegerType::get(&ctx, 1)), layout));
  EXPECT_NE(lastDiagnostic().find("is not supported"), std::string::npos);
  EXPECT_FALSE(DistType::getChecked(emit, &ctx,
                                    ArrayRef<int64_t>{4, ShapedType::kDynamic},
                                    Type(Float32Type::get(&ctx)), layout));
  EXPECT_NE(lastDiagnostic().find("static global shape"), std::string::npos);
  EXPECT_FALSE(DistType::getChecked(emit, &ctx, ArrayRef<int64_t>{4},
                                    Type(Float32Type::get(&ctx)), LayoutAttr()));
  EXPECT_NE(lastDiagnostic().find("needs a layout"), std::string::npos);
}

using TopologyTest = M2NTest;

TEST_F(TopologyTest, ParsesTwoDomainsAndBandwidths) {
  auto topo = dyn_cast_or_null<TopologyAttr>(
      parseAttr("#m2n.topology<domains = [[0, 1], [2, 3]], nvlink_gbps = "
                "450.0, network_gbps = 50.0>"));
  ASSERT_TRUE(topo);
  EXPECT_EQ(topo.getNumDomains(), 2);
  EXPECT_EQ(topo.getDomain(1), (ArrayRef<int64_t>{2, 3}));
  EXPECT_DOUBLE_EQ(topo.getNvlinkGBps().convertToDouble(), 450.0);
  EXPECT_DOUBLE_EQ(topo.getNetworkGBps().convertToDouble(), 50.0);
}

TEST_F(TopologyTest, VerifierRejectsDomainsThatAreNotRankLists) {
  Builder b(&ctx);
  auto domains = b.getArrayAttr({b.getI64IntegerAttr(3)});
  EXPECT_FALSE(TopologyAttr::getChecked(emitter(), &ctx, domains,
                                        llvm::APFloat(450.0),
                                        llvm::APFloat(50.0), int64_t{0}));
  EXPECT_NE(lastDiagnostic().find("NVLink domain 0 must be a list of ranks"),
            std::string::npos);
}

} // namespace
