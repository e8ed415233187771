//===- Compile.cpp - one call from m2n IR text to an artifact -------------===//

#include "m2n/Compiler/Compile.h"

#include "m2n/Conversion/M2NToGPU/M2NToGPU.h"
#include "m2n/Conversion/Passes.h"
#include "m2n/Dialect/M2N/IR/LayoutInterop.h"
#include "m2n/Dialect/M2N/IR/M2NDialect.h"
#include "m2n/Dialect/M2N/IR/M2NOps.h"
#include "m2n/Dialect/M2N/Transforms/Passes.h"
#include "m2n/Input/ReadInput.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Support/Timing.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/raw_ostream.h"

#include <mutex>

namespace m2n {

std::unique_ptr<mlir::MLIRContext> createCompilerContext() {
  // m2n's passes only: the pipeline adds the upstream ones it runs itself
  // (registering all of MLIR's took a quarter of a process's first compile).
  static std::once_flag passes;
  std::call_once(passes, [] {
    mlir::m2n::registerM2NPasses();
    mlir::m2n::registerM2NConversionPasses();
    mlir::m2n::registerM2NPipeline();
  });
  mlir::DialectRegistry registry;
  mlir::m2n::registerPipelineDialects(registry);
  auto context = std::make_unique<mlir::MLIRContext>(registry);
  // Messages name the problem; the op's full text would bury it.
  context->printOpOnDiagnostic(false);
  return context;
}

CompileResult compileToArtifact(mlir::MLIRContext &context, llvm::StringRef ir,
                                llvm::StringRef options,
                                llvm::StringRef dumpPath,
                                llvm::StringRef sourceName,
                                llvm::raw_ostream *timing) {
  return compileModule(
      context,
      [&]() { return mlir::m2n::parseInput(ir, &context, sourceName); },
      options, dumpPath, timing);
}

CompileResult
compileModule(mlir::MLIRContext &context,
              llvm::function_ref<mlir::OwningOpRef<mlir::ModuleOp>()> load,
              llvm::StringRef options, llvm::StringRef dumpPath,
              llvm::raw_ostream *timing) {
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

  // Every parameter is the pipeline's: the launch is in the module once
  // m2n-choose-launch ran.
  if (options.contains("artifact=")) {
    errors << "the artifact option writes a file; the compiler API returns "
              "the artifact instead\n";
    return result;
  }
  mlir::OwningOpRef<mlir::ModuleOp> module = load();
  if (!module)
    return result;
  // The one pipeline m2n-opt runs, with the verifiers on: op verifiers
  // check structure (cheap for a whole refit), the pipeline's verification
  // passes the rest.
  mlir::PassManager pm(&context);
  std::string pipeline = "m2n-pipeline";
  if (!options.empty())
    pipeline += "{" + options.str() + "}";
  if (failed(mlir::parsePassPipeline(pipeline, pm, errors)))
    return result;

  const bool threaded = context.isMultithreadingEnabled();
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
        // The op each pass ran on: a whole refit's module after every
        // pass on each of its functions would grow with their square.
        /*printModuleScope=*/false, /*printAfterOnlyOnChange=*/false,
        /*printAfterOnlyOnFailure=*/false, *dump);
  }
  if (timing) {
    // The report is printed when the pass manager (its owner) goes.
    auto timer = std::make_unique<mlir::DefaultTimingManager>();
    timer->setEnabled(true);
    timer->setOutput(mlir::createOutputStrategy(
        mlir::DefaultTimingManager::OutputFormat::Text, *timing));
    pm.enableTiming(std::move(timer));
  }
  // IR printing needs one thread; the context serves later compiles too.
  llvm::scope_exit restoreThreads([&] {
    if (dump && threaded)
      context.enableMultithreading();
  });
  if (failed(pm.run(*module)))
    return result;
  mlir::FailureOr<::m2n::ArtifactParts> artifact =
      mlir::m2n::buildArtifact(*module);
  if (failed(artifact))
    return result;
  result.artifact = artifact->join();
  result.ok = true;
  return result;
}

} // namespace m2n
