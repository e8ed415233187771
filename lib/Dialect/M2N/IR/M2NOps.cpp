//===- M2NOps.cpp - reshard and collective operations -----------------------===//

#include "m2n/Dialect/M2N/IR/M2NOps.h"

#include <cmath>
#include "m2n/Dialect/M2N/IR/LayoutInterop.h"
#include "m2n/Base/Strategy.h"
#include "m2n/Artifact/Program.h"
#include "AsmUtils.h"

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

/// The rules shared by m2n.reshard, m2n.plan and the collectives: the same
/// element type (or, where `casts` — a reshard and the stages it is
/// lowered through — an in-flight cast between castable float types, not
/// of a partial source, with a finite `scale` only for a cast), the same
/// global shape, both meshes inside the communicator, and
/// checkPartialDestination.
static LogicalResult verifyReshardSignature(Operation *op, DistType src,
                                            DistType dst, CommType comm,
                                            bool casts = false,
                                            FloatAttr scale = {}) {
  if (src.getElementType() != dst.getElementType()) {
    if (!casts)
      return op->emitOpError()
             << "changes the element type from " << src.getElementType()
             << " to " << dst.getElementType()
             << "; a collective keeps it (an m2n.reshard may cast)";
    std::optional<::m2n::ElementType> from =
        toElementType(src.getElementType());
    std::optional<::m2n::ElementType> to = toElementType(dst.getElementType());
    if (!from || !to || !::m2n::isCastable(*from, *to))
      return op->emitOpError()
             << "cannot cast " << src.getElementType() << " to "
             << dst.getElementType()
             << ": in-flight casts convert between f32, f16, bf16, "
                "f8E4M3FN and f8E5M2";
    if (toLayout(src.getLayout()).hasPartial())
      return op->emitOpError()
             << "casts a partial source from " << src.getElementType()
             << " to " << dst.getElementType()
             << "; a reduction keeps its element type (reshard, then cast)";
  } else if (scale) {
    return op->emitOpError()
           << "has a scale but no cast (both element types are "
           << src.getElementType() << ")";
  }
  if (scale && !std::isfinite(scale.getValueAsDouble()))
    return op->emitOpError() << "has a scale that is not finite";
  if (src.getShape() != dst.getShape())
    return op->emitOpError() << "changes the global shape from "
                             << formatShape(src.getShape()) << " to "
                             << formatShape(dst.getShape());
  if (failed(verifyMeshInComm(op, "source", src.getLayout(), comm)) ||
      failed(verifyMeshInComm(op, "destination", dst.getLayout(), comm)))
    return failure();

  // Partial destinations: the rule the planner and the simulator share.
  if (std::optional<std::string> problem = ::m2n::checkPartialDestination(
          toLayout(src.getLayout()), toLayout(dst.getLayout())))
    return op->emitOpError() << *problem;
  return success();
}

/// The rules of a quantizing reshard and its plan (docs/fp8-scaling.md):
/// a scaling needs an fp8 result from f32, f16 or bf16, blocks the tensor
/// admits, no constant scale beside it, and a second result holding the
/// scales (f32, e8m0 for mx) over the blocks, laid out as the result.
static LogicalResult verifyScaling(Operation *op, DistType input,
                                   DistType result, Value scales,
                                   ScalingAttr scaling, FloatAttr scale) {
  if (!scaling) {
    if (scales)
      return op->emitOpError() << "has a scales result but no scaling";
    return success();
  }
  if (scale)
    return op->emitOpError() << "has a constant scale and a scaling; the scaling "
                            "computes its scales from the data";
  ::m2n::Dims shape(input.getShape().begin(), input.getShape().end());
  std::optional<::m2n::ElementType> from =
      toElementType(input.getElementType());
  std::optional<::m2n::ElementType> to = toElementType(result.getElementType());
  if (!from || !to)
    return op->emitOpError() << "scaling needs element types m2n moves";
  if (std::optional<std::string> problem =
          ::m2n::checkScaling(scaling.getValue(), shape, *from, *to))
    return op->emitOpError() << *problem;
  if (!scales)
    return op->emitOpError() << "with scaling " << scaling.getValue().str()
                         << " needs a second result for the scales";
  auto scalesType = cast<DistType>(scales.getType());
  Type scaleElement =
      ::m2n::hasExponentScales(scaling.getValue())
          ? Type(Float8E8M0FNUType::get(op->getContext()))
          : Type(Float32Type::get(op->getContext()));
  if (scalesType.getElementType() != scaleElement)
    return op->emitOpError() << "scales of scaling " << scaling.getValue().str()
                         << " are " << scaleElement << ", not "
                         << scalesType.getElementType();
  ::m2n::Dims expected = ::m2n::scaleShape(scaling.getValue(), shape);
  if (ArrayRef<int64_t>(expected.data(), expected.size()) !=
      scalesType.getShape())
    return op->emitOpError() << "scales of scaling " << scaling.getValue().str()
                         << " over " << formatShape(input.getShape())
                         << " have shape "
                         << formatShape(ArrayRef<int64_t>(expected.data(),
                                                          expected.size()))
                         << ", not " << formatShape(scalesType.getShape());
  // Each rank holds the scales of the blocks its part touches: the scale
  // tensor names the result's mesh and placements, explicit boundaries
  // left out (they split the data's extents, not the blocks').
  if (LayoutAttr expected = withoutBoundaries(result.getLayout());
      scalesType.getLayout() != expected)
    return op->emitOpError() << "scales are laid out as the quantized result "
                            "without its explicit boundaries ("
                         << expected
                         << ": each rank holds the scales of its blocks), "
                            "not as "
                         << scalesType.getLayout();
  return success();
}

LogicalResult ReshardOp::verify() {
  if (failed(verifyReshardSignature(*this, getInput().getType(),
                                    getResult().getType(), getComm().getType(),
                                    /*casts=*/true, getScaleAttr())))
    return failure();
  return verifyScaling(*this, getInput().getType(), getResult().getType(),
                       getScales(), getScalingAttr(), getScaleAttr());
}

LogicalResult ReshardOp::fold(FoldAdaptor,
                              SmallVectorImpl<OpFoldResult> &results) {
  if (getInput().getType() == getResult().getType() && !getScaleAttr() &&
      !getScalingAttr()) {
    results.push_back(getInput());
    return success();
  }
  return failure();
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
    // Two casts round twice: composing them would change the values.
    auto elementOf = [](Value v) {
      return cast<DistType>(v.getType()).getElementType();
    };
    if (elementOf(producer.getInput()) != elementOf(op.getResult()) ||
        elementOf(producer.getResult()) != elementOf(op.getResult()))
      return rewriter.notifyMatchFailure(op, "a cast on the way");
    rewriter.replaceOpWithNewOp<ReshardOp>(op, op.getResult().getType(),
                                           producer.getInput(), op.getComm(),
                                           /*scale=*/FloatAttr());
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
    function_ref<InFlightDiagnostic()> emitError,
    function_ref<LogicalResult(int64_t axis, PlacementAttrInterface)> check) {
  LayoutAttr layout = input.getLayout();
  SmallVector<PlacementAttrInterface> placements(layout.getPlacements());
  for (int64_t axis : meshAxes) {
    if (failed(check(axis, placements[axis])))
      return failure();
    placements[axis] = newPlacement;
  }
  // A dimension split at explicit boundaries keeps every mesh axis that
  // splits it, or none: the boundaries count the parts of all of them.
  bool hasBoundaries = llvm::any_of(
      layout.getPlacements(), [](PlacementAttrInterface placement) {
        auto shard = dyn_cast<ShardAttr>(placement);
        return shard && !shard.getBoundaries().empty();
      });
  ::m2n::Layout before =
      hasBoundaries ? toLayout(layout) : ::m2n::Layout{};
  for (auto [axis, placement] : llvm::enumerate(before.placements)) {
    if (placement.boundaries.empty())
      continue;
    bool kept = true, gathered = true;
    for (auto [other, after] : llvm::enumerate(placements)) {
      auto shard = dyn_cast<ShardAttr>(after);
      bool splitsAfter = shard && shard.getDim() == placement.dim;
      bool splitsBefore = before.placements[other].isShard() &&
                          before.placements[other].dim == placement.dim;
      kept &= splitsAfter == splitsBefore;
      gathered &= !splitsAfter;
    }
    if (!kept && !gathered)
      return emitError() << "mesh axis " << axis << " splits dimension "
                         << placement.dim
                         << " at explicit boundaries over several mesh axes; "
                            "a collective keeps or gathers all of them: "
                            "write m2n.reshard to the layout wanted";
  }
  return input.withLayout(layout.withPlacements(placements));
}

