//===- VerifySchedule.cpp - m2n.schedule delivers exactly the destination --===//

#include "m2n/Dialect/M2N/IR/M2NOps.h"
#include "m2n/Dialect/M2N/Transforms/Passes.h"
#include "m2n/Dialect/M2N/Transforms/PlanInterop.h"
#include "m2n/Route/VerifySchedule.h"

namespace mlir::m2n {
#define GEN_PASS_DEF_VERIFYSCHEDULE
#include "m2n/Dialect/M2N/Transforms/Passes.h.inc"
} // namespace mlir::m2n

using namespace mlir;
using namespace mlir::m2n;

namespace {
struct VerifySchedulePass
    : public mlir::m2n::impl::VerifyScheduleBase<VerifySchedulePass> {
  void runOnOperation() override {
    bool failedAny = false;
    getOperation()->walk([&](ScheduleOp schedule) {
      DistType src = schedule.getInput().getType();
      std::vector<int64_t> shape(src.getShape().begin(), src.getShape().end());
      std::optional<::m2n::ScheduleIssue> issue = ::m2n::verifySchedule(
          toSchedule(schedule), toLayout(src.getLayout()),
          toLayout(schedule.getResult().getType().getLayout()), shape);
      if (!issue)
        return;
      failedAny = true;
      SmallVector<StepOp> steps(schedule.getBody().front().getOps<StepOp>());
      if (issue->step >= 0 && issue->step < static_cast<int64_t>(steps.size()))
        steps[issue->step].emitError(issue->message);
      else
        schedule.emitError(issue->message);
    });
    if (failedAny)
      signalPassFailure();
    markAllAnalysesPreserved();
  }
};
} // namespace
