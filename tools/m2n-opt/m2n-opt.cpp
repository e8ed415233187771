//===- m2n-opt.cpp - m2n optimizer driver -----------------------------------===//
//
// Parses, verifies and transforms IR with the m2n dialect and the upstream
// dialects that the m2n pipeline lowers through.
//
//===----------------------------------------------------------------------===//

#include "m2n/Dialect/Shardy/ShardyDialect.h"
#include "m2n/Conversion/Passes.h"
#include "m2n/Dialect/M2N/IR/M2NDialect.h"
#include "m2n/Dialect/M2N/Transforms/Passes.h"

#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Shard/IR/ShardDialect.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "mlir/Transforms/Passes.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Target/LLVM/NVVM/Target.h"
#include "mlir/Target/LLVMIR/Dialect/All.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlow.h"
#include "mlir/Dialect/Index/IR/IndexDialect.h"

int main(int argc, char **argv) {
  mlir::DialectRegistry registry;
  registry.insert<mlir::m2n::M2NDialect, mlir::func::FuncDialect,
                  mlir::arith::ArithDialect, mlir::memref::MemRefDialect,
                  mlir::scf::SCFDialect, mlir::gpu::GPUDialect,
                  mlir::nvgpu::NVGPUDialect, mlir::NVVM::NVVMDialect,
                  mlir::LLVM::LLVMDialect, mlir::shard::ShardDialect, mlir::m2n::sdy::SdyDialect,
                  mlir::m2n::mpmd::MpmdDialect,
                  mlir::cf::ControlFlowDialect, mlir::index::IndexDialect,
                  mlir::tensor::TensorDialect>();
  // Lowering the kernels to NVVM and serializing them to PTX.
  mlir::registerAllExtensions(registry);
  mlir::NVVM::registerNVVMTargetInterfaceExternalModels(registry);
  mlir::registerAllGPUToLLVMIRTranslations(registry);

  mlir::registerAllPasses();
  mlir::m2n::registerM2NPasses();
  mlir::m2n::registerM2NConversionPasses();
  mlir::m2n::registerM2NPipeline();

  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "m2n optimizer driver\n", registry));
}
