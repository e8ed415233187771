//===- MpmdDialect.cpp - mpmd's syntax for the subset m2n imports -------===//
//
// Shardy's MPMD types and attributes (openxla/shardy, mpmd/ir):
//   mesh_tensor  !mpmd.mesh_tensor<"m1", tensor<...>, sharding=<...>,
//                memory_kind="...">
//   topology     #mpmd.topology<<"m1": <["x"=2]>>, ...>
// The ops (transfer, assign, unassign) are in ShardyDialect.cpp, with the
// generated definitions of every op of both dialects.
//
//===----------------------------------------------------------------------===//

#include "m2n/Dialect/Shardy/ShardyDialect.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::m2n::sdy;
using namespace mlir::m2n::mpmd;

#include "m2n/Dialect/Shardy/MpmdDialect.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "m2n/Dialect/Shardy/MpmdAttrs.cpp.inc"
#define GET_TYPEDEF_CLASSES
#include "m2n/Dialect/Shardy/MpmdTypes.cpp.inc"

void MpmdDialect::initialize() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "m2n/Dialect/Shardy/MpmdAttrs.cpp.inc"
      >();
  addTypes<
#define GET_TYPEDEF_LIST
#include "m2n/Dialect/Shardy/MpmdTypes.cpp.inc"
      >();
  addOperations<TransferOp, AssignOp, UnassignOp, FragmentOp, ReturnOp>();
}

//===----------------------------------------------------------------------===//
// mpmd
//===----------------------------------------------------------------------===//

Attribute TopologyAttr::parse(AsmParser &parser, Type) {
  SmallVector<Attribute> names;
  SmallVector<MeshAttr> meshes;
  if (parser.parseLess() || parser.parseCommaSeparatedList([&]() {
        std::string name;
        if (parser.parseLess() || parser.parseString(&name) ||
            parser.parseColon())
          return failure();
        Attribute mesh = MeshAttr::parse(parser, {});
        if (!mesh || parser.parseGreater())
          return failure();
        names.push_back(parser.getBuilder().getStringAttr(name));
        meshes.push_back(cast<MeshAttr>(mesh));
        return success();
      }) ||
      parser.parseGreater())
    return {};
  return TopologyAttr::get(parser.getContext(),
                           parser.getBuilder().getArrayAttr(names), meshes);
}

void TopologyAttr::print(AsmPrinter &printer) const {
  printer << '<';
  for (auto [index, name] : llvm::enumerate(getNames())) {
    if (index)
      printer << ", ";
    printer << '<';
    printer.printString(cast<StringAttr>(name).getValue());
    printer << " : ";
    getMeshes()[index].print(printer);
    printer << '>';
  }
  printer << '>';
}

Type MeshTensorType::parse(AsmParser &parser) {
  std::string mesh;
  RankedTensorType tensor;
  TensorShardingAttr sharding;
  StringAttr memoryKind;
  if (parser.parseLess() || parser.parseString(&mesh) || parser.parseComma() ||
      parser.parseType(tensor))
    return {};
  while (succeeded(parser.parseOptionalComma())) {
    SMLoc at = parser.getCurrentLocation();
    StringRef keyword;
    if (parser.parseKeyword(&keyword) || parser.parseEqual())
      return {};
    if (keyword == "sharding") {
      sharding = dyn_cast_or_null<TensorShardingAttr>(
          TensorShardingAttr::parse(parser, {}));
      if (!sharding)
        return {};
    } else if (keyword == "memory_kind") {
      std::string kind;
      if (parser.parseString(&kind))
        return {};
      memoryKind = parser.getBuilder().getStringAttr(kind);
    } else {
      parser.emitError(at, "expected 'sharding' or 'memory_kind', got '")
          << keyword << "'";
      return {};
    }
  }
  if (parser.parseGreater())
    return {};
  return MeshTensorType::get(parser.getContext(),
                             parser.getBuilder().getStringAttr(mesh), tensor,
                             sharding, memoryKind);
}

void MeshTensorType::print(AsmPrinter &printer) const {
  printer << '<';
  printer.printString(getMeshName().getValue());
  printer << ", " << getRankedTensorType();
  if (getSharding()) {
    printer << ", sharding=";
    getSharding().print(printer);
  }
  if (getMemoryKind()) {
    printer << ", memory_kind=";
    printer.printString(getMemoryKind().getValue());
  }
  printer << '>';
}

//===----------------------------------------------------------------------===//
// Fragments
//===----------------------------------------------------------------------===//

/// `[<sharding>, ...]`
static ParseResult parseShardingList(AsmParser &parser, ArrayAttr &result) {
  SmallVector<Attribute> shardings;
  if (parser.parseCommaSeparatedList(AsmParser::Delimiter::Square, [&]() {
        Attribute sharding = TensorShardingAttr::parse(parser, {});
        if (!sharding)
          return failure();
        shardings.push_back(sharding);
        return success();
      }))
    return failure();
  result = parser.getBuilder().getArrayAttr(shardings);
  return success();
}

