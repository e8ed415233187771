//===- M2NToGPU.h - m2n schedules to GPU kernels ----------------*- C++ -*-===//

#ifndef M2N_CONVERSION_M2NTOGPU_M2NTOGPU_H
#define M2N_CONVERSION_M2NTOGPU_M2NTOGPU_H

#include "m2n/Artifact/Artifact.h"
#include "m2n/Artifact/KernelABI.h"
#include "m2n/Codegen/TransferProgram.h"
#include "m2n/Dialect/M2N/IR/M2NOps.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassManager.h"

namespace mlir::m2n {

#define GEN_PASS_DECL_CHOOSELAUNCH
#define GEN_PASS_DECL_CONVERTTOGPU
#define GEN_PASS_DECL_IMPORTSDY
#define GEN_PASS_DECL_IMPORTSHARD
#define GEN_PASS_DECL_LOWERSCHEDULE
#define GEN_PASS_DECL_MERGEGROUPS
#define GEN_PASS_DECL_ORDERREDUCTIONS
#define GEN_PASS_DECL_ORDERSTEPS
#define GEN_PASS_DECL_SERIALIZEKERNELS
#define GEN_PASS_DECL_STAGENETWORKSTEPS
#define GEN_PASS_DECL_WRITEARTIFACT
#include "m2n/Conversion/Passes.h.inc"

class ScheduleOp;

/// What the lowering of an m2n.schedule takes, in m2n's C++ types.
struct LoweringInputs {
  ::m2n::Schedule schedule;
  ::m2n::Layout src, dst;
  std::vector<int64_t> shape;
  ::m2n::ElementType type; // The destination's.
  std::optional<::m2n::ElementCast> cast;
};
/// The LoweringInputs of `schedule`; fails, on the op, for an element type
/// without an executor.
FailureOr<LoweringInputs> loweringInputsOf(ScheduleOp schedule);

/// The lowering's options from a pass that declares them
/// (m2n-lower-schedule, m2n-order-reductions: Passes.td's LoweringOptions).
template <typename LoweringPass>
::m2n::LoweringOptions loweringOptionsOf(const LoweringPass &pass) {
  ::m2n::LoweringOptions options;
  options.maxItemBytes = pass.stageBytes;
  options.tileBelowRunBytes = pass.tileBelowRunBytes;
  options.vectorBelowBytes = pass.vectorBelowBytes;
  options.copyEngine = pass.copyEngine;
  options.engineMinBytes = pass.engineMinBytes;
  options.kernelCtas = pass.kernelCtas;
  options.bufferAlignment = pass.bufferAlign;
  options.fuseReductions = pass.fuseReductions;
  return options;
}
/// Why `options` cannot lower anything, or std::nullopt.
std::optional<std::string>
checkLoweringOptions(const ::m2n::LoweringOptions &options);

/// Name of the gpu.module holding m2n's kernels, and of the transfer kernel.
constexpr llvm::StringLiteral kKernelModuleName = "m2n_kernels";
/// The builtin.module that holds that gpu.module in the lowered module:
/// the kernel's own passes (nvvm-attach-target, the NVVM lowering,
/// m2n-serialize-kernels) nest on it, so the verifier after each checks the
/// kernel, not a refit's ~70k moves.
constexpr llvm::StringLiteral kKernelContainerName = "m2n_kernel";
constexpr llvm::StringLiteral kTransferKernelName = "m2n_transfer";
/// The module attribute naming the op codes the transfer kernel implements
/// (m2n-convert-to-gpu sets it, m2n-write-artifact checks every item
/// against it): {bulk = array<i32: ...>, tile = array<i32: op * 8 + rank,
/// ...>, vector = array<i32: ...>}, codes of m2n/Artifact/KernelABI.h.
constexpr llvm::StringLiteral kKernelOpsAttrName = "m2n.kernel_ops";
// (The m2n dialect verifies it: M2NDialect::getKernelOpsAttrName.)

/// The programs of a module and the tensors that run them.
struct ProgramTable {
  /// Each distinct program once: an m2n.reshard_fn's, or an m2n.program's
  /// in a function, and its name (its first tensor's). Converted to C++
  /// (toCompiledReshard) one at a time by whoever reads them: a refit's
  /// programs together are tens of MB of movements.
  std::vector<ProgramOp> programs;
  std::vector<std::string> programNames;
  /// Every tensor's reshard in walk order (an m2n.call, or an m2n.program
  /// in a function), named "@func#index", and the program it runs.
  std::vector<std::pair<std::string, size_t>> tensors;
  /// Every merged m2n.group: its name and its members' tensor indices.
  std::vector<std::pair<std::string, std::vector<uint32_t>>> groups;
};

/// The ProgramTable of `module`. Fails, on the op, where a reshard is not
/// lowered to an m2n.program yet or a group is not merged.
FailureOr<ProgramTable> collectPrograms(ModuleOp module);

/// The artifact of a module through m2n-convert-to-gpu, m2n-choose-launch
/// and gpu-module-to-binary (PTX): its programs, the PTX and the launches,
/// in parts (ArtifactParts::join() gives the bytes).
FailureOr<::m2n::ArtifactParts> buildArtifact(ModuleOp module);

/// The pipeline's passes from the kernel module to its binary:
/// nvvm-attach-target, the NVVM conversions, m2n-serialize-kernels
/// (gpu-module-to-binary, its binaries kept in the process and, with
/// `cacheDir`, in that directory).
void addKernelToBinaryPasses(OpPassManager &pm, StringRef chip,
                             StringRef format, StringRef features,
                             StringRef cacheDir = "");

/// The kernel-ops attribute (kKernelOpsAttrName) of `ops`, and back.
DictionaryAttr kernelOpsAttr(MLIRContext *context, const ::m2n::KernelOps &ops);
std::optional<::m2n::KernelOps> parseKernelOpsAttr(DictionaryAttr attr);

} // namespace mlir::m2n

#endif // M2N_CONVERSION_M2NTOGPU_M2NTOGPU_H