/// Whether `result` is the inferred `expected` with explicit boundaries on
/// dimensions that only the collective's `meshAxes` split (a reduce_scatter
/// or all_to_all into uneven parts): the result type names the partition.
static bool splitsAtBoundaries(DistType expected, DistType result,
                               ArrayRef<int64_t> meshAxes) {
  LayoutAttr want = expected.getLayout(), got = result.getLayout();
  if (expected.getShape() != result.getShape() ||
      expected.getElementType() != result.getElementType() ||
      want.getMesh() != got.getMesh() ||
      want.getPlacements().size() != got.getPlacements().size())
    return false;
  for (auto [axis, wanted, given] :
       llvm::enumerate(want.getPlacements(), got.getPlacements())) {
    if (wanted == given)
      continue;
    auto shard = dyn_cast<ShardAttr>(given);
    if (!shard || shard.getBoundaries().empty() ||
        ShardAttr::get(shard.getContext(), shard.getDim()) != wanted)
      return false;
    for (auto [other, placement] : llvm::enumerate(got.getPlacements()))
      if (auto split = dyn_cast<ShardAttr>(placement);
          split && split.getDim() == shard.getDim() &&
          !llvm::is_contained(meshAxes, static_cast<int64_t>(other)))
        return false;
  }
  return true;
}

/// Verifies a collective: mesh axes, the mesh inside the communicator, the
/// declared result type against the inferred one, and the reshard it expands
/// into.
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
  if (*expected != op.getResult().getType() &&
      !splitsAtBoundaries(*expected, op.getResult().getType(),
                          op.getMeshAxes()))
    return op.emitOpError() << "result type must be " << *expected
                            << ", got " << op.getResult().getType();
  // The collective expands into a reshard: one rule for both.
  return verifyReshardSignature(op, input, *expected, op.getComm().getType());
}

static InFlightDiagnostic expectedPlacement(
    function_ref<InFlightDiagnostic()> emitError, StringRef opName,
    int64_t axis, PlacementAttrInterface found, StringRef expected) {
  return emitError() << opName << " expects " << expected << " on mesh axis "
                     << axis << ", got " << found;
}

/// The result of a collective that turns placements of kind `Expected` on
/// `meshAxes` into `newPlacement`.
template <typename Expected>
static FailureOr<DistType>
replacePlacements(DistType input, ArrayRef<int64_t> meshAxes,
                  PlacementAttrInterface newPlacement, StringRef opName,
                  function_ref<InFlightDiagnostic()> emitError) {
  if (failed(verifyCollectiveMeshAxes(input, meshAxes, emitError)))
    return failure();
  StringRef expected = std::is_same_v<Expected, ShardAttr>
                           ? "a shard placement"
                           : "a partial placement";
  return rewritePlacements(
      input, meshAxes, newPlacement, emitError,
      [&](int64_t axis, PlacementAttrInterface placement) -> LogicalResult {
        if (isa<Expected>(placement))
          return success();
        return expectedPlacement(emitError, opName, axis, placement, expected);
      });
}

FailureOr<DistType>
AllGatherOp::inferResultType(DistType input, ArrayRef<int64_t> meshAxes,
                             function_ref<InFlightDiagnostic()> emitError) {
  return replacePlacements<ShardAttr>(input, meshAxes,
                                      ReplicateAttr::get(input.getContext()),
                                      "all_gather", emitError);
}

LogicalResult AllGatherOp::verify() {
  return verifyCollective(*this, [&](auto emitError) {
    return inferResultType(getInput().getType(), getMeshAxes(), emitError);
  });
}

FailureOr<DistType> ReduceScatterOp::inferResultType(
    DistType input, ArrayRef<int64_t> meshAxes, int64_t scatterDim,
    function_ref<InFlightDiagnostic()> emitError) {
  if (failed(verifyTensorDim("scatter_dim", scatterDim, input, emitError)))
    return failure();
  return replacePlacements<PartialAttr>(
      input, meshAxes, ShardAttr::get(input.getContext(), scatterDim),
      "reduce_scatter", emitError);
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
  return replacePlacements<PartialAttr>(input, meshAxes,
                                        ReplicateAttr::get(input.getContext()),
                                        "all_reduce", emitError);
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
      input, meshAxes, ShardAttr::get(input.getContext(), splitDim), emitError,
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

void PlanOp::build(OpBuilder &builder, OperationState &state, Type resultType,
                   Type scalesType, Value input, Value comm,
                   ScalingAttr scaling) {
  build(builder, state, resultType, input, comm);
  state.addTypes(scalesType);
  state.getOrAddProperties<Properties>().scaling = scaling;
}

LogicalResult PlanOp::verify() {
  if (failed(verifyReshardSignature(*this, getInput().getType(),
                                    getResult().getType(),
                                    getComm().getType(), /*casts=*/true,
                                    getScaleAttr())) ||
      failed(verifyScaling(*this, getInput().getType(), getResult().getType(),
                           getScales(), getScalingAttr(), getScaleAttr())))
    return failure();
  // Transfer ranks are checked here, with one look-up table per mesh, not
  // by each transfer (a scan of a mesh of explicit ranks per transfer made
  // verifying a 65,536-rank plan quadratic).
  const ::m2n::MeshIndex srcIndex(
      toLayout(getInput().getType().getLayout()).mesh);
  const ::m2n::MeshIndex dstIndex(
      toLayout(getResult().getType().getLayout()).mesh);
  llvm::SmallDenseSet<int64_t> sharing;
  for (Operation &op : getBody().front()) {
    if (isa<AmaxOp, ExchangeOp>(op)) {
      if (!getScalingAttr())
        return op.emitOpError("belongs to the plan of a reshard with a "
                              "scaling; this plan has none");
      int64_t srcRank = isa<AmaxOp>(op) ? cast<AmaxOp>(op).getRank()
                                        : cast<ExchangeOp>(op).getSrcRank();
      if (!srcIndex.indexOf(srcRank))
        return op.emitOpError() << "source rank " << srcRank
                                << " is not in the source mesh";
      if (isa<AmaxOp>(op) && !sharing.insert(srcRank).second)
        return op.emitOpError() << "gives rank " << srcRank
                                << " a second share; one m2n.amax per rank";
      // A quantizer table belongs to a sending (source) rank, a holder
      // table to a destination rank.
      if (auto exchange = dyn_cast<ExchangeOp>(op)) {
        int64_t dstRank = exchange.getDstRank();
        bool holder = exchange.getHolder();
        if (!(holder ? dstIndex : srcIndex).indexOf(dstRank))
          return op.emitOpError()
                 << "fills the " << (holder ? "holder" : "quantizer")
                 << " table of rank " << dstRank << ", which is not in the "
                 << (holder ? "destination" : "source") << " mesh";
      }
      continue;
    }
    auto transfer = dyn_cast<TransferOp>(op);
    if (!transfer)
      return op.emitOpError("is not allowed in an m2n.plan body; only "
                            "m2n.transfer is (and m2n.amax, m2n.exchange in "
                            "a quantizing plan)");
    if (!srcIndex.indexOf(transfer.getSrcRank()))
      return transfer.emitOpError() << "source rank " << transfer.getSrcRank()
                                    << " is not in the source mesh";
    if (!dstIndex.indexOf(transfer.getDstRank()))
      return transfer.emitOpError()
             << "destination rank " << transfer.getDstRank()
             << " is not in the destination mesh";
  }
  return success();
}

//===----------------------------------------------------------------------===//
// TransferOp
//===----------------------------------------------------------------------===//

/// Parses `copy` or `reduce<sum|max|min>`, the latter into `reduction`.
static ParseResult parseCopyOrReduce(OpAsmParser &parser,
                                     std::optional<ReductionKind> &reduction) {
  reduction.reset();
  StringRef kind;
  SMLoc kindLoc = parser.getCurrentLocation();
  if (parser.parseKeyword(&kind))
    return failure();
  if (kind == "copy")
    return success();
  if (kind != "reduce")
    return parser.emitError(kindLoc, "expected 'copy' or 'reduce<op>', got '")
           << kind << "'";
  StringRef name;
  SMLoc nameLoc;
  if (parser.parseLess() || parser.getCurrentLocation(&nameLoc) ||
      parser.parseKeyword(&name) || parser.parseGreater())
    return failure();
  reduction = symbolizeReductionKind(name);
  if (!reduction)
    return parser.emitError(nameLoc, "unknown reduction '")
           << name << "'; expected sum, max or min";
  return success();
}

/// Stream: an llvm::raw_ostream or a TextLine.
template <typename Stream>
static void printCopyOrReduce(Stream &printer,
                              std::optional<ReductionKind> reduction) {
  if (reduction)
    printer << " reduce<" << stringifyReductionKind(*reduction) << ">";
  else
    printer << " copy";
}

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
  std::optional<ReductionKind> reduction;
  if (parseCopyOrReduce(parser, reduction))
    return failure();
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
  Properties &transfer = result.getOrAddProperties<Properties>();
  transfer.src_rank = srcRank;
  transfer.src_offsets.assign(srcOffsets.begin(), srcOffsets.end());
  transfer.dst_rank = dstRank;
  transfer.dst_offsets.assign(dstOffsets.begin(), dstOffsets.end());
  transfer.sizes.assign(srcSizes.begin(), srcSizes.end());
  transfer.reduction = reduction;
  return success();
}

