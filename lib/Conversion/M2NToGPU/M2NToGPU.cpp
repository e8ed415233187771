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
#include "mlir/IR/Threading.h"

namespace mlir::m2n {
#define GEN_PASS_DEF_CONVERTTOGPU
#include "m2n/Conversion/Passes.h.inc"
} // namespace mlir::m2n

using namespace mlir;

FailureOr<mlir::m2n::ProgramTable>
mlir::m2n::collectPrograms(ModuleOp module) {
  ProgramTable table;
  // The distinct program ops and who runs them.
  std::vector<mlir::m2n::ProgramOp> &programs = table.programs;
  llvm::DenseMap<Operation *, size_t> programOf; // reshard_fn -> program
  SymbolTableCollection symbols;
  auto notLowered = [](Operation *op) {
    op->emitError() << "the " << op->getName().stripDialect()
                    << " is not lowered to per-rank programs: run "
                       "m2n-lower-schedule first";
    return WalkResult::interrupt();
  };
  auto name = [&](Operation *op) {
    auto func = op->getParentOfType<func::FuncOp>();
    return (func ? "@" + func.getSymName().str() : std::string()) + "#" +
           std::to_string(table.tensors.size());
  };
  llvm::DenseMap<Value, uint32_t> tensorOf; // A reshard's result -> tensor.
  WalkResult walk = module.walk<WalkOrder::PreOrder>([&](Operation *op) {
    // Shared programs are read through their calls.
    if (isa<mlir::m2n::ReshardFnOp>(op))
      return WalkResult::skip();
    // Members come before their group (operands dominate their users).
    if (auto group = dyn_cast<mlir::m2n::GroupOp>(op)) {
      if (!group.isMerged()) {
        group.emitError() << "group \"" << group.getName()
                          << "\" is not merged: run m2n-merge-groups first";
        return WalkResult::interrupt();
      }
      std::vector<uint32_t> members;
      for (Value member : group.getMembers()) {
        auto tensor = tensorOf.find(member);
        if (tensor == tensorOf.end()) {
          group.emitError("a member of group \"")
              << group.getName() << "\" is not lowered to a program";
          return WalkResult::interrupt();
        }
        members.push_back(tensor->second);
      }
      table.groups.emplace_back(group.getName().str(), std::move(members));
      return WalkResult::skip();
    }
    if (isa<mlir::m2n::ReshardOp, mlir::m2n::PlanOp, mlir::m2n::ScheduleOp>(
            op))
      return notLowered(op);
    if (auto program = dyn_cast<mlir::m2n::ProgramOp>(op)) {
      programs.push_back(program);
      tensorOf[program.getResult()] = table.tensors.size();
      table.tensors.emplace_back(name(op), programs.size() - 1);
      return WalkResult::advance();
    }
    auto call = dyn_cast<mlir::m2n::CallOp>(op);
    if (!call)
      return WalkResult::advance();
    auto fn = symbols.lookupNearestSymbolFrom<mlir::m2n::ReshardFnOp>(
        call, call.getCalleeAttr());
    if (!fn) {
      call.emitError() << "'" << call.getCallee()
                       << "' does not name an m2n.reshard_fn";
      return WalkResult::interrupt();
    }
    auto [it, fresh] = programOf.try_emplace(fn, programs.size());
    if (fresh) {
      auto program = dyn_cast<mlir::m2n::ProgramOp>(fn.getReshard());
      if (!program)
        return notLowered(fn.getReshard());
      programs.push_back(program);
    }
    tensorOf[call.getResult()] = table.tensors.size();
    table.tensors.emplace_back(name(op), it->second);
    return WalkResult::advance();
  });
  if (walk.wasInterrupted())
    return failure();
  // Each program is named after the first tensor that runs it.
  table.programNames.resize(programs.size());
  std::vector<bool> named(programs.size(), false);
  for (const auto &[tensor, program] : table.tensors)
    if (!named[program]) {
      named[program] = true;
      table.programNames[program] = tensor;
    }
  return table;
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
      // What the kernel items use: their mechanism, operation and element
      // types, read off the moves without converting whole programs.
      WalkResult walk = module.walk([&](Operation *op) {
        if (isa<mlir::m2n::ReshardOp, mlir::m2n::PlanOp,
                mlir::m2n::ScheduleOp>(op)) {
          op->emitError() << "the " << op->getName().stripDialect()
                          << " is not lowered to per-rank programs: run "
                             "m2n-lower-schedule first";
          return WalkResult::interrupt();
        }
        auto program = dyn_cast<mlir::m2n::ProgramOp>(op);
        if (!program)
          return WalkResult::advance();
        ::m2n::TransferProgram types;
        mlir::m2n::DistType src = program.getInput().getType();
        mlir::m2n::DistType dst = program.getResult().getType();
        types.type = mlir::m2n::toElementType(dst.getElementType())
                         .value_or(::m2n::ElementType::F32);
        if (src.getElementType() != dst.getElementType())
          types.sourceType = mlir::m2n::toElementType(src.getElementType());
        if (mlir::m2n::ScalingAttr scaling = program.getScalingAttr())
          types.scaling = scaling.getValue();
        // Scratches decide which buffers hold f32 amaxes.
        program.walk([&](mlir::m2n::ScratchOp scratch) {
          types.scratches.push_back(
              {scratch.getRank(), {}, 0, scratch.getAmaxes()});
        });
        program.walk([&](mlir::m2n::MoveOp move) {
          if (!::m2n::isKernelMechanism(move.getMechanism()))
            return;
          ops.add(mlir::m2n::toMovement(move), types);
        });
        return WalkResult::skip();
      });
      if (walk.wasInterrupted())
        return signalPassFailure();
      // A module without programs still gets a kernel that can copy.
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
