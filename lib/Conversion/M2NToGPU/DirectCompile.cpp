//===- DirectCompile.cpp - many reshards to an artifact without IR ---------===//

#include "m2n/Conversion/M2NToGPU/DirectCompile.h"

#include "m2n/Codegen/TransferProgram.h"
#include "m2n/Conversion/M2NToGPU/M2NToGPU.h"
#include "m2n/Conversion/M2NToGPU/TransferKernel.h"
#include "m2n/Plan/Planner.h"
#include "m2n/Route/Router.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

#include <atomic>
#include <cstring>
#include <chrono>
#include <map>
#include <mutex>
#include <thread>
#include <tuple>

using namespace mlir;

namespace {

using Clock = std::chrono::steady_clock;

double millisecondsSince(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start)
      .count();
}

/// The transfer kernel's PTX and chip for a set of ops, made once per
/// process: the kernel depends on nothing else.
struct KernelKey {
  std::set<uint32_t> bulk, vector;
  std::set<std::pair<uint32_t, uint32_t>> tile;
  std::string chip, features, format;
  bool operator<(const KernelKey &other) const {
    return std::tie(bulk, vector, tile, chip, features, format) <
           std::tie(other.bulk, other.vector, other.tile, other.chip,
                    other.features, other.format);
  }
};

FailureOr<std::pair<std::string, std::string>>
buildKernel(MLIRContext &context, const ::m2n::KernelOps &ops,
            const mlir::m2n::PipelineSettings &settings, std::string &error) {
  OwningOpRef<ModuleOp> module = ModuleOp::create(UnknownLoc::get(&context));
  std::string diagnostics;
  llvm::raw_string_ostream os(diagnostics);
  ScopedDiagnosticHandler handler(&context, [&](Diagnostic &d) {
    os << d << "\n";
    return success();
  });
  (*module)->setAttr(mlir::m2n::kKernelOpsAttrName,
                     mlir::m2n::kernelOpsAttr(&context, ops));
  PassManager pm(&context);
  pm.enableVerifier(false);
  mlir::m2n::addKernelToBinaryPasses(pm, settings.chip, settings.format,
                                     settings.features);
  if (failed(mlir::m2n::buildTransferKernel(*module, ops)) ||
      failed(pm.run(*module))) {
    error = "cannot build the transfer kernel: " + diagnostics;
    return failure();
  }
  auto binary =
      module->lookupSymbol<gpu::BinaryOp>(mlir::m2n::kKernelModuleName);
  for (Attribute attr : binary ? binary.getObjects() : ArrayAttr()) {
    auto object = cast<gpu::ObjectAttr>(attr);
    if (object.getFormat() != gpu::CompilationTarget::Assembly)
      continue;
    std::string chip;
    if (auto target = dyn_cast<NVVM::NVVMTargetAttr>(object.getTarget()))
      chip = target.getChip().str();
    return std::make_pair(object.getObject().getValue().str(), chip);
  }
  error = "the kernel binary holds no PTX: compile it with format=isa";
  return failure();
}

/// What a reshard's program depends on besides its topology: its layouts,
/// shape and types, and the scale's bits (not its name).
std::string reshardKey(const mlir::m2n::ReshardRequest &request) {
  std::string key = request.src.str() + "|" + request.dst.str() + "|";
  for (int64_t extent : request.shape)
    key += std::to_string(extent) + "x";
  uint32_t scaleBits = 0;
  std::memcpy(&scaleBits, &request.scale, sizeof(scaleBits));
  key += std::string("|") + ::m2n::toString(request.type) + "|" +
         (request.sourceType ? ::m2n::toString(*request.sourceType) : "") +
         "|" + std::to_string(scaleBits) + "|" +
         std::to_string(request.commSize) + "|";
  return key;
}

bool sameTopology(const ::m2n::Topology &a, const ::m2n::Topology &b) {
  return a.domains == b.domains && a.domainSize == b.domainSize &&
         a.nvlinkGBps == b.nvlinkGBps &&
         a.networkGBps == b.networkGBps;
}

} // namespace