void TransferOp::print(OpAsmPrinter &printer) {
  printCopyOrReduce(printer.getStream(), getReduction());
  printer << " from " << getSrcRank() << ' ';
  printBox(printer, getSrcOffsets(), getSizes());
  printer << " to " << getDstRank() << ' ';
  printBox(printer, getDstOffsets(), getSizes());
  printer.printOptionalAttrDict(
      (*this)->getDiscardableAttrDictionary().getValue());
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
  // (Its ranks are in the meshes: PlanOp::verify checks them for all
  // transfers at once.)
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

//===----------------------------------------------------------------------===//
// AmaxOp, ExchangeOp
//===----------------------------------------------------------------------===//

/// Checks a box of a quantizing plan's blocks: one extent per dimension of
/// the tensor, non-empty, at non-negative offsets.
static LogicalResult verifyBlockBox(Operation *op, ArrayRef<int64_t> offsets,
                                    ArrayRef<int64_t> sizes) {
  auto plan = op->getParentOfType<PlanOp>();
  int64_t rank = plan.getInput().getType().getRank();
  if (static_cast<int64_t>(offsets.size()) != rank ||
      static_cast<int64_t>(sizes.size()) != rank)
    return op->emitOpError() << "boxes must have " << rank
                             << " dimensions, the rank of the tensor";
  for (int64_t d = 0; d < rank; ++d) {
    if (sizes[d] <= 0)
      return op->emitOpError() << "names an empty box (dimension " << d
                               << " has size " << sizes[d] << ")";
    if (offsets[d] < 0)
      return op->emitOpError() << "box offsets must be non-negative";
  }
  return success();
}

ParseResult AmaxOp::parse(OpAsmParser &parser, OperationState &result) {
  int64_t rank;
  SmallVector<int64_t> offsets, sizes;
  if (parser.parseKeyword("on") || parser.parseInteger(rank) ||
      parser.parseKeyword("blocks") || parseBox(parser, offsets, sizes) ||
      parser.parseOptionalAttrDict(result.attributes))
    return failure();
  Properties &amax = result.getOrAddProperties<Properties>();
  amax.rank = rank;
  amax.offsets.assign(offsets.begin(), offsets.end());
  amax.sizes.assign(sizes.begin(), sizes.end());
  return success();
}

void AmaxOp::print(OpAsmPrinter &printer) {
  printer << " on " << getRank() << " blocks ";
  printBox(printer, getOffsets(), getSizes());
  printer.printOptionalAttrDict(
      (*this)->getDiscardableAttrDictionary().getValue());
}

LogicalResult AmaxOp::verify() {
  return verifyBlockBox(*this, getOffsets(), getSizes());
}

ParseResult ExchangeOp::parse(OpAsmParser &parser, OperationState &result) {
  StringRef kind, table;
  SMLoc kindLoc = parser.getCurrentLocation(), tableLoc, dstLoc;
  int64_t srcRank, dstRank;
  SmallVector<int64_t> srcOffsets, srcSizes, dstOffsets, dstSizes;
  if (parser.parseKeyword(&kind))
    return failure();
  if (kind != "copy" && kind != "max")
    return parser.emitError(kindLoc, "expected 'copy' or 'max', got '")
           << kind << "'";
  if (parser.parseKeyword("from") || parser.parseInteger(srcRank) ||
      parseBox(parser, srcOffsets, srcSizes) || parser.parseKeyword("to") ||
      parser.parseInteger(dstRank) || parser.getCurrentLocation(&tableLoc) ||
      parser.parseKeyword(&table))
    return failure();
  if (table != "quantizer" && table != "holder")
    return parser.emitError(tableLoc, "expected 'quantizer' or 'holder', got '")
           << table << "'";
  if (parser.getCurrentLocation(&dstLoc) ||
      parseBox(parser, dstOffsets, dstSizes) ||
      parser.parseOptionalAttrDict(result.attributes))
    return failure();
  if (srcSizes != dstSizes)
    return parser.emitError(dstLoc, "source and destination boxes differ in "
                                    "size");
  Properties &exchange = result.getOrAddProperties<Properties>();
  exchange.src_rank = srcRank;
  exchange.src_offsets.assign(srcOffsets.begin(), srcOffsets.end());
  exchange.dst_rank = dstRank;
  exchange.dst_offsets.assign(dstOffsets.begin(), dstOffsets.end());
  exchange.sizes.assign(srcSizes.begin(), srcSizes.end());
  exchange.holder = table == "holder";
  exchange.reduces = kind == "max";
  return success();
}

void ExchangeOp::print(OpAsmPrinter &printer) {
  printer << (getReduces() ? " max" : " copy") << " from " << getSrcRank()
          << ' ';
  printBox(printer, getSrcOffsets(), getSizes());
  printer << " to " << getDstRank()
          << (getHolder() ? " holder " : " quantizer ");
  printBox(printer, getDstOffsets(), getSizes());
  printer.printOptionalAttrDict(
      (*this)->getDiscardableAttrDictionary().getValue());
}

LogicalResult ExchangeOp::verify() {
  if (failed(verifyBlockBox(*this, getSrcOffsets(), getSizes())))
    return failure();
  for (int64_t offset : getDstOffsets())
    if (offset < 0)
      return emitOpError() << "box offsets must be non-negative";
  if (getDstOffsets().size() != getSizes().size())
    return emitOpError() << "boxes must have " << getSizes().size()
                         << " dimensions, the rank of the tensor";
  return success();
}

//===----------------------------------------------------------------------===//
// ScheduleOp
//===----------------------------------------------------------------------===//

void ScheduleOp::build(OpBuilder &builder, OperationState &state,
                       Type resultType, Value input, Value comm,
                       StringRef strategy, TopologyAttr topology) {
  state.addOperands({input, comm});
  state.addTypes(resultType);
  state.addAttribute(getStrategyAttrName(state.name),
                     builder.getStringAttr(strategy));
  state.addAttribute(getTopologyAttrName(state.name), topology);
  Region *body = state.addRegion();
  body->push_back(new Block());
}

void ScheduleOp::build(OpBuilder &builder, OperationState &state,
                       Type resultType, Type scalesType, Value input,
                       Value comm, StringRef strategy, TopologyAttr topology,
                       ScalingAttr scaling) {
  build(builder, state, resultType, input, comm, strategy, topology);
  state.addTypes(scalesType);
  state.getOrAddProperties<Properties>().scaling = scaling;
}

/// The checks every scratch declaration passes, in a schedule or a program:
/// ids in order from 0, a rank of the communicator, a non-negative shape.
static LogicalResult verifyScratch(ScratchOp scratch, int64_t expectedId,
                                   CommType comm) {
  if (scratch.getId() != expectedId)
    return scratch.emitOpError() << "has id " << scratch.getId()
                                 << ", expected " << expectedId
                                 << " (scratch ids count from 0 in order)";
  if (scratch.getRank() < 0 || scratch.getRank() >= comm.getSize())
    return scratch.emitOpError()
           << "rank " << scratch.getRank() << " is outside the communicator of "
           << comm.getSize() << " ranks";
  if (llvm::any_of(scratch.getShape(), [](int64_t e) { return e < 0; }))
    return scratch.emitOpError() << "shape must be non-negative";
  return success();
}

/// What each step kind reads and writes: an amax step a source rank's
/// blocks into its own slots, a scale step a rank's holder table into its
/// own scales, a move of blocks slots into a holder table, and nothing else
/// touches the blocks.
static LogicalResult verifyStepKind(StepOp step,
                                    ArrayRef<ScratchOp> scratches) {
  BufferKind from = step.getFromKind(), to = step.getToKind();
  auto sameRank = [&](StringRef what) -> LogicalResult {
    if (step.getFromRank() != step.getToRank())
      return step.emitOpError()
             << what << " within one rank, not from rank "
             << step.getFromRank() << " to rank " << step.getToRank();
    if (step.getFromOffsets() != step.getToOffsets())
      return step.emitOpError() << what << " from and into the same blocks";
    if (step.getReduction())
      return step.emitOpError() << what << " without a reduction";
    return success();
  };
  if (std::optional<StepKind> kind = step.getKind()) {
    if (*kind == StepKind::Amax) {
      if (from != BufferKind::Source || to != BufferKind::Slots)
        return step.emitOpError()
               << "amax reads a source buffer into slots, not "
               << stringifyBufferKind(from) << " into "
               << stringifyBufferKind(to);
      return sameRank("amax computes");
    }
    if (from != BufferKind::Holder || to != BufferKind::Scales)
      return step.emitOpError()
             << "scale reads a holder table into scales, not "
             << stringifyBufferKind(from) << " into "
             << stringifyBufferKind(to);
    return sameRank("scale writes");
  }
  // A scratch staging amaxes for the network (`amaxes`) holds blocks too.
  auto staging = [&](BufferKind kind, int64_t scratch) {
    return kind == BufferKind::Scratch && scratch >= 0 &&
           scratch < static_cast<int64_t>(scratches.size()) &&
           ScratchOp(scratches[scratch]).getAmaxes();
  };
  const bool stagedFrom = staging(from, step.getFromScratch());
  const bool stagedTo = staging(to, step.getToScratch());
  auto blocks = [](BufferKind kind) {
    return kind == BufferKind::Slots || kind == BufferKind::Holder ||
           kind == BufferKind::Scales || kind == BufferKind::Quantizer;
  };
  const bool fromAmaxes = from == BufferKind::Slots || stagedFrom;
  const bool intoTable =
      to == BufferKind::Holder || to == BufferKind::Quantizer;
  if ((blocks(from) || blocks(to) || stagedFrom || stagedTo) &&
      !(fromAmaxes && (intoTable || (stagedTo && !step.getReduction()))))
    return step.emitOpError()
           << "moves " << stringifyBufferKind(from) << " into "
           << stringifyBufferKind(to)
           << "; blocks move only from slots into quantizer and holder "
              "tables (copied through scratches staging amaxes)";
  return success();
}

LogicalResult ScheduleOp::verify() {
  DistType src = getInput().getType(), dst = getResult().getType();
  CommType comm = getComm().getType();
  if (failed(verifyReshardSignature(*this, src, dst, comm, /*casts=*/true,
                                    getScaleAttr())) ||
      failed(verifyScaling(*this, src, dst, getScales(), getScalingAttr(),
                           getScaleAttr())))
    return failure();
  if (!::m2n::parseStrategy(getStrategy().str()))
    return emitOpError() << "unknown strategy '" << getStrategy()
                         << "'; expected flat, gather-bcast or hierarchical";
  ::m2n::Topology topology = toTopology(getTopology());
  if (std::optional<std::string> error = topology.validate(comm.getSize()))
    return emitOpError() << "topology: " << *error;

  ::m2n::Layout srcLayout = toLayout(src.getLayout());
  ::m2n::Layout dstLayout = toLayout(dst.getLayout());
  const ::m2n::MeshIndex srcIndex(srcLayout.mesh), dstIndex(dstLayout.mesh);
  const ::m2n::DomainMap domains(topology);
  std::vector<int64_t> shape(src.getShape().begin(), src.getShape().end());
  SmallVector<ScratchOp> scratches;
  SmallVector<StepOp> steps;
  for (Operation &op : getBody().front()) {
    if (auto scratch = dyn_cast<ScratchOp>(op)) {
      if (failed(verifyScratch(scratch,
                               static_cast<int64_t>(scratches.size()), comm)))
        return failure();
      scratches.push_back(scratch);
    } else if (auto step = dyn_cast<StepOp>(op)) {
      if (step.getId() != static_cast<int64_t>(steps.size()))
        return step.emitOpError() << "has id " << step.getId()
                                  << ", expected " << steps.size()
                                  << " (step ids count from 0 in order)";
      steps.push_back(step);
    } else {
      return op.emitOpError("is not allowed in an m2n.schedule body; only "
                            "m2n.scratch and m2n.step are");
    }
  }

  std::optional<::m2n::Scaling> scaling;
  if (ScalingAttr attr = getScalingAttr())
    scaling = attr.getValue();
  // Local buffer shapes by mesh index, each computed once: a refit's
  // schedules have thousands of steps per rank, verified after each pass.
  llvm::DenseMap<int64_t, ::m2n::Dims> srcShapes, dstShapes;
  // The shape of a buffer, or an error naming why it does not exist.
  auto bufferShape = [&](StepOp step, BufferKind kind, int64_t rank,
                         int64_t scratchId,
                         StringRef side) -> FailureOr<::m2n::Dims> {
    switch (kind) {
    case BufferKind::Source:
    case BufferKind::Destination: {
      const bool source = kind == BufferKind::Source;
      std::optional<int64_t> index =
          (source ? srcIndex : dstIndex).indexOf(rank);
      if (!index)
        return step.emitOpError()
               << side << " rank " << rank << " is not in the "
               << (source ? "source" : "destination") << " mesh";
      auto [it, fresh] = (source ? srcShapes : dstShapes).try_emplace(*index);
      if (fresh)
        it->second =
            (source ? srcLayout : dstLayout).localBox(shape, *index).sizes;
      return it->second;
    }
    case BufferKind::Slots:
    case BufferKind::Holder:
    case BufferKind::Scales:
    case BufferKind::Quantizer: {
      if (!scaling)
        return step.emitOpError()
               << side << " buffer " << stringifyBufferKind(kind)
               << " belongs to a quantizing schedule; this one has no "
                  "scaling";
      const bool source =
          kind == BufferKind::Slots || kind == BufferKind::Quantizer;
      std::optional<int64_t> index =
          (source ? srcIndex : dstIndex).indexOf(rank);
      if (!index)
        return step.emitOpError()
               << side << " rank " << rank << " is not in the "
               << (source ? "source" : "destination") << " mesh";
      return ::m2n::blocksTouching(
                 *scaling, shape,
                 (source ? srcLayout : dstLayout).localBox(shape, *index))
          .sizes;
    }
    case BufferKind::Scratch:
      if (scratchId < 0 || scratchId >= static_cast<int64_t>(scratches.size()))
        return step.emitOpError()
               << side << " scratch buffer " << scratchId << " is not declared";
      if (scratches[scratchId].getRank() != rank)
        return step.emitOpError()
               << side << " scratch buffer " << scratchId << " belongs to rank "
               << scratches[scratchId].getRank() << ", not " << rank;
      return ::m2n::Dims(scratches[scratchId].getShape().begin(),
                         scratches[scratchId].getShape().end());
    }
    return failure();
  };
  auto checkBox = [&](StepOp step, ArrayRef<int64_t> offsets,
                      const ::m2n::Dims &bounds,
                      StringRef side) -> LogicalResult {
    ArrayRef<int64_t> sizes = step.getSizes();
    if (offsets.size() != bounds.size() || sizes.size() != bounds.size())
      return step.emitOpError() << side << " box must have " << bounds.size()
                                << " dimensions, the rank of its buffer";
    for (size_t d = 0; d < bounds.size(); ++d)
      if (sizes[d] <= 0 || offsets[d] < 0 || offsets[d] + sizes[d] > bounds[d])
        return step.emitOpError()
               << side << " box leaves its buffer in dimension " << d
               << " (extent " << bounds[d] << ")";
    return success();
  };

  std::optional<ReductionKind> reduction =
      src.getLayout().getPartialReduction();
  for (StepOp step : steps) {
    if (step.getToKind() == BufferKind::Source)
      return step.emitOpError("writes a source buffer, which is read only");
    FailureOr<::m2n::Dims> from =
        bufferShape(step, step.getFromKind(), step.getFromRank(),
                    step.getFromScratch(), "source");
    FailureOr<::m2n::Dims> to = bufferShape(
        step, step.getToKind(), step.getToRank(), step.getToScratch(),
        "destination");
    if (failed(from) || failed(to) ||
        failed(checkBox(step, step.getFromOffsets(), *from, "source")) ||
        failed(checkBox(step, step.getToOffsets(), *to, "destination")))
      return failure();
    if (failed(verifyStepKind(step, scratches)))
      return failure();
    // (Exchange steps max amaxes into tables, from slots or staging.)
    const bool exchange = step.getToKind() == BufferKind::Holder ||
                          step.getToKind() == BufferKind::Quantizer;
    if (std::optional<ReductionKind> kind = step.getReduction())
      if (kind != (exchange ? std::optional(ReductionKind::Max) : reduction))
        return step.emitOpError()
               << "reduces with '" << stringifyReductionKind(*kind) << "' but "
               << (exchange ? "amaxes are max-reduced"
                            : "the source layout does not");
    ::m2n::LinkClass expected =
        domains.linkBetween(step.getFromRank(), step.getToRank());
    if (static_cast<int>(expected) != static_cast<int>(step.getLink()))
      return step.emitOpError()
             << "goes via " << stringifyLinkClass(step.getLink()) << " but "
             << "the topology connects rank " << step.getFromRank()
             << " to rank " << step.getToRank() << " via "
             << ::m2n::toString(expected);
    for (int64_t dep : step.getDeps())
      if (dep < 0 || dep >= static_cast<int64_t>(steps.size()) ||
          dep == step.getId())
        return step.emitOpError() << "depends on step " << dep
                                  << ", which does not exist";
  }

  // The dependencies must leave an order to run the steps in.
  std::vector<int64_t> pending(steps.size(), 0);
  std::vector<SmallVector<int64_t>> dependents(steps.size());
  for (StepOp step : steps)
    for (int64_t dep : step.getDeps()) {
      ++pending[step.getId()];
      dependents[dep].push_back(step.getId());
    }
  SmallVector<int64_t> ready;
  for (size_t i = 0; i < steps.size(); ++i)
    if (!pending[i])
      ready.push_back(i);
  size_t done = 0;
  while (!ready.empty()) {
    int64_t i = ready.pop_back_val();
    ++done;
    for (int64_t next : dependents[i])
      if (--pending[next] == 0)
        ready.push_back(next);
  }
  if (done != steps.size())
    return emitOpError() << "step dependencies form a cycle";
  return success();
}

//===----------------------------------------------------------------------===//
// StepOp
//===----------------------------------------------------------------------===//

/// Parses `src(R)`, `dst(R)` or `scratchK(R)`.
static ParseResult parseBufferRef(OpAsmParser &parser, BufferKind &kind,
                                  int64_t &rank, int64_t &scratch) {
  SMLoc loc = parser.getCurrentLocation();
  StringRef keyword;
  if (parser.parseKeyword(&keyword))
    return failure();
  scratch = -1;
  if (keyword == "src") {
    kind = BufferKind::Source;
  } else if (keyword == "dst") {
    kind = BufferKind::Destination;
  } else if (keyword == "slots") {
    kind = BufferKind::Slots;
  } else if (keyword == "holder") {
    kind = BufferKind::Holder;
  } else if (keyword == "scales") {
    kind = BufferKind::Scales;
  } else if (keyword == "quantizer") {
    kind = BufferKind::Quantizer;
  } else if (keyword.consume_front("scratch") &&
             !keyword.getAsInteger(10, scratch)) {
    kind = BufferKind::Scratch;
  } else {
    return parser.emitError(loc, "expected a buffer (src(R), dst(R), "
                                 "scratchK(R), slots(R), quantizer(R), "
                                 "holder(R) or scales(R))");
  }
  return failure(parser.parseLParen() || parser.parseInteger(rank) ||
                 parser.parseRParen());
}

template <typename Stream>
static void printBufferRef(Stream &printer, BufferKind kind, int64_t rank,
                           int64_t scratch) {
  switch (kind) {
  case BufferKind::Source:
    printer << "src";
    break;
  case BufferKind::Destination:
    printer << "dst";
    break;
  case BufferKind::Scratch:
    printer << "scratch" << scratch;
    break;
  case BufferKind::Slots:
  case BufferKind::Holder:
  case BufferKind::Scales:
  case BufferKind::Quantizer:
    printer << stringifyBufferKind(kind);
    break;
  }
  printer << '(' << rank << ')';
}

ParseResult StepOp::parse(OpAsmParser &parser, OperationState &result) {
  MLIRContext *ctx = parser.getContext();
  Builder builder(ctx);
  int64_t id;
  std::optional<ReductionKind> reduction;
  std::optional<StepKind> stepKind;
  if (parser.parseInteger(id))
    return failure();
  if (succeeded(parser.parseOptionalKeyword("amax")))
    stepKind = StepKind::Amax;
  else if (succeeded(parser.parseOptionalKeyword("scale")))
    stepKind = StepKind::Scale;
  else if (parseCopyOrReduce(parser, reduction))
    return failure();
  BufferKind fromKind, toKind;
  int64_t fromRank, toRank, fromScratch, toScratch;
  SmallVector<int64_t> fromOffsets, fromSizes, toOffsets, toSizes;
  SMLoc toLoc, linkLoc;
  StringRef link;
  if (parseBufferRef(parser, fromKind, fromRank, fromScratch) ||
      parseBox(parser, fromOffsets, fromSizes) || parser.parseArrow() ||
      parseBufferRef(parser, toKind, toRank, toScratch) ||
      parser.getCurrentLocation(&toLoc) ||
      parseBox(parser, toOffsets, toSizes) || parser.parseKeyword("via") ||
      parser.getCurrentLocation(&linkLoc) || parser.parseKeyword(&link))
    return failure();
  if (fromSizes != toSizes)
    return parser.emitError(toLoc, "source and destination boxes differ in "
                                   "size");
  std::optional<LinkClass> linkClass = symbolizeLinkClass(link);
  if (!linkClass)
    return parser.emitError(linkLoc, "unknown link class '")
           << link << "'; expected local, nvlink or network";
  SmallVector<int64_t> deps;
  if (succeeded(parser.parseOptionalKeyword("after")) &&
      parseInt64List(parser, deps))
    return failure();
  if (parser.parseOptionalAttrDict(result.attributes))
    return failure();
  Properties &step = result.getOrAddProperties<Properties>();
  step.id = id;
  step.from_kind = fromKind;
  step.from_rank = fromRank;
  step.from_scratch = fromScratch;
  step.from_offsets.assign(fromOffsets.begin(), fromOffsets.end());
  step.to_kind = toKind;
  step.to_rank = toRank;
  step.to_scratch = toScratch;
  step.to_offsets.assign(toOffsets.begin(), toOffsets.end());
  step.sizes.assign(fromSizes.begin(), fromSizes.end());
  step.reduction = reduction;
  step.link = *linkClass;
  step.deps.assign(deps.begin(), deps.end());
  step.kind = stepKind;
  return success();
}

void StepOp::print(OpAsmPrinter &printer) {
  printer << ' ' << getId();
  if (std::optional<StepKind> kind = getKind())
    printer << ' ' << stringifyStepKind(*kind);
  else
    printCopyOrReduce(printer.getStream(), getReduction());
  printer << ' ';
  printBufferRef(printer.getStream(), getFromKind(), getFromRank(),
                 getFromScratch());
  printer << ' ';
  printBox(printer, getFromOffsets(), getSizes());
  printer << " -> ";
  printBufferRef(printer.getStream(), getToKind(), getToRank(),
                 getToScratch());
  printer << ' ';
  printBox(printer, getToOffsets(), getSizes());
  printer << " via " << stringifyLinkClass(getLink());
  if (!getDeps().empty()) {
    printer << " after [";
    llvm::interleaveComma(getDeps(), printer);
    printer << ']';
  }
  // The step's own data are properties: only discardable attributes remain
  // (getAttrs() would build a dictionary with the inherent ones, per op).
  printer.printOptionalAttrDict(
      (*this)->getDiscardableAttrDictionary().getValue());
}

//===----------------------------------------------------------------------===//
// Program level
//===----------------------------------------------------------------------===//

void ProgramOp::build(OpBuilder &builder, OperationState &state,
                      Type resultType, Value input, Value comm,
                      StringRef strategy, int64_t bufferAlignment) {
  state.addOperands({input, comm});
  state.addTypes(resultType);
  state.addAttribute(getStrategyAttrName(state.name),
                     builder.getStringAttr(strategy));
  if (bufferAlignment != 16)
    state.addAttribute(getBufferAlignmentAttrName(state.name),
                       builder.getI64IntegerAttr(bufferAlignment));
  Region *body = state.addRegion();
  body->push_back(new Block());
}

void ProgramOp::build(OpBuilder &builder, OperationState &state,
                      Type resultType, Type scalesType, Value input,
                      Value comm, StringRef strategy, int64_t bufferAlignment,
                      ScalingAttr scaling) {
  build(builder, state, resultType, input, comm, strategy, bufferAlignment);
  state.addTypes(scalesType);
  state.getOrAddProperties<Properties>().scaling = scaling;
}

LogicalResult ProgramOp::verify() {
  DistType src = getInput().getType(), dst = getResult().getType();
  CommType comm = getComm().getType();
  if (failed(verifyReshardSignature(*this, src, dst, comm, /*casts=*/true,
                                    getScaleAttr())) ||
      failed(verifyScaling(*this, src, dst, getScales(), getScalingAttr(),
                           getScaleAttr())))
    return failure();
  if (!toElementType(src.getElementType()))
    return emitOpError() << "element type " << src.getElementType()
                         << " has no executor yet";
  int64_t scratches = 0, maps = 0;
  llvm::SmallDenseSet<int64_t> ranks;
  // Read once: a refit's program has ~50k moves, verified after every pass.
  const std::optional<ReductionKind> partial =
      src.getLayout().getPartialReduction();
  for (Operation &op : getBody().front()) {
    if (auto scratch = dyn_cast<ScratchOp>(op)) {
      if (failed(verifyScratch(scratch, scratches++, comm)))
        return failure();
    } else if (auto map = dyn_cast<TensorMapOp>(op)) {
      if (map.getId() != maps++)
        return map.emitOpError() << "has id " << map.getId() << ", expected "
                                 << maps - 1
                                 << " (tensor map ids count from 0 in order)";
      if (map.getExtents().size() != map.getBox().size() ||
          map.getBox().empty() || map.getBox().size() > 5)
        return map.emitOpError()
               << "needs 1 to 5 dimensions, as many in its box as in its "
                  "extents";
    } else if (auto rank = dyn_cast<RankOp>(op)) {
      if (rank.getRank() < 0 || rank.getRank() >= comm.getSize())
        return rank.emitOpError()
               << "rank " << rank.getRank()
               << " is outside the communicator of " << comm.getSize()
               << " ranks";
      if (!ranks.insert(rank.getRank()).second)
        return rank.emitOpError()
               << "rank " << rank.getRank() << " has two programs";
      if (rank.getCounters() < 0)
        return rank.emitOpError() << "counters must be non-negative";
      // What the launch must hold, gathered on the way (one walk).
      ::m2n::LaunchDemand demand;
      for (Operation &inner : rank.getBody().front()) {
        auto move = dyn_cast<MoveOp>(inner);
        if (!move)
          return inner.emitOpError("is not allowed in an m2n.rank body; only "
                                   "m2n.move is");
        move.addLaunchDemand(demand);
        // (A quantizing reshard's exchange takes the max of amaxes.)
        const bool amaxes = move.getDstKind() == BufferKind::Quantizer ||
                            move.getDstKind() == BufferKind::Holder;
        if (move.getReduction() && move.getReduction() != partial &&
            !(amaxes && move.getReduction() == ReductionKind::Max))
          return move.emitOpError()
                 << "reduces with '"
                 << stringifyReductionKind(*move.getReduction())
                 << "' but the source layout does not";
        bool tile = move.getMechanism() == ::m2n::Mechanism::Tile;
        if (tile != (move.getSrcMap() >= 0 && move.getDstMap() >= 0))
          return move.emitOpError("names tensor maps exactly when it is a "
                                  "tile");
        // The kernel's work item holds two (as checkTransferProgram says).
        if (move.getWaits().size() > 2)
          return move.emitOpError()
                 << "waits for " << move.getWaits().size()
                 << " counters; a move waits for at most two";
      }
      // The launch runs every item; whether it fits the kernel is the
      // module's m2n.kernel_launch check.
      if (LaunchAttr launch = rank.getLaunchAttr())
        if (std::optional<std::string> wrong =
                ::m2n::checkLaunch(launch.getRankLaunch(), demand))
          return rank.emitOpError() << *wrong;
    } else {
      return op.emitOpError("is not allowed in an m2n.program body; only "
                            "m2n.scratch, m2n.tensor_map and m2n.rank are");
    }
  }
  // What the runtime trusts about the moves together (counters, bounds,
  // repeats) is m2n-verify-program's: a whole program's check, run once.
  return success();
}

/// Parses `+N`.
static ParseResult parseByteOffset(OpAsmParser &parser, int64_t &offset) {
  return failure(parser.parsePlus() || parser.parseInteger(offset));
}

ParseResult TensorMapOp::parse(OpAsmParser &parser, OperationState &result) {
  MLIRContext *ctx = parser.getContext();
  Builder builder(ctx);
  int64_t id, rank, scratch;
  BufferKind kind;
  SmallVector<int64_t> extents, box;
  if (parser.parseInteger(id) || parser.parseKeyword("of") ||
      parseBufferRef(parser, kind, rank, scratch) ||
      parseInt64List(parser, extents) || parser.parseKeyword("box") ||
      parseInt64List(parser, box) ||
      parser.parseOptionalAttrDict(result.attributes))
    return failure();
  result.addAttribute(getIdAttrName(result.name), builder.getI64IntegerAttr(id));
  result.addAttribute(getKindAttrName(result.name),
                      BufferKindAttr::get(ctx, kind));
  result.addAttribute(getRankAttrName(result.name),
                      builder.getI64IntegerAttr(rank));
  result.addAttribute(getScratchAttrName(result.name),
                      builder.getI64IntegerAttr(scratch));
  result.addAttribute(getExtentsAttrName(result.name),
                      builder.getDenseI64ArrayAttr(extents));
  result.addAttribute(getBoxAttrName(result.name),
                      builder.getDenseI64ArrayAttr(box));
  return success();
}

void TensorMapOp::print(OpAsmPrinter &printer) {
  printer << ' ' << getId() << " of ";
  printBufferRef(printer.getStream(), getKind(), getRank(), getScratch());
  printer << ' ';
  printInt64List(printer, getExtents());
  printer << " box ";
  printInt64List(printer, getBox());
  printer.printOptionalAttrDict(
      (*this)->getDiscardableAttrDictionary().getValue());
}

/// Parses `R:I`.
static ParseResult parseCounterRef(OpAsmParser &parser,
                                   ::m2n::CounterRef &counter) {
  return failure(parser.parseInteger(counter.rank) || parser.parseColon() ||
                 parser.parseInteger(counter.index));
}

ParseResult MoveOp::parse(OpAsmParser &parser, OperationState &result) {
  MLIRContext *ctx = parser.getContext();
  Builder builder(ctx);
  SMLoc mechanismLoc = parser.getCurrentLocation();
  StringRef mechanismName;
  if (parser.parseKeyword(&mechanismName))
    return failure();
  std::optional<::m2n::Mechanism> mechanism =
      ::m2n::parseMechanism(mechanismName);
  if (!mechanism)
    return parser.emitError(mechanismLoc, "unknown mechanism '")
           << mechanismName
           << "'; expected bulk, tile, vector, engine or network";
  // `amax`, `scale` (a quantizing reshard's) or `copy` / `reduce<op>`.
  std::optional<StepKind> kind;
  std::optional<ReductionKind> reduction;
  if (succeeded(parser.parseOptionalKeyword("amax")))
    kind = StepKind::Amax;
  else if (succeeded(parser.parseOptionalKeyword("scale")))
    kind = StepKind::Scale;
  else if (parseCopyOrReduce(parser, reduction))
    return failure();
  const bool tile = *mechanism == ::m2n::Mechanism::Tile;
  // `src(1)+0` or, for tiles, `src(1) map 0 (0, 16)`.
  auto endpoint = [&](BufferKind &kind, int64_t &rank, int64_t &scratch,
                      int64_t &offset, int64_t &map,
                      SmallVectorImpl<int64_t> &coords) -> ParseResult {
    offset = 0;
    map = -1;
    if (parseBufferRef(parser, kind, rank, scratch))
      return failure();
    if (!tile)
      return parseByteOffset(parser, offset);
    return failure(parser.parseKeyword("map") || parser.parseInteger(map) ||
                   parser.parseCommaSeparatedList(
                       AsmParser::Delimiter::Paren, [&] {
                         return parser.parseInteger(coords.emplace_back());
                       }));
  };
  BufferKind srcKind, dstKind;
  int64_t srcRank, srcScratch, srcOffset, srcMap, dstRank, dstScratch,
      dstOffset, dstMap, bytes, step = -1;
  SmallVector<int64_t> srcCoords, dstCoords;
  std::optional<::m2n::CounterRef> signal, readDone;
  SmallVector<::m2n::CounterWait, 2> waits;
  std::optional<BufferKind> accKind;
  int64_t accRank = 0, accScratch = -1;
  if (endpoint(srcKind, srcRank, srcScratch, srcOffset, srcMap, srcCoords) ||
      parser.parseArrow() ||
      endpoint(dstKind, dstRank, dstScratch, dstOffset, dstMap, dstCoords) ||
      parser.parseInteger(bytes) || parser.parseKeyword("B"))
    return failure();
  // `times N [along K] by (+S,+D[,+E])`, one per repeat level.
  SmallVector<::m2n::Repeat, 2> repeats;
  while (succeeded(parser.parseOptionalKeyword("times"))) {
    ::m2n::Repeat &level = repeats.emplace_back();
    if (parser.parseInteger(level.count) ||
        (succeeded(parser.parseOptionalKeyword("along")) &&
         parser.parseInteger(level.dim)) ||
        parser.parseKeyword("by") || parser.parseLParen() ||
        parseByteOffset(parser, level.srcStride) || parser.parseComma() ||
        parseByteOffset(parser, level.dstStride) ||
        (succeeded(parser.parseOptionalComma()) &&
         parseByteOffset(parser, level.entryStride)) ||
        parser.parseRParen())
      return failure();
  }
  // `blocks E+P/W`: a quantizing reshard's block lookup.
  std::optional<::m2n::BlockLookup> lookup;
  if (succeeded(parser.parseOptionalKeyword("blocks"))) {
    ::m2n::BlockLookup &blocks = lookup.emplace();
    if (parser.parseInteger(blocks.entry) ||
        parseByteOffset(parser, blocks.phase) || parser.parseSlash() ||
        parser.parseInteger(blocks.width))
      return failure();
  }
  // `signal` and `read_done` once each, any number of `wait`s (the
  // verifier says how many the kernel takes).
  while (true) {
    SMLoc loc = parser.getCurrentLocation();
    if (succeeded(parser.parseOptionalKeyword("signal"))) {
      if (signal)
        return parser.emitError(loc, "a move signals one counter");
      if (parseCounterRef(parser, signal.emplace()))
        return failure();
    } else if (succeeded(parser.parseOptionalKeyword("wait"))) {
      ::m2n::CounterWait &wait = waits.emplace_back();
      if (parseCounterRef(parser, wait.counter) || parser.parseGreater() ||
          parser.parseEqual() || parser.parseInteger(wait.value))
        return failure();
    } else if (succeeded(parser.parseOptionalKeyword("read_done"))) {
      if (readDone)
        return parser.emitError(loc, "a move reports its reads to one "
                                     "counter");
      if (parseCounterRef(parser, readDone.emplace()))
        return failure();
    } else if (succeeded(parser.parseOptionalKeyword("acc"))) {
      if (accKind)
        return parser.emitError(loc, "a move has one accumulator");
      if (parseBufferRef(parser, accKind.emplace(), accRank, accScratch))
        return failure();
    } else if (succeeded(parser.parseOptionalKeyword("step"))) {
      if (parser.parseInteger(step))
        return failure();
    } else {
      break;
    }
  }
  if (parser.parseOptionalAttrDict(result.attributes))
    return failure();
  Properties &move = result.getOrAddProperties<Properties>();
  move.mechanism = *mechanism;
  move.reduction = reduction;
  move.src_kind = srcKind;
  move.src_rank = srcRank;
  move.src_scratch = srcScratch;
  move.src_offset = srcOffset;
  move.dst_kind = dstKind;
  move.dst_rank = dstRank;
  move.dst_scratch = dstScratch;
  move.dst_offset = dstOffset;
  move.bytes = bytes;
  move.src_map = srcMap;
  move.src_coords.assign(srcCoords.begin(), srcCoords.end());
  move.dst_map = dstMap;
  move.dst_coords.assign(dstCoords.begin(), dstCoords.end());
  move.signal = signal;
  move.waits.assign(waits.begin(), waits.end());
  move.read_done = readDone;
  move.step = step;
  move.repeats.assign(repeats.begin(), repeats.end());
  move.kind = kind;
  move.lookup = lookup;
  move.acc_kind = accKind;
  move.acc_rank = accRank;
  move.acc_scratch = accScratch;
  return success();
}

void MoveOp::print(OpAsmPrinter &printer) {
  // In a buffer, then to the stream at once (TextLine).
  TextLine os;
  const ::m2n::Mechanism mechanism = getMechanism();
  os << ' ' << ::m2n::toString(mechanism);
  if (std::optional<StepKind> kind = getKind())
    os << ' ' << stringifyStepKind(*kind);
  else
    printCopyOrReduce(os, getReduction());
  const bool tile = mechanism == ::m2n::Mechanism::Tile;
  auto endpoint = [&](BufferKind kind, int64_t rank, int64_t scratch,
                      int64_t offset, int64_t map, ArrayRef<int64_t> coords) {
    os << ' ';
    printBufferRef(os, kind, rank, scratch);
    if (!tile) {
      os << '+' << offset;
      return;
    }
    os << " map " << map << " (";
    os.commaSeparated(coords) << ')';
  };
  endpoint(getSrcKind(), getSrcRank(), getSrcScratch(), getSrcOffset(),
           getSrcMap(), getSrcCoords());
  os << " ->";
  endpoint(getDstKind(), getDstRank(), getDstScratch(), getDstOffset(),
           getDstMap(), getDstCoords());
  os << ' ' << getBytes() << 'B';
  for (const ::m2n::Repeat &level : getRepeats()) {
    os << " times " << level.count;
    if (level.dim >= 0)
      os << " along " << level.dim;
    os << " by (+" << level.srcStride << ",+" << level.dstStride;
    if (level.entryStride)
      os << ",+" << level.entryStride;
    os << ')';
  }
  if (std::optional<::m2n::BlockLookup> lookup = getLookup())
    os << " blocks " << lookup->entry << '+' << lookup->phase << '/'
       << lookup->width;
  if (std::optional<BufferKind> accKind = getAccKind()) {
    os << " acc ";
    printBufferRef(os, *accKind, getAccRank(), getAccScratch());
  }
  if (std::optional<::m2n::CounterRef> signal = getSignal())
    os << " signal " << signal->rank << ':' << signal->index;
  for (const ::m2n::CounterWait &wait : getWaits())
    os << " wait " << wait.counter.rank << ':' << wait.counter.index
       << ">=" << wait.value;
  if (std::optional<::m2n::CounterRef> readDone = getReadDone())
    os << " read_done " << readDone->rank << ':' << readDone->index;
  if (getStep() >= 0)
    os << " step " << getStep();
  os.writeTo(printer.getStream());
  // The move's own data are properties: only discardable attributes remain
  // (getAttrs() would build a dictionary with the inherent ones, per op).
  printer.printOptionalAttrDict(
      (*this)->getDiscardableAttrDictionary().getValue());
}

//===----------------------------------------------------------------------===//
// Shared reshards
//===----------------------------------------------------------------------===//

Value ReshardFnOp::getResult() {
  return cast<YieldOp>(getBody().front().getTerminator()).getResult();
}

Type ReshardFnOp::getScalesType() {
  Value scales = cast<YieldOp>(getBody().front().getTerminator()).getScales();
  return scales ? scales.getType() : Type();
}

LogicalResult ReshardFnOp::verify() {
  Block &body = getBody().front();
  if (body.getNumArguments() != 2 ||
      !isa<DistType>(body.getArgument(0).getType()) ||
      !isa<CommType>(body.getArgument(1).getType()))
    return emitOpError("takes two block arguments: the input "
                       "(!m2n.dist) and the communicator (!m2n.comm)");
  if (body.empty() || !isa<YieldOp>(body.back()))
    return emitOpError("must end with m2n.yield");
  Operation *reshard = getResult().getDefiningOp();
  if (!reshard || reshard->getBlock() != &body ||
      !isa<ReshardOp, PlanOp, ScheduleOp, ProgramOp>(reshard) ||
      reshard->getOperand(0) != getInput() ||
      reshard->getOperand(1) != getComm())
    return emitOpError("must yield the result of one m2n.reshard, m2n.plan, "
                       "m2n.schedule or m2n.program of its arguments");
  // A quantizing reshard's scales are yielded with its result, or not at
  // all (then no call could reach them).
  Value scales = cast<YieldOp>(body.back()).getScales();
  const bool quantizing = reshard->getNumResults() == 2;
  if (quantizing != static_cast<bool>(scales) ||
      (scales && scales != reshard->getResult(1)))
    return emitOpError(quantizing
                           ? "must yield its quantizing reshard's scales "
                             "after its result"
                           : "yields scales, which its reshard does not "
                             "compute");
  // One reshard and the yield: nothing else runs when a tensor calls it.
  if (&body.front() != reshard || reshard->getNextNode() != &body.back())
    return emitOpError("holds exactly one reshard and its m2n.yield");
  return success();
}

LogicalResult CallOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  auto callee =
      symbolTable.lookupNearestSymbolFrom<ReshardFnOp>(*this, getCalleeAttr());
  if (!callee)
    return emitOpError() << "'" << getCallee()
                         << "' does not name an m2n.reshard_fn";
  Type scales = callee.getScalesType();
  if (callee.getInput().getType() != getInput().getType() ||
      callee.getComm().getType() != getComm().getType() ||
      callee.getResult().getType() != getResult().getType() ||
      scales != (getScales() ? getScales().getType() : Type())) {
    InFlightDiagnostic diag = emitOpError()
                              << "types differ from those of @" << getCallee()
                              << ": " << callee.getComm().getType() << ", "
                              << callee.getInput().getType() << " -> "
                              << callee.getResult().getType();
    if (scales)
      diag << ", " << scales;
    return diag;
  }
  return success();
}

