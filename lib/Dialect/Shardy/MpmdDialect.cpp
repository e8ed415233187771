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
  addOperations<TransferOp, AssignOp, UnassignOp>();
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
    printer << "<\"" << cast<StringAttr>(name).getValue() << "\" : ";
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
  printer << "<\"" << getMeshName().getValue() << "\", "
          << getRankedTensorType();
  if (getSharding()) {
    printer << ", sharding=";
    getSharding().print(printer);
  }
  if (getMemoryKind())
    printer << ", memory_kind=\"" << getMemoryKind().getValue() << '"';
  printer << '>';
}
