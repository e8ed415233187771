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

/// The rules shared by m2n.reshard and m2n.plan: same element type and
/// global shape, both meshes inside the communicator, partial destinations
/// only where contributions stay in place.
static LogicalResult verifyReshardSignature(Operation *op, DistType src,
                                            DistType dst, CommType comm) {
  if (src.getElementType() != dst.getElementType())
    return op->emitOpError()
           << "changes the element type from " << src.getElementType()
           << " to " << dst.getElementType()
           << "; a reshard moves data, it does not convert it";
  if (src.getShape() != dst.getShape())
    return op->emitOpError() << "changes the global shape from "
                             << formatShape(src.getShape()) << " to "
                             << formatShape(dst.getShape());
  if (failed(verifyMeshInComm(op, "source", src.getLayout(), comm)) ||
      failed(verifyMeshInComm(op, "destination", dst.getLayout(), comm)))
    return failure();

  // Partial destinations: contributions stay on the ranks that hold them.
  LayoutAttr srcLayout = src.getLayout(), dstLayout = dst.getLayout();
  SmallVector<int64_t> dstPartialAxes = dstLayout.getPartialAxes();
  if (dstPartialAxes.empty())
    return success();
  if (!srcLayout.getMesh().isSameGrid(dstLayout.getMesh()))
    return op->emitOpError()
           << "destination has partial placements, so its mesh must be the "
              "source mesh: a reshard keeps partial contributions on the "
              "ranks that hold them";
  if (srcLayout.getPartialAxes() != dstPartialAxes)
    return op->emitOpError()
           << "destination is partial on mesh axes "
           << formatShape(dstPartialAxes) << " but the source on "
           << formatShape(srcLayout.getPartialAxes())
           << "; a reshard reduces partial axes or keeps them, it does not "
              "create them";
  if (srcLayout.getPartialReduction() != dstLayout.getPartialReduction())
    return op->emitOpError()
           << "destination reduction '"
           << stringifyReductionKind(*dstLayout.getPartialReduction())
           << "' differs from source reduction '"
           << stringifyReductionKind(*srcLayout.getPartialReduction()) << "'";
  return success();
}