//===----------------------------------------------------------------------===//
// Groups
//===----------------------------------------------------------------------===//

void MoveOp::addLaunchDemand(::m2n::LaunchDemand &demand) {
  // Copy-engine copies and receives are not kernel items.
  if (::m2n::isKernelMechanism(getMechanism()))
    demand.add(getMechanism(), getBytes());
}

ParseResult RankOp::parse(OpAsmParser &parser, OperationState &result) {
  Builder &builder = parser.getBuilder();
  int64_t rank = 0, counters = 0;
  if (parser.parseInteger(rank) || parser.parseKeyword("counters") ||
      parser.parseEqual() || parser.parseInteger(counters))
    return failure();
  Properties &props = result.getOrAddProperties<Properties>();
  props.rank = builder.getI64IntegerAttr(rank);
  props.counters = builder.getI64IntegerAttr(counters);
  if (succeeded(parser.parseOptionalKeyword("launch")) &&
      parser.parseCustomAttributeWithFallback(props.launch, Type{}))
    return failure();
  if (parser.parseOptionalAttrDictWithKeyword(result.attributes))
    return failure();
  Region &body = *result.addRegion();
  if (parser.parseRegion(body))
    return failure();
  // `{}` is a rank without moves: its single block still exists.
  if (body.empty())
    body.emplaceBlock();
  return success();
}

