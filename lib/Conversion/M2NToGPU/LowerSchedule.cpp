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

namespace {
struct LowerSchedulePass
    : public mlir::m2n::impl::LowerScheduleBase<LowerSchedulePass> {
  using LowerScheduleBase::LowerScheduleBase;

  void runOnOperation() override {
    ::m2n::LoweringOptions options;
    options.maxItemBytes = stageBytes;
    options.tileBelowRunBytes = tileBelowRunBytes;
    options.vectorBelowBytes = vectorBelowBytes;
    options.copyEngine = copyEngine;
    options.engineMinBytes = engineMinBytes;
    options.bufferAlignment = bufferAlign;
    if (std::optional<std::string> wrong =
            ::m2n::checkBufferAlignment(bufferAlign)) {
      getOperation()->emitError("m2n-lower-schedule: buffer-align: ") << *wrong;
      return signalPassFailure();
    }
    if (tileBelowRunBytes < 0 || vectorBelowBytes < 0 || engineMinBytes < 0) {
      getOperation()->emitError("m2n-lower-schedule: tile-below-run-bytes, "
                               "vector-below-bytes and engine-min-bytes must "
                               "not be negative");
      return signalPassFailure();
    }
    SmallVector<ScheduleOp> schedules;
    getOperation()->walk([&](ScheduleOp op) { schedules.push_back(op); });
    for (ScheduleOp schedule : schedules) {
      DistType src = schedule.getInput().getType();
      DistType dst = schedule.getResult().getType();
      std::optional<::m2n::ElementType> type =
          toElementType(dst.getElementType());
      std::optional<::m2n::ElementType> sourceType =
          toElementType(src.getElementType());
      if (!type || !sourceType) {
        schedule.emitError("element type ")
            << (type ? src : dst).getElementType() << " has no executor yet";
        return signalPassFailure();
      }
      std::optional<::m2n::ElementCast> cast;
      if (*sourceType != *type) {
        cast = ::m2n::ElementCast{*sourceType, 1.0f};
        if (FloatAttr scale = schedule.getScaleAttr())
          cast->scale = static_cast<float>(scale.getValueAsDouble());
      }
      std::vector<int64_t> shape(src.getShape().begin(), src.getShape().end());
      ::m2n::TransferProgram program;
      if (std::optional<std::string> error = ::m2n::lowerPreparedSchedule(
              toSchedule(schedule), toLayout(src.getLayout()),
              toLayout(dst.getLayout()), shape, *type, options, program,
              cast)) {
        schedule.emitError("cannot lower the schedule to per-rank programs: ")
            << *error;
        return signalPassFailure();
      }
      OpBuilder builder(schedule);
      auto lowered = ProgramOp::create(
          builder, schedule.getLoc(), schedule.getResult().getType(),
          schedule.getInput(), schedule.getComm(), schedule.getStrategy(),
          program.bufferAlignment);
      lowered.setScaleAttr(schedule.getScaleAttr());
      builder.setInsertionPointToEnd(&lowered.getBody().front());
      buildProgram(builder, schedule.getLoc(), program);
      schedule.getResult().replaceAllUsesWith(lowered.getResult());
      schedule.erase();
      // The pass manager verifies the programs (a lowering bug is named on
      // the move).
    }
  }
};
} // namespace
