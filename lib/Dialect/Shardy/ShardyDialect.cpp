//===- ShardyDialect.cpp - sdy's syntax for the subset m2n imports --------===//
//
// Parsers and printers of Shardy's textual forms (openxla/shardy, sdy/ir),
// written from its grammar (MpmdDialect.cpp: the mpmd ones):
//   mesh      <["x"=2, "y"=4], device_ids=[...]>
//   sharding  <@mesh | mesh<...>, [{"x", "y":(1)2, ?}p0, {}],
//              replicated={"z"}, unreduced=max{"w"}>
//   collectives  sdy.all_gather [{}, {"x"}] %v out_sharding=<...> : T
//
//===----------------------------------------------------------------------===//

#include "m2n/Dialect/Shardy/ShardyDialect.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::m2n::sdy;

#include "m2n/Dialect/Shardy/SdyDialect.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "m2n/Dialect/Shardy/SdyAttrs.cpp.inc"
#define GET_OP_CLASSES
#include "m2n/Dialect/Shardy/ShardyOps.cpp.inc"

void SdyDialect::initialize() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "m2n/Dialect/Shardy/SdyAttrs.cpp.inc"
      >();
  addOperations<MeshOp, ReshardOp, ShardingConstraintOp, AllGatherOp,
                AllSliceOp, AllToAllOp, CollectivePermuteOp, AllReduceOp,
                ReduceScatterOp>();
}

//===----------------------------------------------------------------------===//
// Meshes
//===----------------------------------------------------------------------===//

int64_t MeshAttr::deviceCount() const {
  int64_t count = 1;
  for (int64_t size : getAxisSizes())
    count *= size;
  return count;
}

int64_t MeshAttr::axisIndex(StringRef name) const {
  for (auto [index, axis] : llvm::enumerate(getAxisNames()))
    if (cast<StringAttr>(axis).getValue() == name)
      return static_cast<int64_t>(index);
  return -1;
}

LogicalResult MeshAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                               ArrayAttr axisNames, ArrayRef<int64_t> axisSizes,
                               ArrayRef<int64_t> deviceIds) {
  if (axisNames.size() != axisSizes.size())
    return emitError() << "a mesh needs one size per axis name";
  llvm::SmallDenseSet<Attribute> names;
  int64_t devices = 1;
  for (auto [name, size] : llvm::zip(axisNames, axisSizes)) {
    if (!isa<StringAttr>(name) || !names.insert(name).second)
      return emitError() << "mesh axis " << name << " is named twice";
    if (size < 1)
      return emitError() << "mesh axis " << name << " has size " << size;
    devices *= size;
  }
  if (deviceIds.empty())
    return success();
  // A maximal mesh: no axes, one device of any id.
  if (axisNames.empty() && deviceIds.size() == 1 && deviceIds[0] >= 0)
    return success();
  if (static_cast<int64_t>(deviceIds.size()) != devices)
    return emitError() << "the mesh has " << deviceIds.size()
                       << " device ids for " << devices << " devices";
  SmallVector<int64_t> sorted(deviceIds);
  llvm::sort(sorted);
  for (auto [index, id] : llvm::enumerate(sorted))
    if (id != static_cast<int64_t>(index))
      return emitError() << "device_ids must be a permutation of 0.."
                         << devices - 1;
  return success();
}

/// `[1, 2, 3]`
static ParseResult parseIntList(AsmParser &parser,
                                SmallVectorImpl<int64_t> &values) {
  return parser.parseCommaSeparatedList(AsmParser::Delimiter::Square, [&]() {
    int64_t value;
    if (parser.parseInteger(value))
      return failure();
    values.push_back(value);
    return success();
  });
}