void RankOp::print(OpAsmPrinter &printer) {
  printer.getStream() << ' ' << getRank() << " counters = " << getCounters();
  if (LaunchAttr launch = getLaunchAttr()) {
    printer.getStream() << " launch ";
    printer.printStrippedAttrOrType(launch);
  }
  // Only discardable attributes remain to print (getAttrs() would build a
  // dictionary with the inherent ones, per op).
  printer.printOptionalAttrDictWithKeyword(
      (*this)->getDiscardableAttrDictionary().getValue());
  printer << ' ';
  printer.printRegion(getBody());
}

ParseResult GroupRankOp::parse(OpAsmParser &parser, OperationState &result) {
  Properties &props = result.getOrAddProperties<Properties>();
  SmallVector<int64_t> members, counterBases;
  if (parser.parseInteger(props.rank) || parser.parseKeyword("counters") ||
      parser.parseEqual() || parser.parseInteger(props.counters) ||
      parser.parseKeyword("members") || parser.parseEqual() ||
      parseInt64List(parser, members) ||
      parser.parseKeyword("counter_bases") || parser.parseEqual() ||
      parseInt64List(parser, counterBases))
    return failure();
  props.members.assign(members.begin(), members.end());
  props.counter_bases.assign(counterBases.begin(), counterBases.end());
  if (succeeded(parser.parseOptionalKeyword("launch")) &&
      parser.parseCustomAttributeWithFallback(props.launch, Type{}))
    return failure();
  return parser.parseOptionalAttrDict(result.attributes);
}

