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
 * CUDA backend launches the artifact's kernel on the caller's streams.
 *
 *===----------------------------------------------------------------------===*/

#ifndef M2N_RUNTIME_H
#define M2N_RUNTIME_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* 6: m2n_layout_local_box (layouts with explicit boundaries);
 * 5: quantizing reshards (m2n_artifact_reshard_scaling,
 * m2n_artifact_scale_shape, m2n_host_execute_scaled, m2n_cuda_bind_scaled,
 * m2n_cuda_execute_scaled, m2n_cuda_group_bind_scaled); 4: M2N_OUT_OF_MEMORY,
 * M2N_INTERNAL_ERROR */
#define M2N_RUNTIME_API_VERSION 6

typedef enum m2n_status {
  M2N_SUCCESS = 0,
  M2N_INVALID_ARGUMENT = 1, /* a null handle, a missing or short buffer */
  M2N_INVALID_ARTIFACT = 2, /* truncated, corrupted, foreign or too new */
  M2N_UNSUPPORTED = 3,      /* valid, but not executable by this backend */
  M2N_EXECUTION_FAILED = 4, /* a step could not run (deadlock, bounds) */
  M2N_IO_ERROR = 5,         /* a file could not be read */
  M2N_TIMEOUT = 6,          /* a rank waited too long for a peer */
  M2N_CUDA_ERROR = 7,       /* a CUDA call failed */
  M2N_OUT_OF_MEMORY = 8,    /* host memory ran out (e.g. expanding a table) */
  M2N_INTERNAL_ERROR = 9    /* a bug in m2n: no C++ exception leaves the API */
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
/* Compiled groups (m2n.group, docs/dialect.md): reshards compiled to run
 * together, whose merged program the artifact holds. A group's members are
 * reshard indices, in its order; m2n_host_execute_group and
 * m2n_cuda_group_create given exactly that list run the compiled program
 * (no merge at bind). m2n_artifact_group_members sets *count and, when
 * `reshards` is not NULL, fills reshards[0..*count) (room for `capacity`). */
int m2n_artifact_group_count(m2n_artifact artifact);
/* The group's name (the m2n.group's), or NULL for a bad index. */
const char *m2n_artifact_group_name(m2n_artifact artifact, int group);
m2n_status m2n_artifact_group_members(m2n_artifact artifact, int group,
                                      int capacity, int *reshards,
                                      int *count);
/* Bytes of rank `rank`'s source and destination buffers (0 when the rank is
 * outside that mesh). */
m2n_status m2n_artifact_buffer_bytes(m2n_artifact artifact, int reshard,
                                     int rank, size_t *src_bytes,
                                     size_t *dst_bytes);

/* The shape of rank `rank`'s local part (`source` 1: of the source layout,
 * 0: of the destination): its rank (number of dimensions) in *dims and the
 * extents in shape[0..*dims) (room for 8). *present is 0 when the rank is
 * outside that mesh. */
m2n_status m2n_artifact_local_shape(m2n_artifact artifact, int reshard,
                                    int rank, int source, int *present,
                                    int *dims, int64_t *shape);

/* One placement of a layout (docs/dialect.md): kind 0 shard (of tensor
 * dimension `dim`, at `boundary_count` explicit `boundaries` on the first
 * mesh axis splitting it, none for torch.chunk's rule), 1 replicate, 2
 * partial (reduction 0 sum, 1 max, 2 min). */
typedef struct m2n_placement {
  int kind;
  int64_t dim;
  int reduction;
  const int64_t *boundaries;
  int boundary_count;
} m2n_placement;

/* Rank `rank`'s part of a tensor of `shape[0..tensor_rank)` in the layout of
 * a mesh of `mesh_shape[0..mesh_axes)` (its ranks: `ranks`, one per grid
 * position row-major, or NULL for base, base + 1, ...) and `placements`
 * (one per mesh axis), without compiling anything and with the compiler's
 * rule: *present is 0 outside the mesh, else offsets and sizes
 * [0..tensor_rank) are the part's. A layout that does not fit the tensor is
 * M2N_INVALID_ARGUMENT with a message naming the problem. */
m2n_status m2n_layout_local_box(const int64_t *mesh_shape, int mesh_axes,
                                const int64_t *ranks, int64_t base,
                                const m2n_placement *placements,
                                const int64_t *shape, int tensor_rank,
                                int64_t rank, int *present, int64_t *offsets,
                                int64_t *sizes);

/* Quantizing reshards (docs/fp8-scaling.md) write a scale tensor besides
 * their destination. The reshard's scaling as the IR spells it ("tensor",
 * "block(128, 128)", "mx"), or "" when it does not quantize; NULL for a bad
 * index. */
const char *m2n_artifact_reshard_scaling(m2n_artifact artifact, int reshard);
/* Rank `rank`'s scales: the blocks its destination part touches, in the
 * scale tensor's coordinates (*dims dimensions, extents in
 * shape[0..*dims), room for 8), of f32 or, for "mx", e8m0 bytes
 * (*element_bytes 4 or 1). *present is 0 when the reshard does not quantize
 * or the rank is outside the destination mesh. */
m2n_status m2n_artifact_scale_shape(m2n_artifact artifact, int reshard,
                                    int rank, int *present, int *dims,
                                    int64_t *shape, int *element_bytes);

/* Runs reshard `reshard` on host memory. `src[r]` / `dst[r]` are rank r's
 * local source and destination buffers (row-major local parts), of
 * `src_bytes[r]` / `dst_bytes[r]` bytes; ranks outside a mesh pass NULL and
 * 0. Scratch buffers are allocated internally. */
m2n_status m2n_host_execute(m2n_artifact artifact, int reshard, int ranks,
                            const void *const *src, const size_t *src_bytes,
                            void *const *dst, const size_t *dst_bytes);

/* Runs `members` reshards of the artifact (`reshards[0..members)`) as one
 * group: their programs merged into one (per rank the members' items one
 * after the other, as one launch of the CUDA backend runs them). Buffer
 * arrays are member-major: src[m * ranks + r] is rank r's source of member
 * m. No destination may share a byte with another buffer of the group (nor,
 * in m2n_host_execute, of the reshard): the members run at the same time. */
m2n_status m2n_host_execute_group(m2n_artifact artifact, int members,
                                  const int *reshards, int ranks,
                                  const void *const *src,
                                  const size_t *src_bytes, void *const *dst,
                                  const size_t *dst_bytes);
/* m2n_host_execute_group with the scale buffers of quantizing members:
 * scales[m * ranks + r] of scale_bytes[m * ranks + r] bytes is rank r's
 * scale tensor of member m (m2n_artifact_scale_shape), NULL and 0 where
 * the member does not quantize or the rank holds no scales. `scales` and
 * `scale_bytes` may be NULL when no member quantizes; the calls above run
 * only reshards that do not. */
m2n_status m2n_host_execute_scaled(m2n_artifact artifact, int members,
                                   const int *reshards, int ranks,
                                   const void *const *src,
                                   const size_t *src_bytes, void *const *dst,
                                   const size_t *dst_bytes,
                                   void *const *scales,
                                   const size_t *scale_bytes);

/*===----------------------------------------------------------------------===*
 * CUDA backend. Available when the runtime was built with CUDA; otherwise
 * these return M2N_UNSUPPORTED. Three process models share it:
 *  - one process drives every rank (m2n_cuda_context_create), on one or
 *    several GPUs; several ranks may share a GPU (virtual ranks);
 *  - one process per GPU, or per group of ranks on one GPU
 *    (m2n_cuda_comm_create): the processes exchange buffer handles (CUDA
 *    IPC) through the caller's all-gather, e.g. torch.distributed.
 * Arrays passed per rank are indexed by local slot: the position of the rank
 * in `local_ranks` (for m2n_cuda_context_create, the rank itself).
 *
 * Buffers are ordinary device allocations (cudaMalloc, PyTorch's caching
 * allocator): a buffer may start anywhere inside its allocation; the runtime
 * finds the allocation through the driver and checks device and size.
 *
 * Launches are CUDA-graph capturable: binding buffers (which uploads tables
 * and encodes tensor maps) happens before, launches only enqueue kernels,
 * and each rank's kernel keeps its execution count (epoch) on the device.
 *===----------------------------------------------------------------------===*/

typedef struct m2n_cuda_context_t *m2n_cuda_context;

/* The caller's all-gather: every process contributes `bytes` bytes from
 * `send`; `recv` receives processes x bytes, in process order. Returns 0 on
 * success. Called only from m2n_cuda_comm_create and m2n_cuda_bind, which
 * are collective: every process calls them in the same order. */
typedef int (*m2n_allgather_fn)(const void *send, void *recv, size_t bytes,
                                void *user);

/* The number of CUDA devices this process sees; M2N_UNSUPPORTED (with the
 * reason) when there is none, no driver, or the runtime was built without
 * CUDA. */
m2n_status m2n_cuda_device_count(int *count);

/* One process for every rank: rank r runs on CUDA device devices[r]. Loads
 * the kernel on every device and enables peer access between them.
 * `timeout_ms` bounds every wait of a kernel for a peer. */
m2n_status m2n_cuda_context_create(m2n_artifact artifact, int ranks,
                                   const int *devices, double timeout_ms,
                                   m2n_cuda_context *context);

/* This process runs `local_count` of the `ranks` ranks (local_ranks[i] on
 * CUDA device local_devices[i]; all on one device when processes > 1);
 * `processes` processes together run every rank once. Collective. */
m2n_status m2n_cuda_comm_create(m2n_artifact artifact, int ranks,
                                int processes, int local_count,
                                const int *local_ranks,
                                const int *local_devices,
                                m2n_allgather_fn allgather, void *user,
                                double timeout_ms, m2n_cuda_context *context);
void m2n_cuda_context_destroy(m2n_cuda_context context);

/* Binds reshard `reshard` to the local ranks' buffers (NULL and 0 for a rank
 * outside a mesh): validates them, exchanges their handles with the other
 * processes, uploads the work-item tables and encodes the tensor maps. Not
 * capturable; collective for m2n_cuda_comm_create contexts. */
m2n_status m2n_cuda_bind(m2n_cuda_context context, int reshard,
                         void *const *src, const size_t *src_bytes,
                         void *const *dst, const size_t *dst_bytes);

/* m2n_cuda_bind for a quantizing reshard (docs/fp8-scaling.md): with each
 * local rank's scale tensor (scales[slot] of scale_bytes[slot] bytes, as
 * m2n_artifact_scale_shape gives it; NULL and 0 for a rank without
 * scales). The runtime allocates the ranks' tables of amaxes and clears
 * them before every launch, so that each launch computes its own scales
 * from the data it moves. One process for every rank so far
 * (m2n_cuda_context_create); m2n_cuda_bind refuses a quantizing reshard. */
m2n_status m2n_cuda_bind_scaled(m2n_cuda_context context, int reshard,
                                void *const *src, const size_t *src_bytes,
                                void *const *dst, const size_t *dst_bytes,
                                void *const *scales,
                                const size_t *scale_bytes);

/* Enqueues the bound reshard on each local rank's stream (`streams[i]`, a
 * cudaStream_t of its device, NULL for the device's default stream; `streams`
 * may be NULL). Capturable. Every rank's kernel must be launched the same
 * number of times. Ranks of one device may share a stream (the runtime runs
 * the second and later ones on helper streams forked from it, since ranks
 * wait for each other); ranks of one device given different streams must
 * not mix the legacy default stream with blocking streams, which it would
 * serialize. Sources: a rank's kernel (and its copy-engine copies) may read
 * its peers' source buffers as soon as it starts, without waiting for the
 * peers' streams: every rank's source must be complete before any rank's
 * launch begins to run (producers ordered before all launch streams, e.g.
 * through events; across processes, a barrier). The runtime does not order
 * this yet. */
m2n_status m2n_cuda_launch(m2n_cuda_context context, int reshard,
                           void *const *streams);

/* Bind (when the buffers differ from the bound ones) and launch. In a
 * multi-process context, new buffers must be bound with m2n_cuda_bind on
 * every process: this call then reports M2N_INVALID_ARGUMENT instead of
 * starting an exchange the other processes are not part of. */
m2n_status m2n_cuda_execute(m2n_cuda_context context, int reshard,
                            void *const *src, const size_t *src_bytes,
                            void *const *dst, const size_t *dst_bytes,
                            void *const *streams);

/* m2n_cuda_execute for a quantizing reshard: binds it with its scales
 * (m2n_cuda_bind_scaled) unless it is bound to exactly these buffers, then
 * launches it. One process for every rank. */
m2n_status m2n_cuda_execute_scaled(m2n_cuda_context context, int reshard,
                                   void *const *src, const size_t *src_bytes,
                                   void *const *dst, const size_t *dst_bytes,
                                   void *const *scales,
                                   const size_t *scale_bytes,
                                   void *const *streams);

/* Groups: several reshards of the artifact launched as one kernel per rank
 * (their programs merged: the items of all members dealt over the CTAs, one
 * completion, one epoch), e.g. every weight of a model in a refit. Create a
 * group once with its members (`reshards[0..members)`, an index may repeat
 * for several tensors of one layout), bind it to buffers (arrays
 * member-major: src[m * local_count + slot] is member m's source of that
 * local slot; collective like m2n_cuda_bind), then launch it as often as
 * wanted (capturable when no member has network steps). No destination may
 * share a byte with another buffer of the group: the members run at the
 * same time. A group lives as long as its context. */
m2n_status m2n_cuda_group_create(m2n_cuda_context context, int members,
                                 const int *reshards, int *group);
m2n_status m2n_cuda_group_bind(m2n_cuda_context context, int group,
                               void *const *src, const size_t *src_bytes,
                               void *const *dst, const size_t *dst_bytes);
/* m2n_cuda_group_bind with the scale tensors of quantizing members
 * (member-major as the buffers; NULL and 0 where a member does not
 * quantize). */
m2n_status m2n_cuda_group_bind_scaled(m2n_cuda_context context, int group,
                                      void *const *src,
                                      const size_t *src_bytes,
                                      void *const *dst,
                                      const size_t *dst_bytes,
                                      void *const *scales,
                                      const size_t *scale_bytes);
m2n_status m2n_cuda_group_launch(m2n_cuda_context context, int group,
                                 void *const *streams);

/* Waits for the work m2n_cuda_launch / m2n_cuda_execute /
 * m2n_cuda_group_launch enqueued since the
 * last call; a kernel that waited longer than the timeout for a peer is
 * reported as M2N_TIMEOUT naming the item. Replays of a CUDA graph that
 * captured a launch are the caller's: synchronize their streams yourself. */
m2n_status m2n_cuda_synchronize(m2n_cuda_context context);

#ifdef __cplusplus
}
#endif

#endif /* M2N_RUNTIME_H */
