//===- WriteArtifact.cpp - programs and PTX to the runtime's artifact ------===//

#include "m2n/Artifact/Artifact.h"
#include "m2n/Conversion/M2NToGPU/M2NToGPU.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/IR/Threading.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/raw_ostream.h"

namespace mlir::m2n {
#define GEN_PASS_DEF_WRITEARTIFACT
#include "m2n/Conversion/Passes.h.inc"
} // namespace mlir::m2n

using namespace mlir;

std::optional<std::string>
mlir::m2n::checkItemsFitStages(const ::m2n::CompiledReshard &reshard,
                               int64_t stageBytes) {
  // A kernel move goes through one stage.
  for (const auto &[rank, rankProgram] : reshard.program.ranks)
      for (const ::m2n::Movement &m : rankProgram.items)
        if (m.bytes > stageBytes)
          return "the transfer kernel cannot run " + reshard.name +
                 "'s move " + m.str(reshard.type) + " of " +
                 std::to_string(m.bytes) + " bytes through stages of " +
                 std::to_string(stageBytes) +
                 ": lower with m2n-lower-schedule{stage-bytes=" +
                 std::to_string(stageBytes) + "}";
  return std::nullopt;
}

std::optional<std::string>
mlir::m2n::checkArtifactOptions(const ArtifactOptions &options) {
  if (options.stages < 1 || options.stages > 8 || options.stageBytes < 16 ||
      options.stageBytes % 16 || options.maxCtas < 1 || options.walkers < 1 ||
      options.walkers > ::m2n::kMaxWalkers)
    return "stages must be 1-8, stage-bytes a positive multiple of 16, "
           "max-ctas positive and walkers 1-" +
           std::to_string(::m2n::kMaxWalkers);
  ::m2n::KernelLaunch kernel;
  setKernelLaunch(options, kernel);
  if (::m2n::sharedMemoryBudget(kernel) > ::m2n::kMaxStageMemory)
    return "stages x stage-bytes (each rounded up to 128) is " +
           std::to_string(::m2n::sharedMemoryBudget(kernel)) +
           " bytes of shared memory, more than the " +
           std::to_string(::m2n::kMaxStageMemory) + " a CTA may use";
  return std::nullopt;
}

void mlir::m2n::setKernelLaunch(const ArtifactOptions &options,
                                ::m2n::KernelLaunch &kernel) {
  kernel.ctas = options.maxCtas;
  kernel.stages = options.stages;
  kernel.stageBytes = options.stageBytes;
  kernel.walkers = options.walkers;
}

FailureOr<std::string>
mlir::m2n::buildArtifact(ModuleOp module, const ArtifactOptions &settings) {
  const int64_t stageBytes = settings.stageBytes;
  if (std::optional<std::string> wrong = checkArtifactOptions(settings))
    return module.emitError("m2n-write-artifact: ") << *wrong;
  ::m2n::Artifact artifact;
  setKernelLaunch(settings, artifact.kernel);

  auto binary =
      module.lookupSymbol<gpu::BinaryOp>(mlir::m2n::kKernelModuleName);
  if (!binary) {
    module.emitError("no gpu.binary @")
        << mlir::m2n::kKernelModuleName
        << ": run m2n-convert-to-gpu and gpu-module-to-binary first";
    return failure();
  }
  for (Attribute attr : binary.getObjects()) {
    auto object = cast<gpu::ObjectAttr>(attr);
    if (object.getFormat() != gpu::CompilationTarget::Assembly)
      continue;
    artifact.ptx = object.getObject().getValue().str();
    if (auto target = dyn_cast<NVVM::NVVMTargetAttr>(object.getTarget()))
      artifact.chip = target.getChip().str();
  }
  if (artifact.ptx.empty()) {
    binary.emitError("the kernel binary holds no PTX: serialize it with "
                     "format=isa");
    return failure();
  }

  FailureOr<ProgramTable> table = mlir::m2n::collectPrograms(module);
  if (failed(table))
    return failure();
  for (const ::m2n::CompiledReshard &reshard : table->programs)
    if (std::optional<std::string> wrong =
            checkItemsFitStages(reshard, stageBytes))
      return module.emitError(*wrong);

  // The kernel was specialized by m2n-convert-to-gpu: every item must be one
  // it implements (the two passes lowered with the same options).
  std::optional<::m2n::KernelOps> ops = mlir::m2n::parseKernelOpsAttr(
      module->getAttrOfType<DictionaryAttr>(mlir::m2n::kKernelOpsAttrName));
  if (!ops) {
    module.emitError("no valid ")
        << mlir::m2n::kKernelOpsAttrName
        << " attribute: the kernel must come from m2n-convert-to-gpu";
    return failure();
  }
  for (const ::m2n::CompiledReshard &reshard : table->programs)
    if (std::optional<std::string> missing = ops->missing(reshard.program)) {
      module.emitError("the transfer kernel cannot run ")
          << reshard.name << "'s item " << *missing
          << ": run m2n-convert-to-gpu on the lowered programs (or with "
             "kernel-ops=all)";
      return failure();
    }
  // Vector items are moved by every thread of a CTA.
  artifact.kernel.threads = ops->vector.empty() ? 32 : 128;

  // Each program once; every tensor is a name and the index of its program.
  std::vector<std::string> programs(table->programs.size());
  mlir::parallelFor(module.getContext(), 0, programs.size(), [&](size_t i) {
    programs[i] = ::m2n::serializeProgram(table->programs[i]);
  });
  std::vector<std::pair<std::string, uint32_t>> tensors;
  tensors.reserve(table->tensors.size());
  for (auto &[name, program] : table->tensors)
    tensors.emplace_back(std::move(name), static_cast<uint32_t>(program));
  for (auto &[name, members] : table->groups)
    artifact.groups.push_back({std::move(name), std::move(members), nullptr});
  return ::m2n::assembleArtifact(
      artifact, std::vector<std::string_view>(programs.begin(), programs.end()),
      tensors);
}

namespace {
struct WriteArtifactPass
    : public mlir::m2n::impl::WriteArtifactBase<WriteArtifactPass> {
  using WriteArtifactBase::WriteArtifactBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (path.empty()) {
      module.emitError("m2n-write-artifact needs a path");
      return signalPassFailure();
    }
    mlir::m2n::ArtifactOptions settings;
    settings.maxCtas = maxCtas;
    settings.stages = stages;
    settings.stageBytes = stageBytes;
    settings.walkers = walkers;
    FailureOr<std::string> bytes = mlir::m2n::buildArtifact(module, settings);
    if (failed(bytes))
      return signalPassFailure();
    // Write atomically: readers never see a partial artifact.
    std::string temporary = path + ".tmp";
    {
      std::error_code ec;
      llvm::raw_fd_ostream out(temporary, ec, llvm::sys::fs::OF_None);
      if (ec) {
        module.emitError("cannot write '")
            << temporary << "': " << ec.message();
        return signalPassFailure();
      }
      out << *bytes;
    }
    if (std::error_code ec = llvm::sys::fs::rename(temporary, path)) {
      module.emitError("cannot rename '")
          << temporary << "' to '" << path << "': " << ec.message();
      return signalPassFailure();
    }
    markAllAnalysesPreserved();
  }
};
} // namespace
