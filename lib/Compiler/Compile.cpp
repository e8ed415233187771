//===- Compile.cpp - one call from m2n IR text to an artifact -------------===//

#include "m2n/Dialect/Shardy/ShardyDialect.h"
#include "m2n/Compiler/Compile.h"

#include "m2n/Conversion/M2NToGPU/DirectCompile.h"
#include "m2n/Conversion/M2NToGPU/M2NToGPU.h"
#include "m2n/Conversion/Passes.h"
#include "m2n/Dialect/M2N/IR/LayoutInterop.h"
#include "m2n/Dialect/M2N/IR/M2NDialect.h"
#include "m2n/Dialect/M2N/IR/M2NOps.h"
#include "m2n/Dialect/M2N/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Target/LLVM/NVVM/Target.h"
#include "mlir/Target/LLVMIR/Dialect/All.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/raw_ostream.h"

#include <mutex>

namespace m2n {

std::unique_ptr<mlir::MLIRContext> createCompilerContext() {
  static std::once_flag passes;
  std::call_once(passes, [] {
    mlir::registerAllPasses();
    mlir::m2n::registerM2NPasses();
    mlir::m2n::registerM2NConversionPasses();
    mlir::m2n::registerM2NPipeline();
  });
  mlir::DialectRegistry registry;
  mlir::registerAllDialects(registry);
  mlir::registerAllExtensions(registry);
  // m2n, and the Shardy subset that imported programs still mention.
  registry.insert<mlir::m2n::M2NDialect, mlir::m2n::sdy::SdyDialect,
                  mlir::m2n::mpmd::MpmdDialect>();
  mlir::NVVM::registerNVVMTargetInterfaceExternalModels(registry);
  mlir::registerAllGPUToLLVMIRTranslations(registry);
  auto context = std::make_unique<mlir::MLIRContext>(registry);
  // Messages name the problem; the op's full text would bury it.
  context->printOpOnDiagnostic(false);
  return context;
}

/// The reshards of a module that holds nothing else (functions of
/// m2n.reshard ops and returns: what the Python JIT and m2n-refit write),
/// named as the pipeline names their programs; std::nullopt for any other
/// module, which the pipeline compiles.
static std::optional<std::vector<mlir::m2n::ReshardRequest>>
plainReshards(mlir::ModuleOp module) {
  std::optional<::m2n::Topology> topology;
  if (auto attr = module->getAttrOfType<mlir::m2n::TopologyAttr>(
          mlir::m2n::M2NDialect::getTopologyAttrName()))
    topology = mlir::m2n::toTopology(attr);
  std::vector<mlir::m2n::ReshardRequest> requests;
  for (mlir::Operation &op : module.getBody()->getOperations()) {
    auto func = llvm::dyn_cast<mlir::func::FuncOp>(op);
    if (!func || func.isExternal() || !func.getBody().hasOneBlock() ||
        func->getAttrOfType<mlir::m2n::TopologyAttr>(
            mlir::m2n::M2NDialect::getTopologyAttrName()))
      return std::nullopt; // A topology per function: the pipeline's.
    for (mlir::Operation &inner : func.getBody().front()) {
      if (llvm::isa<mlir::func::ReturnOp>(inner))
        continue;
      auto reshard = llvm::dyn_cast<mlir::m2n::ReshardOp>(inner);
      if (!reshard || inner.getAttrOfType<mlir::m2n::TopologyAttr>(
                          mlir::m2n::M2NDialect::getTopologyAttrName()))
        return std::nullopt;
      mlir::m2n::DistType src = reshard.getInput().getType();
      mlir::m2n::DistType dst = reshard.getResult().getType();
      std::optional<ElementType> type =
          mlir::m2n::toElementType(dst.getElementType());
      std::optional<ElementType> sourceType =
          mlir::m2n::toElementType(src.getElementType());
      if (!type || !sourceType)
        return std::nullopt; // The pipeline names the problem.
      mlir::m2n::ReshardRequest request;
      request.name = "@" + func.getSymName().str() + "#" +
                     std::to_string(requests.size());
      request.src = mlir::m2n::toLayout(src.getLayout());
      request.dst = mlir::m2n::toLayout(dst.getLayout());
      request.shape.assign(src.getShape().begin(), src.getShape().end());
      request.type = *type;
      if (*sourceType != *type) {
        request.sourceType = *sourceType;
        if (mlir::FloatAttr scale = reshard.getScaleAttr())
          request.scale = static_cast<float>(scale.getValueAsDouble());
      }
      request.commSize = reshard.getComm().getType().getSize();
      request.topology = topology;
      requests.push_back(std::move(request));
    }
  }
  return requests;
}

CompileResult compileToArtifact(mlir::MLIRContext &context, llvm::StringRef ir,
                                llvm::StringRef options,
                                llvm::StringRef dumpPath,
                                llvm::StringRef sourceName) {
  CompileResult result;
  llvm::raw_string_ostream errors(result.error);
  mlir::ScopedDiagnosticHandler handler(&context, [&](mlir::Diagnostic &d) {
    // "file:line:col: error: message", as m2n-opt prints it.
    if (auto at = llvm::dyn_cast<mlir::FileLineColLoc>(d.getLocation()))
      errors << at.getFilename().getValue() << ":" << at.getLine() << ":"
             << at.getColumn() << ": ";
    else if (!llvm::isa<mlir::UnknownLoc>(d.getLocation()))
      errors << d.getLocation() << ": ";
    errors << (d.getSeverity() == mlir::DiagnosticSeverity::Error ? "error: "
                                                                  : "")
           << d << "\n";
    for (const mlir::Diagnostic &note : d.getNotes())
      errors << "  note: " << note << "\n";
    return mlir::success();
  });

  // Launch and lowering parameters of the artifact come from the same
  // option string as the pipeline's, parsed the same way.
  if (options.contains("artifact=")) {
    errors << "the artifact option writes a file; the compiler API returns "
              "the artifact instead\n";
    return result;
  }
  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlir::parseSourceString<mlir::ModuleOp>(ir, &context, sourceName);
  if (!module)
    return result;
  // A module of plain reshards compiles without IR stages in between
  // (DirectCompile.h): the same artifact, byte for byte, in a fraction of
  // the time for many reshards. Dumps need the IR.
  if (dumpPath.empty())
    if (std::optional<std::vector<mlir::m2n::ReshardRequest>> requests =
            plainReshards(*module)) {
      std::string error;
      mlir::FailureOr<std::string> bytes = mlir::m2n::compileReshardsDirectly(
          context, *requests, options, /*threads=*/1, error);
      if (mlir::failed(bytes)) {
        errors << error << "\n";
        return result;
      }
      result.artifact = std::move(*bytes);
      result.ok = true;
      return result;
    }
  mlir::PassManager pm(&context);
  // No verification between passes: each pass keeps the IR valid (m2n-opt,
  // which the tests run, verifies after every pass), and the runtime checks
  // every program it loads (verifyTransferProgram). Verifying a refit's
  // module after each of the pipeline's passes cost more than the passes.
  pm.enableVerifier(false);
  std::string pipeline = "m2n-pipeline";
  if (!options.empty())
    pipeline += "{" + options.str() + "}";
  if (failed(mlir::parsePassPipeline(pipeline, pm, errors)))
    return result;
  mlir::FailureOr<mlir::m2n::ArtifactOptions> artifactOptions =
      mlir::m2n::parseArtifactOptions(options, errors);
  if (failed(artifactOptions))
    return result;

  std::unique_ptr<llvm::raw_fd_ostream> dump;
  if (!dumpPath.empty()) {
    std::error_code ec;
    dump = std::make_unique<llvm::raw_fd_ostream>(dumpPath, ec,
                                                  llvm::sys::fs::OF_Text);
    if (ec) {
      errors << "cannot write '" << dumpPath << "': " << ec.message() << "\n";
      return result;
    }
    context.disableMultithreading();
    pm.enableIRPrinting(
        [](mlir::Pass *, mlir::Operation *) { return false; },
        [](mlir::Pass *, mlir::Operation *) { return true; },
        /*printModuleScope=*/true, /*printAfterOnlyOnChange=*/false,
        /*printAfterOnlyOnFailure=*/false, *dump);
  }
  if (failed(pm.run(*module)))
    return result;
  mlir::FailureOr<std::string> bytes =
      mlir::m2n::buildArtifact(*module, *artifactOptions);
  if (failed(bytes))
    return result;
  result.artifact = std::move(*bytes);
  result.ok = true;
  return result;
}

} // namespace m2n