Attribute MeshAttr::parse(AsmParser &parser, Type) {
  SmallVector<Attribute> names;
  SmallVector<int64_t> sizes, deviceIds;
  SMLoc at = parser.getCurrentLocation();
  if (parser.parseLess() ||
      parser.parseCommaSeparatedList(AsmParser::Delimiter::Square, [&]() {
        std::string name;
        int64_t size;
        if (parser.parseString(&name) || parser.parseEqual() ||
            parser.parseInteger(size))
          return failure();
        names.push_back(parser.getBuilder().getStringAttr(name));
        sizes.push_back(size);
        return success();
      }))
    return {};
  if (succeeded(parser.parseOptionalComma()) &&
      (parser.parseKeyword("device_ids") || parser.parseEqual() ||
       parseIntList(parser, deviceIds)))
    return {};
  if (parser.parseGreater())
    return {};
  return MeshAttr::getChecked(
      [&] { return parser.emitError(at); }, parser.getContext(),
      parser.getBuilder().getArrayAttr(names), sizes, deviceIds);
}

void MeshAttr::print(AsmPrinter &printer) const {
  printer << "<[";
  for (auto [index, name] : llvm::enumerate(getAxisNames())) {
    if (index)
      printer << ", ";
    printer.printString(cast<StringAttr>(name).getValue());
    printer << '=' << getAxisSizes()[index];
  }
  printer << ']';
  if (!getDeviceIds().empty()) {
    printer << ", device_ids=[";
    llvm::interleaveComma(getDeviceIds(), printer);
    printer << ']';
  }
  printer << '>';
}

//===----------------------------------------------------------------------===//
// Axis references and dimension shardings
//===----------------------------------------------------------------------===//

/// `"x"` or `"x":(2)4`.
static FailureOr<AxisRefAttr> parseAxisRef(AsmParser &parser) {
  std::string name;
  int64_t preSize = 0, size = 0;
  if (parser.parseString(&name))
    return failure();
  if (succeeded(parser.parseOptionalColon()) &&
      (parser.parseLParen() || parser.parseInteger(preSize) ||
       parser.parseRParen() || parser.parseInteger(size)))
    return failure();
  return AxisRefAttr::get(parser.getContext(),
                          parser.getBuilder().getStringAttr(name), preSize,
                          size);
}

static void printAxisRef(AsmPrinter &printer, AxisRefAttr axis) {
  printer.printString(axis.getName().getValue());
  if (!axis.isWhole())
    printer << ":(" << axis.getPreSize() << ')' << axis.getSize();
}

/// `{"x", "y", ?}` (the `?`, an open dimension, where `allowOpen`);
/// `closed` is false after a `?`.
static ParseResult parseAxisSet(AsmParser &parser,
                                SmallVectorImpl<AxisRefAttr> &axes,
                                bool allowOpen, bool &closed) {
  closed = true;
  if (parser.parseLBrace())
    return failure();
  if (succeeded(parser.parseOptionalRBrace()))
    return success();
  do {
    if (allowOpen && succeeded(parser.parseOptionalQuestion())) {
      closed = false;
      break;
    }
    FailureOr<AxisRefAttr> axis = parseAxisRef(parser);
    if (failed(axis))
      return failure();
    axes.push_back(*axis);
  } while (succeeded(parser.parseOptionalComma()));
  return parser.parseRBrace();
}

static void printAxisSet(AsmPrinter &printer, ArrayRef<AxisRefAttr> axes,
                         bool closed = true) {
  printer << '{';
  llvm::interleaveComma(axes, printer,
                        [&](AxisRefAttr axis) { printAxisRef(printer, axis); });
  if (!closed)
    printer << (axes.empty() ? "?" : ", ?");
  printer << '}';
}

/// `{"x", ?}p1`
static FailureOr<DimShardingAttr> parseDimSharding(AsmParser &parser,
                                                   bool allowOpen) {
  SmallVector<AxisRefAttr> axes;
  bool closed;
  if (parseAxisSet(parser, axes, allowOpen, closed))
    return failure();
  int64_t priority = -1;
  StringRef keyword;
  SMLoc at = parser.getCurrentLocation();
  if (allowOpen && succeeded(parser.parseOptionalKeyword(&keyword))) {
    if (keyword.size() < 2 || keyword[0] != 'p' ||
        keyword.drop_front().getAsInteger(10, priority) ||
        (keyword.size() > 2 && keyword[1] == '0'))
      return parser.emitError(at, "expected a priority p<N>, got '")
             << keyword << "'";
  }
  return DimShardingAttr::get(parser.getContext(), axes, closed, priority);
}

