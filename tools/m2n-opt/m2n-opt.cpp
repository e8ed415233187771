//===- m2n-opt.cpp - m2n optimizer driver -----------------------------------===//
//
// Parses, verifies and transforms IR with the m2n dialect and the upstream
// dialects that the m2n pipeline lowers through. It registers m2n's passes
// and the upstream passes that apply to m2n's IR (the kernel's lowering
// steps, canonicalization), not all of MLIR's, and its
// --help shows those and the options m2n's users need (--help-hidden: every
// MLIR option).
//
//===----------------------------------------------------------------------===//

#include "../ToolSupport.h"

#include "m2n/Conversion/Passes.h"
#include "m2n/Dialect/M2N/IR/M2NDialect.h"
#include "m2n/Dialect/M2N/Transforms/Passes.h"
#include "m2n/Input/ReadInput.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "mlir/Transforms/Passes.h"
#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/ToolOutputFile.h"

int main(int argc, char **argv) {
  llvm::InitLLVM initLLVM(argc, argv);
  m2n::tools::keepFreedMemory();
  mlir::DialectRegistry registry;
  mlir::m2n::registerPipelineDialects(registry);

  mlir::m2n::registerM2NPasses();
  mlir::m2n::registerVerifyInputPass();
  mlir::m2n::registerM2NConversionPasses();
  mlir::m2n::registerM2NPipeline();
  // Upstream passes on m2n's path: what --m2n-pipeline runs after
  // --m2n-convert-to-gpu (to rerun a stage by hand) and the generic
  // cleanups. (The shard dialect's partitioner runs in mlir-opt, in front
  // of --m2n-import-shard.)
  mlir::registerCanonicalizer();
  mlir::registerCSE();
  mlir::registerGpuNVVMAttachTarget();
  mlir::registerGpuModuleToBinaryPass();
  mlir::registerSCFToControlFlowPass();
  mlir::registerConvertGpuOpsToNVVMOps();
  mlir::registerConvertNVVMToLLVMPass();
  mlir::registerReconcileUnrealizedCastsPass();

  std::string helpHeader = mlir::registerCLIOptions(
      "m2n-opt: m2n's optimizer driver (" +
          std::string(m2n::tools::versionString()) + ")",
      registry);
  m2n::tools::hideMlirOptionsExcept(
      {"o", "split-input-file", "verify-diagnostics", "pass-pipeline",
       "allow-unregistered-dialect",
       "mlir-print-ir-after-all", "mlir-print-ir-after-failure",
       "mlir-print-local-scope", "mlir-print-op-generic",
       "mlir-print-op-on-diagnostic", "mlir-timing", "show-dialects"},
      /*passListOf=*/"m2n-pipeline");
  llvm::cl::SetVersionPrinter([](llvm::raw_ostream &os) {
    os << m2n::tools::versionString() << '\n';
  });
  // m2n's diagnostics name the problem: the failing op's text (for a pass
  // on the module, the whole module in generic form) only when asked for.
  std::vector<char *> args(argv, argv + argc);
  std::string quiet = "--mlir-print-op-on-diagnostic=false";
  if (llvm::none_of(args, [](llvm::StringRef arg) {
        return arg.contains("mlir-print-op-on-diagnostic");
      }))
    args.push_back(quiet.data());
  // The printed module was verified after the last pass (and after
  // parsing): printing it does not verify it a third time (a whole-model
  // refit's lowered module takes ~15 ms per verification). Only while the
  // user keeps both verifications on and prints nothing between passes,
  // where the IR may not verify (before the input's verification, after a
  // failure).
  std::string assumeVerified = "--mlir-print-assume-verified";
  if (llvm::none_of(args, [](llvm::StringRef arg) {
        return arg.contains("verify-each") ||
               arg.contains("disable-verifier-on-parsing") ||
               arg.contains("mlir-print-assume-verified") ||
               arg.contains("mlir-print-ir-");
      }))
    args.push_back(assumeVerified.data());
  int count = static_cast<int>(args.size());
  auto [input, output] = mlir::parseCLIOptions(count, args.data(), helpHeader);

  mlir::MlirOptMainConfig config = mlir::MlirOptMainConfig::createFromCLOptions();
  if (config.shouldShowDialects()) {
    llvm::outs() << "Available Dialects: ";
    llvm::interleave(registry.getDialectNames(), llvm::outs(), ",");
    llvm::outs() << "\n";
    return EXIT_SUCCESS;
  }
  if (config.shouldListPasses()) {
    mlir::printRegisteredPasses();
    return EXIT_SUCCESS;
  }
  // The input is verified by m2n's reader, which first refuses what upstream
  // verifiers would crash on (m2n/Input/ReadInput.h), as the first pass of
  // the pipeline instead of on parsing.
  if (config.shouldVerifyOnParsing()) {
    mlir::MlirOptMainConfig pipeline = config;
    config.verifyOnParsing(false).setPassPipelineSetupFn(
        [pipeline](mlir::PassManager &pm) {
          pm.addPass(mlir::m2n::createVerifyInputPass());
          return pipeline.setupPassPipeline(pm);
        });
  }
  // A terminal on stdin is most often a forgotten file name: say so.
  if (input == "-" && llvm::sys::Process::FileDescriptorIsDisplayed(0))
    llvm::errs() << "(processing input from stdin now, hit ctrl-c/ctrl-d to "
                    "interrupt)\n";
  std::string error;
  std::unique_ptr<llvm::MemoryBuffer> file = mlir::openInputFile(input, &error);
  std::unique_ptr<llvm::ToolOutputFile> outputFile =
      file ? mlir::openOutputFile(output, &error) : nullptr;
  if (!outputFile) {
    llvm::errs() << error << "\n";
    return EXIT_FAILURE;
  }
  if (failed(mlir::MlirOptMain(outputFile->os(), std::move(file), registry,
                               config)))
    return EXIT_FAILURE;
  outputFile->keep();
  return EXIT_SUCCESS;
}
