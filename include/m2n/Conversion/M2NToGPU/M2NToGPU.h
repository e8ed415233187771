//===- M2NToGPU.h - m2n schedules to GPU kernels ----------------*- C++ -*-===//

#ifndef M2N_CONVERSION_M2NTOGPU_M2NTOGPU_H
#define M2N_CONVERSION_M2NTOGPU_M2NTOGPU_H

#include "m2n/Artifact/Artifact.h"
#include "m2n/Codegen/KernelABI.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace mlir::m2n {

#define GEN_PASS_DECL_CONVERTTOGPU
#define GEN_PASS_DECL_WRITEARTIFACT
#include "m2n/Conversion/Passes.h.inc"

/// Name of the gpu.module holding m2n's kernels, and of the transfer kernel.
constexpr llvm::StringLiteral kKernelModuleName = "m2n_kernels";
constexpr llvm::StringLiteral kTransferKernelName = "m2n_transfer";
/// The module attribute naming the op codes the transfer kernel implements
/// (m2n-convert-to-gpu sets it, m2n-write-artifact checks every item
/// against it): {bulk = array<i32: ...>, tile = array<i32: op * 8 + rank,
/// ...>, vector = array<i32: ...>}, codes of m2n/Codegen/KernelABI.h.
constexpr llvm::StringLiteral kKernelOpsAttrName = "m2n.kernel_ops";
// (The m2n dialect verifies it: M2NDialect::getKernelOpsAttrName.)

/// How schedules are lowered and the kernel launched (both passes and the
/// compiler API take them from the same --m2n-pipeline options).
struct ArtifactOptions {
  unsigned maxCtas = 16;       // CTAs per rank.
  unsigned stages = 3;         // Shared-memory stages per CTA.
  int64_t stageBytes = 65536;  // Bytes per stage: the largest work item.
  int64_t tileBelowRunBytes = 16384;
  int64_t vectorBelowBytes = 0; // LoweringOptions::vectorBelowBytes.
  bool copyEngine = false;      // LoweringOptions::copyEngine.
  int64_t engineMinBytes = 1 << 20; // LoweringOptions::engineMinBytes.

  ::m2n::LoweringOptions lowering() const;
};

/// Every m2n.schedule of `module` lowered to per-rank programs, in walk
/// order. Reports what cannot be lowered on the offending op.
FailureOr<std::vector<::m2n::CompiledReshard>>
lowerSchedules(ModuleOp module, const ::m2n::LoweringOptions &options);

/// The artifact of `module` (after --m2n-pipeline without `artifact=`): the
/// PTX of its kernel binary and every m2n.schedule lowered to per-rank work
/// items. Reports what cannot be lowered on the offending op.
FailureOr<std::string> buildArtifact(ModuleOp module,
                                     const ArtifactOptions &options);

/// The ArtifactOptions of an --m2n-pipeline option string ("max-ctas=8
/// copy-engine=true ..."), parsed the way the pipeline parses it.
FailureOr<ArtifactOptions> parseArtifactOptions(StringRef pipelineOptions,
                                                llvm::raw_ostream &errors);

/// The kernel-ops attribute (kKernelOpsAttrName) of `ops`, and back.
DictionaryAttr kernelOpsAttr(MLIRContext *context, const ::m2n::KernelOps &ops);
std::optional<::m2n::KernelOps> parseKernelOpsAttr(DictionaryAttr attr);

} // namespace mlir::m2n

#endif // M2N_CONVERSION_M2NTOGPU_M2NTOGPU_H
