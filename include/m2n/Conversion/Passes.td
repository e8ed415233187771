//===- Passes.td - m2n conversion passes -------------------*- tablegen -*-===//

#ifndef M2N_CONVERSION_PASSES_TD
#define M2N_CONVERSION_PASSES_TD

include "mlir/Pass/PassBase.td"

def ConvertToGPU : Pass<"m2n-convert-to-gpu", "::mlir::ModuleOp"> {
  let summary = "Add the transfer kernel that executes the module's m2n schedules";
  let description = [{
    Adds `module @m2n_kernel { gpu.module @m2n_kernels }` with the transfer
    kernel `m2n_transfer` (the kernel's own passes, `nvvm-attach-target` to
    `m2n-serialize-kernels`, nest on that module: the verifier after each
    checks the kernel, not the programs),
    built with typed `gpu`, `scf`, `arith`, `llvm` and `nvvm` ops
    (lib/Conversion/M2NToGPU/TransferKernel.cpp) and specialized to the op
    codes the moves of the module's `m2n.program` ops use
    (`kernel-ops=used`; run `m2n-lower-schedule` first) or to every op
    (`kernel-ops=all`). The op codes are
    recorded as the module attribute `m2n.kernel_ops`; `m2n-write-artifact`
    refuses items the kernel cannot run, `m2n-choose-launch` reads them. `nvvm-attach-target` adds the NVVM
    target. The module is not marked `gpu.container_module`: no
    `gpu.launch_func` launches the kernel (the runtime does).

    Per CTA, one thread walks the rank's table of work items: it waits for
    each item's dependencies on peer-visible counters (bounded by a timeout
    that records the item and traps instead of hanging), moves bulk items
    with TMA bulk loads into a multi-stage shared-memory pipeline
    (`nvvm.cp.async.bulk.shared.cluster.global`, `nvvm.mbarrier.*`) and TMA
    bulk stores (`nvvm.cp.async.bulk.global.shared.cta`) or bulk reductions
    (`cp.reduce.async.bulk`, inline PTX: MLIR 22 has no op for the
    non-tensor form), tiles through TMA tensor maps
    (`nvvm.cp.async.bulk.tensor.*`), and signals counters once the bytes
    have landed. Vector items (the SM path) are moved by every thread of the
    CTA with the widest vector loads and stores the addresses allow,
    reductions computed in registers.
  }];
  let options = [
    Option<"kernelOps", "kernel-ops", "std::string", "\"used\"",
           "Which op codes the kernel implements: 'used' (those of the "
           "module's m2n.program moves) or 'all'">
  ];
  let dependentDialects = [
    "::mlir::gpu::GPUDialect", "::mlir::NVVM::NVVMDialect",
    "::mlir::LLVM::LLVMDialect", "::mlir::scf::SCFDialect",
    "::mlir::arith::ArithDialect", "::mlir::func::FuncDialect"
  ];
}

def ChooseLaunch : Pass<"m2n-choose-launch", "::mlir::ModuleOp"> {
  let summary = "Decide how every rank's transfer kernel is launched";
  let description = [{
    Writes the kernel's launch as the module attribute `m2n.kernel_launch`
    (`#m2n.kernel_launch<ctas, threads, stages, stage_bytes, walkers>`:
    `threads` is 128 where the kernel has vector ops, `m2n.kernel_ops` of
    `m2n-convert-to-gpu`, else 32) and every rank's as `launch <...>` on its
    `m2n.rank` (m2n::chooseLaunch): one walker of the kernel's threads for a
    table with vector items or items as large as a stage, else as many
    walkers of stages sized to its largest item as the compiled shared
    memory holds. A merged group's `m2n.group_rank` gets its members'
    launches of that rank combined. The artifact stores them and the
    runtime launches them as they are; the verifiers check that every
    launch runs its items and fits the kernel. A move larger than a stage
    is refused (lower with the same `stage-bytes`).
  }];
  let options = [
    Option<"maxCtas", "max-ctas", "unsigned", "16",
           "CTAs per rank (the SM budget of a reshard)">,
    Option<"stages", "stages", "unsigned", "3",
           "Shared-memory stages per walker">,
    Option<"stageBytes", "stage-bytes", "int64_t", "65536",
           "Bytes per stage, the largest work item">,
    Option<"walkers", "walkers", "unsigned", "8",
           "Walkers (issuing warps) a CTA may run for a table without "
           "vector items (1-8)">
  ];
  let dependentDialects = ["::mlir::m2n::M2NDialect"];
}

