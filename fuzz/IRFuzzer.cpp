//===- IRFuzzer.cpp - the IR parser and verifier, and the compiler -------===//
//
// Input: m2n IR text. It must parse and verify, or be refused with a
// diagnostic; never crash. With M2N_FUZZ_COMPILE, a module that verifies is
// compiled to an artifact (compileToArtifact: the pipeline, the lowering,
// the writer), which must either fail with a diagnostic or give an artifact
// that the runtime's loader accepts: the compiler writes nothing its own
// validator refuses.
//
//===----------------------------------------------------------------------===//

#include "m2n/Artifact/Artifact.h"
#include "m2n/Compiler/Compile.h"
#include "m2n/Dialect/M2N/IR/M2NDialect.h"
#include "m2n/Input/ReadInput.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>

namespace {

/// The context, renewed now and then: attributes and types a context has
/// seen stay interned, and mutants intern new ones.
mlir::MLIRContext &context() {
  static std::unique_ptr<mlir::MLIRContext> current;
  static int uses = 0;
  if (!current || ++uses % 512 == 0)
    current = m2n::createCompilerContext();
  return *current;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  // MLIR's lexer reads up to a terminating NUL, which every entry point of
  // m2n's gives it (m2n_compile takes a C string, files are read into
  // NUL-terminated buffers): the input is handed over the same way.
  const std::string text(reinterpret_cast<const char *>(data), size);
  mlir::MLIRContext &ctx = context();
  bool diagnosed = false;
  mlir::ScopedDiagnosticHandler quiet(&ctx, [&](mlir::Diagnostic &d) {
    diagnosed |= d.getSeverity() == mlir::DiagnosticSeverity::Error;
    return mlir::success();
  });
  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlir::m2n::parseInput(text, &ctx, "fuzz");
  if (!module) {
    if (!diagnosed) {
      std::fprintf(stderr, "m2n-fuzz-ir: refused without a diagnostic\n");
      std::abort();
    }
    return 0;
  }
#ifdef M2N_FUZZ_COMPILE
  // A tensor of gigabytes (a 256-rank estimate test) is cut into thousands
  // of chunks per step: seconds of compiling under the sanitizers, minutes
  // when libFuzzer replays it for leaks. The compiler's contract with the
  // loader is the same at any size: compile tensors up to 64 MiB.
  bool large = false;
  module->walk([&](mlir::Operation *op) {
    for (mlir::Type type : op->getResultTypes())
      if (auto dist = llvm::dyn_cast<mlir::m2n::DistType>(type);
          dist && dist.getElementType().isIntOrFloat()) {
        double bytes = dist.getElementType().getIntOrFloatBitWidth() / 8.0;
        for (int64_t extent : dist.getShape())
          bytes *= static_cast<double>(extent);
        large |= bytes > 64.0 * (1 << 20);
      }
  });
  if (large)
    return 0;
  std::string printed;
  {
    llvm::raw_string_ostream os(printed);
    module->print(os);
  }
  m2n::CompileResult result = m2n::compileToArtifact(ctx, printed, "");
  if (!result.ok) {
    if (result.error.empty()) {
      std::fprintf(stderr, "m2n-fuzz-compile: failed without a diagnostic\n");
      std::abort();
    }
    return 0;
  }
  m2n::Artifact artifact;
  if (std::optional<std::string> wrong =
          m2n::deserializeArtifact(result.artifact, artifact)) {
    std::fprintf(stderr,
                 "m2n-fuzz-compile: the loader refuses what the compiler "
                 "wrote: %s\n",
                 wrong->c_str());
    std::abort();
  }
#endif
  return 0;
}
