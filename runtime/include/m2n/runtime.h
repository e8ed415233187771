/*===- m2n/runtime.h - the m2n runtime C API ----------------------*- C -*-===*
 *
 * Loads the artifacts the m2n compiler writes and executes their reshards.
 * Opaque handles, status codes, and a thread-local message for every
 * failure. No MLIR: the runtime reads only the artifact.
 *
 * Two backends behind one API (contexts and groups, below): the host
 * backend runs a reshard's per-rank programs on host memory, exactly as the
 * GPU kernels would; the CUDA backend launches the artifact's kernel on the
 * caller's streams.
 *
 *===----------------------------------------------------------------------===*/

#ifndef M2N_RUNTIME_H
#define M2N_RUNTIME_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* 7: one API for both backends (m2n_context_create, m2n_group_*,
 * m2n_context_synchronize), replacing m2n_host_* and m2n_cuda_* (but
 * m2n_cuda_device_count);
 * 6: m2n_layout_local_box (layouts with explicit boundaries);
 * 5: quantizing reshards (m2n_artifact_reshard_scaling,
 * m2n_artifact_scale_shape, m2n_host_execute_scaled, m2n_cuda_bind_scaled,
 * m2n_cuda_execute_scaled, m2n_cuda_group_bind_scaled); 4: M2N_OUT_OF_MEMORY,
 * M2N_INTERNAL_ERROR */
#define M2N_RUNTIME_API_VERSION 7

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
 * reshard indices, in its order; m2n_group_create given exactly that list
 * runs the compiled program (no merge at bind). m2n_artifact_group_members sets *count and, when
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

/*===----------------------------------------------------------------------===*
 * Contexts and groups: one API for both backends.
 *
 * A context runs an artifact's reshards on one backend for the ranks of this
 * process. Everything it runs is a group: one or more of the artifact's
 * reshards launched as one program per rank (their programs merged: the
 * items of all members dealt over the CTAs, one completion, one epoch), e.g.
 * every weight of a model in a refit; a single reshard is a group of one.
 * Create a group once with its members, bind it to buffers, launch it as
 * often as wanted, and synchronize the context:
 *
 *   m2n_context_create(artifact, &options, &context);
 *   m2n_group_create(context, 1, &reshard, &group);
 *   m2n_group_bind(context, group, &buffers);      (collective)
 *   m2n_group_launch(context, group, streams);     (capturable)
 *   m2n_context_synchronize(context);
 *
 * Backends:
 *  - M2N_BACKEND_HOST runs the per-rank programs on host memory, exactly as
 *    the GPU kernels would (CTAs walking their items in order, waiting on
 *    counters), for every rank in this process; a launch runs to completion
 *    before it returns. CI and the Python tests run artifacts through it.
 *  - M2N_BACKEND_CUDA launches the artifact's kernel on the caller's
 *    streams. One process drives every rank (processes 1), on one or several
 *    GPUs, several ranks possibly sharing one (virtual ranks); or several
 *    processes each run some ranks (one per GPU, or several on one GPU) and
 *    exchange buffer handles (CUDA IPC) through the caller's all-gather, e.g.
 *    torch.distributed. Launches are CUDA-graph capturable: binding (which
 *    uploads tables and encodes tensor maps) happens before, launches only
 *    enqueue kernels, and each rank's kernel keeps its execution count
 *    (epoch) on the device. Available when the runtime was built with CUDA;
 *    otherwise m2n_context_create returns M2N_UNSUPPORTED.
 *
 * Arrays passed per rank are indexed by local slot: the position of the rank
 * in `local_ranks` (with one process, the rank itself). Buffer arrays of a
 * group are member-major: src[m * local_count + slot] is member m's source of
 * that slot. No destination may share a byte with another buffer of the
 * group: the members run at the same time. CUDA buffers are ordinary device
 * allocations (cudaMalloc, PyTorch's caching allocator): a buffer may start
 * anywhere inside its allocation; the runtime finds the allocation through
 * the driver and checks device and size.
 *
 * A context is used by one thread at a time; different contexts are
 * independent. Artifacts are read-only once loaded and may be shared.
 *===----------------------------------------------------------------------===*/

typedef struct m2n_context_t *m2n_context;

typedef enum m2n_backend {
  M2N_BACKEND_HOST = 1,
  M2N_BACKEND_CUDA = 2
} m2n_backend;

/* The caller's all-gather: every process contributes `bytes` bytes from
 * `send`; `recv` receives processes x bytes, in process order. Returns 0 on
 * success. Called only from m2n_context_create and m2n_group_bind, which
 * are collective: every process calls them in the same order. */
typedef int (*m2n_allgather_fn)(const void *send, void *recv, size_t bytes,
                                void *user);

/* The default bound of every wait of a kernel for a peer. */
#define M2N_DEFAULT_TIMEOUT_MS 10000.0