def SerializeKernels : Pass<"m2n-serialize-kernels", "::mlir::ModuleOp"> {
  let summary = "gpu-module-to-binary, with the binaries kept by the kernel module's text";
  let description = [{
    Turns every `gpu.module` with targets directly in the module it runs on
    (the kernel module after `nvvm-attach-target` and the NVVM conversions;
    `--m2n-pipeline` runs it on `module @m2n_kernel`) into a `gpu.binary`, as
    `gpu-module-to-binary` does, and keeps each binary under a 128-bit hash
    of the module's text, the format, m2n's commit and LLVM's version: in
    the process (the compiler API compiles many reshards whose kernel is the
    same module) and, with `cache-dir`, in one file per binary there, so
    that the next process starts with it. A module seen before gets its
    binary back without running LLVM (about 70 ms on the transfer kernel);
    the bytes are the ones its build wrote (without the build's timings,
    which gpu-module-to-binary records: the output is the same whether the
    binary was built or kept). A cache file that does not
    parse is rebuilt; one that cannot be written is skipped: the cache never
    makes a compile fail. `-mlir-pass-statistics` counts hits and builds.
  }];
  let options = [
    Option<"format", "format", "std::string", "\"isa\"",
           "gpu-module-to-binary's format: isa (PTX), bin, fatbin">,
    Option<"cacheDir", "cache-dir", "std::string", "\"\"",
           "A directory that keeps the binaries between processes "
           "(none: only in the process)">
  ];
  let statistics = [
    Statistic<"reused", "reused", "Kernel modules whose binary was kept">,
    Statistic<"built", "built", "Kernel modules built by LLVM">
  ];
  let dependentDialects = ["::mlir::gpu::GPUDialect"];
}

def WriteArtifact : Pass<"m2n-write-artifact", "::mlir::ModuleOp"> {
  let summary = "Write the executable artifact: PTX, launches and per-rank programs";
  let description = [{
    Translates every `m2n.program` (the program level, from
    `m2n-lower-schedule`; it decides nothing itself), checks that the kernel
    implements every move's op (`m2n.kernel_ops`) and that every rank has its
    launch (`m2n-choose-launch`), and writes them, with the PTX of
    `gpu.binary @m2n_kernels` in `module @m2n_kernel` (gpu-module-to-binary
    with format=isa) and
    `m2n.kernel_launch`, as a versioned artifact (docs/artifact.md) to
    `path`, atomically (a temporary file, then a rename).
    `m2n-artifact-dump` prints it.
  }];
  let options = [
    Option<"path", "path", "std::string", "\"\"", "Artifact file to write">
  ];
}

def StageNetworkSteps : Pass<"m2n-stage-network-steps"> {
  let summary = "Make every network step one contiguous NCCL transfer";
  let description = [{
    NCCL moves one contiguous buffer per call, and its receives only copy.
    A network step whose source box is strided in its buffer (or that reads
    a source buffer of a cast, which converts on the way) gets a local step
    on the sending rank that packs the box into a staging scratch buffer,
    which the network step then sends whole; one whose target box is
    strided, or that reduces, receives into a staging scratch on the
    receiving rank, and a local step unpacks (or reduces) it into place.
    Dependencies follow the new steps (`m2n::stageNetworkSteps`). The
    lowering refuses network steps that still need this.

    ```mlir
    m2n.step 0 copy src(0) [0:4, 0:2] -> dst(2) [0:4, 0:2] via network
    // becomes
    m2n.scratch 0 on 0 [4, 2]
    m2n.step 0 copy src(0) [0:4, 0:2] -> scratch0(0) [0:4, 0:2] via local
    m2n.step 1 copy scratch0(0) [0:4, 0:2] -> dst(2) [0:4, 0:2] via network after [0]
    ```
  }];
  let dependentDialects = ["::mlir::m2n::M2NDialect"];
}