LogicalResult ReshardOp::verify() {
  return verifyReshardSignature(*this, getInput().getType(),
                                getResult().getType(), getComm().getType());
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

//===----------------------------------------------------------------------===//
// PlanOp
//===----------------------------------------------------------------------===//

void PlanOp::build(OpBuilder &builder, OperationState &state, Type resultType,
                   Value input, Value comm) {
  state.addOperands({input, comm});
  state.addTypes(resultType);
  Region *body = state.addRegion();
  body->push_back(new Block());
}

LogicalResult PlanOp::verify() {
  if (failed(verifyReshardSignature(*this, getInput().getType(),
                                    getResult().getType(),
                                    getComm().getType())))
    return failure();
  for (Operation &op : getBody().front())
    if (!isa<TransferOp>(op))
      return op.emitOpError("is not allowed in an m2n.plan body; only "
                            "m2n.transfer is");
  return success();
}

//===----------------------------------------------------------------------===//
// TransferOp
//===----------------------------------------------------------------------===//

/// Parses `[a:b, c:d, ...]` into offsets and sizes.
static ParseResult parseBox(OpAsmParser &parser,
                            SmallVectorImpl<int64_t> &offsets,
                            SmallVectorImpl<int64_t> &sizes) {
  return parser.parseCommaSeparatedList(
      OpAsmParser::Delimiter::Square, [&]() -> ParseResult {
        int64_t begin, end;
        if (parser.parseInteger(begin) || parser.parseColon() ||
            parser.parseInteger(end))
          return failure();
        offsets.push_back(begin);
        sizes.push_back(end - begin);
        return success();
      });
}

static void printBox(OpAsmPrinter &printer, ArrayRef<int64_t> offsets,
                     ArrayRef<int64_t> sizes) {
  printer << '[';
  for (size_t d = 0; d < sizes.size(); ++d)
    printer << (d ? ", " : "") << offsets[d] << ':' << offsets[d] + sizes[d];
  printer << ']';
}

ParseResult TransferOp::parse(OpAsmParser &parser, OperationState &result) {
  MLIRContext *ctx = parser.getContext();
  StringRef kind;
  SMLoc kindLoc = parser.getCurrentLocation();
  if (parser.parseKeyword(&kind))
    return failure();
  if (kind == "reduce") {
    StringRef name;
    SMLoc nameLoc;
    if (parser.parseLess() || parser.getCurrentLocation(&nameLoc) ||
        parser.parseKeyword(&name) || parser.parseGreater())
      return failure();
    std::optional<ReductionKind> reduction = symbolizeReductionKind(name);
    if (!reduction)
      return parser.emitError(nameLoc, "unknown reduction '")
             << name << "'; expected sum, max or min";
    result.addAttribute(getReductionAttrName(result.name),
                        ReductionKindAttr::get(ctx, *reduction));
  } else if (kind != "copy") {
    return parser.emitError(kindLoc, "expected 'copy' or 'reduce<op>', got '")
           << kind << "'";
  }
  int64_t srcRank, dstRank;
  SmallVector<int64_t> srcOffsets, srcSizes, dstOffsets, dstSizes;
  SMLoc dstLoc;
  if (parser.parseKeyword("from") || parser.parseInteger(srcRank) ||
      parseBox(parser, srcOffsets, srcSizes) || parser.parseKeyword("to") ||
      parser.parseInteger(dstRank) || parser.getCurrentLocation(&dstLoc) ||
      parseBox(parser, dstOffsets, dstSizes) ||
      parser.parseOptionalAttrDict(result.attributes))
    return failure();
  if (srcSizes != dstSizes)
    return parser.emitError(dstLoc, "source and destination boxes differ in "
                                    "size");
  Builder builder(ctx);
  result.addAttribute(getSrcRankAttrName(result.name),
                      builder.getI64IntegerAttr(srcRank));
  result.addAttribute(getSrcOffsetsAttrName(result.name),
                      builder.getDenseI64ArrayAttr(srcOffsets));
  result.addAttribute(getDstRankAttrName(result.name),
                      builder.getI64IntegerAttr(dstRank));
  result.addAttribute(getDstOffsetsAttrName(result.name),
                      builder.getDenseI64ArrayAttr(dstOffsets));
  result.addAttribute(getSizesAttrName(result.name),
                      builder.getDenseI64ArrayAttr(srcSizes));
  return success();
}

void TransferOp::print(OpAsmPrinter &printer) {
  if (std::optional<ReductionKind> reduction = getReduction())
    printer << " reduce<" << stringifyReductionKind(*reduction) << ">";
  else
    printer << " copy";
  printer << " from " << getSrcRank() << ' ';
  printBox(printer, getSrcOffsets(), getSizes());
  printer << " to " << getDstRank() << ' ';
  printBox(printer, getDstOffsets(), getSizes());
  printer.printOptionalAttrDict(
      (*this)->getAttrs(),
      {getSrcRankAttrName(), getSrcOffsetsAttrName(), getDstRankAttrName(),
       getDstOffsetsAttrName(), getSizesAttrName(), getReductionAttrName()});
}

LogicalResult TransferOp::verify() {
  auto plan = (*this)->getParentOfType<PlanOp>();
  DistType src = plan.getInput().getType();
  DistType dst = plan.getResult().getType();
  int64_t rank = src.getRank();
  if (static_cast<int64_t>(getSizes().size()) != rank ||
      static_cast<int64_t>(getSrcOffsets().size()) != rank ||
      static_cast<int64_t>(getDstOffsets().size()) != rank)
    return emitOpError() << "boxes must have " << rank
                         << " dimensions, the rank of the tensor";
  for (int64_t d = 0; d < rank; ++d) {
    if (getSizes()[d] <= 0)
      return emitOpError() << "moves an empty box (dimension " << d
                           << " has size " << getSizes()[d] << ")";
    if (getSrcOffsets()[d] < 0 || getDstOffsets()[d] < 0)
      return emitOpError() << "box offsets must be non-negative";
  }
  if (!src.getLayout().getMesh().getLinearIndex(getSrcRank()))
    return emitOpError() << "source rank " << getSrcRank()
                         << " is not in the source mesh";
  if (!dst.getLayout().getMesh().getLinearIndex(getDstRank()))
    return emitOpError() << "destination rank " << getDstRank()
                         << " is not in the destination mesh";
  if (std::optional<ReductionKind> reduction = getReduction()) {
    std::optional<ReductionKind> expected =
        src.getLayout().getPartialReduction();
    if (!expected)
      return emitOpError() << "reduces, but the source layout has no partial "
                              "placement";
    if (*expected != *reduction)
      return emitOpError() << "reduces with '"
                           << stringifyReductionKind(*reduction)
                           << "' but the source layout with '"
                           << stringifyReductionKind(*expected) << "'";
  }
  return success();
}
