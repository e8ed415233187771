//===- OrderReductions.cpp - order reductions a vector reduction overlaps --===//
//
// A thin pass over m2n::orderReductions (m2n/Codegen): the schedule that is
// lowered says which reductions wait for each other, because a reduction on
// the SM path is not atomic.
//
//===----------------------------------------------------------------------===//

#include "m2n/Codegen/TransferProgram.h"
#include "m2n/Conversion/M2NToGPU/M2NToGPU.h"
#include "m2n/Dialect/M2N/IR/M2NOps.h"
#include "m2n/Dialect/M2N/Transforms/PlanInterop.h"

namespace mlir::m2n {
#define GEN_PASS_DEF_ORDERREDUCTIONS
#include "m2n/Conversion/Passes.h.inc"
} // namespace mlir::m2n

using namespace mlir;
using namespace mlir::m2n;

namespace {
struct OrderReductionsPass
    : public mlir::m2n::impl::OrderReductionsBase<OrderReductionsPass> {
  using OrderReductionsBase::OrderReductionsBase;
  template <typename LoweringPass>
  friend ::m2n::LoweringOptions
  mlir::m2n::loweringOptionsOf(const LoweringPass &pass);

  void runOnOperation() override {
    const ::m2n::LoweringOptions options = loweringOptionsOf(*this);
    if (std::optional<std::string> wrong = checkLoweringOptions(options)) {
      getOperation()->emitError("m2n-order-reductions: ") << *wrong;
      return signalPassFailure();
    }
    bool changed = false;
    WalkResult result = getOperation()->walk([&](ScheduleOp op) {
      FailureOr<LoweringInputs> in = loweringInputsOf(op);
      if (failed(in))
        return WalkResult::interrupt();
      ::m2n::Schedule ordered =
          ::m2n::orderReductions(in->schedule, in->src, in->dst, in->shape,
                                 in->type, options, in->cast);
      if (!(ordered.steps == in->schedule.steps)) {
        replaceScheduleBody(op, ordered);
        changed = true;
      }
      return WalkResult::advance();
    });
    if (result.wasInterrupted())
      return signalPassFailure();
    // Unchanged IR is not verified again (a schedule of 10^5 steps).
    if (!changed)
      markAllAnalysesPreserved();
  }
};
} // namespace