Attribute AxisRefAttr::parse(AsmParser &parser, Type) {
  if (parser.parseLess())
    return {};
  FailureOr<AxisRefAttr> axis = parseAxisRef(parser);
  if (failed(axis) || parser.parseGreater())
    return {};
  return *axis;
}

void AxisRefAttr::print(AsmPrinter &printer) const {
  printer << '<';
  printAxisRef(printer, *this);
  printer << '>';
}

Attribute DimShardingAttr::parse(AsmParser &parser, Type) {
  if (parser.parseLess())
    return {};
  FailureOr<DimShardingAttr> dim = parseDimSharding(parser, true);
  if (failed(dim) || parser.parseGreater())
    return {};
  return *dim;
}

static void printDimSharding(AsmPrinter &printer, DimShardingAttr dim) {
  printAxisSet(printer, dim.getAxes(), dim.getClosed());
  if (dim.getPriority() >= 0)
    printer << 'p' << dim.getPriority();
}

void DimShardingAttr::print(AsmPrinter &printer) const {
  printer << '<';
  printDimSharding(printer, *this);
  printer << '>';
}

//===----------------------------------------------------------------------===//
// Tensor shardings
//===----------------------------------------------------------------------===//

Attribute TensorShardingAttr::parse(AsmParser &parser, Type) {
  MLIRContext *ctx = parser.getContext();
  Attribute mesh;
  if (parser.parseLess())
    return {};
  if (succeeded(parser.parseOptionalKeyword("mesh"))) {
    mesh = MeshAttr::parse(parser, {});
  } else {
    FlatSymbolRefAttr symbol;
    if (parser.parseAttribute(symbol))
      return {};
    mesh = symbol;
  }
  if (!mesh || parser.parseComma())
    return {};
  SmallVector<DimShardingAttr> dims;
  if (parser.parseCommaSeparatedList(AsmParser::Delimiter::Square, [&]() {
        FailureOr<DimShardingAttr> dim = parseDimSharding(parser, true);
        if (failed(dim))
          return failure();
        dims.push_back(*dim);
        return success();
      }))
    return {};
  SmallVector<AxisRefAttr> replicated, unreduced;
  StringAttr kind = StringAttr::get(ctx, "sum");
  bool closed;
  while (succeeded(parser.parseOptionalComma())) {
    SMLoc at = parser.getCurrentLocation();
    StringRef keyword;
    if (parser.parseKeyword(&keyword))
      return {};
    if (keyword == "replicated") {
      if (parser.parseEqual() ||
          parseAxisSet(parser, replicated, false, closed))
        return {};
    } else if (keyword == "unreduced") {
      (void)parser.parseOptionalEqual();
      StringRef reduction;
      if (succeeded(parser.parseOptionalKeyword(&reduction))) {
        if (reduction != "sum" && reduction != "max" && reduction != "min") {
          parser.emitError(at, "unreduced axes reduce with sum, max or min, "
                               "not '")
              << reduction << "'";
          return {};
        }
        kind = StringAttr::get(ctx, reduction);
      }
      if (parseAxisSet(parser, unreduced, false, closed))
        return {};
    } else {
      parser.emitError(at, "expected 'replicated' or 'unreduced', got '")
          << keyword << "'";
      return {};
    }
  }
  if (parser.parseGreater())
    return {};
  return TensorShardingAttr::get(ctx, mesh, dims, replicated, unreduced, kind);
}

