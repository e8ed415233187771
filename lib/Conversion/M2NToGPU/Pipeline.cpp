//===- Pipeline.cpp - --m2n-pipeline: layout-level IR to PTX ----------------===//
//
// The one compiler: m2n-opt, the compiler API (the Python JIT, m2n-run) and
// m2n-refit --compile run this pipeline. Stages, with verification between
// them:
//   expand collectives -> share identical reshards (m2n.reshard_fn) ->
//   per function, in parallel: plan -> verify plan -> route over the
//   topology -> stage network steps -> order reductions -> order steps ->
//   verify schedule -> lower to per-rank programs -> verify programs;
//   then merge groups -> the transfer kernel -> choose every rank's launch
//   -> NVVM -> PTX, kept by the kernel's text (-> write the artifact).
//
//===----------------------------------------------------------------------===//

#include "m2n/Artifact/Artifact.h"
#include "m2n/Base/Strategy.h"
#include "m2n/Route/Router.h"
#include "m2n/Route/ScaleSteps.h"
#include "m2n/Conversion/M2NToGPU/M2NToGPU.h"
#include "m2n/Conversion/Passes.h"
#include "m2n/Dialect/M2N/IR/M2NOps.h"
#include "m2n/Dialect/M2N/Transforms/Passes.h"

#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassOptions.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;

namespace {
struct M2NPipelineOptions : public PassPipelineOptions<M2NPipelineOptions> {
  Option<std::string> strategy{*this, "strategy",
                               llvm::cl::desc("flat, gather-bcast or hierarchical"),
                               llvm::cl::init("hierarchical")};
  Option<std::string> topology{*this, "topology",
                               llvm::cl::desc("JSON topology file"),
                               llvm::cl::init("")};
  Option<int64_t> chunkBytes{*this, "chunk-bytes",
                             llvm::cl::desc("Split steps larger than this"),
                             llvm::cl::init(4 << 20)};
  Option<std::string> reduceShare{
      *this, "reduce-share",
      llvm::cl::desc("Reduce regions shared by several replicas once, then "
                     "share them (reduce-scatter + all-gather): on, off or "
                     "auto (where the cost model finds it cheaper)"),
      llvm::cl::init("auto")};
  Option<int64_t> scaleBands{
      *this, "scale-bands",
      llvm::cl::desc("Quantizing reshards: at most this many bands of block "
                     "rows, each band's amaxes exchanged before its data "
                     "moves (1-8; 1: the amax pass, then the data)"),
      llvm::cl::init(1)};
  Option<bool> quantizeOnce{
      *this, "quantize-once",
      llvm::cl::desc("Quantizing reshards: one destination of a region in a "
                     "domain quantizes it, the others copy its fp8 bytes"),
      llvm::cl::init(true)};
  Option<bool> quantizeOnSources{
      *this, "quantize-on-sources",
      llvm::cl::desc("Quantizing reshards, quantize-once: the source "
                     "replicas of a region quantize bands of it too (into "
                     "scratches the destinations copy from)"),
      llvm::cl::init(false)};
  Option<std::string> chip{*this, "chip", llvm::cl::desc("Target GPU"),
                           llvm::cl::init("sm_90a")};
  Option<std::string> features{*this, "features",
                               llvm::cl::desc("PTX features"),
                               llvm::cl::init("+ptx86")};
  Option<std::string> artifact{
      *this, "artifact",
      llvm::cl::desc("Write the executable artifact to this file"),
      llvm::cl::init("")};
  Option<unsigned> maxCtas{*this, "max-ctas",
                           llvm::cl::desc("CTAs per rank (SM budget)"),
                           llvm::cl::init(16)};
  Option<unsigned> walkers{
      *this, "walkers",
      llvm::cl::desc("Walkers (issuing warps) a CTA may run for a table "
                     "without vector items (1-8)"),
      llvm::cl::init(8)};
  Option<int64_t> tileBelowRunBytes{
      *this, "tile-below-run-bytes",
      llvm::cl::desc("Boxes whose contiguous runs are shorter move as TMA "
                     "tensor tiles"),
      llvm::cl::init(16384)};
  Option<int64_t> vectorBelowBytes{
      *this, "vector-below-bytes",
      llvm::cl::desc("Runs (or aligned middles of runs) shorter than this "
                     "move on the SM path instead of as TMA bulk items"),
      llvm::cl::init(0)};
  Option<::m2n::CopyEngineUse> copyEngine{
      *this, "copy-engine",
      llvm::cl::desc("Which contiguous, dependency-free source-to-destination "
                     "runs (a rank's own or a peer's over NVLink) the copy "
                     "engine copies before the kernel"),
      llvm::cl::init(::m2n::CopyEngineUse::ByCost),
      llvm::cl::values(
          clEnumValN(::m2n::CopyEngineUse::ByCost, "auto",
                     "those the cost model finds faster that way, weighed "
                     "against max-ctas CTAs"),
          clEnumValN(::m2n::CopyEngineUse::Always, "true",
                     "every one of at least engine-min-bytes"),
          clEnumValN(::m2n::CopyEngineUse::Never, "false", "none"))};
  Option<int64_t> engineMinBytes{
      *this, "engine-min-bytes",
      llvm::cl::desc("The smallest run the copy engine takes"),
      llvm::cl::init(1 << 20)};
  Option<::m2n::ReductionFusion> fuseReductions{
      *this, "fuse-reductions",
      llvm::cl::desc("Which of a rank's copies of its own partial fuse with "
                     "the first reduction onto it: one vector reduction "
                     "that reads both operands"),
      llvm::cl::init(::m2n::ReductionFusion::ByCost),
      llvm::cl::values(
          clEnumValN(::m2n::ReductionFusion::ByCost, "auto",
                     "where the cost model finds it faster, weighed at "
                     "max-ctas CTAs"),
          clEnumValN(::m2n::ReductionFusion::Always, "true", "every one"),
          clEnumValN(::m2n::ReductionFusion::Never, "false", "none"))};
  Option<int64_t> bufferAlign{
      *this, "buffer-align",
      llvm::cl::desc("The alignment (bytes, a power of two) promised for "
                     "every caller buffer; below 16 no TMA move touches one"),
      llvm::cl::init(16)};
  Option<int64_t> stageBytes{
      *this, "stage-bytes",
      llvm::cl::desc("Bytes per shared-memory stage: the largest work item"),
      llvm::cl::init(65536)};
  Option<std::string> format{
      *this, "format",
      llvm::cl::desc("gpu-module-to-binary format: isa (PTX), bin, fatbin"),
      llvm::cl::init("isa")};
  Option<std::string> kernelCacheDir{
      *this, "kernel-cache-dir",
      llvm::cl::desc("A directory that keeps the kernel's binary between "
                     "processes (m2n-serialize-kernels; none: only in the "
                     "process)"),
      llvm::cl::init("")};
};

} // namespace

