//===- Compile.h - one call from m2n IR text to an artifact ------*- C++ -*-===//
//
// What m2n-run and the compiler's C API (m2n-c/Compiler.h, used by the
// Python JIT) and m2n-refit --compile share: parse a module, run
// --m2n-pipeline with the given options (the same PassManager pipeline as
// m2n-opt, verifiers on) and serialize the artifact.
//
//===----------------------------------------------------------------------===//

#ifndef M2N_COMPILER_COMPILE_H
#define M2N_COMPILER_COMPILE_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/raw_ostream.h"

#include <memory>
#include <string>

namespace m2n {

/// A context with every dialect, extension, translation and pass the
/// pipeline needs registered.
std::unique_ptr<mlir::MLIRContext> createCompilerContext();

struct CompileResult {
  bool ok = false;
  std::string artifact; // The serialized artifact when ok.
  std::string error;    // Diagnostics when not ok.
};

/// Compiles `ir` (m2n IR text) with `--m2n-pipeline{options}`; the options
/// max-ctas and tile-below-run-bytes also set the artifact's launch and
/// lowering parameters. With a `dumpPath`, the IR after every pass is
/// written there. Diagnostics name `sourceName`. With `timing`, the time of
/// every pass is reported there (as m2n-opt -mlir-timing prints it).
CompileResult compileToArtifact(mlir::MLIRContext &context, llvm::StringRef ir,
                                llvm::StringRef options,
                                llvm::StringRef dumpPath = "",
                                llvm::StringRef sourceName = "<m2n-ir>",
                                llvm::raw_ostream *timing = nullptr);

/// compileToArtifact for the module `load` returns (null after reporting
/// why through the context's diagnostics), e.g. one built from a
/// structured request (CompileRequest.h).
CompileResult
compileModule(mlir::MLIRContext &context,
              llvm::function_ref<mlir::OwningOpRef<mlir::ModuleOp>()> load,
              llvm::StringRef options, llvm::StringRef dumpPath = "",
              llvm::raw_ostream *timing = nullptr);

} // namespace m2n

#endif // M2N_COMPILER_COMPILE_H
