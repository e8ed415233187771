//===- OutlineReshards.cpp - one m2n.reshard_fn per distinct reshard -------===//
//
// Reshards are keyed by what their program depends on: the input and result
// types (layouts, shape, element types), the communicator's type, the scale
// and the topology that routes them. Types and attributes are uniqued, so
// the key is a tuple of pointers.
//
//===----------------------------------------------------------------------===//

#include "m2n/Dialect/M2N/IR/M2NOps.h"
#include "m2n/Dialect/M2N/Transforms/Passes.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/DenseMap.h"

#include <tuple>

namespace mlir::m2n {
#define GEN_PASS_DEF_OUTLINERESHARDS
#include "m2n/Dialect/M2N/Transforms/Passes.h.inc"
} // namespace mlir::m2n

using namespace mlir;
using namespace mlir::m2n;

namespace {
/// The topology attached to `op` or to an op around it below the module
/// (the module's own attribute reaches the shared reshard as it is).
TopologyAttr scopedTopology(Operation *op) {
  for (Operation *scope = op; scope && !isa<ModuleOp>(scope);
       scope = scope->getParentOp())
    if (auto attr = scope->getAttrOfType<TopologyAttr>(
            M2NDialect::getTopologyAttrName()))
      return attr;
  return {};
}

struct OutlineReshardsPass
    : public mlir::m2n::impl::OutlineReshardsBase<OutlineReshardsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<ReshardOp> reshards;
    module.walk([&](ReshardOp op) {
      if (!op->getParentOfType<ReshardFnOp>())
        reshards.push_back(op);
    });
    if (reshards.empty())
      return;

    using Key = std::tuple<Type, Type, Type, Attribute, Attribute>;
    llvm::DenseMap<Key, ReshardFnOp> shared;
    SymbolTable symbols(module);
    OpBuilder builder(module.getContext());
    for (ReshardOp op : reshards) {
      TopologyAttr topology = scopedTopology(op);
      Key key{op.getInput().getType(), op.getResult().getType(),
              op.getComm().getType(), op.getScaleAttr(), topology};
      ReshardFnOp &fn = shared[key];
      if (!fn) {
        builder.setInsertionPointToEnd(module.getBody());
        fn = ReshardFnOp::create(builder, op.getLoc(), "reshard_" +
                                 std::to_string(shared.size() - 1));
        Block *body = builder.createBlock(
            &fn.getBody(), {},
            {op.getInput().getType(), op.getComm().getType()},
            {op.getLoc(), op.getLoc()});
        builder.setInsertionPointToStart(body);
        auto inner = ReshardOp::create(
            builder, op.getLoc(), op.getResult().getType(),
            body->getArgument(0), body->getArgument(1), op.getScaleAttr());
        if (topology)
          inner->setAttr(M2NDialect::getTopologyAttrName(), topology);
        YieldOp::create(builder, op.getLoc(), inner.getResult());
        // A name taken by a function of the user's gets a suffix.
        symbols.insert(fn);
      }
      builder.setInsertionPoint(op);
      auto call = CallOp::create(builder, op.getLoc(), op.getResult().getType(),
                                 fn.getSymName(), op.getInput(), op.getComm());
      op.getResult().replaceAllUsesWith(call.getResult());
      op.erase();
    }
  }
};
} // namespace
