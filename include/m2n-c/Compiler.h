/*===- m2n-c/Compiler.h - the compiler's C API ---------------------*- C -*-===*
 *
 * Compiles m2n IR text, or a structured request, to an artifact in memory
 * by running the pipeline `m2n-opt --m2n-pipeline` runs (one PassManager,
 * every verifier on), for any module: single reshards, collectives, whole
 * refits. The Python frontend loads it with ctypes (libm2n_compiler.so).
 * Thread-safe: calls are serialized on one lock (one shared context).
 *
 *===----------------------------------------------------------------------===*/

#ifndef M2N_C_COMPILER_H
#define M2N_C_COMPILER_H

#include <stddef.h>
#include <stdint.h>

/* m2n_placement: the one placement descriptor of m2n's C APIs. */
#include "m2n/runtime.h"

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

/*===----------------------------------------------------------------------===*
 * Structured requests: what the frontends compile (m2n.reshard,
 * reshard_many) described by values, not IR text. The compiler builds the
 * module (one function `name` taking the communicator and one argument per
 * reshard; one m2n.reshard each, in order, so that reshard i of the
 * artifact is request i; with `group`, an m2n.group `name` of all of them)
 * and compiles it as m2n_compile compiles text: the same pipeline, the same
 * verifiers, the same diagnostics.
 *===----------------------------------------------------------------------===*/

/* A mesh of `mesh_shape[0..mesh_axes)` (its ranks `ranks`, one per grid
 * position row-major, or NULL for base, base + 1, ...) and one placement per
 * mesh axis, as m2n_layout_local_box takes them. */
typedef struct m2n_layout_desc {
  const int64_t *mesh_shape;
  int mesh_axes;
  const int64_t *ranks;
  int64_t base;
  const m2n_placement *placements;
} m2n_layout_desc;

/* The scaling of a quantizing reshard (docs/fp8-scaling.md). */
typedef enum m2n_scaling_kind {
  M2N_SCALING_NONE = 0,
  M2N_SCALING_TENSOR = 1,
  M2N_SCALING_BLOCK = 2, /* block_rows x block_cols of the last two dims */
  M2N_SCALING_MX = 3
} m2n_scaling_kind;

/* One reshard: a tensor of `shape[0..tensor_rank)` whose elements are
 * `src_type` (as the IR spells element types: "bf16", "f32", "ui8",
 * "f8E4M3FN", ...) in the source layout, `dst_type` in the destination
 * layout (a cast where they differ). `has_scale`: a cast by the constant
 * `scale`; `scaling`: a quantizing reshard (scales from the data). */
typedef struct m2n_reshard_desc {
  const int64_t *shape;
  int tensor_rank;
  const char *src_type;
  const char *dst_type;
  m2n_layout_desc src;
  m2n_layout_desc dst;
  int has_scale;
  float scale;
  m2n_scaling_kind scaling;
  int64_t block_rows, block_cols;
} m2n_reshard_desc;

#define M2N_COMPILE_REQUEST_VERSION 1

typedef struct m2n_compile_request {
  int version; /* M2N_COMPILE_REQUEST_VERSION */
  const char *name;
  int comm_size;
  const m2n_reshard_desc *reshards;
  int reshard_count;
  int group; /* Nonzero: the reshards form the group `name`. */
} m2n_compile_request;

/* m2n_compile for a request; errors as m2n_compile's (a descriptor that
 * does not describe a layout or a type is named in the message). */
int m2n_compile_from_request(const m2n_compile_request *request,
                             const char *options, const char *dump_path,
                             void **artifact, size_t *artifact_size,
                             char **error);

/* The module of a request as IR text (malloc'ed, m2n_compiler_free):
 * what m2n_compile_from_request compiles, for dumps and tests. Returns 0, or 1
 * with a message in *error. */
int m2n_request_ir(const m2n_compile_request *request, char **ir,
                   char **error);

#ifdef __cplusplus
}
#endif

#endif /* M2N_C_COMPILER_H */
