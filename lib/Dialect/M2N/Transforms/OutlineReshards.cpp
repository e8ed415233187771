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
/// The topology that routes `op`: its own or that of the nearest op around
/// it. The shared reshard carries it, so that each m2n.reshard_fn is
/// complete on its own (the pipeline runs the per-reshard passes on the
/// functions in parallel).
TopologyAttr scopedTopology(Operation *op) {
  for (Operation *scope = op; scope; scope = scope->getParentOp())
    if (auto attr = scope->getAttrOfType<TopologyAttr>(
            M2NDialect::getTopologyAttrName()))
      return attr;
  return {};
}

struct OutlineReshardsPass
    : public mlir::m2n::impl::OutlineReshardsBase<OutlineReshardsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    // Reshards at any level: hand-written plans, schedules and programs are
    // outlined too (each into a function of its own), so that every
    // reshard reaches the per-function passes.
    SmallVector<Operation *> reshards;
    module.walk<WalkOrder::PreOrder>([&](Operation *op) {
      if (isa<ReshardFnOp>(op))
        return WalkResult::skip();
      if (isa<ReshardOp, PlanOp, ScheduleOp, ProgramOp>(op)) {
        reshards.push_back(op);
        return WalkResult::skip();
      }
      return WalkResult::advance();
    });
    if (reshards.empty())
      return;
    // Per module: a reshard in a nested module is shared within it, where
    // its call finds the function.
    using Key = std::tuple<Operation *, Type, Type, Type, Attribute,
                           Attribute, Attribute>;
    llvm::DenseMap<Key, ReshardFnOp> shared;
    SymbolTableCollection symbolTables;
    OpBuilder builder(module.getContext());
    int64_t count = 0;
    for (Operation *op : reshards) {
      Value input = op->getOperand(0), comm = op->getOperand(1);
      Value result = op->getResult(0);
      TopologyAttr topology = scopedTopology(op);
      auto reshard = dyn_cast<ReshardOp>(op);
      auto scope = op->getParentOfType<ModuleOp>();
      // A quantizing reshard's scales (its second result) go with it.
      Value scales = op->getNumResults() == 2 ? op->getResult(1) : Value();
      Key key{scope,
              input.getType(),
              result.getType(),
              comm.getType(),
              reshard ? reshard.getScaleAttr() : Attribute(),
              reshard ? reshard.getScalingAttr() : Attribute(),
              topology};
      ReshardFnOp fn = reshard ? shared.lookup(key) : ReshardFnOp();
      bool fresh = !fn;
      if (fresh) {
        builder.setInsertionPointToEnd(scope.getBody());
        fn = ReshardFnOp::create(builder, op->getLoc(),
                                 "reshard_" + std::to_string(count++));
        builder.createBlock(&fn.getBody(), {},
                            {input.getType(), comm.getType()},
                            {op->getLoc(), op->getLoc()});
        // A name taken by a function of the user's gets a suffix.
        symbolTables.getSymbolTable(scope).insert(fn);
        if (reshard)
          shared[key] = fn;
      }
      builder.setInsertionPoint(op);
      auto call = CallOp::create(builder, op->getLoc(), result.getType(),
                                 scales ? scales.getType() : Type(),
                                 fn.getSymName(), input, comm);
      result.replaceAllUsesWith(call.getResult());
      if (scales)
        scales.replaceAllUsesWith(call.getScales());
      if (!fresh) {
        op->erase();
        continue;
      }
      Block *body = &fn.getBody().front();
      Operation *inner = op;
      if (reshard) {
        builder.setInsertionPointToStart(body);
        inner = ReshardOp::create(
            builder, op->getLoc(), result.getType(),
            scales ? scales.getType() : Type(), body->getArgument(0),
            body->getArgument(1), reshard.getScaleAttr(),
            reshard.getScalingAttr());
        op->erase();
      } else {
        // A plan, schedule or program keeps its body: moved, not copied.
        op->moveBefore(body, body->end());
        op->setOperands({body->getArgument(0), body->getArgument(1)});
      }
      // Schedules and programs are routed already (they carry theirs).
      if (topology && !isa<ScheduleOp, ProgramOp>(inner))
        inner->setAttr(M2NDialect::getTopologyAttrName(), topology);
      builder.setInsertionPointToEnd(body);
      YieldOp::create(builder, inner->getLoc(), inner->getResult(0),
                      scales ? inner->getResult(1) : Value());
    }
  }
};
} // namespace