void GroupRankOp::print(OpAsmPrinter &printer) {
  TextLine line;
  line << ' ' << getRank() << " counters = " << getCounters()
       << " members = [";
  line.commaSeparated(getMembers()) << "] counter_bases = [";
  line.commaSeparated(getCounterBases()) << ']';
  line.writeTo(printer.getStream());
  if (LaunchAttr launch = getLaunchAttr()) {
    printer.getStream() << " launch ";
    printer.printStrippedAttrOrType(launch);
  }
  printer.printOptionalAttrDict(
      (*this)->getDiscardableAttrDictionary().getValue());
}

::m2n::LaunchDemand RankOp::getLaunchDemand() {
  ::m2n::LaunchDemand demand;
  for (MoveOp move : getBody().front().getOps<MoveOp>())
    move.addLaunchDemand(demand);
  return demand;
}

::m2n::RankCounters ProgramOp::getRankCounters() {
  ::m2n::RankCounters counters;
  for (auto rank : getBody().front().getOps<RankOp>())
    counters.emplace_back(static_cast<int64_t>(rank.getRank()),
                          static_cast<int64_t>(rank.getCounters()));
  llvm::sort(counters);
  return counters;
}

ProgramOp GroupOp::getMemberProgram(unsigned index,
                                    SymbolTableCollection &symbols) {
  Operation *member = getMembers()[index].getDefiningOp();
  if (auto program = dyn_cast_if_present<ProgramOp>(member))
    return program;
  auto call = dyn_cast_if_present<CallOp>(member);
  if (!call)
    return nullptr;
  auto callee =
      symbols.lookupNearestSymbolFrom<ReshardFnOp>(call, call.getCalleeAttr());
  return callee ? dyn_cast_if_present<ProgramOp>(callee.getReshard())
                : nullptr;
}

