/*===- m2n-c/Compiler.h - the compiler's C API ---------------------*- C -*-===*
 *
 * Compiles m2n IR text to an artifact in memory by running the pipeline
 * `m2n-opt --m2n-pipeline` runs (one PassManager, every verifier on), for
 * any module: single reshards, collectives, whole refits. The Python
 * frontend loads it with ctypes (libm2n_compiler.so). Thread-compatible:
 * one call at a time per process.
 *
 *===----------------------------------------------------------------------===*/

#ifndef M2N_C_COMPILER_H
#define M2N_C_COMPILER_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* "m2n <version> (artifact v<N>, LLVM <version>)": part of JIT cache keys. */
const char *m2n_compiler_version(void);

/* Compiles `ir` (NUL-terminated m2n IR text) with the pipeline `options`
 * ("strategy=flat max-ctas=8 ...", may be empty). On success returns 0 and
 * stores a malloc'ed artifact and its size; on failure returns 1 and stores
 * a malloc'ed, NUL-terminated message (the diagnostics). `dump_path`, when
 * not NULL or empty, receives the IR after every pass. Free both with
 * m2n_compiler_free. */
int m2n_compile(const char *ir, const char *options, const char *dump_path,
                void **artifact, size_t *artifact_size, char **error);

void m2n_compiler_free(void *pointer);

#ifdef __cplusplus
}
#endif

#endif /* M2N_C_COMPILER_H */
