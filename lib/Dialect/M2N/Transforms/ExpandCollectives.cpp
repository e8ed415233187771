//===- ExpandCollectives.cpp - collectives to m2n.reshard -------------------===//
//
// A collective's result type already carries the destination layout that its
// verifier derived from the input layout, so the expansion is a one-to-one
// rewrite into a reshard with the same operands and result type.
//
//===----------------------------------------------------------------------===//

#include "m2n/Dialect/M2N/IR/M2NOps.h"
#include "m2n/Dialect/M2N/Transforms/Passes.h"

#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/WalkPatternRewriteDriver.h"

namespace mlir::m2n {
#define GEN_PASS_DEF_EXPANDCOLLECTIVES
#include "m2n/Dialect/M2N/Transforms/Passes.h.inc"
} // namespace mlir::m2n

using namespace mlir;
using namespace mlir::m2n;

namespace {
template <typename CollectiveOp>
struct CollectiveToReshard : public OpRewritePattern<CollectiveOp> {
  using OpRewritePattern<CollectiveOp>::OpRewritePattern;

  LogicalResult matchAndRewrite(CollectiveOp op,
                                PatternRewriter &rewriter) const override {
    rewriter.replaceOpWithNewOp<ReshardOp>(op, op.getType(), op.getInput(),
                                           op.getComm(), /*scale=*/FloatAttr());
    return success();
  }
};

struct ExpandCollectivesPass
    : public mlir::m2n::impl::ExpandCollectivesBase<ExpandCollectivesPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    populateExpandCollectivesPatterns(patterns);
    // One walk, no folding or dead-code removal: only the collectives change.
    walkAndApplyPatterns(getOperation(), std::move(patterns));
  }
};
} // namespace

void mlir::m2n::populateExpandCollectivesPatterns(RewritePatternSet &patterns) {
  patterns.add<CollectiveToReshard<AllGatherOp>,
               CollectiveToReshard<ReduceScatterOp>,
               CollectiveToReshard<AllReduceOp>,
               CollectiveToReshard<AllToAllOp>>(patterns.getContext());
}
