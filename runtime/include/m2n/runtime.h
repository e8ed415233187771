/*===- m2n/runtime.h - the m2n runtime C API ----------------------*- C -*-===*
 *
 * Loads the artifacts the m2n compiler writes and executes their reshards.
 * Opaque handles, status codes, and a thread-local message for every
 * failure. No MLIR: the runtime reads only the artifact.
 *
 * Backends: the host backend (this file's m2n_host_execute) runs a reshard's
 * per-rank programs on host memory for all ranks of one process, exactly as
 * the GPU kernels would (CTAs walking their items in order, waiting on
 * counters); CI and the Python tests exercise the artifacts through it. The
 * CUDA backend (launch on the caller's stream, NCCL for network steps) comes
 * next.
 *
 *===----------------------------------------------------------------------===*/

#ifndef M2N_RUNTIME_H
#define M2N_RUNTIME_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define M2N_RUNTIME_API_VERSION 1

typedef enum m2n_status {
  M2N_SUCCESS = 0,
  M2N_INVALID_ARGUMENT = 1, /* a null handle, a missing or short buffer */
  M2N_INVALID_ARTIFACT = 2, /* truncated, corrupted, foreign or too new */
  M2N_UNSUPPORTED = 3,      /* valid, but not executable by this backend */
  M2N_EXECUTION_FAILED = 4, /* a step could not run (deadlock, bounds) */
  M2N_IO_ERROR = 5,         /* a file could not be read */
  M2N_TIMEOUT = 6,          /* a rank waited too long for a peer */
  M2N_CUDA_ERROR = 7        /* a CUDA call failed */
} m2n_status;

/* "M2N_SUCCESS", "M2N_INVALID_ARGUMENT", ... */
const char *m2n_status_name(m2n_status status);
/* What went wrong in this thread's last failing call ("" if none). */
const char *m2n_last_error(void);

typedef struct m2n_artifact_t *m2n_artifact;

/* Verifies and loads an artifact (magic, version, size, checksum, every
 * field). */
m2n_status m2n_artifact_load(const void *bytes, size_t size,
                             m2n_artifact *artifact);
m2n_status m2n_artifact_load_file(const char *path, m2n_artifact *artifact);
void m2n_artifact_destroy(m2n_artifact artifact);

int m2n_artifact_reshard_count(m2n_artifact artifact);
/* The reshard's name ("@function#index"), or NULL for a bad index. */
const char *m2n_artifact_reshard_name(m2n_artifact artifact, int reshard);
/* Communicator size the reshard needs: one more than its largest rank. */
m2n_status m2n_artifact_reshard_ranks(m2n_artifact artifact, int reshard,
                                      int *ranks);
/* Bytes of rank `rank`'s source and destination buffers (0 when the rank is
 * outside that mesh). */
m2n_status m2n_artifact_buffer_bytes(m2n_artifact artifact, int reshard,
                                     int rank, size_t *src_bytes,
                                     size_t *dst_bytes);

/* Runs reshard `reshard` on host memory. `src[r]` / `dst[r]` are rank r's
 * local source and destination buffers (row-major local parts), of
 * `src_bytes[r]` / `dst_bytes[r]` bytes; ranks outside a mesh pass NULL and
 * 0. Scratch buffers are allocated internally. */
m2n_status m2n_host_execute(m2n_artifact artifact, int reshard, int ranks,
                            const void *const *src, const size_t *src_bytes,
                            void *const *dst, const size_t *dst_bytes);

/*===----------------------------------------------------------------------===*
 * CUDA backend: one process driving every rank (several ranks may share a
 * GPU: virtual ranks). Available when the runtime was built with CUDA;
 * otherwise these return M2N_UNSUPPORTED.
 *===----------------------------------------------------------------------===*/

typedef struct m2n_cuda_context_t *m2n_cuda_context;

/* Prepares `artifact` for `ranks` ranks, rank r on CUDA device devices[r]:
 * loads its kernel on every device and enables peer access between them.
 * `timeout_ms` bounds every wait of a kernel for a peer. */
m2n_status m2n_cuda_context_create(m2n_artifact artifact, int ranks,
                                   const int *devices, double timeout_ms,
                                   m2n_cuda_context *context);
void m2n_cuda_context_destroy(m2n_cuda_context context);

/* Enqueues reshard `reshard` over user device buffers (rank r's local parts,
 * on devices[r]; NULL and 0 for ranks outside a mesh) on each rank's stream
 * (`streams[r]`, a cudaStream_t of devices[r], or NULL for the device's
 * default stream). Returns once everything is enqueued; the ranks' kernels
 * run concurrently and synchronize through counters in device memory. */
m2n_status m2n_cuda_execute(m2n_cuda_context context, int reshard,
                            void *const *src, const size_t *src_bytes,
                            void *const *dst, const size_t *dst_bytes,
                            void *const *streams);

/* Waits for the work enqueued so far; a kernel that waited longer than the
 * timeout for a peer is reported as M2N_TIMEOUT naming the item. */
m2n_status m2n_cuda_synchronize(m2n_cuda_context context);

#ifdef __cplusplus
}
#endif

#endif /* M2N_RUNTIME_H */
