//===- M2NToGPU.cpp - --m2n-convert-to-gpu: the kernel an artifact needs ----===//

#include "m2n/Conversion/M2NToGPU/M2NToGPU.h"
#include "m2n/Conversion/M2NToGPU/TransferKernel.h"
#include "m2n/Dialect/M2N/IR/LayoutInterop.h"
#include "m2n/Dialect/M2N/IR/M2NOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

namespace mlir::m2n {
#define GEN_PASS_DEF_CONVERTTOGPU
#include "m2n/Conversion/Passes.h.inc"
} // namespace mlir::m2n

using namespace mlir;

::m2n::LoweringOptions mlir::m2n::ArtifactOptions::lowering() const {
  ::m2n::LoweringOptions options;
  options.maxItemBytes = stageBytes;
  options.tileBelowRunBytes = tileBelowRunBytes;
  options.vectorBelowBytes = vectorBelowBytes;
  options.copyEngine = copyEngine;
  options.engineMinBytes = engineMinBytes;
  return options;
}

FailureOr<std::vector<::m2n::CompiledReshard>>
mlir::m2n::lowerSchedules(ModuleOp module,
                          const ::m2n::LoweringOptions &options) {
  std::vector<::m2n::CompiledReshard> reshards;
  int64_t index = 0;
  WalkResult walk = module.walk([&](mlir::m2n::ScheduleOp schedule) {
    mlir::m2n::DistType src = schedule.getInput().getType();
    std::optional<::m2n::ElementType> type =
        mlir::m2n::toElementType(src.getElementType());
    if (!type) {
      schedule.emitError("element type ")
          << src.getElementType() << " has no executor yet";
      return WalkResult::interrupt();
    }
    ::m2n::CompiledReshard reshard;
    auto func = schedule->getParentOfType<func::FuncOp>();
    reshard.name = (func ? "@" + func.getSymName().str() : std::string()) +
                   "#" + std::to_string(index++);
    reshard.type = *type;
    reshard.shape.assign(src.getShape().begin(), src.getShape().end());
    reshard.src = mlir::m2n::toLayout(src.getLayout());
    reshard.dst =
        mlir::m2n::toLayout(schedule.getResult().getType().getLayout());
    reshard.strategy = schedule.getStrategy().str();
    if (std::optional<std::string> error = ::m2n::lowerSchedule(
            mlir::m2n::toSchedule(schedule), reshard.src, reshard.dst,
            reshard.shape, *type, options, reshard.program)) {
      schedule.emitError("cannot lower the schedule to kernel work items: ")
          << *error;
      return WalkResult::interrupt();
    }
    reshards.push_back(std::move(reshard));
    return WalkResult::advance();
  });
  if (walk.wasInterrupted())
    return failure();
  return reshards;
}

DictionaryAttr mlir::m2n::kernelOpsAttr(MLIRContext *context,
                                        const ::m2n::KernelOps &ops) {
  Builder b(context);
  auto codes = [&](const std::set<uint32_t> &set) {
    SmallVector<int32_t> values(set.begin(), set.end());
    return b.getDenseI32ArrayAttr(values);
  };
  SmallVector<int32_t> tiles;
  for (auto [op, rank] : ops.tile)
    tiles.push_back(static_cast<int32_t>(op * 8 + rank));
  return b.getDictionaryAttr(
      {b.getNamedAttr("bulk", codes(ops.bulk)),
       b.getNamedAttr("tile", b.getDenseI32ArrayAttr(tiles)),
       b.getNamedAttr("vector", codes(ops.vector))});
}

std::optional<::m2n::KernelOps>
mlir::m2n::parseKernelOpsAttr(DictionaryAttr attr) {
  if (!attr)
    return std::nullopt;
  auto get = [&](StringRef name) {
    return dyn_cast_or_null<DenseI32ArrayAttr>(attr.get(name));
  };
  DenseI32ArrayAttr bulk = get("bulk"), tile = get("tile"),
                    vector = get("vector");
  if (!bulk || !tile || !vector)
    return std::nullopt;
  ::m2n::KernelOps ops;
  for (int32_t code : bulk.asArrayRef())
    ops.bulk.insert(code);
  for (int32_t code : tile.asArrayRef())
    ops.tile.insert({code / 8, code % 8});
  for (int32_t code : vector.asArrayRef())
    ops.vector.insert(code);
  return ops;
}

namespace {
struct ConvertToGPUPass
    : public mlir::m2n::impl::ConvertToGPUBase<ConvertToGPUPass> {
  using ConvertToGPUBase::ConvertToGPUBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    ::m2n::KernelOps ops;
    if (kernelOps == "all") {
      ops = ::m2n::KernelOps::all();
    } else if (kernelOps == "used") {
      mlir::m2n::ArtifactOptions settings;
      settings.stageBytes = stageBytes;
      settings.tileBelowRunBytes = tileBelowRunBytes;
      settings.vectorBelowBytes = vectorBelowBytes;
      settings.copyEngine = copyEngine;
      settings.engineMinBytes = engineMinBytes;
      FailureOr<std::vector<::m2n::CompiledReshard>> reshards =
          mlir::m2n::lowerSchedules(module, settings.lowering());
      if (failed(reshards))
        return signalPassFailure();
      for (const ::m2n::CompiledReshard &reshard : *reshards)
        ops.add(reshard.program);
      // A module without schedules still gets a kernel that can copy.
      if (ops.empty())
        ops.bulk.insert(static_cast<uint32_t>(::m2n::BulkOp::Copy));
    } else {
      module.emitError("m2n-convert-to-gpu: kernel-ops must be 'used' or "
                       "'all', not '")
          << kernelOps << "'";
      return signalPassFailure();
    }
    module->setAttr(mlir::m2n::kKernelOpsAttrName,
                    mlir::m2n::kernelOpsAttr(&getContext(), ops));
    if (failed(mlir::m2n::buildTransferKernel(module, ops)))
      signalPassFailure();
  }
};
} // namespace
