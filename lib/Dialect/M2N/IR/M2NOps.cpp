//===- M2NOps.cpp - reshard and collective operations -----------------------===//

#include "m2n/Dialect/M2N/IR/M2NOps.h"
#include "m2n/Dialect/M2N/IR/LayoutInterop.h"

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

/// The rules shared by m2n.reshard, m2n.plan and the collectives: same
/// element type and global shape, both meshes inside the communicator, and
/// checkPartialDestination.
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

  // Partial destinations: the rule the planner and the simulator share.
  if (std::optional<std::string> problem = ::m2n::checkPartialDestination(
          toLayout(src.getLayout()), toLayout(dst.getLayout())))
    return op->emitOpError() << *problem;
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
  if (*expected != op.getResult().getType())
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
      input, meshAxes, newPlacement,
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

/// Parses `copy` or `reduce<sum|max|min>`, the latter into `attrName`.
static ParseResult parseCopyOrReduce(OpAsmParser &parser,
                                     OperationState &result,
                                     StringAttr attrName) {
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
  std::optional<ReductionKind> reduction = symbolizeReductionKind(name);
  if (!reduction)
    return parser.emitError(nameLoc, "unknown reduction '")
           << name << "'; expected sum, max or min";
  result.addAttribute(attrName,
                      ReductionKindAttr::get(parser.getContext(), *reduction));
  return success();
}