void TensorShardingAttr::print(AsmPrinter &printer) const {
  printer << '<';
  if (auto mesh = dyn_cast<MeshAttr>(getMesh())) {
    printer << "mesh";
    mesh.print(printer);
  } else {
    printer.printAttribute(getMesh());
  }
  printer << ", [";
  llvm::interleaveComma(getDims(), printer, [&](DimShardingAttr dim) {
    printDimSharding(printer, dim);
  });
  printer << ']';
  if (!getReplicated().empty()) {
    printer << ", replicated=";
    printAxisSet(printer, getReplicated());
  }
  if (!getUnreduced().empty()) {
    printer << ", unreduced=";
    if (getUnreducedKind().getValue() != "sum")
      printer << getUnreducedKind().getValue();
    printAxisSet(printer, getUnreduced());
  }
  printer << '>';
}

Attribute TensorShardingPerValueAttr::parse(AsmParser &parser, Type) {
  SmallVector<TensorShardingAttr> shardings;
  if (parser.parseLess() ||
      parser.parseCommaSeparatedList(
          AsmParser::Delimiter::Square,
          [&]() {
            Attribute sharding = TensorShardingAttr::parse(parser, {});
            if (!sharding)
              return failure();
            shardings.push_back(cast<TensorShardingAttr>(sharding));
            return success();
          }) ||
      parser.parseGreater())
    return {};
  return TensorShardingPerValueAttr::get(parser.getContext(), shardings);
}

void TensorShardingPerValueAttr::print(AsmPrinter &printer) const {
  printer << "<[";
  llvm::interleaveComma(getShardings(), printer,
                        [&](TensorShardingAttr s) { s.print(printer); });
  printer << "]>";
}

//===----------------------------------------------------------------------===//
// Collectives
//===----------------------------------------------------------------------===//

/// `[{"x"}, {}]`: one closed axis set per dimension.
static ParseResult parsePerDimAxes(OpAsmParser &parser, ArrayAttr &result) {
  SmallVector<Attribute> dims;
  if (parser.parseCommaSeparatedList(AsmParser::Delimiter::Square, [&]() {
        FailureOr<DimShardingAttr> dim = parseDimSharding(parser, false);
        if (failed(dim))
          return failure();
        dims.push_back(*dim);
        return success();
      }))
    return failure();
  result = parser.getBuilder().getArrayAttr(dims);
  return success();
}

static void printPerDimAxes(OpAsmPrinter &printer, ArrayAttr dims) {
  printer << '[';
  llvm::interleaveComma(dims, printer, [&](Attribute dim) {
    printAxisSet(printer, cast<DimShardingAttr>(dim).getAxes());
  });
  printer << ']';
}

/// `%v out_sharding=<...> attr-dict : type`, shared by every collective;
/// the operand's type is the result's.
static ParseResult parseCollectiveTail(OpAsmParser &parser,
                                       OperationState &state,
                                       StringRef shardingName) {
  OpAsmParser::UnresolvedOperand operand;
  Type type;
  if (parser.parseOperand(operand) || parser.parseKeyword("out_sharding") ||
      parser.parseEqual())
    return failure();
  Attribute sharding = TensorShardingAttr::parse(parser, {});
  if (!sharding)
    return failure();
  state.addAttribute(shardingName, sharding);
  if (parser.parseOptionalAttrDict(state.attributes) ||
      parser.parseColonType(type) ||
      parser.resolveOperand(operand, type, state.operands))
    return failure();
  state.addTypes(type);
  return success();
}

static void printCollectiveTail(OpAsmPrinter &printer, Operation *op,
                                TensorShardingAttr sharding,
                                ArrayRef<StringRef> elided) {
  printer << ' ' << op->getOperand(0) << " out_sharding=";
  sharding.print(printer);
  printer.printOptionalAttrDict(op->getAttrs(), elided);
  printer << " : " << op->getResult(0).getType();
}

/// An optional reduction kind (`max`), sum by default.
static StringAttr parseKind(OpAsmParser &parser) {
  StringRef kind = "sum";
  if (succeeded(parser.parseOptionalKeyword("max")))
    kind = "max";
  else if (succeeded(parser.parseOptionalKeyword("min")))
    kind = "min";
  else
    (void)parser.parseOptionalKeyword("sum");
  return parser.getBuilder().getStringAttr(kind);
}