static void printShardingList(AsmPrinter &printer, ArrayAttr shardings) {
  printer << '[';
  llvm::interleaveComma(shardings, printer, [&](Attribute sharding) {
    cast<TensorShardingAttr>(sharding).print(printer);
  });
  printer << ']';
}

ParseResult FragmentOp::parse(OpAsmParser &parser, OperationState &state) {
  Builder &b = parser.getBuilder();
  std::string mesh;
  SmallVector<Attribute> origins;
  if (parser.parseLess() || parser.parseKeyword("mesh") ||
      parser.parseEqual() || parser.parseString(&mesh) || parser.parseComma() ||
      parser.parseKeyword("origin") || parser.parseEqual() ||
      parser.parseCommaSeparatedList(AsmParser::Delimiter::Square, [&]() {
        std::string name;
        int64_t transposes = 0;
        if (parser.parseString(&name))
          return failure();
        if (succeeded(parser.parseOptionalLParen()) &&
            (parser.parseInteger(transposes) || parser.parseRParen()))
          return failure();
        origins.push_back(b.getArrayAttr(
            {b.getStringAttr(name), b.getI64IntegerAttr(transposes)}));
        return success();
      }))
    return failure();
  state.addAttribute(getMeshNameAttrName(state.name), b.getStringAttr(mesh));
  state.addAttribute(getOriginAttrName(state.name), b.getArrayAttr(origins));
  while (succeeded(parser.parseOptionalComma())) {
    StringRef keyword;
    SMLoc at = parser.getCurrentLocation();
    if (parser.parseKeyword(&keyword) || parser.parseEqual())
      return failure();
    if (keyword == "stage") {
      int64_t stage;
      if (parser.parseInteger(stage))
        return failure();
      state.addAttribute(getStageIdAttrName(state.name),
                         b.getI64IntegerAttr(stage));
    } else if (keyword == "in_shardings" || keyword == "out_shardings") {
      ArrayAttr shardings;
      if (parseShardingList(parser, shardings))
        return failure();
      state.addAttribute(keyword == "in_shardings"
                             ? getInShardingsAttrName(state.name)
                             : getOutShardingsAttrName(state.name),
                         shardings);
    } else {
      return parser.emitError(at, "expected 'stage', 'in_shardings' or "
                                  "'out_shardings', got '")
             << keyword << "'";
    }
  }
  SmallVector<OpAsmParser::UnresolvedOperand> operands;
  SmallVector<OpAsmParser::Argument> arguments;
  FunctionType type;
  Region *body = state.addRegion();
  if (parser.parseGreater() ||
      parser.parseOperandList(operands, AsmParser::Delimiter::Paren) ||
      parser.parseOptionalAttrDict(state.attributes) ||
      parser.parseArgumentList(arguments, AsmParser::Delimiter::Paren,
                               /*allowType=*/true) ||
      parser.parseRegion(*body, arguments) || parser.parseColonType(type) ||
      parser.resolveOperands(operands, type.getInputs(),
                             parser.getCurrentLocation(), state.operands))
    return failure();
  FragmentOp::ensureTerminator(*body, b, state.location);
  state.addTypes(type.getResults());
  return success();
}

void FragmentOp::print(OpAsmPrinter &printer) {
  printer << "<mesh=";
  printer.printString(getMeshName());
  printer << ", origin=[";
  llvm::interleaveComma(getOrigin(), printer, [&](Attribute origin) {
    auto parts = cast<ArrayAttr>(origin);
    printer.printString(cast<StringAttr>(parts[0]).getValue());
    if (int64_t transposes = cast<IntegerAttr>(parts[1]).getInt())
      printer << '(' << transposes << ')';
  });
  printer << ']';
  if (getStageId())
    printer << ", stage=" << *getStageId();
  if (getInShardings()) {
    printer << ", in_shardings=";
    printShardingList(printer, *getInShardings());
  }
  if (getOutShardings()) {
    printer << ", out_shardings=";
    printShardingList(printer, *getOutShardings());
  }
  printer << "> (" << getInputs() << ')';
  printer.printOptionalAttrDict((*this)->getAttrs(),
                                {getMeshNameAttrName(), getOriginAttrName(),
                                 getStageIdAttrName(), getInShardingsAttrName(),
                                 getOutShardingsAttrName()});
  printer << " (";
  llvm::interleaveComma(
      getRegion().getArguments(), printer,
      [&](BlockArgument argument) { printer.printRegionArgument(argument); });
  printer << ") ";
  printer.printRegion(getRegion(), /*printEntryBlockArgs=*/false);
  printer << " : ";
  printer.printFunctionalType(getInputs().getTypes(), getResultTypes());
}
