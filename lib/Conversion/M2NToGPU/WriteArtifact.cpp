//===- WriteArtifact.cpp - programs and PTX to the runtime's artifact ------===//

#include "m2n/Artifact/Artifact.h"
#include "m2n/Conversion/M2NToGPU/M2NToGPU.h"
#include "m2n/Dialect/M2N/IR/LayoutInterop.h"
#include "m2n/Dialect/M2N/IR/M2NDialect.h"
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
using namespace mlir::m2n;

FailureOr<::m2n::ArtifactParts> mlir::m2n::buildArtifact(ModuleOp module) {
  ::m2n::Artifact artifact;
  auto launch = module->getAttrOfType<KernelLaunchAttr>(
      M2NDialect::getKernelLaunchAttrName());
  if (!launch) {
    module.emitError("no ")
        << M2NDialect::getKernelLaunchAttrName()
        << ": run m2n-choose-launch first (the launch is the compiler's)";
    return failure();
  }
  artifact.kernel = launch.getKernelLaunch();

  auto container =
      module.lookupSymbol<ModuleOp>(mlir::m2n::kKernelContainerName);
  auto binary = container ? container.lookupSymbol<gpu::BinaryOp>(
                                mlir::m2n::kKernelModuleName)
                          : gpu::BinaryOp();
  if (!binary) {
    module.emitError("no gpu.binary @")
        << mlir::m2n::kKernelContainerName
        << "::@" << mlir::m2n::kKernelModuleName
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

  // Each program once; every tensor is a name and the index of its program.
  // Each is converted, checked and serialized in one go, its C++ form
  // dropped before the next: the threads reuse the same memory instead of
  // holding every program's movements at once.
  const size_t count = table->programs.size();
  std::vector<std::string> programs(count), problems(count);
  mlir::parallelFor(module.getContext(), 0, count, [&](size_t i) {
    ::m2n::CompiledReshard reshard = toCompiledReshard(table->programs[i]);
    reshard.name = table->programNames[i];
    for (const auto &[rank, program] : reshard.program.ranks)
      if (!program.launch) {
        problems[i] = "rank " + std::to_string(rank) + " of " + reshard.name +
                      " has no launch: run m2n-choose-launch on the lowered "
                      "module";
        return;
      }
    if (std::optional<std::string> missing = ops->missing(reshard.program)) {
      problems[i] = "the transfer kernel cannot run " + reshard.name +
                    "'s item " + *missing +
                    ": run m2n-convert-to-gpu on the lowered programs (or "
                    "with kernel-ops=all)";
      return;
    }
    programs[i] = ::m2n::serializeProgram(reshard, artifact.kernel);
  });
  for (const std::string &problem : problems)
    if (!problem.empty()) {
      module.emitError(problem);
      return failure();
    }
  std::vector<std::pair<std::string, uint32_t>> tensors;
  tensors.reserve(table->tensors.size());
  for (auto &[name, program] : table->tensors)
    tensors.emplace_back(std::move(name), static_cast<uint32_t>(program));
  for (auto &[name, members] : table->groups)
    artifact.groups.push_back({std::move(name), std::move(members), nullptr});
  return ::m2n::assembleArtifact(artifact, std::move(programs), tensors);
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
    FailureOr<::m2n::ArtifactParts> artifact = mlir::m2n::buildArtifact(module);
    if (failed(artifact))
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
      for (const std::string &part : artifact->parts)
        out << part;
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