typedef struct m2n_context_options {
  /* M2N_RUNTIME_API_VERSION of the header the caller was built with. */
  int version;
  /* An m2n_backend (an int: a value of another header is refused with a
   * message, never read as an enum it is not). */
  int backend;
  /* The ranks of the job: at least every rank the artifact's meshes name. */
  int ranks;
  /* Processes that together run every rank once; 0 means 1 (this process
   * runs every rank; the host backend only runs that way). */
  int processes;
  /* The ranks this process runs (local_ranks[0..local_count)); 0 and NULL
   * mean every rank, in order (one process only). */
  int local_count;
  const int *local_ranks;
  /* CUDA: the device of each local slot; NULL means device 0 for all. With
   * several processes a process's ranks share one device. */
  const int *devices;
  /* Required with several processes. */
  m2n_allgather_fn allgather;
  void *allgather_user;
  /* CUDA: the bound of every wait of a kernel for a peer; 0 means
   * M2N_DEFAULT_TIMEOUT_MS. */
  double timeout_ms;
} m2n_context_options;

/* Buffers of a group's bind, member-major by local slot (NULL and 0 for a
 * rank outside a member's mesh). `scales` / `scale_bytes`: the scale tensors
 * of quantizing members (docs/fp8-scaling.md; m2n_artifact_scale_shape),
 * NULL and 0 where a member does not quantize or the rank holds no scales;
 * both may be NULL when no member quantizes. */
typedef struct m2n_buffers {
  const void *const *src;
  const size_t *src_bytes;
  void *const *dst;
  const size_t *dst_bytes;
  void *const *scales;
  const size_t *scale_bytes;
} m2n_buffers;

/* Creates a context for `artifact` (which must outlive it). With several
 * processes it is collective: it sets up the exchange between them. Loads
 * the kernel on every device and enables peer access between them. */
m2n_status m2n_context_create(m2n_artifact artifact,
                              const m2n_context_options *options,
                              m2n_context *context);
/* Frees the context, its groups and everything bound to them. */
void m2n_context_destroy(m2n_context context);

/* The number of CUDA devices this process sees; M2N_UNSUPPORTED (with the
 * reason) when there is none, no driver, or the runtime was built without
 * CUDA. */
m2n_status m2n_cuda_device_count(int *count);

/* A group of `members` reshards of the context's artifact
 * (`reshards[0..members)`; an index may repeat for several tensors of one
 * layout). Groups live as long as their context. */
m2n_status m2n_group_create(m2n_context context, int members,
                            const int *reshards, int *group);

/* Binds the group to the local ranks' buffers: validates them (present,
 * large enough, aligned, on their rank's device, disjoint from every
 * destination), exchanges their handles with the other processes, uploads
 * the work-item tables and encodes the tensor maps; for quantizing members
 * allocates the ranks' tables of amaxes, cleared before every launch so
 * that each launch computes its own scales from the data it moves. Not
 * capturable; collective with several processes. A failed bind leaves the
 * group unbound. */
m2n_status m2n_group_bind(m2n_context context, int group,
                          const m2n_buffers *buffers);

/* Runs the bound group once on each local rank's stream (`streams[slot]`, a
 * cudaStream_t of its device, NULL for the device's default stream;
 * `streams` may be NULL; the host backend ignores them and runs the group
 * before returning). Capturable when no member has network steps. Every
 * rank's kernel must be launched the same number of times. Ranks of one
 * device may share a stream (the runtime runs the second and later ones on
 * helper streams forked from it, since ranks wait for each other); ranks of
 * one device given different streams must not mix the legacy default stream
 * with blocking streams, which it would serialize. Sources: a rank's kernel
 * (and its copy-engine copies) may read its peers' source buffers as soon
 * as it starts, without waiting for the peers' streams: every rank's source
 * must be complete before any rank's launch begins to run (producers
 * ordered before all launch streams, e.g. through events; across processes,
 * a barrier). The runtime does not order this yet. */
m2n_status m2n_group_launch(m2n_context context, int group,
                            void *const *streams);

/* Binds the group (unless it is bound to exactly these buffers: the same
 * pointers and sizes) and launches it. With several processes, new buffers must be bound with
 * m2n_group_bind on every process: this call then reports
 * M2N_INVALID_ARGUMENT instead of starting an exchange the other processes
 * are not part of. */
m2n_status m2n_group_execute(m2n_context context, int group,
                             const m2n_buffers *buffers,
                             void *const *streams);

/* Waits for the work the context's launches enqueued since the last call; a
 * kernel that waited longer than the timeout for a peer is reported as
 * M2N_TIMEOUT naming the item. Replays of a CUDA graph that captured a
 * launch are the caller's: synchronize their streams yourself. */
m2n_status m2n_context_synchronize(m2n_context context);

#ifdef __cplusplus
}
#endif

#endif /* M2N_RUNTIME_H */
