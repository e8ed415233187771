//===- M2NToGPU.h - m2n schedules to GPU kernels ----------------*- C++ -*-===//

#ifndef M2N_CONVERSION_M2NTOGPU_M2NTOGPU_H
#define M2N_CONVERSION_M2NTOGPU_M2NTOGPU_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace mlir::m2n {

#define GEN_PASS_DECL_CONVERTTOGPU
#define GEN_PASS_DECL_WRITEARTIFACT
#include "m2n/Conversion/Passes.h.inc"

/// Name of the gpu.module holding m2n's kernels, and of the transfer kernel.
constexpr llvm::StringLiteral kKernelModuleName = "m2n_kernels";
constexpr llvm::StringLiteral kTransferKernelName = "m2n_transfer";

/// How buildArtifact lowers schedules and launches the kernel.
struct ArtifactOptions {
  unsigned maxCtas = 16;       // CTAs per rank.
  unsigned stages = 3;         // Shared-memory stages per CTA.
  int64_t stageBytes = 65536;  // Bytes per stage: the largest work item.
  int64_t tileBelowRunBytes = 16384;
  bool copyEngine = false; // LoweringOptions::copyEngine.
};

/// The artifact of `module` (after --m2n-pipeline without `artifact=`): the
/// PTX of its kernel binary and every m2n.schedule lowered to per-rank work
/// items. Reports what cannot be lowered on the offending op.
FailureOr<std::string> buildArtifact(ModuleOp module,
                                     const ArtifactOptions &options);

/// Adds the transfer kernel module (gpu, nvvm, llvm, scf and arith ops) to
/// `module` for `chip` unless it is there already.
LogicalResult addTransferKernel(ModuleOp module, StringRef chip,
                                StringRef features);

} // namespace mlir::m2n

#endif // M2N_CONVERSION_M2NTOGPU_M2NTOGPU_H
