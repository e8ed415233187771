//===- m2n-sim.cpp - reference executor for m2n plans -----------------------===//
//
// Runs every m2n.plan, m2n.schedule or m2n.program of a module on host
// memory for all ranks and checks each destination rank's buffer against
// the logical tensor (fill rule in m2n/Sim/HostSimulator.h). Layout-level
// input is planned first with the same passes as m2n-opt; programs are
// verified (checkTransferProgram) and run by the runtime's host executor
// with one and with three CTAs a rank. Prints one verdict line; exits 1 on
// failure.
//
//===----------------------------------------------------------------------===//

#include "m2n/Dialect/Shardy/ShardyDialect.h"
#include "m2n/Dialect/M2N/Transforms/PlanInterop.h"
#include "m2n/Dialect/M2N/IR/M2NDialect.h"
#include "m2n/Dialect/M2N/IR/M2NOps.h"
#include "m2n/Dialect/M2N/Transforms/Passes.h"
#include "m2n/Base/CheckedMath.h"
#include "m2n/Codegen/ProgramExecutor.h"
#include "m2n/Dialect/M2N/IR/LayoutInterop.h"
#include "m2n/Sim/HostSimulator.h"
#include "m2n/Sim/QuantizingSimulator.h"
#include "m2n/Input/ReadInput.h"

#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Shard/IR/ShardDialect.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/InitLLVM.h"

#include "../ToolSupport.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
namespace cl = llvm::cl;

static cl::opt<std::string> inputFilename(cl::Positional,
                                          cl::desc("<input .mlir file>"),
                                          cl::init("-"),
    cl::cat(::m2n::tools::category()));
static cl::opt<std::string> dumpDir(
    "dump-dst",
    cl::desc("Write every destination rank's local buffer as "
             "DIR/rank<R>.npy (DIR/plan<K>/rank<R>.npy when the input has "
             "several plans); a quantizing plan also writes its global "
             "source as DIR/source.npy and each rank's scales as "
             "DIR/scales<R>.npy"),
    cl::value_desc("DIR"),
    cl::cat(::m2n::tools::category()));
static cl::opt<bool> skipVerify(
    "no-verify",
    cl::desc("Run plans without m2n-verify-plan first (the simulator's own "
             "value check still runs)"),
    cl::init(false),
    cl::cat(::m2n::tools::category()));

static cl::opt<std::string> routeStrategy(
    "route",
    cl::desc("Route every plan with this strategy (flat, gather-bcast, "
             "hierarchical) and run the schedules instead"),
    cl::value_desc("STRATEGY"),
    cl::cat(::m2n::tools::category()));
static cl::opt<std::string> topologyFile(
    "topology", cl::desc("JSON topology file for --route"),
    cl::value_desc("FILE"),
    cl::cat(::m2n::tools::category()));
static cl::opt<int64_t> chunkBytes(
    "chunk-bytes", cl::desc("Chunk size for --route (0: no chunking)"),
    cl::init(4 << 20),
    cl::cat(::m2n::tools::category()));
static cl::opt<int64_t> scaleBands(
    "scale-bands",
    cl::desc("--route, quantizing reshards: at most this many bands of "
             "block rows (1-8)"),
    cl::init(1), cl::cat(::m2n::tools::category()));
static cl::opt<bool> quantizeOnce(
    "quantize-once",
    cl::desc("--route hierarchical, quantizing reshards: one destination of "
             "a region in a domain quantizes it, the others copy its fp8 "
             "bytes"),
    cl::init(true), cl::cat(::m2n::tools::category()));
static cl::opt<bool> quantizeOnSources(
    "quantize-on-sources",
    cl::desc("--route hierarchical, quantizing once: the source replicas of "
             "a region quantize bands of it too"),
    cl::init(false), cl::cat(::m2n::tools::category()));
static cl::opt<std::string> reduceShare(
    "reduce-share",
    cl::desc("--route hierarchical: reduce once per domain, then share "
             "(on, off, auto)"),
    cl::init("auto"),
    cl::cat(::m2n::tools::category()));

static int fail(const Twine &message) {
  llvm::outs() << "m2n-sim: FAIL: " << message << "\n";
  return 1;
}