static void printKind(OpAsmPrinter &printer, StringRef kind) {
  if (kind != "sum")
    printer << ' ' << kind;
}

#define M2N_SDY_PER_DIM_COLLECTIVE(OP, AXES)                                   \
  ParseResult OP::parse(OpAsmParser &parser, OperationState &state) {          \
    ArrayAttr axes;                                                            \
    if (parsePerDimAxes(parser, axes))                                         \
      return failure();                                                        \
    state.addAttribute(get##AXES##AttrName(state.name), axes);                 \
    return parseCollectiveTail(parser, state,                                  \
                               getOutShardingAttrName(state.name));            \
  }                                                                            \
  void OP::print(OpAsmPrinter &printer) {                                      \
    printer << ' ';                                                            \
    printPerDimAxes(printer, get##AXES());                                     \
    printCollectiveTail(printer, *this, getOutSharding(),                      \
                        {get##AXES##AttrName(), getOutShardingAttrName()});    \
  }
M2N_SDY_PER_DIM_COLLECTIVE(AllGatherOp, GatheringAxes)
M2N_SDY_PER_DIM_COLLECTIVE(AllSliceOp, SlicingAxes)
#undef M2N_SDY_PER_DIM_COLLECTIVE

ParseResult CollectivePermuteOp::parse(OpAsmParser &parser,
                                       OperationState &state) {
  return parseCollectiveTail(parser, state, getOutShardingAttrName(state.name));
}

void CollectivePermuteOp::print(OpAsmPrinter &printer) {
  printCollectiveTail(printer, *this, getOutSharding(),
                      {getOutShardingAttrName()});
}

ParseResult AllReduceOp::parse(OpAsmParser &parser, OperationState &state) {
  state.addAttribute(getKindAttrName(state.name), parseKind(parser));
  FailureOr<DimShardingAttr> axes = parseDimSharding(parser, false);
  if (failed(axes))
    return failure();
  state.addAttribute(getReductionAxesAttrName(state.name),
                     parser.getBuilder().getArrayAttr({*axes}));
  return parseCollectiveTail(parser, state, getOutShardingAttrName(state.name));
}

void AllReduceOp::print(OpAsmPrinter &printer) {
  printKind(printer, getKind());
  printer << ' ';
  printAxisSet(printer, cast<DimShardingAttr>(getReductionAxes()[0]).getAxes());
  printCollectiveTail(printer, *this, getOutSharding(),
                      {getKindAttrName(), getReductionAxesAttrName(),
                       getOutShardingAttrName()});
}

ParseResult ReduceScatterOp::parse(OpAsmParser &parser, OperationState &state) {
  state.addAttribute(getKindAttrName(state.name), parseKind(parser));
  ArrayAttr axes;
  if (parsePerDimAxes(parser, axes))
    return failure();
  state.addAttribute(getReduceScatterAxesAttrName(state.name), axes);
  return parseCollectiveTail(parser, state, getOutShardingAttrName(state.name));
}

void ReduceScatterOp::print(OpAsmPrinter &printer) {
  printKind(printer, getKind());
  printer << ' ';
  printPerDimAxes(printer, getReduceScatterAxes());
  printCollectiveTail(printer, *this, getOutSharding(),
                      {getKindAttrName(), getReduceScatterAxesAttrName(),
                       getOutShardingAttrName()});
}

/// `[{"y"}: 1->0, {"x"}: 0->2]`: each as [axes, source dim, target dim].
ParseResult AllToAllOp::parse(OpAsmParser &parser, OperationState &state) {
  Builder &b = parser.getBuilder();
  SmallVector<Attribute> params;
  if (parser.parseCommaSeparatedList(AsmParser::Delimiter::Square, [&]() {
        FailureOr<DimShardingAttr> axes = parseDimSharding(parser, false);
        int64_t from, to;
        if (failed(axes) || parser.parseColon() || parser.parseInteger(from) ||
            parser.parseArrow() || parser.parseInteger(to))
          return failure();
        params.push_back(b.getArrayAttr(
            {*axes, b.getI64IntegerAttr(from), b.getI64IntegerAttr(to)}));
        return success();
      }))
    return failure();
  state.addAttribute(getParamsAttrName(state.name), b.getArrayAttr(params));
  return parseCollectiveTail(parser, state, getOutShardingAttrName(state.name));
}

void AllToAllOp::print(OpAsmPrinter &printer) {
  printer << " [";
  llvm::interleaveComma(getParams(), printer, [&](Attribute param) {
    auto parts = cast<ArrayAttr>(param);
    printAxisSet(printer, cast<DimShardingAttr>(parts[0]).getAxes());
    printer << ": " << cast<IntegerAttr>(parts[1]).getInt() << "->"
            << cast<IntegerAttr>(parts[2]).getInt();
  });
  printer << ']';
  printCollectiveTail(printer, *this, getOutSharding(),
                      {getParamsAttrName(), getOutShardingAttrName()});
}

//===----------------------------------------------------------------------===//
// Collective verifiers: the shapes the printers and the import rely on
//===----------------------------------------------------------------------===//

/// One axis list (a DimShardingAttr) per dimension of the tensor.
static LogicalResult verifyPerDim(Operation *op, ArrayAttr dims) {
  auto type = cast<RankedTensorType>(op->getResult(0).getType());
  if (static_cast<int64_t>(dims.size()) != type.getRank() ||
      !llvm::all_of(dims,
                    [](Attribute dim) { return isa<DimShardingAttr>(dim); }))
    return op->emitOpError("needs one axis list per dimension of the tensor");
  return success();
}

LogicalResult AllGatherOp::verify() {
  return verifyPerDim(*this, getGatheringAxes());
}
LogicalResult AllSliceOp::verify() {
  return verifyPerDim(*this, getSlicingAxes());
}
LogicalResult ReduceScatterOp::verify() {
  return verifyPerDim(*this, getReduceScatterAxes());
}
LogicalResult CollectivePermuteOp::verify() { return success(); }

LogicalResult AllReduceOp::verify() {
  if (getReductionAxes().size() != 1 ||
      !isa<DimShardingAttr>(getReductionAxes()[0]))
    return emitOpError("needs one list of reduction axes");
  if (getKind() != "sum" && getKind() != "max" && getKind() != "min")
    return emitOpError("reduces with sum, max or min, not ") << getKind();
  return success();
}

LogicalResult AllToAllOp::verify() {
  if (getParams().empty())
    return emitOpError("needs at least one {axes}: source->target");
  for (Attribute param : getParams()) {
    auto parts = dyn_cast<ArrayAttr>(param);
    if (!parts || parts.size() != 3 || !isa<DimShardingAttr>(parts[0]) ||
        !isa<IntegerAttr>(parts[1]) || !isa<IntegerAttr>(parts[2]))
      return emitOpError("each parameter is [axes, source dim, target dim]");
  }
  // Shardy's rules: a dimension is the source or the target of at most one
  // parameter (never both), and the parameters follow their source dims.
  llvm::SmallDenseSet<int64_t> used;
  for (Attribute param : getParams()) {
    auto parts = cast<ArrayAttr>(param);
    for (int64_t dim : {cast<IntegerAttr>(parts[1]).getInt(),
                        cast<IntegerAttr>(parts[2]).getInt()})
      if (!used.insert(dim).second)
        return emitOpError(
                   "overlapping source/target dimensions in all-to-all "
                   "params: ")
               << dim;
  }
  int64_t previous = -1;
  for (Attribute param : getParams()) {
    int64_t source = cast<IntegerAttr>(cast<ArrayAttr>(param)[1]).getInt();
    if (source < previous)
      return emitOpError("source dimensions are not sorted in ascending "
                         "order: ")
             << source << " appears after " << previous;
    previous = source;
  }
  return success();
}