static void printCopyOrReduce(OpAsmPrinter &printer,
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
  MLIRContext *ctx = parser.getContext();
  if (parseCopyOrReduce(parser, result, getReductionAttrName(result.name)))
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
  printCopyOrReduce(printer, getReduction());
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

LogicalResult ScheduleOp::verify() {
  DistType src = getInput().getType(), dst = getResult().getType();
  CommType comm = getComm().getType();
  if (failed(verifyReshardSignature(*this, src, dst, comm)))
    return failure();
  if (!::m2n::parseStrategy(getStrategy().str()))
    return emitOpError() << "unknown strategy '" << getStrategy()
                         << "'; expected flat, gather-bcast or hierarchical";
  ::m2n::Topology topology = toTopology(getTopology());
  if (std::optional<std::string> error = topology.validate(comm.getSize()))
    return emitOpError() << "topology: " << *error;

  ::m2n::Layout srcLayout = toLayout(src.getLayout());
  ::m2n::Layout dstLayout = toLayout(dst.getLayout());
  std::vector<int64_t> shape(src.getShape().begin(), src.getShape().end());
  SmallVector<ScratchOp> scratches;
  SmallVector<StepOp> steps;
  for (Operation &op : getBody().front()) {
    if (auto scratch = dyn_cast<ScratchOp>(op)) {
      if (scratch.getId() != static_cast<int64_t>(scratches.size()))
        return scratch.emitOpError() << "has id " << scratch.getId()
                                     << ", expected " << scratches.size()
                                     << " (scratch ids count from 0 in order)";
      if (scratch.getRank() < 0 || scratch.getRank() >= comm.getSize())
        return scratch.emitOpError()
               << "rank " << scratch.getRank()
               << " is outside the communicator of " << comm.getSize()
               << " ranks";
      if (llvm::any_of(scratch.getShape(), [](int64_t e) { return e < 0; }))
        return scratch.emitOpError() << "shape must be non-negative";
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

  // The shape of a buffer, or an error naming why it does not exist.
  auto bufferShape = [&](StepOp step, BufferKind kind, int64_t rank,
                         int64_t scratchId,
                         StringRef side) -> FailureOr<::m2n::Dims> {
    switch (kind) {
    case BufferKind::Source:
    case BufferKind::Destination: {
      const ::m2n::Layout &layout =
          kind == BufferKind::Source ? srcLayout : dstLayout;
      std::optional<int64_t> index = layout.mesh.indexOf(rank);
      if (!index)
        return step.emitOpError()
               << side << " rank " << rank << " is not in the "
               << (kind == BufferKind::Source ? "source" : "destination")
               << " mesh";
      return layout.localBox(shape, *index).sizes;
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
    if (std::optional<ReductionKind> kind = step.getReduction())
      if (kind != reduction)
        return step.emitOpError() << "reduces with '"
                                  << stringifyReductionKind(*kind)
                                  << "' but the source layout does not";
    ::m2n::LinkClass expected =
        topology.linkBetween(step.getFromRank(), step.getToRank());
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
  } else if (keyword.consume_front("scratch") &&
             !keyword.getAsInteger(10, scratch)) {
    kind = BufferKind::Scratch;
  } else {
    return parser.emitError(loc, "expected a buffer (src(R), dst(R) or "
                                 "scratchK(R))");
  }
  return failure(parser.parseLParen() || parser.parseInteger(rank) ||
                 parser.parseRParen());
}

static void printBufferRef(OpAsmPrinter &printer, BufferKind kind,
                           int64_t rank, int64_t scratch) {
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
  }
  printer << '(' << rank << ')';
}

ParseResult StepOp::parse(OpAsmParser &parser, OperationState &result) {
  MLIRContext *ctx = parser.getContext();
  Builder builder(ctx);
  int64_t id;
  if (parser.parseInteger(id) ||
      parseCopyOrReduce(parser, result, getReductionAttrName(result.name)))
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
      parser.parseCommaSeparatedList(AsmParser::Delimiter::Square, [&] {
        return parser.parseInteger(deps.emplace_back());
      }))
    return failure();
  if (parser.parseOptionalAttrDict(result.attributes))
    return failure();
  result.addAttribute(getIdAttrName(result.name), builder.getI64IntegerAttr(id));
  result.addAttribute(getFromKindAttrName(result.name),
                      BufferKindAttr::get(ctx, fromKind));
  result.addAttribute(getFromRankAttrName(result.name),
                      builder.getI64IntegerAttr(fromRank));
  result.addAttribute(getFromScratchAttrName(result.name),
                      builder.getI64IntegerAttr(fromScratch));
  result.addAttribute(getFromOffsetsAttrName(result.name),
                      builder.getDenseI64ArrayAttr(fromOffsets));
  result.addAttribute(getToKindAttrName(result.name),
                      BufferKindAttr::get(ctx, toKind));
  result.addAttribute(getToRankAttrName(result.name),
                      builder.getI64IntegerAttr(toRank));
  result.addAttribute(getToScratchAttrName(result.name),
                      builder.getI64IntegerAttr(toScratch));
  result.addAttribute(getToOffsetsAttrName(result.name),
                      builder.getDenseI64ArrayAttr(toOffsets));
  result.addAttribute(getSizesAttrName(result.name),
                      builder.getDenseI64ArrayAttr(fromSizes));
  result.addAttribute(getLinkAttrName(result.name),
                      LinkClassAttr::get(ctx, *linkClass));
  result.addAttribute(getDepsAttrName(result.name),
                      builder.getDenseI64ArrayAttr(deps));
  return success();
}

void StepOp::print(OpAsmPrinter &printer) {
  printer << ' ' << getId();
  printCopyOrReduce(printer, getReduction());
  printer << ' ';
  printBufferRef(printer, getFromKind(), getFromRank(), getFromScratch());
  printer << ' ';
  printBox(printer, getFromOffsets(), getSizes());
  printer << " -> ";
  printBufferRef(printer, getToKind(), getToRank(), getToScratch());
  printer << ' ';
  printBox(printer, getToOffsets(), getSizes());
  printer << " via " << stringifyLinkClass(getLink());
  if (!getDeps().empty()) {
    printer << " after [";
    llvm::interleaveComma(getDeps(), printer);
    printer << ']';
  }
  printer.printOptionalAttrDict(
      (*this)->getAttrs(),
      {getIdAttrName(), getFromKindAttrName(), getFromRankAttrName(),
       getFromScratchAttrName(), getFromOffsetsAttrName(), getToKindAttrName(),
       getToRankAttrName(), getToScratchAttrName(), getToOffsetsAttrName(),
       getSizesAttrName(), getReductionAttrName(), getLinkAttrName(),
       getDepsAttrName()});
}