static std::string functionName(Operation *op) {
  if (auto func = op->getParentOfType<func::FuncOp>())
    return "@" + func.getSymName().str();
  return "<module>";
}

static cl::opt<uint64_t> maxBytes(
    "max-bytes",
    cl::desc("The most bytes of rank buffers a simulation may allocate "
             "(every rank's source and destination part)"),
    cl::init(uint64_t(16) << 30), cl::cat(::m2n::tools::category()));

/// The bytes of every rank's local part of `layout`, or std::nullopt past
/// uint64 (the simulator holds each in memory).
static std::optional<int64_t> bufferBytes(const ::m2n::Layout &layout,
                                           const std::vector<int64_t> &shape,
                                           ::m2n::ElementType type) {
  int64_t total = 0;
  for (int64_t index = 0; index < layout.mesh.size(); ++index) {
    std::optional<int64_t> bytes = ::m2n::checkedProduct(
        layout.localBox(shape, index).sizes, ::m2n::elementSize(type));
    std::optional<int64_t> sum = bytes ? ::m2n::checkedAdd(total, *bytes)
                                       : std::nullopt;
    if (!sum)
      return std::nullopt;
    total = *sum;
  }
  return total;
}

int main(int argc, char **argv) {
  llvm::InitLLVM y(argc, argv);
  ::m2n::tools::keepFreedMemory();
  mlir::registerMLIRContextCLOptions();
  ::m2n::tools::parseCommandLine(argc, argv, "m2n reference executor\n");

  DialectRegistry registry;
  registry.insert<mlir::m2n::M2NDialect, func::FuncDialect,
                  shard::ShardDialect, mlir::m2n::sdy::SdyDialect,
                  mlir::m2n::mpmd::MpmdDialect, tensor::TensorDialect>();
  MLIRContext context(registry);
  context.loadAllAvailableDialects();
  if (!::m2n::tools::printOpOnDiagnosticRequested())
    context.printOpOnDiagnostic(false);

  llvm::SourceMgr sourceMgr;
  std::string error;
  auto file = openInputFile(inputFilename, &error);
  if (!file)
    return fail(error);
  sourceMgr.AddNewSourceBuffer(std::move(file), llvm::SMLoc());
  SourceMgrDiagnosticHandler diagnostics(sourceMgr, &context);
  OwningOpRef<ModuleOp> module = mlir::m2n::parseInput(sourceMgr, &context);
  if (!module)
    return fail("cannot parse '" + inputFilename + "'");

  PassManager pm(&context);
  pm.addPass(mlir::m2n::createPlanIntersections());
  if (!skipVerify)
    pm.addPass(mlir::m2n::createVerifyPlan());
  if (!routeStrategy.empty()) {
    mlir::m2n::RouteTopologyOptions options;
    options.strategy = routeStrategy;
    options.topologyFile = topologyFile;
    options.chunkBytes = chunkBytes;
    options.scaleBands = scaleBands;
    options.quantizeOnce = quantizeOnce;
    options.quantizeOnSources = quantizeOnSources;
    options.reduceShare = reduceShare;
    pm.addPass(mlir::m2n::createRouteTopology(options));
  }
  if (failed(pm.run(*module)))
    return fail("planning or plan verification failed (diagnostics above)");

  // Plans and schedules, in program order.
  SmallVector<Operation *> plans;
  module->walk([&](Operation *op) {
    if (isa<mlir::m2n::PlanOp, mlir::m2n::ScheduleOp, mlir::m2n::ProgramOp>(
            op))
      plans.push_back(op);
  });
  if (plans.empty())
    return fail("no m2n.reshard, collective, m2n.plan, m2n.schedule or "
                "m2n.program in the input");

  // --dump-dst's directory for plan `index` (a subdirectory per plan when
  // the input has several), created.
  auto makeDumpDir = [&](size_t index,
                         SmallString<256> &dir) -> std::optional<std::string> {
    dir = dumpDir;
    if (plans.size() > 1)
      llvm::sys::path::append(dir, "plan" + std::to_string(index));
    if (std::error_code ec = llvm::sys::fs::create_directories(dir))
      return "cannot create '" + dir.str().str() + "': " + ec.message();
    return std::nullopt;
  };
  // A quantizing run's dump: the global source, and per destination rank
  // its quantized buffer and its scales (f32, or e8m0 bytes), for an
  // outside reference.
  auto dumpQuantized =
      [&](size_t index, const ::m2n::Scaling &scaling, ::m2n::ElementType from,
          const ::m2n::QuantizedBuffers &kept,
          llvm::function_ref<::m2n::Box(int64_t)> heldBy)
      -> std::optional<std::string> {
    Operation *plan = plans[index];
    auto srcType = cast<mlir::m2n::DistType>(plan->getOperand(0).getType());
    auto dstType = cast<mlir::m2n::DistType>(plan->getResult(0).getType());
    std::vector<int64_t> shape(srcType.getShape().begin(),
                               srcType.getShape().end());
    ::m2n::ElementType to = *mlir::m2n::toElementType(dstType.getElementType());
    SmallString<256> dir;
    if (std::optional<std::string> error = makeDumpDir(index, dir))
      return error;
    auto write = [&](const std::string &name, ::m2n::ElementType elementType,
                     std::vector<int64_t> extents,
                     const std::vector<uint8_t> &data) {
      SmallString<256> path(dir);
      llvm::sys::path::append(path, name);
      return ::m2n::writeNpy(std::string(path), elementType, extents, data);
    };
    if (std::optional<std::string> error =
            write("source.npy", from, shape, kept.source))
      return error;
    const ::m2n::Layout dstLayout = mlir::m2n::toLayout(dstType.getLayout());
    for (int64_t j = 0; j < dstLayout.mesh.size(); ++j) {
      int64_t rank = dstLayout.mesh.rankAt(j);
      std::string suffix = std::to_string(rank) + ".npy";
      if (std::optional<std::string> error =
              write("rank" + suffix, to, dstLayout.localBox(shape, j).sizes.vec(),
                    kept.destinations.at(rank)))
        return error;
      if (std::optional<std::string> error = write(
              "scales" + suffix,
              ::m2n::hasExponentScales(scaling) ? ::m2n::ElementType::F8E8M0FNU
                                                : ::m2n::ElementType::F32,
              heldBy(rank).sizes.vec(), kept.scales.at(rank)))
        return error;
    }
    return std::nullopt;
  };
  int64_t transfers = 0, checked = 0;
  for (auto [index, plan] : llvm::enumerate(plans)) {
    auto schedule = dyn_cast<mlir::m2n::ScheduleOp>(plan);
    auto programOp = dyn_cast<mlir::m2n::ProgramOp>(plan);
    std::string where = (programOp  ? "program "
                         : schedule ? "schedule "
                                    : "plan ") +
                        std::to_string(index) + " in " + functionName(plan);
    auto srcType = cast<mlir::m2n::DistType>(plan->getOperand(0).getType());
    auto dstType = cast<mlir::m2n::DistType>(plan->getResult(0).getType());
    std::optional<::m2n::ElementType> type =
        mlir::m2n::toElementType(srcType.getElementType());
    if (!type) {
      std::string name;
      llvm::raw_string_ostream os(name);
      os << srcType.getElementType();
      return fail(where + ": element type " + name +
                  " is not simulated");
    }
    std::vector<int64_t> shape(srcType.getShape().begin(),
                               srcType.getShape().end());
    // Every rank's buffers live in this process: refuse what would not fit
    // instead of dying in the allocator.
    std::optional<int64_t> srcBytes = bufferBytes(
        mlir::m2n::toLayout(srcType.getLayout()), shape, *type);
    std::optional<int64_t> dstBytes = bufferBytes(
        mlir::m2n::toLayout(dstType.getLayout()), shape, *type);
    std::optional<int64_t> needed =
        srcBytes && dstBytes ? ::m2n::checkedAdd(*srcBytes, *dstBytes)
                             : std::nullopt;
    // A quantizing plan also holds the global tensor and its reference
    // quantization (f32 values at most: 4 + 4 bytes an element, a bound on
    // the slots and tables too, which hold fewer blocks than elements).
    auto planOp = dyn_cast<mlir::m2n::PlanOp>(plan);
    mlir::m2n::ScalingAttr scalingAttr =
        planOp     ? planOp.getScalingAttr()
        : schedule ? schedule.getScalingAttr()
                   : programOp.getScalingAttr();
    if (needed && scalingAttr) {
      std::optional<int64_t> extra = ::m2n::checkedProduct(shape, 16);
      needed = extra ? ::m2n::checkedAdd(*needed, *extra) : std::nullopt;
    }
    if (!needed || static_cast<uint64_t>(*needed) > maxBytes)
      return fail(where + ": simulating needs " +
                  (needed ? std::to_string(*needed)
                          : std::string("more than 2^63")) +
                  " bytes of rank buffers, more than --max-bytes=" +
                  std::to_string(maxBytes));
    ::m2n::ReshardSimulator simulator(
        mlir::m2n::toLayout(srcType.getLayout()),
        mlir::m2n::toLayout(dstType.getLayout()), shape, *type);
    ::m2n::SimulationReport report;
    if (programOp) {
      // A program: verified as the runtime verifies it, then run by its
      // host executor, items dealt to one CTA a rank and to three.
      ::m2n::CompiledReshard compiled = mlir::m2n::toCompiledReshard(programOp);
      if (std::optional<std::string> wrong = ::m2n::verifyTransferProgram(
              compiled.program, compiled.src, compiled.dst, compiled.shape))
        return fail(where + ": " + *wrong);
      for (const auto &[rank, rankProgram] : compiled.program.ranks)
        transfers += static_cast<int64_t>(rankProgram.items.size() +
                                          rankProgram.receives.size() +
                                          rankProgram.engineCopies.size());
      ::m2n::QuantizedBuffers kept;
      for (int64_t ctas : {1, 3}) {
        if (scalingAttr) {
          report = ::m2n::simulateQuantizingProgram(
              compiled.program, compiled.src, compiled.dst, compiled.shape,
              ctas, /*seed=*/1, dumpDir.empty() ? nullptr : &kept);
        } else {
          simulator.reset();
          if (std::optional<std::string> error =
                  ::m2n::executeProgram(compiled.program, simulator, ctas))
            return fail(where + ": " + *error);
          report = simulator.check();
        }
        if (!report.passed)
          return fail(where + ": " + report.message);
      }
      if (scalingAttr) {
        checked += report.checkedElements;
        if (dumpDir.empty())
          continue;
        const ::m2n::BufferShapes shapeOf(compiled.src, compiled.dst, shape,
                                          compiled.program.scratches,
                                          scalingAttr.getValue());
        if (std::optional<std::string> error = dumpQuantized(
                index, scalingAttr.getValue(), *type, kept, [&](int64_t rank) {
                  return *shapeOf.blocksOf({::m2n::BufferKind::Scales, rank});
                }))
          return fail(*error);
        continue;
      }
    } else if (schedule && scalingAttr) {
      // A quantizing schedule: its steps in both orders, from poisoned
      // slots, holder tables, scales and destinations.
      ::m2n::Schedule steps = mlir::m2n::toSchedule(schedule);
      transfers += static_cast<int64_t>(steps.steps.size());
      ::m2n::QuantizedBuffers kept;
      for (auto order : {::m2n::ReshardSimulator::StepOrder::LastReadyFirst,
                         ::m2n::ReshardSimulator::StepOrder::ListOrder}) {
        report = ::m2n::simulateQuantizingSchedule(
            scalingAttr.getValue(), mlir::m2n::toLayout(srcType.getLayout()),
            mlir::m2n::toLayout(dstType.getLayout()), shape, *type,
            *mlir::m2n::toElementType(dstType.getElementType()), steps, order,
            /*seed=*/1, dumpDir.empty() ? nullptr : &kept);
        if (!report.passed)
          return fail(where + ": " + report.message);
      }
      checked += report.checkedElements;
      if (dumpDir.empty())
        continue;
      // BufferShapes keeps its layouts by reference.
      const ::m2n::Layout srcLayout = mlir::m2n::toLayout(srcType.getLayout());
      const ::m2n::Layout dstLayout = mlir::m2n::toLayout(dstType.getLayout());
      const ::m2n::BufferShapes shapeOf(srcLayout, dstLayout, shape,
                                        steps.scratches,
                                        scalingAttr.getValue());
      if (std::optional<std::string> error = dumpQuantized(
              index, scalingAttr.getValue(), *type, kept, [&](int64_t rank) {
                return *shapeOf.blocksOf(
                    {::m2n::BufferKind::Scales, rank});
              }))
        return fail(*error);
      continue;
    }
    if (planOp && planOp.getScalingAttr()) {
      // A quantizing plan: its three phases, checked against the reference
      // quantizer (destination elements and the scales each rank holds).
      ::m2n::ReshardPlan reshardPlan = mlir::m2n::toReshardPlan(planOp);
      transfers += static_cast<int64_t>(reshardPlan.transfers.size());
      ::m2n::Scaling scaling = planOp.getScalingAttr().getValue();
      ::m2n::ElementType to =
          *mlir::m2n::toElementType(dstType.getElementType());
      ::m2n::ScalePlan scalePlan = mlir::m2n::toScalePlan(planOp);
      ::m2n::QuantizedBuffers kept;
      report = ::m2n::simulateQuantizingPlan(
          scaling, mlir::m2n::toLayout(srcType.getLayout()),
          mlir::m2n::toLayout(dstType.getLayout()), shape, *type, to,
          reshardPlan, scalePlan, /*seed=*/1,
          dumpDir.empty() ? nullptr : &kept);
      if (!report.passed)
        return fail(where + ": " + report.message);
      checked += report.checkedElements;
      if (dumpDir.empty())
        continue;
      if (std::optional<std::string> error = dumpQuantized(
              index, scalingAttr.getValue(), *type, kept, [&](int64_t rank) {
                return scalePlan.tableBox(rank, ::m2n::ScaleTable::Holder);
              }))
        return fail(*error);
      continue;
    }
    if (programOp) {
      // Ran above; its last run's buffers are the simulator's.
    } else if (schedule) {
      // Both orders that respect the dependencies: a missing dependency
      // shows up as a wrong value in one of them.
      ::m2n::Schedule steps = mlir::m2n::toSchedule(schedule);
      transfers += static_cast<int64_t>(steps.steps.size());
      for (auto order : {::m2n::ReshardSimulator::StepOrder::LastReadyFirst,
                         ::m2n::ReshardSimulator::StepOrder::ListOrder}) {
        simulator.reset();
        if (std::optional<std::string> error = simulator.execute(steps, order))
          return fail(where + ": " + *error);
        report = simulator.check();
        if (!report.passed)
          return fail(where + ": " + report.message);
      }
    } else {
      ::m2n::ReshardPlan reshardPlan =
          mlir::m2n::toReshardPlan(cast<mlir::m2n::PlanOp>(plan));
      transfers += static_cast<int64_t>(reshardPlan.transfers.size());
      if (std::optional<std::string> error = simulator.execute(reshardPlan))
        return fail(where + ": " + *error);
      report = simulator.check();
      if (!report.passed)
        return fail(where + ": " + report.message);
    }
    checked += report.checkedElements;

    if (dumpDir.empty())
      continue;
    SmallString<256> dir;
    if (std::optional<std::string> error = makeDumpDir(index, dir))
      return fail(*error);
    const ::m2n::Layout &dst = simulator.dstLayout();
    for (int64_t j = 0; j < dst.mesh.size(); ++j) {
      SmallString<256> path(dir);
      llvm::sys::path::append(path,
                              "rank" + std::to_string(dst.mesh.rankAt(j)) +
                                  ".npy");
      if (std::optional<std::string> error =
              ::m2n::writeNpy(std::string(path), *type,
                              simulator.dstLocalShape(j),
                              simulator.dstBuffer(j)))
        return fail(*error);
    }
  }
  const bool routed = isa<mlir::m2n::ScheduleOp>(plans.front());
  const bool lowered = isa<mlir::m2n::ProgramOp>(plans.front());
  llvm::outs() << "m2n-sim: PASS: " << plans.size()
               << (lowered ? " program" : routed ? " schedule" : " plan")
               << (plans.size() == 1 ? "" : "s") << ", " << transfers
               << (lowered  ? " moves, "
                   : routed ? " steps, "
                            : " transfers, ")
               << checked << " destination elements checked\n";
  return 0;
}