void mlir::m2n::addKernelToBinaryPasses(OpPassManager &pm, StringRef chip,
                                        StringRef format, StringRef features,
                                        StringRef cacheDir) {
  // On the kernel's own module (kKernelContainerName, the only nested
  // builtin.module): each pass is verified on the kernel alone.
  OpPassManager &container = pm.nest<ModuleOp>();
  GpuNVVMAttachTargetOptions target;
  target.moduleMatcher = mlir::m2n::kKernelModuleName.str();
  target.chip = chip.str();
  target.features = features.str();
  container.addPass(createGpuNVVMAttachTarget(target));

  // The kernel module: scf and arith to the LLVM dialect with NVVM
  // intrinsics, PTX-builder ops to inline assembly.
  OpPassManager &kernels = container.nest<gpu::GPUModuleOp>();
  kernels.addPass(createSCFToControlFlowPass());
  kernels.addPass(createConvertGpuOpsToNVVMOps());
  kernels.addPass(createConvertNVVMToLLVMPass());
  kernels.addPass(createReconcileUnrealizedCastsPass());

  mlir::m2n::SerializeKernelsOptions binary;
  binary.format = format.str();
  binary.cacheDir = cacheDir.str();
  container.addPass(mlir::m2n::createSerializeKernels(binary));
}

namespace {
/// The options of a pass that takes the lowering's (Passes.td's
/// LoweringOptions), from the pipeline's.
template <typename PassOptions>
PassOptions loweringOptionsOf(const M2NPipelineOptions &options) {
  PassOptions lower;
  lower.stageBytes = options.stageBytes;
  lower.tileBelowRunBytes = options.tileBelowRunBytes;
  lower.vectorBelowBytes = options.vectorBelowBytes;
  lower.copyEngine = options.copyEngine;
  lower.engineMinBytes = options.engineMinBytes;
  lower.kernelCtas = options.maxCtas;
  lower.bufferAlign = options.bufferAlign;
  lower.fuseReductions = options.fuseReductions;
  return lower;
}

/// m2n-choose-launch's options, from the pipeline's (the stages are the
/// pass's default).
mlir::m2n::ChooseLaunchOptions
chooseLaunchOptionsOf(const M2NPipelineOptions &options) {
  mlir::m2n::ChooseLaunchOptions launch;
  launch.maxCtas = options.maxCtas;
  launch.stageBytes = options.stageBytes;
  launch.walkers = options.walkers;
  return launch;
}

void buildM2NPipeline(OpPassManager &pm, const M2NPipelineOptions &options) {
  pm.addPass(mlir::m2n::createExpandCollectives());
  pm.addPass(mlir::m2n::createOutlineReshards());
  // Each distinct reshard on its own, the functions in parallel.
  OpPassManager &reshard = pm.nest<mlir::m2n::ReshardFnOp>();
  reshard.addPass(mlir::m2n::createPlanIntersections());
  reshard.addPass(mlir::m2n::createVerifyPlan());
  mlir::m2n::RouteTopologyOptions route;
  route.strategy = options.strategy;
  route.topologyFile = options.topology;
  route.chunkBytes = options.chunkBytes;
  route.reduceShare = options.reduceShare;
  route.quantizeOnce = options.quantizeOnce;
  route.quantizeOnSources = options.quantizeOnSources;
  route.scaleBands = options.scaleBands;
  reshard.addPass(mlir::m2n::createRouteTopology(route));
  reshard.addPass(mlir::m2n::createStageNetworkSteps());
  reshard.addPass(mlir::m2n::createOrderReductions(
      loweringOptionsOf<mlir::m2n::OrderReductionsOptions>(options)));
  reshard.addPass(mlir::m2n::createOrderSteps());
  // The schedule that is lowered (routed, or written by hand) is proven to
  // deliver the destination first.
  reshard.addPass(mlir::m2n::createVerifySchedule());
  mlir::m2n::LowerScheduleOptions lower =
      loweringOptionsOf<mlir::m2n::LowerScheduleOptions>(options);
  reshard.addPass(mlir::m2n::createLowerSchedule(lower));
  reshard.addPass(mlir::m2n::createVerifyProgram());
  pm.addPass(mlir::m2n::createMergeGroups());
  pm.addPass(mlir::m2n::createConvertToGPU());
  pm.addPass(mlir::m2n::createChooseLaunch(chooseLaunchOptionsOf(options)));
  // The merged groups, their launches included, checked once.
  pm.addPass(mlir::m2n::createVerifyGroups());
  mlir::m2n::addKernelToBinaryPasses(pm, options.chip, options.format,
                                     options.features, options.kernelCacheDir);

  if (!options.artifact.empty()) {
    mlir::m2n::WriteArtifactOptions write;
    write.path = options.artifact;
    pm.addPass(mlir::m2n::createWriteArtifact(write));
  }
}
} // namespace

