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
      std::vector<::m2n::PlanIssue> issues = ::m2n::verifyPlan(
          toLayout(src.getLayout()),
          toLayout(plan.getResult().getType().getLayout()), shape,
          toReshardPlan(plan));
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
