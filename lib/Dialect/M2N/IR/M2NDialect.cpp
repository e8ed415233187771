//===- M2NDialect.cpp - m2n dialect registration ----------------------------===//

#include "m2n/Dialect/M2N/IR/M2NDialect.h"
#include "m2n/Dialect/M2N/IR/M2NOps.h"
#include "m2n/Artifact/KernelABI.h"

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
  if (attr.getName() == getKernelLaunchAttrName()) {
    auto launch = dyn_cast<KernelLaunchAttr>(attr.getValue());
    if (!launch || !isa<ModuleOp>(op))
      return op->emitError("'")
             << getKernelLaunchAttrName()
             << "' must be a #m2n.kernel_launch attribute of a module";
    const ::m2n::KernelLaunch kernel = launch.getKernelLaunch();
    // The SM path's block is the kernel's only where it has vector ops.
    if (auto ops = op->getAttrOfType<DictionaryAttr>(getKernelOpsAttrName()))
      if (auto vector = dyn_cast_if_present<DenseI32ArrayAttr>(
              ops.get("vector")))
        if (uint32_t expected = ::m2n::smPathThreads(
                !vector.empty(),
                llvm::any_of(vector.asArrayRef(), [](int32_t code) {
                  return ::m2n::isElementWiseOp(static_cast<uint32_t>(code));
                }));
            kernel.threads != expected)
          return op->emitError("'")
                 << getKernelLaunchAttrName() << "' has "
                 << kernel.threads << " threads but the kernel "
                 << (vector.empty() ? "has no vector ops"
                     : expected == 256 ? "has reducing or quantizing vector ops"
                                       : "has vector ops")
                 << " (" << expected << ")";
    // Every rank's launch fits the kernel (the moves are not visited).
    Operation *wrong = nullptr;
    std::string message;
    op->walk<WalkOrder::PreOrder>([&](Operation *inner) {
      LaunchAttr rankLaunch;
      if (auto rank = dyn_cast<RankOp>(inner))
        rankLaunch = rank.getLaunchAttr();
      else if (auto groupRank = dyn_cast<GroupRankOp>(inner))
        rankLaunch = groupRank.getLaunchAttr();
      else
        return WalkResult::advance();
      if (rankLaunch)
        if (std::optional<std::string> bad =
                ::m2n::checkLaunch(kernel, rankLaunch.getRankLaunch())) {
          wrong = inner;
          message = *bad;
          return WalkResult::interrupt();
        }
      return WalkResult::skip();
    });
    if (wrong)
      return wrong->emitOpError() << message;
    return success();
  }
  return op->emitError("unknown m2n attribute '")
         << attr.getName().getValue() << "'";
}
