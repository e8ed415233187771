//===- M2NToGPU.cpp - the TMA transfer kernel of m2n schedules --------------===//

#include "m2n/Conversion/M2NToGPU/M2NToGPU.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Parser/Parser.h"

namespace mlir::m2n {
#define GEN_PASS_DEF_CONVERTTOGPU
#include "m2n/Conversion/Passes.h.inc"
} // namespace mlir::m2n

#include "TransferKernel.inc"

using namespace mlir;

LogicalResult mlir::m2n::addTransferKernel(ModuleOp module, StringRef chip,
                                           StringRef features) {
  if (SymbolTable::lookupSymbolIn(module, kKernelModuleName))
    return success();
  std::string source(kTransferKernelSource);
  for (auto [placeholder, value] :
       {std::pair<StringRef, StringRef>{"@CHIP@", chip},
        {"@FEATURES@", features}}) {
    size_t at = source.find(placeholder.str());
    if (at == std::string::npos)
      return module.emitError("transfer kernel template lacks ")
             << placeholder;
    source.replace(at, placeholder.size(), value.str());
  }
  MLIRContext *ctx = module.getContext();
  OwningOpRef<ModuleOp> parsed =
      parseSourceString<ModuleOp>(source, ParserConfig(ctx), "m2n-transfer-kernel");
  if (!parsed)
    return module.emitError("cannot parse the transfer kernel template");
  module->setAttr(gpu::GPUDialect::getContainerModuleAttrName(),
                  UnitAttr::get(ctx));
  for (Operation &op : llvm::make_early_inc_range(parsed->getBody()->getOperations()))
    op.moveBefore(module.getBody(), module.getBody()->end());
  return success();
}

namespace {
struct ConvertToGPUPass
    : public mlir::m2n::impl::ConvertToGPUBase<ConvertToGPUPass> {
  using ConvertToGPUBase::ConvertToGPUBase;

  void runOnOperation() override {
    if (failed(mlir::m2n::addTransferKernel(getOperation(), chip, features)))
      signalPassFailure();
  }
};
} // namespace
