//===- M2NOps.cpp - reshard and collective operations -----------------------===//

#include "m2n/Dialect/M2N/IR/M2NOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/IR/PatternMatch.h"
#include "llvm/ADT/DenseSet.h"

using namespace mlir;
using namespace mlir::m2n;

#define GET_OP_CLASSES
#include "m2n/Dialect/M2N/IR/M2NOps.cpp.inc"

/// Checks that every rank of `layout`'s mesh exists in `comm`.
static LogicalResult verifyMeshInComm(Operation *op, StringRef side,
                                      LayoutAttr layout, CommType comm) {
  int64_t maxRank = layout.getMesh().getMaxRank();
  if (maxRank >= comm.getSize())
    return op->emitOpError() << side << " mesh contains rank " << maxRank
                             << ", but the communicator has only "
                             << comm.getSize() << " ranks";
  return success();
}

static std::string formatShape(ArrayRef<int64_t> shape) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << '[';
  llvm::interleaveComma(shape, os);
  os << ']';
  return text;
}

//===----------------------------------------------------------------------===//
// ReshardOp
//===----------------------------------------------------------------------===//

LogicalResult ReshardOp::verify() {
  DistType src = getInput().getType();
  DistType dst = getResult().getType();
  if (src.getElementType() != dst.getElementType())
    return emitOpError() << "changes the element type from "
                         << src.getElementType() << " to "
                         << dst.getElementType()
                         << "; a reshard moves data, it does not convert it";
  if (src.getShape() != dst.getShape())
    return emitOpError() << "changes the global shape from "
                         << formatShape(src.getShape()) << " to "
                         << formatShape(dst.getShape());
  CommType comm = getComm().getType();
  if (failed(verifyMeshInComm(*this, "source", src.getLayout(), comm)) ||
      failed(verifyMeshInComm(*this, "destination", dst.getLayout(), comm)))
    return failure();

  // Partial destinations: contributions stay on the ranks that hold them.
  LayoutAttr srcLayout = src.getLayout(), dstLayout = dst.getLayout();
  SmallVector<int64_t> dstPartialAxes = dstLayout.getPartialAxes();
  if (dstPartialAxes.empty())
    return success();
  if (!srcLayout.getMesh().isSameGrid(dstLayout.getMesh()))
    return emitOpError()
           << "destination has partial placements, so its mesh must be the "
              "source mesh: a reshard keeps partial contributions on the "
              "ranks that hold them";
  if (srcLayout.getPartialAxes() != dstPartialAxes)
    return emitOpError() << "destination is partial on mesh axes "
                         << formatShape(dstPartialAxes)
                         << " but the source on "
                         << formatShape(srcLayout.getPartialAxes())
                         << "; a reshard reduces partial axes or keeps them, "
                            "it does not create them";
  if (srcLayout.getPartialReduction() != dstLayout.getPartialReduction())
    return emitOpError() << "destination reduction '"
                         << stringifyReductionKind(
                                *dstLayout.getPartialReduction())
                         << "' differs from source reduction '"
                         << stringifyReductionKind(
                                *srcLayout.getPartialReduction())
                         << "'";
  return success();
}

OpFoldResult ReshardOp::fold(FoldAdaptor) {
  if (getInput().getType() == getResult().getType())
    return getInput();
  return {};
}

namespace {
/// reshard(reshard(x, A -> B), B -> C) -> reshard(x, A -> C) when the
/// intermediate layout has no other user: one plan instead of two, and no
/// materialized intermediate.
struct ComposeReshards : public OpRewritePattern<ReshardOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(ReshardOp op,
                                PatternRewriter &rewriter) const override {
    auto producer = op.getInput().getDefiningOp<ReshardOp>();
    if (!producer || producer.getComm() != op.getComm() ||
        !producer->hasOneUse())
      return rewriter.notifyMatchFailure(op, "no single-use reshard input");
    rewriter.replaceOpWithNewOp<ReshardOp>(op, op.getType(),
                                           producer.getInput(), op.getComm());
    rewriter.eraseOp(producer);
    return success();
  }
};
} // namespace

void ReshardOp::getCanonicalizationPatterns(RewritePatternSet &results,
                                            MLIRContext *context) {
  results.add<ComposeReshards>(context);
}

//===----------------------------------------------------------------------===//
// Collectives
//===----------------------------------------------------------------------===//

/// Shared by the four collectives.
static LogicalResult
verifyCollectiveMeshAxes(DistType input, ArrayRef<int64_t> meshAxes,
                         function_ref<InFlightDiagnostic()> emitError) {
  if (meshAxes.empty())
    return emitError() << "expects at least one mesh axis";
  int64_t meshRank = input.getLayout().getMesh().getMeshRank();
  llvm::SmallDenseSet<int64_t> seen;
  for (int64_t axis : meshAxes) {
    if (axis < 0 || axis >= meshRank)
      return emitError() << "mesh axis " << axis
                         << " is out of range for a mesh with " << meshRank
                         << " axes";
    if (!seen.insert(axis).second)
      return emitError() << "mesh axis " << axis << " is listed twice";
  }
  return success();
}

static LogicalResult
verifyTensorDim(StringRef name, int64_t dim, DistType input,
                function_ref<InFlightDiagnostic()> emitError) {
  if (dim < 0 || dim >= input.getRank())
    return emitError() << name << " " << dim
                       << " is out of range for a tensor of rank "
                       << input.getRank();
  return success();
}