SmallVector<ProgramOp, 4>
GroupOp::getMemberPrograms(SymbolTableCollection &symbols) {
  SmallVector<ProgramOp, 4> programs;
  for (unsigned index = 0; index < getMembers().size(); ++index)
    programs.push_back(getMemberProgram(index, symbols));
  return programs;
}

LogicalResult GroupOp::verify() {
  if (getMembers().empty())
    return emitOpError("needs at least one member");
  llvm::DenseMap<Value, unsigned> memberIndex;
  Value comm;
  for (auto [index, member] : llvm::enumerate(getMembers())) {
    Operation *producer = member.getDefiningOp();
    if (!producer || producer->getBlock() != (*this)->getBlock() ||
        !isa<ReshardOp, CallOp, PlanOp, ScheduleOp, ProgramOp, AllGatherOp,
             ReduceScatterOp, AllReduceOp, AllToAllOp>(producer))
      return emitOpError() << "member " << index
                           << " is not the result of a reshard of this block "
                              "(m2n.reshard, m2n.call, a collective or a "
                              "plan, schedule or program)";
    auto [it, fresh] = memberIndex.try_emplace(member, index);
    if (!fresh)
      return emitOpError() << "member " << index << " repeats member "
                           << it->second
                           << ": a reshard launched twice at once would "
                              "write its destination twice";
    if (!comm)
      comm = producer->getOperand(1);
    else if (producer->getOperand(1) != comm)
      return emitOpError() << "member " << index
                           << " runs on another communicator than member 0";
  }
  for (auto [index, member] : llvm::enumerate(getMembers())) {
    auto read = memberIndex.find(member.getDefiningOp()->getOperand(0));
    if (read != memberIndex.end())
      return emitOpError() << "member " << index << " reads member "
                           << read->second
                           << "'s result: the members of a group run at the "
                              "same time";
  }
  if (!isMerged())
    return success();
  int64_t lastRank = -1;
  for (Operation &op : getRanks().front()) {
    auto rank = dyn_cast<GroupRankOp>(op);
    if (!rank)
      return op.emitOpError("is not an m2n.group_rank: a merged group lists "
                            "the program of each rank");
    const int64_t id = rank.getRank();
    if (id <= lastRank)
      return rank.emitOpError() << "rank " << id
                                << " follows rank " << lastRank
                                << ": ranks are listed once, in order";
    lastRank = id;
    if (rank.getMembers().empty() ||
        rank.getMembers().size() != rank.getCounterBases().size())
      return rank.emitOpError("lists at least one member and one counter "
                              "base per member");
    int64_t last = -1;
    for (int64_t member : rank.getMembers()) {
      if (member <= last || member >= static_cast<int64_t>(getMembers().size()))
        return rank.emitOpError()
               << "member " << member
               << " is out of order or not a member of the group: every rank "
                  "runs its members in the group's order, each once";
      last = member;
    }
  }
  return success();
}

