//===- VerifyPlan.cpp - bounds and exact coverage of m2n.plan ---------------===//

#include "m2n/Dialect/M2N/Transforms/PlanInterop.h"
#include "m2n/Dialect/M2N/IR/M2NOps.h"
#include "m2n/Dialect/M2N/Transforms/Passes.h"

namespace mlir::m2n {
#define GEN_PASS_DEF_VERIFYPLAN
#include "m2n/Dialect/M2N/Transforms/Passes.h.inc"
} // namespace mlir::m2n

using namespace mlir;
using namespace mlir::m2n;

namespace {
struct VerifyPlanPass : public mlir::m2n::impl::VerifyPlanBase<VerifyPlanPass> {
  void runOnOperation() override {
    bool failedAny = false;
    getOperation()->walk([&](PlanOp plan) {
      DistType src = plan.getInput().getType();
      std::vector<int64_t> shape(src.getShape().begin(), src.getShape().end());
      ::m2n::Layout srcLayout = toLayout(src.getLayout());
      ::m2n::Layout dstLayout = toLayout(plan.getResult().getType().getLayout());
      ::m2n::ReshardPlan reshardPlan = toReshardPlan(plan);
      std::vector<::m2n::PlanIssue> issues =
          ::m2n::verifyPlan(srcLayout, dstLayout, shape, reshardPlan);
      // A quantizing plan's amax shares and exchange (docs/fp8-scaling.md).
      if (issues.empty() && plan.getScalingAttr()) {
        std::vector<::m2n::PlanIssue> scaleIssues = ::m2n::verifyScalePlan(
            plan.getScalingAttr().getValue(), srcLayout, dstLayout, shape,
            reshardPlan, toScalePlan(plan));
        if (!scaleIssues.empty()) {
          failedAny = true;
          SmallVector<ExchangeOp> exchanges(
              plan.getBody().front().getOps<ExchangeOp>());
          for (const ::m2n::PlanIssue &issue : scaleIssues) {
            if (issue.transfer >= 0)
              exchanges[issue.transfer].emitError(issue.message);
            else
              plan.emitError(issue.message);
          }
          return;
        }
      }
      if (issues.empty())
        return;
      failedAny = true;
      SmallVector<TransferOp> transfers(
          plan.getBody().front().getOps<TransferOp>());
      for (const ::m2n::PlanIssue &issue : issues) {
        if (issue.transfer >= 0)
          transfers[issue.transfer].emitError(issue.message);
        else
          plan.emitError(issue.message);
      }
    });
    if (failedAny)
      signalPassFailure();
    markAllAnalysesPreserved();
  }
};
} // namespace
