//===- Registration.cpp - the dialects an m2n compilation goes through ----===//
//
// One list for m2n-opt and the compiler library (the Python JIT, m2n-refit,
// m2n-run): the inputs m2n reads (its own dialect, func, the shard dialect
// and the Shardy/MPMD subset that --m2n-import-shard reads) and what the
// pipeline lowers the transfer kernel through (gpu, scf, arith, memref, cf,
// index, NVVM, LLVM) with their conversion interfaces and the translation
// to LLVM IR that serializes the kernel. Not all of MLIR: each dialect and
// extension registered costs the first compile of a process its share.
//
//===----------------------------------------------------------------------===//

#include "m2n/Conversion/Passes.h"
#include "m2n/Dialect/M2N/IR/M2NDialect.h"
#include "m2n/Dialect/Shardy/ShardyDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlow.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Index/IR/IndexDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Shard/IR/ShardDialect.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Conversion/ArithToLLVM/ArithToLLVM.h"
#include "mlir/Conversion/ControlFlowToLLVM/ControlFlowToLLVM.h"
#include "mlir/Conversion/FuncToLLVM/ConvertFuncToLLVM.h"
#include "mlir/Conversion/GPUCommon/GPUToLLVM.h"
#include "mlir/Conversion/IndexToLLVM/IndexToLLVM.h"
#include "mlir/Conversion/MemRefToLLVM/MemRefToLLVM.h"
#include "mlir/Conversion/NVVMToLLVM/NVVMToLLVM.h"
#include "mlir/Conversion/UBToLLVM/UBToLLVM.h"
#include "mlir/Target/LLVM/NVVM/Target.h"
#include "mlir/Target/LLVMIR/Dialect/All.h"

void mlir::m2n::registerPipelineDialects(DialectRegistry &registry) {
  registry.insert<M2NDialect, sdy::SdyDialect, mpmd::MpmdDialect,
                  func::FuncDialect, shard::ShardDialect, tensor::TensorDialect,
                  arith::ArithDialect, memref::MemRefDialect, scf::SCFDialect,
                  cf::ControlFlowDialect, index::IndexDialect, gpu::GPUDialect,
                  nvgpu::NVGPUDialect, NVVM::NVVMDialect, LLVM::LLVMDialect>();
  // What convert-gpu-to-nvvm and convert-nvvm-to-llvm take from the
  // kernel's dialects (ConvertToLLVMPatternInterface), not every extension
  // of MLIR's: each is offered to every dialect a context loads.
  arith::registerConvertArithToLLVMInterface(registry);
  cf::registerConvertControlFlowToLLVMInterface(registry);
  registerConvertFuncToLLVMInterface(registry);
  gpu::registerConvertGpuToLLVMInterface(registry);
  index::registerConvertIndexToLLVMInterface(registry);
  registerConvertMemRefToLLVMInterface(registry);
  registerConvertNVVMToLLVMInterface(registry);
  ub::registerConvertUBToLLVMInterface(registry);
  NVVM::registerNVVMTargetInterfaceExternalModels(registry);
  registerAllGPUToLLVMIRTranslations(registry);
}
