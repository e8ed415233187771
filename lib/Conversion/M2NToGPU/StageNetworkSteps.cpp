//===- StageNetworkSteps.cpp - network steps as whole NCCL transfers -------===//
//
// A thin pass over m2n::stageNetworkSteps (m2n/Codegen): the staged schedule
// is printed before m2n-lower-schedule, which lowers it as it is.
//
//===----------------------------------------------------------------------===//

#include "m2n/Codegen/TransferProgram.h"
#include "m2n/Conversion/M2NToGPU/M2NToGPU.h"
#include "m2n/Dialect/M2N/IR/LayoutInterop.h"
#include "m2n/Dialect/M2N/IR/M2NOps.h"
#include "m2n/Dialect/M2N/Transforms/PlanInterop.h"

namespace mlir::m2n {
#define GEN_PASS_DEF_STAGENETWORKSTEPS
#include "m2n/Conversion/Passes.h.inc"
} // namespace mlir::m2n

using namespace mlir;
using namespace mlir::m2n;

namespace {
struct StageNetworkStepsPass
    : public mlir::m2n::impl::StageNetworkStepsBase<StageNetworkStepsPass> {
  void runOnOperation() override {
    bool changed = false;
    WalkResult walk = getOperation()->walk([&](ScheduleOp op) {
      DistType src = op.getInput().getType(), dst = op.getResult().getType();
      ::m2n::Schedule schedule = toSchedule(op);
      if (llvm::none_of(schedule.steps, [](const ::m2n::Step &step) {
            return step.link == ::m2n::LinkClass::Network;
          }))
        return WalkResult::advance();
      std::vector<int64_t> shape(src.getShape().begin(), src.getShape().end());
      ::m2n::Schedule staged = ::m2n::stageNetworkSteps(
          schedule, toLayout(src.getLayout()), toLayout(dst.getLayout()),
          shape, src.getElementType() != dst.getElementType());
      if (staged.steps.size() != schedule.steps.size()) {
        replaceScheduleBody(op, staged);
        changed = true;
      }
      return WalkResult::advance();
    });
    if (walk.wasInterrupted())
      return signalPassFailure();
    // Unchanged IR is not verified again (a schedule of 10^5 steps).
    if (!changed)
      markAllAnalysesPreserved();
  }
};

} // namespace