// The lowering's options, declared once: the reduction ordering lowers to
// see which reductions take the SM path.
defvar LoweringOptions = [
    Option<"stageBytes", "stage-bytes", "int64_t", "65536",
           "The largest move: bytes per shared-memory stage of the kernel">,
    Option<"tileBelowRunBytes", "tile-below-run-bytes", "int64_t", "16384",
           "Boxes whose contiguous runs are shorter move as TMA tensor tiles">,
    Option<"vectorBelowBytes", "vector-below-bytes", "int64_t", "0",
           "Runs (or aligned middles of runs) shorter than this move on the "
           "SM path (vector moves)">,
    Option<"copyEngine", "copy-engine", "::m2n::CopyEngineUse",
           "::m2n::CopyEngineUse::ByCost",
           "Which contiguous, dependency-free source-to-destination runs (a "
           "rank's own or a peer's over NVLink) the copy engine copies "
           "before the kernel, instead of TMA moves",
           [{::llvm::cl::values(
             clEnumValN(::m2n::CopyEngineUse::ByCost, "auto",
                        "those the cost model finds faster that way "
                        "(m2n::copyEngineIsFaster)"),
             clEnumValN(::m2n::CopyEngineUse::Always, "true",
                        "every one of at least engine-min-bytes"),
             clEnumValN(::m2n::CopyEngineUse::Never, "false", "none"))}]>,
    Option<"engineMinBytes", "engine-min-bytes", "int64_t", "1048576",
           "The smallest run the copy engine takes">,
    Option<"kernelCtas", "kernel-ctas", "int64_t", "16",
           "CTAs per rank of the kernel (the pipeline's max-ctas), which "
           "copy-engine=auto weighs copies against">,
    Option<"bufferAlign", "buffer-align", "int64_t", "16",
           "The alignment (bytes, a power of two) promised for every "
           "caller buffer; below 16 no TMA move touches one">,
    Option<"fuseReductions", "fuse-reductions", "::m2n::ReductionFusion",
           "::m2n::ReductionFusion::ByCost",
           "Which of a rank's copies of its own partial fuse with the first "
           "reduction onto it: one vector reduction that reads both operands",
           [{::llvm::cl::values(
             clEnumValN(::m2n::ReductionFusion::ByCost, "auto",
                        "where the cost model finds it faster "
                        "(m2n::fusedReductionIsFaster, by kernel-ctas)"),
             clEnumValN(::m2n::ReductionFusion::Always, "true", "every one"),
             clEnumValN(::m2n::ReductionFusion::Never, "false", "none"))}]>
];

