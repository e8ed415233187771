//===- OrderSteps.cpp - schedule steps numbered in emission order ----------===//
//
// A thin pass over m2n::inEmissionOrder (m2n/Codegen): the step numbers the
// runtime posts network transfers by are in the printed schedule.
//
//===----------------------------------------------------------------------===//

#include "m2n/Codegen/TransferProgram.h"
#include "m2n/Conversion/M2NToGPU/M2NToGPU.h"
#include "m2n/Dialect/M2N/IR/LayoutInterop.h"
#include "m2n/Dialect/M2N/IR/M2NOps.h"
#include "m2n/Dialect/M2N/Transforms/PlanInterop.h"

namespace mlir::m2n {
#define GEN_PASS_DEF_ORDERSTEPS
#include "m2n/Conversion/Passes.h.inc"
} // namespace mlir::m2n

using namespace mlir;
using namespace mlir::m2n;

namespace {
struct OrderStepsPass
    : public mlir::m2n::impl::OrderStepsBase<OrderStepsPass> {
  void runOnOperation() override {
    bool changed = false;
    WalkResult walk = getOperation()->walk([&](ScheduleOp op) {
      ::m2n::Schedule schedule = toSchedule(op);
      if (!::m2n::isInEmissionOrder(schedule)) {
        replaceScheduleBody(op, ::m2n::inEmissionOrder(std::move(schedule)));
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