FailureOr<std::string> mlir::m2n::compileReshardsDirectly(
    MLIRContext &context, ArrayRef<ReshardRequest> reshards,
    StringRef pipelineOptions, unsigned threads, std::string &error,
    DirectCompileTimes *times) {
  DirectCompileTimes local;
  DirectCompileTimes &timing = times ? *times : local;
  timing = DirectCompileTimes();
  llvm::raw_string_ostream errors(error);
  std::string parserMessage;
  llvm::raw_string_ostream parserErrors(parserMessage);
  FailureOr<PipelineSettings> parsed =
      parsePipelineSettings(pipelineOptions, parserErrors);
  if (failed(parsed)) {
    errors << "invalid m2n-pipeline options '" << pipelineOptions
           << "': " << parserMessage;
    return failure();
  }
  const PipelineSettings &settings = *parsed;
  if (!settings.artifactPath.empty()) {
    errors << "the artifact option writes a file; the direct compiler "
              "returns the artifact instead";
    return failure();
  }
  std::optional<::m2n::Strategy> strategy =
      ::m2n::parseStrategy(settings.strategy);
  std::optional<::m2n::ReduceShare> share =
      ::m2n::parseReduceShare(settings.reduceShare);
  if (!strategy || !share || settings.chunkBytes < 0) {
    errors << "bad strategy, reduce-share or chunk-bytes option in '"
           << pipelineOptions << "'";
    return failure();
  }
  const ArtifactOptions &launch = settings.artifact;
  if (std::optional<std::string> wrong = checkArtifactOptions(launch)) {
    errors << *wrong;
    return failure();
  }
  std::optional<::m2n::Topology> fileTopology;
  if (!settings.topologyFile.empty()) {
    auto buffer = llvm::MemoryBuffer::getFile(settings.topologyFile);
    ::m2n::Topology topology;
    if (!buffer) {
      errors << "cannot read topology file '" << settings.topologyFile
             << "': " << buffer.getError().message();
      return failure();
    }
    if (std::optional<std::string> wrong = ::m2n::Topology::parseJson(
            (*buffer)->getBuffer().str(), topology)) {
      errors << "topology file '" << settings.topologyFile << "': " << *wrong;
      return failure();
    }
    fileTopology = std::move(topology);
  }

  // Reshards of the same layouts, shape, types and topology compile to the
  // same program (a model's layers on one pipeline stage): each distinct
  // one is compiled once. `firstOf[i]`: the first reshard like reshard i.
  // The topology each reshard is routed on (the file's, the request's, or
  // one domain), numbered: requests usually share one.
  std::vector<::m2n::Topology> topologies;
  std::vector<size_t> topologyOf(reshards.size());
  for (size_t i = 0; i < reshards.size(); ++i) {
    ::m2n::Topology topology =
        fileTopology ? *fileTopology
                     : reshards[i].topology.value_or(
                           ::m2n::Topology::singleDomain(reshards[i].commSize));
    size_t index = topologies.size();
    for (size_t t = topologies.size(); t-- > 0;)
      if (sameTopology(topologies[t], topology)) {
        index = t;
        break;
      }
    if (index == topologies.size())
      topologies.push_back(std::move(topology));
    topologyOf[i] = index;
  }
  std::vector<size_t> firstOf(reshards.size()), distinct;
  std::vector<int64_t> copies(reshards.size(), 0);
  {
    std::map<std::string, size_t> seen;
    for (size_t i = 0; i < reshards.size(); ++i) {
      auto [it, fresh] = seen.emplace(
          reshardKey(reshards[i]) + std::to_string(topologyOf[i]), i);
      if (fresh)
        distinct.push_back(i);
      firstOf[i] = it->second;
      ++copies[it->second];
    }
  }

  timing.distinct = static_cast<int64_t>(distinct.size());

  // Every distinct reshard on its own: plan, route, chunk, order, lower.
  std::vector<::m2n::CompiledReshard> compiled(reshards.size());
  std::vector<std::string> problems(reshards.size());
  std::vector<std::string> serialized(reshards.size());
  ::m2n::KernelOps allOps;
  std::atomic<size_t> next{0};
  std::mutex timingMutex;
  auto work = [&] {
    double planMs = 0, routeMs = 0, lowerMs = 0, serializeMs = 0;
    int64_t steps = 0, items = 0, movements = 0;
    ::m2n::KernelOps ops;
    for (size_t at = next++; at < distinct.size(); at = next++) {
      const size_t i = distinct[at];
      const ReshardRequest &request = reshards[i];
      std::string &problem = problems[i];
      if (std::optional<std::string> wrong = ::m2n::validateReshard(
              request.src, request.dst, request.shape, request.commSize)) {
        problem = *wrong;
        continue;
      }
      const ::m2n::Topology &topology = topologies[topologyOf[i]];
      if (std::optional<std::string> wrong =
              topology.validate(request.commSize)) {
        problem = "the topology does not fit the communicator: " + *wrong;
        continue;
      }
      Clock::time_point start = Clock::now();
      ::m2n::ReshardPlan plan =
          ::m2n::IntersectionPlanner(request.src, request.dst, request.shape)
              .plan();
      planMs += millisecondsSince(start);
      start = Clock::now();
      ::m2n::Schedule schedule = ::m2n::chunkSchedule(
          ::m2n::TopologyRouter(request.src, request.dst, request.shape,
                                topology)
              .setReduceShare(*share)
              .route(plan, *strategy),
          ::m2n::elementSize(request.type), settings.chunkBytes);
      ::m2n::addDataDependencies(schedule);
      routeMs += millisecondsSince(start);
      steps += copies[i] * static_cast<int64_t>(schedule.steps.size());
      start = Clock::now();
      ::m2n::CompiledReshard &reshard = compiled[i];
      reshard.name = request.name;
      reshard.type = request.type;
      reshard.shape = request.shape;
      reshard.src = request.src;
      reshard.dst = request.dst;
      reshard.strategy = ::m2n::toString(*strategy);
      std::optional<::m2n::ElementCast> cast;
      if (request.sourceType && *request.sourceType != request.type)
        cast = ::m2n::ElementCast{*request.sourceType, request.scale};
      if (std::optional<std::string> wrong = ::m2n::lowerSchedule(
              schedule, request.src, request.dst, request.shape, request.type,
              settings.lowering, reshard.program, cast))
        problem = "cannot lower the schedule to per-rank programs: " + *wrong;
      else if (std::optional<std::string> wrong =
                   checkItemsFitStages(reshard, settings.artifact.stageBytes))
        problem = *wrong;
      lowerMs += millisecondsSince(start);
      start = Clock::now();
      if (problem.empty()) {
        serialized[i] = ::m2n::serializeReshardAfterName(reshard);
        ops.add(reshard.program);
        items += copies[i] * reshard.program.itemCount();
        for (const auto &[rank, program] : reshard.program.ranks)
          movements += copies[i] * static_cast<int64_t>(program.items.size());
      }
      // Only the bytes are kept: freeing here spreads the cost over the
      // threads.
      reshard.program = ::m2n::TransferProgram();
      serializeMs += millisecondsSince(start);
    }
    std::lock_guard<std::mutex> lock(timingMutex);
    timing.planMs += planMs;
    timing.routeMs += routeMs;
    timing.lowerMs += lowerMs;
    timing.serializeMs += serializeMs;
    timing.steps += steps;
    timing.items += items;
    timing.movements += movements;
    allOps.bulk.insert(ops.bulk.begin(), ops.bulk.end());
    allOps.tile.insert(ops.tile.begin(), ops.tile.end());
    allOps.vector.insert(ops.vector.begin(), ops.vector.end());
  };
  Clock::time_point start = Clock::now();
  std::vector<std::thread> workers;
  for (unsigned t = 1; t < std::max(1u, threads); ++t)
    workers.emplace_back(work);
  work();
  for (std::thread &worker : workers)
    worker.join();
  timing.reshardsMs = millisecondsSince(start);
  for (size_t i = 0; i < reshards.size(); ++i)
    if (!problems[i].empty()) {
      errors << reshards[i].name << ": " << problems[i];
      return failure();
    }

  // The kernel for the ops the programs use, as m2n-convert-to-gpu makes it.
  ::m2n::KernelOps &ops = allOps;
  if (ops.empty())
    ops.bulk.insert(static_cast<uint32_t>(::m2n::BulkOp::Copy));
  static std::mutex kernelMutex;
  static std::map<KernelKey, std::pair<std::string, std::string>> kernels;
  KernelKey key{ops.bulk,         ops.vector,        ops.tile,
                settings.chip,    settings.features, settings.format};
  ::m2n::Artifact artifact;
  {
    std::lock_guard<std::mutex> lock(kernelMutex);
    auto it = kernels.find(key);
    timing.kernelCached = it != kernels.end();
    if (it == kernels.end()) {
      start = Clock::now();
      FailureOr<std::pair<std::string, std::string>> kernel =
          buildKernel(context, ops, settings, error);
      if (failed(kernel))
        return failure();
      it = kernels.emplace(key, std::move(*kernel)).first;
      timing.kernelMs = millisecondsSince(start);
    }
    artifact.ptx = it->second.first;
    artifact.chip = it->second.second;
  }

  start = Clock::now();
  setKernelLaunch(launch, artifact.kernel);
  // Vector items are moved by every thread of a CTA.
  artifact.kernel.threads = ops.vector.empty() ? 32 : 128;
  std::vector<std::string> names(reshards.size());
  std::vector<std::string_view> segments;
  for (size_t i = 0; i < reshards.size(); ++i) {
    names[i] = ::m2n::serializeReshardName(reshards[i].name);
    segments.push_back(names[i]);
    segments.push_back(serialized[firstOf[i]]);
  }
  std::string bytes =
      ::m2n::assembleArtifact(artifact, reshards.size(), segments);
  timing.artifactMs = millisecondsSince(start);
  return bytes;
}
