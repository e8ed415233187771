//===- LowerSchedule.cpp - --m2n-lower-schedule: the program level ---------===//
//
// Each m2n.schedule becomes an m2n.program with the same operands and
// result: m2n::lowerSchedule picks a mechanism for every run or tile of every
// step and turns dependencies into counters; the op records its result, so
// the kernel generator and the artifact writer only translate it.
//
//===----------------------------------------------------------------------===//

#include "m2n/Codegen/TransferProgram.h"
#include "m2n/Conversion/M2NToGPU/M2NToGPU.h"
#include "m2n/Dialect/M2N/IR/M2NOps.h"
#include "m2n/Dialect/M2N/Transforms/PlanInterop.h"

namespace mlir::m2n {
#define GEN_PASS_DEF_LOWERSCHEDULE
#include "m2n/Conversion/Passes.h.inc"
} // namespace mlir::m2n

using namespace mlir;
using namespace mlir::m2n;

FailureOr<LoweringInputs> mlir::m2n::loweringInputsOf(ScheduleOp schedule) {
  DistType src = schedule.getInput().getType();
  DistType dst = schedule.getResult().getType();
  std::optional<::m2n::ElementType> type = toElementType(dst.getElementType());
  std::optional<::m2n::ElementType> sourceType =
      toElementType(src.getElementType());
  if (!type || !sourceType)
    return schedule.emitError("element type ")
           << (type ? src : dst).getElementType() << " has no executor yet";
  LoweringInputs inputs{toSchedule(schedule), toLayout(src.getLayout()),
                        toLayout(dst.getLayout()),
                        std::vector<int64_t>(src.getShape().begin(),
                                             src.getShape().end()),
                        *type, std::nullopt};
  if (*sourceType != *type) {
    inputs.cast = ::m2n::ElementCast{*sourceType, 1.0f};
    if (FloatAttr scale = schedule.getScaleAttr())
      inputs.cast->scale = static_cast<float>(scale.getValueAsDouble());
  }
  return inputs;
}

std::optional<std::string>
mlir::m2n::checkLoweringOptions(const ::m2n::LoweringOptions &options) {
  if (std::optional<std::string> wrong =
          ::m2n::checkBufferAlignment(options.bufferAlignment))
    return "buffer-align: " + *wrong;
  if (options.tileBelowRunBytes < 0 || options.vectorBelowBytes < 0 ||
      options.engineMinBytes < 0)
    return "tile-below-run-bytes, vector-below-bytes and engine-min-bytes "
           "must not be negative";
  if (options.kernelCtas < 1)
    return "kernel-ctas must be positive, got " +
           std::to_string(options.kernelCtas);
  return std::nullopt;
}

namespace {
struct LowerSchedulePass
    : public mlir::m2n::impl::LowerScheduleBase<LowerSchedulePass> {
  using LowerScheduleBase::LowerScheduleBase;
  template <typename LoweringPass>
  friend ::m2n::LoweringOptions
  mlir::m2n::loweringOptionsOf(const LoweringPass &pass);

  void runOnOperation() override {
    const ::m2n::LoweringOptions options = loweringOptionsOf(*this);
    if (std::optional<std::string> wrong = checkLoweringOptions(options)) {
      getOperation()->emitError("m2n-lower-schedule: ") << *wrong;
      return signalPassFailure();
    }
    SmallVector<ScheduleOp> schedules;
    getOperation()->walk([&](ScheduleOp op) { schedules.push_back(op); });
    for (ScheduleOp schedule : schedules) {
      FailureOr<LoweringInputs> in = loweringInputsOf(schedule);
      if (failed(in))
        return signalPassFailure();
      ::m2n::TransferProgram program;
      if (std::optional<std::string> error = ::m2n::lowerPreparedSchedule(
              in->schedule, in->src, in->dst, in->shape, in->type, options,
              program, in->cast)) {
        schedule.emitError("cannot lower the schedule to per-rank programs: ")
            << *error;
        return signalPassFailure();
      }
      OpBuilder builder(schedule);
      ProgramOp lowered =
          schedule.getScales()
              ? ProgramOp::create(builder, schedule.getLoc(),
                                  schedule.getResult().getType(),
                                  schedule.getScales().getType(),
                                  schedule.getInput(), schedule.getComm(),
                                  schedule.getStrategy(),
                                  program.bufferAlignment,
                                  schedule.getScalingAttr())
              : ProgramOp::create(builder, schedule.getLoc(),
                                  schedule.getResult().getType(),
                                  schedule.getInput(), schedule.getComm(),
                                  schedule.getStrategy(),
                                  program.bufferAlignment);
      lowered.setScaleAttr(schedule.getScaleAttr());
      builder.setInsertionPointToEnd(&lowered.getBody().front());
      buildProgram(builder, schedule.getLoc(), program);
      schedule.getResult().replaceAllUsesWith(lowered.getResult());
      if (Value scales = schedule.getScales())
        scales.replaceAllUsesWith(lowered.getScales());
      schedule.erase();
      // The pass manager verifies the programs (a lowering bug is named on
      // the move).
    }
  }
};
} // namespace
