//===- CompilerCAPI.cpp - the compiler's C API (libm2n_compiler.so) -------===//

#include "m2n-c/Compiler.h"

#include "m2n/Artifact/Artifact.h"
#include "m2n/Compiler/Compile.h"

#include "llvm/Config/llvm-config.h"

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
  if (!ir || !artifact || !artifact_size || !error) {
    if (error)
      *error = copyOf("m2n_compile: null argument");
    return 1;
  }
  *artifact = nullptr;
  *artifact_size = 0;
  *error = nullptr;
  // No C++ exception crosses the C API: running out of memory (a huge
  // tensor's schedule) or any other throw becomes an error message.
  m2n::CompileResult result;
  // One compile at a time: the shared context's diagnostic handler and
  // IR-printing state are per compile (callers may be threads).
  static std::mutex compiling;
  std::lock_guard<std::mutex> hold(compiling);
  try {
    result = m2n::compileToArtifact(context(), ir, options ? options : "",
                                    dump_path ? dump_path : "");
  } catch (const std::bad_alloc &) {
    *error = copyOf("m2n_compile: out of memory");
    return 1;
  } catch (const std::exception &e) {
    *error = copyOf(std::string("m2n_compile: internal error: ") + e.what());
    return 1;
  } catch (...) {
    *error = copyOf("m2n_compile: internal error: an unknown C++ exception");
    return 1;
  }
  if (!result.ok) {
    *error = copyOf(result.error.empty() ? "compilation failed"
                                         : result.error);
    return 1;
  }
  *artifact = std::malloc(result.artifact.size());
  if (!*artifact) {
    *error = copyOf("m2n_compile: out of memory");
    return 1;
  }
  std::memcpy(*artifact, result.artifact.data(), result.artifact.size());
  *artifact_size = result.artifact.size();
  return 0;
}

void m2n_compiler_free(void *pointer) { std::free(pointer); }

} // extern "C"
