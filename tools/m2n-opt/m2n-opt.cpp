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

#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "mlir/Transforms/Passes.h"
#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"

int main(int argc, char **argv) {
  m2n::tools::keepFreedMemory();
  mlir::DialectRegistry registry;
  mlir::m2n::registerPipelineDialects(registry);

  mlir::m2n::registerM2NPasses();
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
  // user keeps both verifications on.
  std::string assumeVerified = "--mlir-print-assume-verified";
  if (llvm::none_of(args, [](llvm::StringRef arg) {
        return arg.contains("verify-each") ||
               arg.contains("disable-verifier-on-parsing") ||
               arg.contains("mlir-print-assume-verified");
      }))
    args.push_back(assumeVerified.data());
  int count = static_cast<int>(args.size());
  auto [input, output] = mlir::parseCLIOptions(count, args.data(), helpHeader);
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(count, args.data(), input, output, registry));
}
