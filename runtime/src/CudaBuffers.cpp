//===- CudaBuffers.cpp - the caller's buffers and the runtime's own -------===//
//
// Binding checks every caller buffer (present, large and aligned enough,
// memory of its rank's device inside one allocation, no destination sharing
// a byte with another buffer of the launch) and allocates what the runtime
// owns per local rank: counters, scratch buffers and a quantizing member's
// tables of amaxes.
//
//===----------------------------------------------------------------------===//

#include "CudaBackend.h"

#include "m2n/Base/CheckedMath.h"

#include <algorithm>

namespace m2n::runtime {

namespace {

/// The allocation a user buffer lies in: checked to be memory of `device`
/// and to hold the buffer's `bytes`.
struct Allocation {
  char *base = nullptr;
  size_t size = 0;
};

m2n_status findAllocation(const void *pointer, size_t bytes, int device,
                          const std::string &which, Allocation &allocation) {
  cudaPointerAttributes attributes;
  if (cudaPointerGetAttributes(&attributes, pointer) != cudaSuccess ||
      attributes.type != cudaMemoryTypeDevice ||
      attributes.device != device) {
    cudaGetLastError();
    return fail(M2N_INVALID_ARGUMENT,
                which + " is not memory of device " + std::to_string(device));
  }
  M2N_CUDA(cudaSetDevice(device));
  CUdeviceptr base = 0;
  size_t size = 0;
  M2N_CU(driver.memGetAddressRange(&base, &size,
                                   reinterpret_cast<CUdeviceptr>(pointer)));
  allocation.base = reinterpret_cast<char *>(base);
  allocation.size = size;
  const int64_t offset = static_cast<const char *>(pointer) - allocation.base;
  if (!m2n::rangeWithin(offset, static_cast<int64_t>(bytes),
                        static_cast<int64_t>(size)))
    return fail(M2N_INVALID_ARGUMENT,
                which + " needs " + std::to_string(bytes) +
                    " bytes, its allocation holds " +
                    std::to_string(size - offset) + " from there");
  return M2N_SUCCESS;
}

} // namespace

/// Validates the local buffers of every member of `state`: present, large
/// enough, on their rank's device, inside their allocation, and no
/// destination sharing a byte with another buffer of the launch.
m2n_status checkBuffers(CudaContext *context, const ReshardState &state,
                        void *const *src, const size_t *srcBytes,
                        void *const *dst, const size_t *dstBytes,
                        void *const *scales, const size_t *scaleBytes) {
  const size_t slots = context->localRanks.size();
  std::vector<m2n::runtime::CallerBuffer> buffers;
  for (size_t t = 0; t < state.members.size(); ++t) {
    const m2n::CompiledReshard &r = *state.members[t];
    const std::string member =
        state.members.size() > 1 ? " (member " + std::to_string(t) + ")" : "";
    for (size_t slot = 0; slot < slots; ++slot) {
      const int rank = context->localRanks[slot];
      for (bool source : {true, false}) {
        int64_t want =
            m2n::runtime::localBytes(r, source, rank);
        if (want == 0)
          continue;
        const size_t at = t * slots + slot;
        void *pointer = source ? src[at] : dst[at];
        size_t have = source ? srcBytes[at] : dstBytes[at];
        std::string which = std::string(source ? "source" : "destination") +
                            " buffer of rank " + std::to_string(rank);
        if (!pointer || have < static_cast<size_t>(want))
          return fail(M2N_INVALID_ARGUMENT, r.name + member + ": the " +
                                                which + " must have " +
                                                std::to_string(want) +
                                                " bytes");
        M2N_TRY(m2n::runtime::checkAlignment(r, source, pointer, which));
        Allocation allocation;
        M2N_TRY(findAllocation(pointer, want, context->localDevices[slot],
                               which, allocation));
        buffers.push_back({pointer, static_cast<size_t>(want), !source,
                           r.name + member + ": the " + which});
      }
      // A quantizing member's scale tensor of the rank.
      const int64_t want = m2n::runtime::scaleBufferBytes(
          r, m2n::BufferKind::Scales, rank);
      if (want == 0)
        continue;
      const size_t at = t * slots + slot;
      const std::string which = "scale buffer of rank " + std::to_string(rank);
      if (!scales || !scaleBytes || !scales[at] ||
          scaleBytes[at] < static_cast<size_t>(want))
        return fail(M2N_INVALID_ARGUMENT, r.name + member + ": the " + which +
                                              " must have " +
                                              std::to_string(want) + " bytes");
      const auto elementBytes = static_cast<uintptr_t>(m2n::elementSize(
          r.program.typeOf({m2n::BufferKind::Scales, rank, -1, 0})));
      if (reinterpret_cast<uintptr_t>(scales[at]) % elementBytes)
        return fail(M2N_INVALID_ARGUMENT,
                    r.name + member + ": the " + which +
                        " is not aligned to its " +
                        std::to_string(elementBytes) + "-byte elements");
      Allocation allocation;
      M2N_TRY(findAllocation(scales[at], want, context->localDevices[slot],
                             which, allocation));
      buffers.push_back({scales[at], static_cast<size_t>(want), true,
                         r.name + member + ": the " + which});
    }
  }
  return m2n::runtime::checkDisjoint(buffers);
}

/// Allocates the local ranks' counters and scratch buffers of a launch.
m2n_status allocateOwned(CudaContext *context, ReshardState &state) {
  const m2n::TransferProgram &program = state.program();
  for (size_t slot = 0; slot < context->localRanks.size(); ++slot) {
    const int rank = context->localRanks[slot];
    if (state.ownCounters.count(rank))
      continue;
    M2N_CUDA(cudaSetDevice(context->localDevices[slot]));
    size_t bytes = counterWords(program, rank) * sizeof(uint64_t);
    uint64_t *counters = nullptr;
    M2N_CUDA(cudaMalloc(&counters, bytes));
    M2N_CUDA(cudaMemset(counters, 0, bytes));
    state.ownCounters[rank] = counters;
  }
  for (size_t index = 0; index < program.scratches.size(); ++index) {
    const m2n::ScratchBuffer &buffer = program.scratches[index];
    if (!context->isLocal(buffer.rank) || state.ownScratch.count(index))
      continue;
    M2N_CUDA(cudaSetDevice(
        context->localDevices[context->slotOf.at(buffer.rank)]));
    void *p = nullptr;
    M2N_CUDA(cudaMalloc(&p, std::max<int64_t>(program.scratchBytes(index), 16)));
    state.ownScratch[index] = static_cast<char *>(p);
  }
  // A quantizing member's tables of amaxes on each local rank; its slots
  // are cleared before every launch.
  for (size_t t = 0; t < state.members.size(); ++t) {
    const m2n::CompiledReshard &r = *state.members[t];
    for (size_t slot = 0; r.program.scaling && slot < context->localRanks.size();
         ++slot) {
      const int rank = context->localRanks[slot];
      for (m2n::BufferKind kind : kAmaxTables) {
        const int64_t bytes = m2n::runtime::scaleBufferBytes(r, kind, rank);
        const auto key = std::make_tuple(kind, static_cast<int64_t>(t),
                                         static_cast<int64_t>(rank));
        if (bytes == 0 || state.ownAmaxTables.count(key))
          continue;
        M2N_CUDA(cudaSetDevice(context->localDevices[slot]));
        void *p = nullptr;
        M2N_CUDA(cudaMalloc(&p, static_cast<size_t>(bytes)));
        state.ownAmaxTables[key] = static_cast<char *>(p);
        if (kind == m2n::BufferKind::Slots)
          state.slotsToClear[rank].push_back(
              {static_cast<char *>(p), static_cast<size_t>(bytes)});
      }
    }
  }
  return M2N_SUCCESS;
}

} // namespace m2n::runtime