def OrderReductions : Pass<"m2n-order-reductions"> {
  let summary = "Order the reductions a vector reduction overlaps";
  let description = [{
    TMA reductions are atomic per element, so several steps may reduce onto
    the same bytes at once; a reduction on the SM path (a vector move: load,
    combine, store) is not. Which reduction steps take the SM path is the
    lowering's choice (misaligned runs, reductions TMA lacks, casts), made
    with the options below, the same as m2n-lower-schedule's: this pass
    lowers each `m2n.schedule` whose reduction steps overlap and gives every
    reduction step onto bytes such a step also reduces a dependency on the
    one before it (in the order the executing rank's items list them), so
    the schedule that is lowered says which reductions wait
    (`m2n::orderReductions`). Step numbers are kept: run m2n-order-steps
    after it. The lowering refuses a vector reduction left unordered.

    ```mlir
    m2n.step 0 add src(1) [0:3] -> dst(0) [0:3] via nvlink
    m2n.step 1 add src(2) [0:3] -> dst(0) [0:3] via nvlink
    // with 12-byte runs (not TMA's 16-byte multiples) becomes
    m2n.step 0 add src(1) [0:3] -> dst(0) [0:3] via nvlink
    m2n.step 1 add src(2) [0:3] -> dst(0) [0:3] via nvlink after [0]
    ```
  }];
  let options = LoweringOptions;
  let dependentDialects = ["::mlir::m2n::M2NDialect"];
}

def OrderSteps : Pass<"m2n-order-steps"> {
  let summary = "Number the steps of every schedule in emission order";
  let description = [{
    Renumbers the steps of each `m2n.schedule` with network steps in the one
    topological order in which every rank's kernel items and the runtime's
    network posts (by step) follow them: first the steps that wait for
    fewer hops between ranks, the link classes interleaved in proportion
    to their bytes (`m2n::inEmissionOrder`). With it, no CTA and no network
    stream waits for what waits behind it. Schedules without network steps
    are left as they are (the lowering orders their items itself).
  }];
  let dependentDialects = ["::mlir::m2n::M2NDialect"];
}

def LowerSchedule : Pass<"m2n-lower-schedule"> {
  let summary = "Lower every m2n.schedule to per-rank programs (m2n.program)";
  let description = [{
    Replaces each `m2n.schedule`, staged and ordered
    (`m2n-stage-network-steps`, `m2n-order-reductions`, `m2n-order-steps`),
    by an `m2n.program` with
    the same operands and result (`m2n::lowerPreparedSchedule`): every
    step's contiguous runs or
    tiles become moves of one mechanism each, chosen by the cost rule of
    docs/codegen.md with the thresholds below (TMA bulk, TMA tensor tiles,
    the SM path, the copy engine), network steps become receives, and the
    dependencies become counters, signals and waits.
  }];
  let options = LoweringOptions;
  let dependentDialects = ["::mlir::m2n::M2NDialect"];
}

def MergeGroups : Pass<"m2n-merge-groups", "::mlir::ModuleOp"> {
  let summary = "Merge every m2n.group into one program per rank";
  let description = [{
    Writes the merged program of every `m2n.group` whose members are lowered
    (`m2n.program`, or `m2n.call` of a lowered `m2n.reshard_fn`): one
    `m2n.group_rank` per rank that runs a member, listing its members in the
    group's order and where each member's counters of that rank begin (the
    counters of the members before it on that rank). The members' programs
    stay shared (one program per `m2n.reshard_fn`, however many tensors call
    it); the artifact holds the group and the runtime binds and launches it
    as one program, by this layout. A group whose members are not lowered is
    an error naming the member.
  }];
  let dependentDialects = ["::mlir::m2n::M2NDialect"];
}

def ImportShard : Pass<"m2n-import-shard", "::mlir::ModuleOp"> {
  let summary = "Import the resharding points of MLIR's shard dialect as m2n.reshard";
  let description = [{
    Every pair `%a = shard.shard %x to %s0` / `shard.shard %a to %s1
    annotate_for_users` with different shardings becomes an `m2n.reshard`
    from the layout of `%s0` to that of `%s1` on the grid's devices, between
    `builtin.unrealized_conversion_cast`s that keep the function on tensors
    (docs/integration.md). Grid axes that split one tensor dimension apply
    in their listed order (the first outermost); uneven splits need
    `sharded_dims_offsets` equal to torch.chunk's boundaries. The
    collectives of partitioned code (`shard.all_gather`, `all_reduce` and
    `reduce_scatter` with sum, max or min, `all_to_all`, `all_slice`)
    become m2n collectives (or a local reshard) over their grid axes, with
    a leading dimension per other grid axis; the rooted ones (`broadcast`,
    `gather`, `reduce`, `scatter`) reshards between every device of each
    group and the mesh of the groups' root devices, and a rotating `shift`
    a reshard to rotated ranks. Halos, dynamic grids, shapes
    and offsets are refused with a diagnostic.
  }];
  let dependentDialects = ["::mlir::m2n::M2NDialect"];
}

def ImportSdy : Pass<"m2n-import-sdy", "::mlir::ModuleOp"> {
  let summary = "Import Shardy's reshards, collectives and MPMD transfers as m2n.reshard";
  let description = [{
    Every `sdy.reshard`, `sdy.sharding_constraint` and explicit collective
    (`sdy.all_gather`, `all_slice`, `all_to_all`, `collective_permute`,
    `all_reduce`, `reduce_scatter`) becomes an `m2n.reshard` from its
    operand's sharding (a function argument's `sdy.sharding`, or the result
    of an earlier imported op) to its own, and every `mpmd.transfer` one from
    the operand's mesh and sharding to the result's: the meshes of the
    function's `#mpmd.topology`, laid out one after the other. Devices are
    numbered as Shardy numbers them (row-major over the axes, or
    `device_ids`); sub-axes `"x":(m)k` split an axis, the pre-size major;
    `unreduced` axes are partial with their reduction. The values keep their
    types through `builtin.unrealized_conversion_cast`s
    (docs/integration.md). What has no m2n layout is a diagnostic.
  }];
  let dependentDialects = ["::mlir::m2n::M2NDialect"];
}

#endif // M2N_CONVERSION_PASSES_TD
