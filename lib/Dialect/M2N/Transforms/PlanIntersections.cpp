//===- PlanIntersections.cpp - reshards to exact transfer plans -------------===//
//
// A thin pass: the algorithm lives in m2n::IntersectionPlanner (plain C++,
// shared with the runtime); this pass converts the layouts, calls it and
// writes the transfers as an m2n.plan body.
//
//===----------------------------------------------------------------------===//

#include "m2n/Dialect/M2N/Transforms/PlanInterop.h"
#include "m2n/Dialect/M2N/IR/M2NOps.h"
#include "m2n/Dialect/M2N/Transforms/Passes.h"

#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/WalkPatternRewriteDriver.h"

namespace mlir::m2n {
#define GEN_PASS_DEF_PLANINTERSECTIONS
#include "m2n/Dialect/M2N/Transforms/Passes.h.inc"
} // namespace mlir::m2n

using namespace mlir;
using namespace mlir::m2n;

namespace {
struct PlanIntersectionsPass
    : public mlir::m2n::impl::PlanIntersectionsBase<PlanIntersectionsPass> {
  void runOnOperation() override {
    // Collectives are reshards with fixed layouts: expand them first.
    RewritePatternSet patterns(&getContext());
    populateExpandCollectivesPatterns(patterns);
    walkAndApplyPatterns(getOperation(), std::move(patterns));

    SmallVector<ReshardOp> reshards;
    getOperation()->walk([&](ReshardOp op) { reshards.push_back(op); });
    for (ReshardOp op : reshards) {
      DistType src = op.getInput().getType();
      DistType dst = op.getResult().getType();
      ::m2n::Layout srcLayout = toLayout(src.getLayout());
      ::m2n::Layout dstLayout = toLayout(dst.getLayout());
      std::vector<int64_t> shape(src.getShape().begin(), src.getShape().end());
      ::m2n::ReshardPlan plan =
          ::m2n::IntersectionPlanner(srcLayout, dstLayout, shape).plan();

      OpBuilder builder(op);
      ScalingAttr scaling = op.getScalingAttr();
      auto planOp =
          scaling ? PlanOp::create(builder, op.getLoc(), dst,
                                   op.getScales().getType(), op.getInput(),
                                   op.getComm(), scaling)
                  : PlanOp::create(builder, op.getLoc(), dst, op.getInput(),
                                   op.getComm());
      planOp.setScaleAttr(op.getScaleAttr());
      // A topology attached to the reshard routes its plan.
      if (Attribute topology =
              op->getAttr(M2NDialect::getTopologyAttrName()))
        planOp->setAttr(M2NDialect::getTopologyAttrName(), topology);
      builder.setInsertionPointToStart(&planOp.getBody().front());
      buildTransfers(builder, op.getLoc(), plan);
      if (scaling)
        buildScaleOps(builder, op.getLoc(),
                      ::m2n::planScales(scaling.getValue(), srcLayout,
                                        dstLayout, shape, plan));
      op.replaceAllUsesWith(planOp);
      op.erase();
    }
  }
};
} // namespace