/// The sm number of a chip name ("sm_90a" -> 90), or std::nullopt.
static std::optional<int> smVersion(StringRef chip) {
  int version = 0;
  if (!chip.consume_front("sm_") || chip.consumeInteger(10, version))
    return std::nullopt;
  if (!chip.empty() && chip != "a" && chip != "f")
    return std::nullopt;
  return version;
}

void mlir::m2n::registerM2NPipeline() {
  // Registered by hand (not PassPipelineRegistration) to refuse option
  // values no pass would catch with a message of its own.
  registerPassPipeline(
      "m2n-pipeline",
      "Layout-level m2n IR to routed schedules and the PTX of the transfer "
      "kernel",
      [](OpPassManager &pm, StringRef text,
         function_ref<LogicalResult(const Twine &)> errorHandler) {
        M2NPipelineOptions options;
        if (failed(options.parseFromString(text)))
          return failure();
        std::optional<int> sm = smVersion(options.chip);
        if (!sm || *sm < 90)
          return errorHandler(
              "m2n-pipeline: chip=" + options.chip +
              ": the transfer kernel needs TMA (cp.async.bulk, mbarrier "
              "transactions), sm_90 (Hopper) or newer, e.g. chip=sm_90a");
        // Values the passes would each refuse, refused once by name.
        if (!::m2n::parseStrategy(options.strategy))
          return errorHandler("m2n-pipeline: strategy=" + options.strategy +
                              ": expected flat, gather-bcast or hierarchical");
        if (!::m2n::parseReduceShare(options.reduceShare))
          return errorHandler("m2n-pipeline: reduce-share=" +
                              options.reduceShare +
                              ": expected on, off or auto");
        if (options.scaleBands < 1 ||
            options.scaleBands > ::m2n::kMaxScaleBands)
          return errorHandler("m2n-pipeline: scale-bands=" +
                              std::to_string(options.scaleBands) +
                              ": expected 1 to " +
                              std::to_string(::m2n::kMaxScaleBands));
        if (options.chunkBytes < 0 || options.tileBelowRunBytes < 0 ||
            options.vectorBelowBytes < 0 || options.engineMinBytes < 0)
          return errorHandler("m2n-pipeline: chunk-bytes, "
                              "tile-below-run-bytes, vector-below-bytes and "
                              "engine-min-bytes must not be negative");
        if (std::optional<std::string> wrong =
                ::m2n::checkBufferAlignment(options.bufferAlign))
          return errorHandler("m2n-pipeline: buffer-align=" +
                              std::to_string(options.bufferAlign) + ": " +
                              *wrong);
        // The kernel's launch m2n-choose-launch will check, refused before
        // any pass runs (the threads are the kernel's; 32 is always one).
        mlir::m2n::ChooseLaunchOptions launch = chooseLaunchOptionsOf(options);
        ::m2n::KernelLaunch kernel;
        kernel.ctas = launch.maxCtas;
        kernel.stages = launch.stages;
        kernel.stageBytes =
            launch.stageBytes < 0 ? 0 : static_cast<uint64_t>(launch.stageBytes);
        kernel.walkers = launch.walkers;
        if (std::optional<std::string> wrong = ::m2n::checkKernelLaunch(kernel))
          return errorHandler("m2n-pipeline: " + *wrong);
        buildM2NPipeline(pm, options);
        return success();
      },
      [](function_ref<void(const mlir::detail::PassOptions &)> optionHandler) {
        optionHandler(M2NPipelineOptions());
      });
}
