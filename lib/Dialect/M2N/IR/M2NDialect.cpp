//===- M2NDialect.cpp - m2n dialect registration ----------------------------===//

#include "m2n/Dialect/M2N/IR/M2NDialect.h"
#include "m2n/Dialect/M2N/IR/M2NOps.h"

#include "mlir/IR/OpImplementation.h"

using namespace mlir;
using namespace mlir::m2n;

#include "m2n/Dialect/M2N/IR/M2NDialect.cpp.inc"

namespace {
/// Prints meshes, layouts and topologies as `#mesh`, `#layout`, `#topology`
/// aliases, so that types repeating a layout stay readable.
struct M2NOpAsmDialectInterface : public OpAsmDialectInterface {
  using OpAsmDialectInterface::OpAsmDialectInterface;

  AliasResult getAlias(Attribute attr, raw_ostream &os) const override {
    if (isa<MeshAttr>(attr)) {
      os << "mesh";
      return AliasResult::OverridableAlias;
    }
    if (isa<LayoutAttr>(attr)) {
      os << "layout";
      return AliasResult::OverridableAlias;
    }
    if (isa<TopologyAttr>(attr)) {
      os << "topology";
      return AliasResult::OverridableAlias;
    }
    return AliasResult::NoAlias;
  }
};
} // namespace

void M2NDialect::initialize() {
  registerAttributes();
  registerTypes();
  addOperations<
#define GET_OP_LIST
#include "m2n/Dialect/M2N/IR/M2NOps.cpp.inc"
      >();
  addInterfaces<M2NOpAsmDialectInterface>();
}

LogicalResult M2NDialect::verifyOperationAttribute(Operation *op,
                                                   NamedAttribute attr) {
  if (attr.getName() == getTopologyAttrName()) {
    if (!isa<TopologyAttr>(attr.getValue()))
      return op->emitError("'")
             << getTopologyAttrName()
             << "' must be a #m2n.topology attribute, got " << attr.getValue();
    return success();
  }
  if (attr.getName() == getKernelOpsAttrName()) {
    auto dict = dyn_cast<DictionaryAttr>(attr.getValue());
    auto codes = [&](StringRef key) {
      return dict && isa_and_nonnull<DenseI32ArrayAttr>(dict.get(key));
    };
    if (!codes("bulk") || !codes("tile") || !codes("vector") ||
        dict.size() != 3)
      return op->emitError("'")
             << getKernelOpsAttrName()
             << "' must be {bulk = array<i32>, tile = array<i32>, vector = "
                "array<i32>}, got "
             << attr.getValue();
    return success();
  }
  return op->emitError("unknown m2n attribute '")
         << attr.getName().getValue() << "'";
}
