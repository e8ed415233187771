//===- CudaApi.cpp - the C API of the CUDA backend ------------------------===//
//
// The m2n_cuda_* entry points (m2n/runtime.h): arguments checked, no C++
// exception crossing the API, the work done by the backend's files.
//
//===----------------------------------------------------------------------===//

#include "CudaBackend.h"

#include <algorithm>
#include <vector>

using m2n::runtime::bindState;
using m2n::runtime::createContext;
using m2n::runtime::fail;
using m2n::runtime::launchState;
using m2n::runtime::ReshardState;

extern "C" {

m2n_status m2n_cuda_context_create(m2n_artifact artifact, int ranks,
                                   const int *devices, double timeout_ms,
                                   m2n_cuda_context *context) {
  return m2n::runtime::guarded("m2n_cuda_context_create", [&]() -> m2n_status {
  if (!artifact || ranks <= 0 || !devices || !context || !(timeout_ms > 0))
    return fail(M2N_INVALID_ARGUMENT, "m2n_cuda_context_create: bad argument");
  std::vector<int> localRanks(ranks);
  for (int r = 0; r < ranks; ++r)
    localRanks[r] = r;
  return createContext(artifact, ranks, 1, localRanks,
                       std::vector<int>(devices, devices + ranks), nullptr,
                       nullptr, timeout_ms, context);
  });
}

m2n_status m2n_cuda_comm_create(m2n_artifact artifact, int ranks,
                                int processes, int local_count,
                                const int *local_ranks,
                                const int *local_devices,
                                m2n_allgather_fn allgather, void *user,
                                double timeout_ms, m2n_cuda_context *context) {
  return m2n::runtime::guarded("m2n_cuda_comm_create", [&]() -> m2n_status {
  if (!artifact || ranks <= 0 || processes <= 0 || local_count <= 0 ||
      !local_ranks || !local_devices || !context || !(timeout_ms > 0) ||
      (processes > 1 && !allgather))
    return fail(M2N_INVALID_ARGUMENT,
                "m2n_cuda_comm_create: bad argument (ranks, processes and "
                "local ranks must be positive, a timeout given, and an "
                "all-gather when there are several processes)");
  return createContext(
      artifact, ranks, processes,
      std::vector<int>(local_ranks, local_ranks + local_count),
      std::vector<int>(local_devices, local_devices + local_count), allgather,
      user, timeout_ms, context);
  });
}

void m2n_cuda_context_destroy(m2n_cuda_context context) {
  if (context)
    m2n::runtime::destroyContext(context);
}

m2n_status m2n_cuda_device_count(int *count) {
  return m2n::runtime::guarded("m2n_cuda_device_count", [&]() -> m2n_status {
  if (!count)
    return fail(M2N_INVALID_ARGUMENT, "m2n_cuda_device_count: null count");
  *count = 0;
  cudaError_t error = cudaGetDeviceCount(count);
  if (error != cudaSuccess) {
    *count = 0;
    cudaGetLastError();
    return fail(M2N_UNSUPPORTED, std::string("no CUDA device: ") +
                                     cudaGetErrorString(error));
  }
  return M2N_SUCCESS;
  });
}

/// m2n_cuda_bind and m2n_cuda_bind_scaled (`entry` names the call in
/// messages): the reshard's state, created at its first bind, bound.
static m2n_status bindReshard(const char *entry, m2n_cuda_context context,
                              int reshard, void *const *src,
                              const size_t *src_bytes, void *const *dst,
                              const size_t *dst_bytes, void *const *scales,
                              const size_t *scale_bytes) {
  return m2n::runtime::guarded(entry, [&]() -> m2n_status {
  if (!context)
    return fail(M2N_INVALID_ARGUMENT, std::string(entry) + ": null context");
  const m2n::CompiledReshard *r =
      m2n::runtime::reshardAt(context->artifact, reshard);
  if (!r)
    return fail(M2N_INVALID_ARGUMENT, std::string(entry) + ": no reshard " +
                                          std::to_string(reshard));
  ReshardState &state = context->reshards[reshard];
  if (state.members.empty()) {
    state.name = r->name;
    state.members = {r};
  }
  return bindState(context, state, src, src_bytes, dst, dst_bytes, scales,
                   scale_bytes);
  });
}

m2n_status m2n_cuda_bind(m2n_cuda_context context, int reshard,
                         void *const *src, const size_t *src_bytes,
                         void *const *dst, const size_t *dst_bytes) {
  return bindReshard("m2n_cuda_bind", context, reshard, src, src_bytes, dst,
                     dst_bytes, nullptr, nullptr);
}

m2n_status m2n_cuda_bind_scaled(m2n_cuda_context context, int reshard,
                                void *const *src, const size_t *src_bytes,
                                void *const *dst, const size_t *dst_bytes,
                                void *const *scales,
                                const size_t *scale_bytes) {
  return bindReshard("m2n_cuda_bind_scaled", context, reshard, src, src_bytes,
                     dst, dst_bytes, scales, scale_bytes);
}

m2n_status m2n_cuda_launch(m2n_cuda_context context, int reshard,
                           void *const *streams) {
  return m2n::runtime::guarded("m2n_cuda_launch", [&]() -> m2n_status {
  if (!context)
    return fail(M2N_INVALID_ARGUMENT, "m2n_cuda_launch: null context");
  auto found = context->reshards.find(reshard);
  if (found == context->reshards.end() || !found->second.bound)
    return fail(M2N_INVALID_ARGUMENT, "m2n_cuda_launch: reshard " +
                                          std::to_string(reshard) +
                                          " is not bound to buffers");
  return launchState(context, found->second, streams);
  });
}

m2n_status m2n_cuda_group_create(m2n_cuda_context context, int members,
                                 const int *reshards, int *group) {
  return m2n::runtime::guarded("m2n_cuda_group_create", [&]() -> m2n_status {
  if (!context || !group)
    return fail(M2N_INVALID_ARGUMENT, "m2n_cuda_group_create: bad argument");
  std::vector<const m2n::CompiledReshard *> list;
  M2N_TRY(m2n::runtime::groupMembers("m2n_cuda_group_create",
                                     context->artifact, members, reshards,
                                     list));
  const int id = context->nextGroup++;
  ReshardState &state = context->groups[id];
  state.name = "a group of " + std::to_string(members) + " reshards";
  state.members = list;
  if (list.size() > 1)
    state.merged = m2n::runtime::groupProgram(
        context->artifact, std::vector<int>(reshards, reshards + members),
        list);
  *group = id;
  return M2N_SUCCESS;
  });
}

m2n_status m2n_cuda_group_bind(m2n_cuda_context context, int group,
                               void *const *src, const size_t *src_bytes,
                               void *const *dst, const size_t *dst_bytes) {
  return m2n::runtime::guarded("m2n_cuda_group_bind", [&]() -> m2n_status {
  if (!context)
    return fail(M2N_INVALID_ARGUMENT, "m2n_cuda_group_bind: null context");
  auto found = context->groups.find(group);
  if (found == context->groups.end())
    return fail(M2N_INVALID_ARGUMENT,
                "m2n_cuda_group_bind: no group " + std::to_string(group));
  return bindState(context, found->second, src, src_bytes, dst, dst_bytes,
                   nullptr, nullptr);
  });
}

m2n_status m2n_cuda_group_bind_scaled(m2n_cuda_context context, int group,
                                      void *const *src,
                                      const size_t *src_bytes,
                                      void *const *dst,
                                      const size_t *dst_bytes,
                                      void *const *scales,
                                      const size_t *scale_bytes) {
  return m2n::runtime::guarded("m2n_cuda_group_bind_scaled", [&]() -> m2n_status {
  if (!context)
    return fail(M2N_INVALID_ARGUMENT,
                "m2n_cuda_group_bind_scaled: null context");
  auto found = context->groups.find(group);
  if (found == context->groups.end())
    return fail(M2N_INVALID_ARGUMENT,
                "m2n_cuda_group_bind_scaled: no group " +
                    std::to_string(group));
  return bindState(context, found->second, src, src_bytes, dst, dst_bytes,
                   scales, scale_bytes);
  });
}

m2n_status m2n_cuda_group_launch(m2n_cuda_context context, int group,
                                 void *const *streams) {
  return m2n::runtime::guarded("m2n_cuda_group_launch", [&]() -> m2n_status {
  if (!context)
    return fail(M2N_INVALID_ARGUMENT, "m2n_cuda_group_launch: null context");
  auto found = context->groups.find(group);
  if (found == context->groups.end() || !found->second.bound)
    return fail(M2N_INVALID_ARGUMENT, "m2n_cuda_group_launch: group " +
                                          std::to_string(group) +
                                          " is not bound to buffers");
  return launchState(context, found->second, streams);
  });
}

m2n_status m2n_cuda_execute(m2n_cuda_context context, int reshard,
                            void *const *src, const size_t *src_bytes,
                            void *const *dst, const size_t *dst_bytes,
                            void *const *streams) {
  return m2n::runtime::guarded("m2n_cuda_execute", [&]() -> m2n_status {
  if (!context || !src || !dst)
    return fail(M2N_INVALID_ARGUMENT, "m2n_cuda_execute: bad argument");
  auto found = context->reshards.find(reshard);
  const size_t slots = context->localRanks.size();
  bool same = found != context->reshards.end() && found->second.bound &&
              std::equal(src, src + slots, found->second.boundSrc.begin()) &&
              std::equal(dst, dst + slots, found->second.boundDst.begin());
  if (!same) {
    if (context->processes > 1)
      return fail(M2N_INVALID_ARGUMENT,
                  "m2n_cuda_execute: these buffers are not the bound ones; "
                  "bind them with m2n_cuda_bind on every process first");
    M2N_TRY(m2n_cuda_bind(context, reshard, src, src_bytes, dst, dst_bytes));
  }
  return m2n_cuda_launch(context, reshard, streams);
  });
}

m2n_status m2n_cuda_execute_scaled(m2n_cuda_context context, int reshard,
                                   void *const *src, const size_t *src_bytes,
                                   void *const *dst, const size_t *dst_bytes,
                                   void *const *scales,
                                   const size_t *scale_bytes,
                                   void *const *streams) {
  return m2n::runtime::guarded("m2n_cuda_execute_scaled", [&]() -> m2n_status {
  if (!context || !src || !dst || !scales)
    return fail(M2N_INVALID_ARGUMENT, "m2n_cuda_execute_scaled: bad argument");
  auto found = context->reshards.find(reshard);
  const size_t slots = context->localRanks.size();
  // Bound to these very buffers (by whichever caller bound it last)?
  const bool same =
      found != context->reshards.end() && found->second.bound &&
      found->second.boundScales.size() == slots &&
      std::equal(src, src + slots, found->second.boundSrc.begin()) &&
      std::equal(dst, dst + slots, found->second.boundDst.begin()) &&
      std::equal(scales, scales + slots, found->second.boundScales.begin());
  if (!same)
    M2N_TRY(m2n_cuda_bind_scaled(context, reshard, src, src_bytes, dst,
                                 dst_bytes, scales, scale_bytes));
  return m2n_cuda_launch(context, reshard, streams);
  });
}

m2n_status m2n_cuda_synchronize(m2n_cuda_context context) {
  return m2n::runtime::guarded("m2n_cuda_synchronize", [&]() -> m2n_status {
  if (!context)
    return fail(M2N_INVALID_ARGUMENT, "m2n_cuda_synchronize: null context");
  m2n_status status = M2N_SUCCESS;
  for (auto [device, stream] : context->pending) {
    cudaSetDevice(device);
    cudaError_t error = cudaStreamSynchronize(stream);
    if (error != cudaSuccess && status == M2N_SUCCESS) {
      if (context->errorRecord[0])
        status = fail(M2N_TIMEOUT,
                      "a transfer kernel waited longer than the timeout: work "
                      "item " + std::to_string(context->errorRecord[1]) +
                          " saw counter value " +
                          std::to_string(context->errorRecord[3]) +
                          " (a peer never signalled)");
      else
        status = m2n::runtime::cudaFailure(error, "cudaStreamSynchronize");
    }
  }
  context->pending.clear();
  return status;
  });
}

} // extern "C"

