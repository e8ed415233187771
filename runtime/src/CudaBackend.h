//===- CudaBackend.h - what the CUDA backend's files call -------*- C++ -*-===//
//
// The CUDA backend in files by responsibility (runtime/README.md):
//   CudaDriver    driver entry points and CUDA errors
//   CudaContext   contexts: ranks, processes, devices, peer access
//   CudaModule    the transfer kernel loaded on a device
//   CudaBuffers   the caller's buffers checked, the runtime's allocated
//   CudaIpc       buffers shared between processes (CUDA IPC)
//   CudaTables    tensor maps and each local rank's work items uploaded
//   CudaBind      binding a reshard or a group: the above in order
//   CudaLaunch    enqueueing a bound launch on the caller's streams
//   CudaNetwork   network steps (NCCL, or copies between virtual ranks)
//   CudaBackend   the backend behind the context API (Backend.h)
//
//===----------------------------------------------------------------------===//

#ifndef M2N_RUNTIME_CUDABACKEND_H
#define M2N_RUNTIME_CUDABACKEND_H

#include "Backend.h"
#include "CudaContext.h"

#include <vector>

namespace m2n::runtime {

/// A quantizing member's tables of f32 amaxes, which the runtime allocates
/// per rank (and shares between processes).
inline constexpr BufferKind kAmaxTables[] = {
    BufferKind::Slots, BufferKind::Quantizer, BufferKind::Holder};

/// Creates a context running `options.localRanks` (on
/// `options.localDevices`, by slot) of `options.ranks`, with
/// `options.processes` processes together running each rank once.
/// Collective with several processes.
m2n_status createContext(m2n_artifact artifact, const ContextOptions &options,
                         CudaContext *&context);
/// Frees everything `context` holds, then the context.
void destroyContext(CudaContext *context);
/// Frees the device memory a binding of `state` allocated.
void releaseState(ReshardState &state);

/// The artifact's kernel on `device`, and the largest block it allows.
m2n_status loadKernel(const Artifact &artifact, int device,
                      CUfunction &function, uint32_t &maxThreads);

/// Validates the local buffers of every member of `state`: present, large
/// enough, on their rank's device, inside their allocation, and no
/// destination sharing a byte with another buffer of the launch.
m2n_status checkBuffers(CudaContext *context, const ReshardState &state,
                        void *const *src, const size_t *srcBytes,
                        void *const *dst, const size_t *dstBytes,
                        void *const *scales, const size_t *scaleBytes);
/// Allocates the local ranks' counters, scratch buffers and tables of
/// amaxes of a launch (once: a rebinding keeps them).
m2n_status allocateOwned(CudaContext *context, ReshardState &state);

/// Fills `state`'s addresses: local ones directly, the other processes'
/// through their IPC handles. Collective with more than one process: takes
/// part with `localStatus` when this process's buffers were refused.
m2n_status resolveAddresses(CudaContext *context, ReshardState &state,
                            void *const *src, void *const *dst,
                            m2n_status localStatus);

/// Encodes the tensor maps and uploads each local rank's work items.
m2n_status buildTables(CudaContext *context, ReshardState &state);

/// Binds a group (m2n_group_bind) to the caller's buffers.
m2n_status bindState(CudaContext *context, ReshardState &state,
                     void *const *src, const size_t *srcBytes,
                     void *const *dst, const size_t *dstBytes,
                     void *const *scales, const size_t *scaleBytes);

/// A helper stream and its events for every slot whose device runs another
/// local rank too (CudaContext::helperStreams); once per context.
m2n_status createHelperStreams(CudaContext *context);
/// The most kernels a GPU runs at once (compute capability 9.0 in the CUDA
/// programming guide's table of limits).
constexpr int kMaxConcurrentKernels = 128;
/// The refusal of `kernels` waiting kernels on `device` for `name`.
m2n_status tooManyKernels(const std::string &name, int device,
                          size_t kernels);
/// Enqueues a bound group (m2n_group_launch).
m2n_status launchState(CudaContext *context, ReshardState &state,
                       void *const *streams);

} // namespace m2n::runtime

#endif // M2N_RUNTIME_CUDABACKEND_H