/// "[0 from 0, 2 from 3]": members and their counter bases.
static std::string
describeMembers(const std::vector<std::pair<int64_t, int64_t>> &members) {
  std::string text = "[";
  for (const auto &[member, base] : members)
    text += (text.size() > 1 ? ", " : "") + std::to_string(member) +
            " from " + std::to_string(base);
  return text + "]";
}

WalkResult GroupOp::walkGroups(Operation *root,
                               function_ref<WalkResult(GroupOp)> visit) {
  return root->walk<WalkOrder::PreOrder>([&](Operation *op) {
    if (isa<ReshardFnOp, PlanOp, ScheduleOp, ProgramOp>(op))
      return WalkResult::skip();
    if (auto group = dyn_cast<GroupOp>(op))
      return visit(group).wasInterrupted() ? WalkResult::interrupt()
                                           : WalkResult::skip();
    return WalkResult::advance();
  });
}

LogicalResult GroupOp::verifyMerge(SymbolTableCollection &symbols) {
  if (!isMerged())
    return success();
  // The merged program must be the one the members' programs give.
  // Each shared program's counters once, however many members run it.
  llvm::DenseMap<Operation *, ::m2n::RankCounters> countersOf;
  std::vector<const ::m2n::RankCounters *> memberCounters;
  SmallVector<ProgramOp, 4> memberPrograms = getMemberPrograms(symbols);
  for (auto [index, program] : llvm::enumerate(memberPrograms)) {
    if (!program)
      return emitOpError() << "is merged but member " << index
                           << " is not lowered to a program";
    countersOf.try_emplace(program, ::m2n::RankCounters());
  }
  for (auto &[program, counters] : countersOf)
    counters = cast<ProgramOp>(program).getRankCounters();
  for (ProgramOp program : memberPrograms)
    memberCounters.push_back(&countersOf[program]);
  std::map<int64_t, ::m2n::GroupRank> layout =
      ::m2n::groupLayout(memberCounters);
  // Each member program's launches by rank, read once (a refit's group has
  // 1025 members on 116 programs).
  llvm::DenseMap<Operation *, llvm::DenseMap<int64_t, LaunchAttr>> launchesOf;
  for (auto rank : getRanks().front().getOps<GroupRankOp>()) {
    auto expected = layout.find(rank.getRank());
    if (expected == layout.end())
      return rank.emitOpError() << "rank " << rank.getRank()
                                << " runs no member's program";
    std::vector<std::pair<int64_t, int64_t>> listed;
    for (auto [member, base] :
         llvm::zip_equal(rank.getMembers(), rank.getCounterBases()))
      listed.emplace_back(member, base);
    if (listed != expected->second.members ||
        static_cast<int64_t>(rank.getCounters()) != expected->second.counters)
      return rank.emitOpError()
             << "is not the merge of the members' programs of rank "
             << rank.getRank() << ": expected " << expected->second.counters
             << " counters, members and bases "
             << describeMembers(expected->second.members);
    layout.erase(expected);
    if (LaunchAttr launch = rank.getLaunchAttr()) {
      std::optional<::m2n::RankLaunch> combined;
      // The members were checked against groupLayout's: valid indices.
      for (int64_t member : rank.getMembers()) {
        ProgramOp program = memberPrograms[member];
        auto [launches, fresh] = launchesOf.try_emplace(program);
        if (fresh)
          for (auto memberRank : program.getBody().front().getOps<RankOp>())
            launches->second[memberRank.getRank()] =
                memberRank.getLaunchAttr();
        LaunchAttr own = launches->second.lookup(rank.getRank());
        if (!own)
          return rank.emitOpError()
                 << "has a launch but member " << member
                 << "'s program of rank " << rank.getRank()
                 << " has none: run m2n-choose-launch on the whole module";
        combined = combined ? ::m2n::combineLaunches(*combined,
                                                     own.getRankLaunch())
                            : own.getRankLaunch();
      }
      if (combined && *combined != launch.getRankLaunch())
        return rank.emitOpError()
               << "launch " << launch.getRankLaunch().str()
               << " is not its members' launches combined: expected "
               << combined->str();
    }
  }
  if (!layout.empty())
    return emitOpError() << "lists no m2n.group_rank for rank "
                         << layout.begin()->first
                         << ", which member "
                         << layout.begin()->second.members.front().first
                         << " runs on";
  return success();
}