/// Replaces the placement of every axis in `meshAxes` by `newPlacement` after
/// `check` accepted the old one.
static FailureOr<DistType> rewritePlacements(
    DistType input, ArrayRef<int64_t> meshAxes,
    PlacementAttrInterface newPlacement,
    function_ref<LogicalResult(int64_t axis, PlacementAttrInterface)> check) {
  LayoutAttr layout = input.getLayout();
  SmallVector<PlacementAttrInterface> placements(layout.getPlacements());
  for (int64_t axis : meshAxes) {
    if (failed(check(axis, placements[axis])))
      return failure();
    placements[axis] = newPlacement;
  }
  return input.withLayout(layout.withPlacements(placements));
}

/// Verifies a collective: mesh axes, the mesh inside the communicator, and the
/// declared result type against the inferred one.
template <typename OpTy, typename InferFn>
static LogicalResult verifyCollective(OpTy op, InferFn infer) {
  auto emitError = [&]() { return op.emitOpError(); };
  DistType input = op.getInput().getType();
  if (failed(verifyCollectiveMeshAxes(input, op.getMeshAxes(), emitError)) ||
      failed(verifyMeshInComm(op, "input", input.getLayout(),
                              op.getComm().getType())))
    return failure();
  FailureOr<DistType> expected = infer(emitError);
  if (failed(expected))
    return failure();
  if (*expected != op.getResult().getType())
    return op.emitOpError() << "result type must be " << *expected
                            << ", got " << op.getResult().getType();
  return success();
}

static InFlightDiagnostic expectedPlacement(
    function_ref<InFlightDiagnostic()> emitError, StringRef opName,
    int64_t axis, PlacementAttrInterface found, StringRef expected) {
  return emitError() << opName << " expects " << expected << " on mesh axis "
                     << axis << ", got " << found;
}

FailureOr<DistType>
AllGatherOp::inferResultType(DistType input, ArrayRef<int64_t> meshAxes,
                             function_ref<InFlightDiagnostic()> emitError) {
  if (failed(verifyCollectiveMeshAxes(input, meshAxes, emitError)))
    return failure();
  return rewritePlacements(
      input, meshAxes, ReplicateAttr::get(input.getContext()),
      [&](int64_t axis, PlacementAttrInterface placement) -> LogicalResult {
        if (isa<ShardAttr>(placement))
          return success();
        return expectedPlacement(emitError, "all_gather", axis, placement,
                                 "a shard placement");
      });
}

LogicalResult AllGatherOp::verify() {
  return verifyCollective(*this, [&](auto emitError) {
    return inferResultType(getInput().getType(), getMeshAxes(), emitError);
  });
}

FailureOr<DistType> ReduceScatterOp::inferResultType(
    DistType input, ArrayRef<int64_t> meshAxes, int64_t scatterDim,
    function_ref<InFlightDiagnostic()> emitError) {
  if (failed(verifyCollectiveMeshAxes(input, meshAxes, emitError)) ||
      failed(verifyTensorDim("scatter_dim", scatterDim, input, emitError)))
    return failure();
  return rewritePlacements(
      input, meshAxes, ShardAttr::get(input.getContext(), scatterDim),
      [&](int64_t axis, PlacementAttrInterface placement) -> LogicalResult {
        if (isa<PartialAttr>(placement))
          return success();
        return expectedPlacement(emitError, "reduce_scatter", axis, placement,
                                 "a partial placement");
      });
}

LogicalResult ReduceScatterOp::verify() {
  return verifyCollective(*this, [&](auto emitError) {
    return inferResultType(getInput().getType(), getMeshAxes(),
                           getScatterDim(), emitError);
  });
}

FailureOr<DistType>
AllReduceOp::inferResultType(DistType input, ArrayRef<int64_t> meshAxes,
                             function_ref<InFlightDiagnostic()> emitError) {
  if (failed(verifyCollectiveMeshAxes(input, meshAxes, emitError)))
    return failure();
  return rewritePlacements(
      input, meshAxes, ReplicateAttr::get(input.getContext()),
      [&](int64_t axis, PlacementAttrInterface placement) -> LogicalResult {
        if (isa<PartialAttr>(placement))
          return success();
        return expectedPlacement(emitError, "all_reduce", axis, placement,
                                 "a partial placement");
      });
}

LogicalResult AllReduceOp::verify() {
  return verifyCollective(*this, [&](auto emitError) {
    return inferResultType(getInput().getType(), getMeshAxes(), emitError);
  });
}

FailureOr<DistType>
AllToAllOp::inferResultType(DistType input, ArrayRef<int64_t> meshAxes,
                            int64_t splitDim,
                            function_ref<InFlightDiagnostic()> emitError) {
  if (failed(verifyCollectiveMeshAxes(input, meshAxes, emitError)) ||
      failed(verifyTensorDim("split_dim", splitDim, input, emitError)))
    return failure();
  return rewritePlacements(
      input, meshAxes, ShardAttr::get(input.getContext(), splitDim),
      [&](int64_t axis, PlacementAttrInterface placement) -> LogicalResult {
        auto shard = dyn_cast<ShardAttr>(placement);
        if (!shard)
          return expectedPlacement(emitError, "all_to_all", axis, placement,
                                   "a shard placement");
        if (shard.getDim() == splitDim)
          return emitError() << "mesh axis " << axis
                             << " already shards split_dim " << splitDim;
        return success();
      });
}

LogicalResult AllToAllOp::verify() {
  return verifyCollective(*this, [&](auto emitError) {
    return inferResultType(getInput().getType(), getMeshAxes(), getSplitDim(),
                           emitError);
  });
}
