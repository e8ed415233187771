//===- Passes.td - m2n conversion passes -------------------*- tablegen -*-===//

#ifndef M2N_CONVERSION_PASSES_TD
#define M2N_CONVERSION_PASSES_TD

include "mlir/Pass/PassBase.td"

def ConvertToGPU : Pass<"m2n-convert-to-gpu", "::mlir::ModuleOp"> {
  let summary = "Add the TMA transfer kernel that executes m2n schedules";
  let description = [{
    Adds `gpu.module @m2n_kernels` with the transfer kernel `m2n_transfer`
    (lib/Conversion/M2NToGPU/TransferKernel.mlir): one elected thread per CTA
    walks a table of work items, waits for each item's dependencies on
    peer-visible flags (bounded by a timeout that records the item and traps
    instead of hanging), moves the item's bytes with a TMA bulk load into a
    multi-stage shared-memory pipeline (`nvvm.cp.async.bulk.shared.cluster.global`,
    `nvvm.mbarrier.*`) and a TMA bulk store
    (`nvvm.cp.async.bulk.global.shared.cta`) or bulk reduction
    (`cp.reduce.async.bulk ... .add/.min/.max`, inline PTX: MLIR 22 has no op
    for the non-tensor form), and signals a counter once its bytes have
    landed. The module is marked `gpu.container_module`.

    The kernel also moves tiles of 1-5 dimensions through TMA tensor maps
    (`nvvm.cp.async.bulk.tensor.*`, `nvvm.cp.async.bulk.tensor.reduce`).
    Schedules stay in place: `m2n-write-artifact` lowers them to the per-rank
    work-item tables this kernel walks.
  }];
  let options = [
    Option<"chip", "chip", "std::string", "\"sm_90a\"", "Target GPU">,
    Option<"features", "features", "std::string", "\"+ptx86\"",
           "PTX features (the default +ptx60 cannot express TMA)">
  ];
  let dependentDialects = [
    "::mlir::gpu::GPUDialect", "::mlir::NVVM::NVVMDialect",
    "::mlir::LLVM::LLVMDialect", "::mlir::scf::SCFDialect",
    "::mlir::arith::ArithDialect", "::mlir::func::FuncDialect"
  ];
}

def WriteArtifact : Pass<"m2n-write-artifact", "::mlir::ModuleOp"> {
  let summary = "Write the executable artifact: PTX, launch and per-rank programs";
  let description = [{
    Lowers every `m2n.schedule` to its per-rank programs
    (`m2n::lowerSchedule`: contiguous runs cut into kernel work items,
    network receives, counters for the dependencies) and writes them, with
    the PTX of `gpu.binary @m2n_kernels` (gpu-module-to-binary with
    format=isa) and the kernel's launch configuration, as a versioned
    artifact (docs/artifact.md) to `path`, atomically (a temporary file,
    then a rename). `m2n-artifact-dump` prints it.
  }];
  let options = [
    Option<"path", "path", "std::string", "\"\"", "Artifact file to write">,
    Option<"maxCtas", "max-ctas", "unsigned", "16",
           "CTAs per rank (the SM budget of a reshard)">,
    Option<"stages", "stages", "unsigned", "3",
           "Shared-memory stages per CTA">,
    Option<"stageBytes", "stage-bytes", "int64_t", "65536",
           "Bytes per stage, the largest work item">,
    Option<"tileBelowRunBytes", "tile-below-run-bytes", "int64_t", "16384",
           "Boxes whose contiguous runs are shorter move as TMA tensor tiles">,
    Option<"copyEngine", "copy-engine", "bool", "false",
           "Copy each rank's own source into its destination with the copy "
           "engine before its kernel, instead of with TMA items">
  ];
}

#endif // M2N_CONVERSION_PASSES_TD
