//===- CompilerCAPI.cpp - the compiler's C API (libm2n_compiler.so) -------===//

#include "m2n-c/Compiler.h"

#include "m2n/Artifact/Artifact.h"
#include "m2n/Compiler/Compile.h"
#include "m2n/Compiler/CompileRequest.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/OperationSupport.h"
#include "llvm/Config/llvm-config.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdlib>
#include <exception>
#include <new>
#include <cstring>
#include <mutex>
#include <string>

namespace {
char *copyOf(const std::string &text) {
  char *copy = static_cast<char *>(std::malloc(text.size() + 1));
  if (copy)
    std::memcpy(copy, text.c_str(), text.size() + 1);
  return copy;
}

/// Stores `message` in *error (when there is one) and returns 1.
int failure(char **error, const std::string &message) {
  if (error)
    *error = copyOf(message);
  return 1;
}

mlir::MLIRContext &context();

/// One user of the shared context at a time: its diagnostic handlers are
/// context-wide (the latest sees every diagnostic) and a compile with a
/// dump turns its multithreading (and the type uniquer's locks) off.
std::mutex &contextLock() {
  static std::mutex lock;
  return lock;
}

/// Runs `compile` (one at a time: the shared context's diagnostic handler
/// and IR-printing state are per compile, and callers may be threads) and
/// hands out its artifact or its message. No C++ exception crosses the C
/// API: running out of memory (a huge tensor's schedule) or any other throw
/// becomes an error message.
int compileWith(const char *entry, void **artifact, size_t *artifact_size,
                char **error,
                llvm::function_ref<m2n::CompileResult()> compile) {
  if (!artifact || !artifact_size || !error)
    return failure(error, std::string(entry) + ": null argument");
  *artifact = nullptr;
  *artifact_size = 0;
  *error = nullptr;
  m2n::CompileResult result;
  std::lock_guard<std::mutex> hold(contextLock());
  try {
    result = compile();
  } catch (const std::bad_alloc &) {
    return failure(error, std::string(entry) + ": out of memory");
  } catch (const std::exception &e) {
    return failure(error,
                   std::string(entry) + ": internal error: " + e.what());
  } catch (...) {
    return failure(error, std::string(entry) +
                              ": internal error: an unknown C++ exception");
  }
  if (!result.ok)
    return failure(error, result.error.empty() ? "compilation failed"
                                               : result.error);
  *artifact = std::malloc(result.artifact.size());
  if (!*artifact)
    return failure(error, std::string(entry) + ": out of memory");
  std::memcpy(*artifact, result.artifact.data(), result.artifact.size());
  *artifact_size = result.artifact.size();
  return 0;
}

mlir::MLIRContext &context() {
  // Dialects load lazily into one context for the life of the process.
  static std::unique_ptr<mlir::MLIRContext> shared =
      m2n::createCompilerContext();
  return *shared;
}
} // namespace

extern "C" {

const char *m2n_compiler_version(void) {
  static const std::string version =
      "m2n 0.1 (artifact v" + std::to_string(m2n::kArtifactVersion) +
      ", LLVM " LLVM_VERSION_STRING ")";
  return version.c_str();
}

int m2n_compile(const char *ir, const char *options, const char *dump_path,
                void **artifact, size_t *artifact_size, char **error) {
  if (!ir)
    return failure(error, "m2n_compile: null argument");
  return compileWith("m2n_compile", artifact, artifact_size, error, [&] {
    return m2n::compileToArtifact(context(), ir, options ? options : "",
                                  dump_path ? dump_path : "");
  });
}

int m2n_compile_from_request(const m2n_compile_request *request,
                             const char *options, const char *dump_path,
                             void **artifact, size_t *artifact_size,
                             char **error) {
  if (!request)
    return failure(error, "m2n_compile_from_request: null argument");
  return compileWith(
      "m2n_compile_from_request", artifact, artifact_size, error, [&] {
        return m2n::compileModule(
            context(),
            [&]() -> mlir::OwningOpRef<mlir::ModuleOp> {
              std::string wrong;
              mlir::OwningOpRef<mlir::ModuleOp> module =
                  m2n::buildRequestModule(context(), *request, wrong);
              if (!module)
                mlir::emitError(mlir::UnknownLoc::get(&context()), wrong);
              return module;
            },
            options ? options : "", dump_path ? dump_path : "");
      });
}

int m2n_request_ir(const m2n_compile_request *request, char **ir,
                   char **error) {
  if (!request || !ir || !error)
    return failure(error, "m2n_request_ir: null argument");
  *ir = nullptr;
  *error = nullptr;
  std::lock_guard<std::mutex> hold(contextLock());
  try {
    std::string wrong;
    mlir::OwningOpRef<mlir::ModuleOp> module =
        m2n::buildRequestModule(context(), *request, wrong);
    if (!module)
      return failure(error, wrong);
    std::string text;
    llvm::raw_string_ostream os(text);
    // Each type in full where it is used (no aliases): the text reads as
    // the request, reshard by reshard.
    module->print(os, mlir::OpPrintingFlags().useLocalScope());
    *ir = copyOf(text);
    return *ir ? 0 : failure(error, "m2n_request_ir: out of memory");
  } catch (const std::bad_alloc &) {
    return failure(error, "m2n_request_ir: out of memory");
  } catch (const std::exception &e) {
    return failure(error, std::string("m2n_request_ir: internal error: ") +
                              e.what());
  } catch (...) {
    return failure(error,
                   "m2n_request_ir: internal error: an unknown C++ exception");
  }
}

void m2n_compiler_free(void *pointer) { std::free(pointer); }

} // extern "C"
