//===- cuda_backend.cpp - the runtime's CUDA backend ------------------------===//
//
// A context runs some ranks of a communicator in this process (all of them
// for m2n_cuda_context_create); other processes run the rest. The transfer
// kernel of the artifact is loaded on each local device.
//
// Binding a reshard to buffers resolves its buffer-relative work items to
// addresses this process can use: local ranks' buffers directly, other
// processes' buffers, scratch and counters through CUDA IPC handles that
// the processes exchange with the caller's all-gather. It then encodes the
// tensor maps and uploads each local rank's table. Launching only enqueues
// each local rank's kernel, so launches can be captured in CUDA graphs.
//
// Counters are never reset: each execution of a reshard raises every counter
// by the same amount, so the n-th execution waits for n times the item's
// value. The execution count lives on the device (two words after each
// rank's counters) and the kernel advances it: a replayed graph counts too.
//
//===----------------------------------------------------------------------===//

#include "CudaContext.h"

#include "m2n/Base/CheckedMath.h"

#include <algorithm>
#include <cstring>
#include <iterator>
#include <map>
#include <memory>
#include <new>
#include <set>
#include <type_traits>
#include <vector>

namespace m2n::runtime {

Driver driver;

bool Driver::load() {
  if (moduleLoadData)
    return true;
  auto find = [](const char *name, auto &slot) {
    void *pointer = nullptr;
    cudaDriverEntryPointQueryResult found;
    if (cudaGetDriverEntryPointByVersion(name, &pointer, 12000,
                                         cudaEnableDefault,
                                         &found) != cudaSuccess ||
        found != cudaDriverEntryPointSuccess)
      return false;
    slot = reinterpret_cast<std::remove_reference_t<decltype(slot)>>(pointer);
    return true;
  };
  return find("cuModuleGetFunction", moduleGetFunction) &&
         find("cuFuncSetAttribute", funcSetAttribute) &&
         find("cuFuncGetAttribute", funcGetAttribute) &&
         find("cuTensorMapEncodeTiled", tensorMapEncodeTiled) &&
         find("cuLaunchKernel", launchKernel) &&
         find("cuGetErrorString", getErrorString) &&
         find("cuMemGetAddressRange", memGetAddressRange) &&
         find("cuStreamWaitValue64", streamWaitValue64) &&
         find("cuStreamWriteValue64", streamWriteValue64) &&
         find("cuModuleLoadData", moduleLoadData);
}

m2n_status cudaFailure(cudaError_t error, const std::string &what) {
  return fail(M2N_CUDA_ERROR, what + ": " + cudaGetErrorName(error) + ": " +
                                  cudaGetErrorString(error));
}

m2n_status driverFailure(CUresult result, const std::string &what) {
  const char *name = nullptr;
  if (driver.getErrorString)
    driver.getErrorString(result, &name);
  return fail(M2N_CUDA_ERROR,
              what + ": " + (name ? name : "unknown error"));
}

} // namespace m2n::runtime

namespace {

using m2n::runtime::driver;
using m2n::runtime::fail;
using m2n::runtime::Item;
using m2n::runtime::RankRecord;
using m2n::runtime::TensorRecord;
using m2n::runtime::ReshardState;
using m2n::runtime::SharedBuffer;
using m2n::runtime::counterWords;

CUtensorMapDataType mapType(m2n::ElementType type) {
  switch (type) {
  case m2n::ElementType::F32:
    return CU_TENSOR_MAP_DATA_TYPE_FLOAT32;
  case m2n::ElementType::F16:
    return CU_TENSOR_MAP_DATA_TYPE_FLOAT16;
  case m2n::ElementType::BF16:
    return CU_TENSOR_MAP_DATA_TYPE_BFLOAT16;
  case m2n::ElementType::F64:
    return CU_TENSOR_MAP_DATA_TYPE_FLOAT64;
  case m2n::ElementType::I32:
    return CU_TENSOR_MAP_DATA_TYPE_INT32;
  case m2n::ElementType::I64:
    return CU_TENSOR_MAP_DATA_TYPE_INT64;
  case m2n::ElementType::I16:
    return CU_TENSOR_MAP_DATA_TYPE_UINT16;
  case m2n::ElementType::I8:
  case m2n::ElementType::U8:
  case m2n::ElementType::F8E4M3FN: // Only copied: bytes.
  case m2n::ElementType::F8E5M2:
  case m2n::ElementType::F8E8M0FNU:
    return CU_TENSOR_MAP_DATA_TYPE_UINT8;
  }
  return CU_TENSOR_MAP_DATA_TYPE_UINT8;
}

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

namespace {

m2n_status share(const void *pointer, int device, SharedBuffer &shared) {
  M2N_CUDA(cudaSetDevice(device));
  CUdeviceptr base = 0;
  size_t size = 0;
  M2N_CU(driver.memGetAddressRange(&base, &size,
                                   reinterpret_cast<CUdeviceptr>(pointer)));
  cudaError_t error =
      cudaIpcGetMemHandle(&shared.handle, reinterpret_cast<void *>(base));
  if (error != cudaSuccess)
    return fail(M2N_UNSUPPORTED,
                std::string("a buffer cannot be shared with other processes "
                            "through CUDA IPC (") +
                    cudaGetErrorString(error) +
                    "); allocate it with cudaMalloc or PyTorch's default "
                    "caching allocator");
  shared.offset = static_cast<const char *>(pointer) -
                  reinterpret_cast<const char *>(base);
  shared.present = 1;
  return M2N_SUCCESS;
}

m2n_status createContext(m2n_artifact artifact, int ranks, int processes,
                         const std::vector<int> &localRanks,
                         const std::vector<int> &localDevices,
                         m2n_allgather_fn allgather, void *user,
                         double timeoutMs, m2n_cuda_context *context) {
  const m2n::Artifact &a = artifact->artifact;
  auto state = std::make_unique<m2n_cuda_context_t>();
  state->artifact = artifact;
  state->ranks = ranks;
  state->processes = processes;
  state->localRanks = localRanks;
  state->localDevices = localDevices;
  state->allgather = allgather;
  state->user = user;
  for (size_t slot = 0; slot < localRanks.size(); ++slot) {
    int rank = localRanks[slot];
    if (rank < 0 || rank >= ranks || !state->slotOf.emplace(rank, slot).second)
      return fail(M2N_INVALID_ARGUMENT,
                  "local rank " + std::to_string(rank) +
                      " is out of range or listed twice");
  }
  // Every process must run the same artifact, and every rank must be run by
  // exactly one process.
  std::vector<int32_t> owner(ranks, 0);
  for (int rank : localRanks)
    owner[rank] = 1;
  uint64_t identity = 1469598103934665603ull; // FNV-1a of the PTX and names.
  auto mix = [&](const std::string &text) {
    for (unsigned char c : text)
      identity = (identity ^ c) * 1099511628211ull;
  };
  mix(a.ptx);
  // Names, types and layouts: processes that compiled different programs
  // (e.g. a cast inferred from different local tensors) are told apart
  // even when their kernels are the same.
  for (const m2n::CompiledReshard &r : a.reshards)
    mix(r.name + " " + m2n::toString(r.type) + " " +
        (r.program.sourceType ? m2n::toString(*r.program.sourceType) : "") +
        " " + r.src.str() + " " + r.dst.str() +
        std::to_string(r.program.itemCount()));
  std::vector<char> block(sizeof(identity) + ranks * sizeof(int32_t)), all;
  std::memcpy(block.data(), &identity, sizeof(identity));
  std::memcpy(block.data() + sizeof(identity), owner.data(),
              ranks * sizeof(int32_t));
  M2N_TRY(state->exchange(block, all));
  std::vector<int32_t> runs(ranks, 0);
  state->processOf.assign(ranks, 0);
  for (int p = 0; p < processes; ++p) {
    const char *theirs = all.data() + p * block.size();
    if (std::memcmp(theirs, &identity, sizeof(identity)))
      return fail(M2N_INVALID_ARGUMENT,
                  "process " + std::to_string(p) +
                      " loaded a different artifact");
    for (int r = 0; r < ranks; ++r) {
      int32_t has;
      std::memcpy(&has, theirs + sizeof(identity) + r * sizeof(int32_t),
                  sizeof(has));
      runs[r] += has;
      if (has)
        state->processOf[r] = p;
    }
  }
  for (int r = 0; r < ranks; ++r)
    if (runs[r] != 1)
      return fail(M2N_INVALID_ARGUMENT,
                  "rank " + std::to_string(r) + " is run by " +
                      std::to_string(runs[r]) + " processes (must be 1)");
  int count = 0;
  M2N_CUDA(cudaGetDeviceCount(&count));
  if (!driver.load())
    return fail(M2N_CUDA_ERROR, "the CUDA driver lacks an entry point the "
                                "m2n runtime needs (driver too old?)");
  std::set<int> used(localDevices.begin(), localDevices.end());
  for (int device : used)
    if (device < 0 || device >= count)
      return fail(M2N_INVALID_ARGUMENT,
                  "device " + std::to_string(device) + " does not exist (" +
                      std::to_string(count) + " devices)");
  if (processes > 1 && used.size() > 1)
    return fail(M2N_UNSUPPORTED, "with several processes, the ranks of one "
                                 "process must share one device");

  int clockKHz = 0;
  for (int device : used) {
    M2N_CUDA(cudaSetDevice(device));
    M2N_CUDA(cudaFree(nullptr));
    for (int peer : used) {
      if (peer == device)
        continue;
      int can = 0;
      M2N_CUDA(cudaDeviceCanAccessPeer(&can, device, peer));
      if (!can)
        return fail(M2N_UNSUPPORTED, "devices " + std::to_string(device) +
                                         " and " + std::to_string(peer) +
                                         " have no peer access");
      cudaError_t enabled = cudaDeviceEnablePeerAccess(peer, 0);
      if (enabled == cudaErrorPeerAccessAlreadyEnabled)
        cudaGetLastError();
      else if (enabled != cudaSuccess)
        return m2n::runtime::cudaFailure(enabled,
                                         "cudaDeviceEnablePeerAccess");
    }
    CUmodule module;
    M2N_CU(driver.moduleLoadData(&module, a.ptx.c_str()));
    CUfunction function;
    M2N_CU(driver.moduleGetFunction(&function, module, a.kernel.name.c_str()));
    M2N_CU(driver.funcSetAttribute(
        function, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
        static_cast<int>(m2n::sharedMemoryBudget(a.kernel))));
    // Walkers stay within the block the kernel's registers allow.
    int maxThreads = 0;
    M2N_CU(driver.funcGetAttribute(
        &maxThreads, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, function));
    state->maxThreads = std::min(
        state->maxThreads, static_cast<uint32_t>(std::max(maxThreads, 32)));
    state->kernels[device] = function;
    M2N_CUDA(cudaDeviceGetAttribute(&clockKHz, cudaDevAttrClockRate, device));
  }
  state->timeoutCycles =
      static_cast<uint64_t>(timeoutMs * std::max(clockKHz, 1000000));
  M2N_CUDA(cudaHostAlloc(reinterpret_cast<void **>(&state->errorRecord),
                         4 * sizeof(uint64_t),
                         cudaHostAllocMapped | cudaHostAllocPortable));
  std::fill(state->errorRecord, state->errorRecord + 4, 0);

  *context = state.release();
  return M2N_SUCCESS;
}

/// Validates the local buffers of every member of `state`: present, large
/// enough, on their rank's device, inside their allocation, and no
/// destination sharing a byte with another buffer of the launch.
m2n_status checkBuffers(m2n_cuda_context context, const ReshardState &state,
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

/// A quantizing member's tables of f32 amaxes, which the runtime allocates
/// per rank (and shares between processes).
constexpr m2n::BufferKind kAmaxTables[] = {m2n::BufferKind::Slots,
                                           m2n::BufferKind::Quantizer,
                                           m2n::BufferKind::Holder};

/// Allocates the local ranks' counters and scratch buffers of a launch.
m2n_status allocateOwned(m2n_cuda_context context, ReshardState &state) {
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

/// Fills `state`'s addresses: local ones directly, the other processes'
/// through their IPC handles. Collective with more than one process.
m2n_status resolveAddresses(m2n_cuda_context context, ReshardState &state,
                            void *const *src, void *const *dst,
                            m2n_status localStatus) {
  const int ranks = context->ranks;
  const size_t slots = context->localRanks.size();
  const size_t tensors = state.members.size();
  const m2n::TransferProgram &program = state.program();
  const size_t scratches = program.scratches.size();
  state.src.assign(tensors, std::vector<char *>(ranks, nullptr));
  state.dst.assign(tensors, std::vector<char *>(ranks, nullptr));
  state.counters.assign(ranks, nullptr);
  state.scratch.assign(scratches, nullptr);
  if (localStatus == M2N_SUCCESS)
    for (size_t slot = 0; slot < slots; ++slot) {
      const int rank = context->localRanks[slot];
      for (size_t t = 0; t < tensors; ++t) {
        state.src[t][rank] = static_cast<char *>(src[t * slots + slot]);
        state.dst[t][rank] = static_cast<char *>(dst[t * slots + slot]);
      }
      state.counters[rank] = state.ownCounters.at(rank);
    }
  for (const auto &[index, p] : state.ownScratch)
    state.scratch[index] = p;
  state.amaxTables = state.ownAmaxTables;
  if (context->processes == 1)
    return localStatus;

  // One block per process: a status word, a record per rank, a record per
  // member and rank, one shared buffer per scratch, and one per amax table
  // (kind, member, rank) of quantizing members. Every process takes part
  // even when its own buffers were rejected, so that no peer waits in the
  // all-gather forever.
  std::string message = localStatus == M2N_SUCCESS ? "" : m2n_last_error();
  const size_t header = sizeof(uint64_t);
  const size_t tensorsAt = header + ranks * sizeof(RankRecord);
  const size_t scratchAt = tensorsAt + tensors * ranks * sizeof(TensorRecord);
  const size_t tablesAt = scratchAt + scratches * sizeof(SharedBuffer);
  const size_t blockBytes =
      tablesAt + std::size(kAmaxTables) * tensors * ranks * sizeof(SharedBuffer);
  auto tableAt = [&](size_t kind, size_t t, size_t rank) {
    return tablesAt + ((kind * tensors + t) * ranks + rank) * sizeof(SharedBuffer);
  };
  std::vector<char> block(blockBytes, 0), all;
  uint64_t ok = localStatus == M2N_SUCCESS;
  auto failed = [&](m2n_status status) {
    ok = 0;
    localStatus = status;
    message = m2n_last_error();
  };
  for (size_t slot = 0; slot < slots && ok; ++slot) {
    const int rank = context->localRanks[slot];
    const int device = context->localDevices[slot];
    RankRecord record;
    std::memset(&record, 0, sizeof(record));
    record.present = 1;
    if (m2n_status status =
            share(state.ownCounters.at(rank), device, record.counters)) {
      failed(status);
      break;
    }
    std::memcpy(block.data() + header + rank * sizeof(RankRecord), &record,
                sizeof(record));
    for (size_t t = 0; t < tensors && ok; ++t) {
      TensorRecord buffers;
      std::memset(&buffers, 0, sizeof(buffers));
      m2n_status status = M2N_SUCCESS;
      if (void *p = src[t * slots + slot])
        status = share(p, device, buffers.src);
      if (void *p = dst[t * slots + slot]; p && status == M2N_SUCCESS)
        status = share(p, device, buffers.dst);
      if (status != M2N_SUCCESS)
        failed(status);
      std::memcpy(block.data() + tensorsAt +
                      (t * ranks + rank) * sizeof(TensorRecord),
                  &buffers, sizeof(buffers));
    }
  }
  for (const auto &[index, p] : state.ownScratch) {
    if (!ok)
      break;
    SharedBuffer shared;
    std::memset(&shared, 0, sizeof(shared));
    int device = context->localDevices[context->slotOf.at(
        program.scratches[index].rank)];
    if (m2n_status status = share(p, device, shared)) {
      failed(status);
      break;
    }
    std::memcpy(block.data() + scratchAt + index * sizeof(SharedBuffer),
                &shared, sizeof(shared));
  }
  for (size_t kind = 0; kind < std::size(kAmaxTables) && ok; ++kind)
    for (const auto &[key, p] : state.ownAmaxTables) {
      const auto &[tableKind, t, rank] = key;
      if (tableKind != kAmaxTables[kind])
        continue;
      SharedBuffer shared;
      std::memset(&shared, 0, sizeof(shared));
      if (m2n_status status = share(
              p, context->localDevices[context->slotOf.at(rank)], shared)) {
        failed(status);
        break;
      }
      std::memcpy(block.data() + tableAt(kind, t, rank), &shared,
                  sizeof(shared));
    }
  std::memcpy(block.data(), &ok, sizeof(ok));
  M2N_TRY(context->exchange(block, all));
  if (!ok)
    return fail(localStatus, message);
  for (int p = 0; p < context->processes; ++p) {
    const char *theirs = all.data() + p * blockBytes;
    uint64_t theirOk;
    std::memcpy(&theirOk, theirs, sizeof(theirOk));
    if (!theirOk)
      return fail(M2N_EXECUTION_FAILED,
                  "process " + std::to_string(p) +
                      " could not bind its buffers (its m2n_last_error says "
                      "why)");
    for (int rank = 0; rank < ranks; ++rank) {
      RankRecord record;
      std::memcpy(&record, theirs + header + rank * sizeof(RankRecord),
                  sizeof(record));
      if (!record.present || context->isLocal(rank))
        continue;
      for (size_t t = 0; t < tensors; ++t) {
        TensorRecord buffers;
        std::memcpy(&buffers,
                    theirs + tensorsAt +
                        (t * ranks + rank) * sizeof(TensorRecord),
                    sizeof(buffers));
        if (buffers.src.present)
          M2N_TRY(context->map(buffers.src, state.src[t][rank]));
        if (buffers.dst.present)
          M2N_TRY(context->map(buffers.dst, state.dst[t][rank]));
      }
      char *counters = nullptr;
      M2N_TRY(context->map(record.counters, counters));
      state.counters[rank] = reinterpret_cast<uint64_t *>(counters);
    }
    for (size_t index = 0; index < scratches; ++index) {
      SharedBuffer shared;
      std::memcpy(&shared, theirs + scratchAt + index * sizeof(SharedBuffer),
                  sizeof(shared));
      if (shared.present && !state.scratch[index])
        M2N_TRY(context->map(shared, state.scratch[index]));
    }
    for (size_t kind = 0; kind < std::size(kAmaxTables); ++kind)
      for (size_t t = 0; t < tensors; ++t)
        for (int rank = 0; rank < ranks; ++rank) {
          SharedBuffer shared;
          std::memcpy(&shared, theirs + tableAt(kind, t, rank),
                      sizeof(shared));
          if (!shared.present || context->isLocal(rank))
            continue;
          M2N_TRY(context->map(
              shared, state.amaxTables[{kAmaxTables[kind],
                                        static_cast<int64_t>(t),
                                        static_cast<int64_t>(rank)}]));
        }
  }
  return M2N_SUCCESS;
}

/// Encodes the tensor maps and uploads each local rank's work items.
m2n_status buildTables(m2n_cuda_context context, ReshardState &state) {
  const m2n::TransferProgram &program = state.program();
  auto addressOf = [&](const m2n::BufferRef &ref) {
    return state.addressOf(ref);
  };
  auto counterOf = [&](const m2n::CounterRef &counter) {
    return reinterpret_cast<uint64_t>(state.counters.at(counter.rank) +
                                      counter.index);
  };

  std::vector<CUtensorMap> maps(program.maps.size());
  for (size_t m = 0; m < program.maps.size(); ++m) {
    const m2n::TensorMapSpec &spec = program.maps[m];
    const int rank = static_cast<int>(spec.box.size());
    const m2n::ElementType type = program.typeOf(spec.buffer);
    cuuint64_t dims[5], strides[4];
    cuuint32_t box[5], elementStrides[5];
    int64_t pitch = m2n::elementSize(type);
    for (int d = 0; d < rank; ++d) {
      dims[d] = spec.extents[rank - 1 - d];
      box[d] = static_cast<cuuint32_t>(spec.box[rank - 1 - d]);
      elementStrides[d] = 1;
      if (d > 0)
        strides[d - 1] = pitch;
      pitch *= spec.extents[rank - 1 - d];
    }
    // Tensor maps need 16-byte aligned addresses: the program has tiles
    // only over scratch (cudaMalloc'd) and buffers checkBuffers found as
    // aligned as it assumes (16 bytes, where it has TMA items).
    M2N_CU(driver.tensorMapEncodeTiled(
        &maps[m], mapType(type), rank, addressOf(spec.buffer), dims, strides,
        box, elementStrides, CU_TENSOR_MAP_INTERLEAVE_NONE,
        CU_TENSOR_MAP_SWIZZLE_NONE, CU_TENSOR_MAP_L2_PROMOTION_NONE,
        CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE));
  }
  for (const auto &[rank, rankProgram] : program.ranks) {
    if (!context->isLocal(rank))
      continue;
    const int device = context->localDevices[context->slotOf.at(rank)];
    M2N_CUDA(cudaSetDevice(device));
    if (!maps.empty()) {
      if (!state.maps.count(device)) {
        CUtensorMap *deviceMaps = nullptr;
        M2N_CUDA(cudaMalloc(&deviceMaps, maps.size() * sizeof(CUtensorMap)));
        state.maps[device] = deviceMaps;
      }
      M2N_CUDA(cudaMemcpy(state.maps[device], maps.data(),
                          maps.size() * sizeof(CUtensorMap),
                          cudaMemcpyHostToDevice));
    }
    // Repeated movements become one item per instance here, for the local
    // ranks only: the artifact stays compact (Movement::repeats).
    std::vector<Item> items;
    size_t instances = 0;
    for (const m2n::Movement &m : rankProgram.items)
      instances += static_cast<size_t>(m.instances());
    try {
      items.reserve(instances);
    } catch (const std::bad_alloc &) {
      return fail(M2N_OUT_OF_MEMORY,
                  "binding " + state.name + ": not enough host memory for " +
                      std::to_string(instances) + " kernel items of rank " +
                      std::to_string(rank));
    }
    m2n::ItemAddresses addresses;
    addresses.buffer = [&](const m2n::BufferRef &ref) {
      return reinterpret_cast<uint64_t>(addressOf(ref));
    };
    addresses.counter = counterOf;
    addresses.tensorMap = [&](int64_t map) {
      return reinterpret_cast<uint64_t>(state.maps[device] + map);
    };
    for (const m2n::Movement &m : rankProgram.items)
      if (std::optional<std::string> wrong =
              m2n::encodeItems(m, program, addresses, items))
        return fail(M2N_UNSUPPORTED, "binding " + state.name + ": rank " +
                                         std::to_string(rank) + ": " + *wrong);
    if (state.itemCounts[rank] < items.size() || !state.tables.count(rank)) {
      if (state.tables.count(rank))
        M2N_CUDA(cudaFree(state.tables[rank]));
      Item *table = nullptr;
      M2N_CUDA(cudaMalloc(&table,
                          std::max<size_t>(items.size(), 1) * sizeof(Item)));
      state.tables[rank] = table;
    }
    M2N_CUDA(cudaMemcpy(state.tables[rank], items.data(),
                        items.size() * sizeof(Item), cudaMemcpyHostToDevice));
    state.itemCounts[rank] = items.size();
    // The launch the compiler chose (m2n-choose-launch; a group's combined
    // from its members' by mergePrograms), within the loaded kernel's block.
    if (!rankProgram.launch)
      return fail(M2N_INTERNAL_ERROR,
                  "rank " + std::to_string(rank) + "'s program has no launch");
    state.shapes[rank] = m2n::launchShape(context->artifact->artifact.kernel,
                                          *rankProgram.launch,
                                          context->maxThreads);
    std::vector<std::array<uint64_t, 3>> &copies = state.engineCopies[rank];
    copies.clear();
    for (const m2n::Movement &m : rankProgram.engineCopies)
      copies.push_back(
          {reinterpret_cast<uint64_t>(addressOf(m.dst) + m.dstOffset),
           reinterpret_cast<uint64_t>(addressOf(m.src) + m.srcOffset),
           static_cast<uint64_t>(m.bytes)});
  }
  return M2N_SUCCESS;
}

} // namespace

// A helper stream and its events for every slot whose device runs another
// local rank too (see m2n_cuda_context_t::helperStreams); once per context.
static m2n_status createHelperStreams(m2n_cuda_context context) {
  const size_t slots = context->localRanks.size();
  if (!context->helperStreams.empty())
    return M2N_SUCCESS;
  std::vector<cudaStream_t> helpers(slots, nullptr);
  std::vector<cudaEvent_t> forks(slots, nullptr), joins(slots, nullptr);
  m2n_status status = M2N_SUCCESS;
  for (size_t slot = 0; slot < slots && status == M2N_SUCCESS; ++slot) {
    const int device = context->localDevices[slot];
    if (std::count(context->localDevices.begin(), context->localDevices.end(),
                   device) < 2)
      continue;
    cudaError_t error = cudaSetDevice(device);
    if (error == cudaSuccess)
      error = cudaStreamCreateWithFlags(&helpers[slot], cudaStreamNonBlocking);
    if (error == cudaSuccess)
      error = cudaEventCreateWithFlags(&forks[slot], cudaEventDisableTiming);
    if (error == cudaSuccess)
      error = cudaEventCreateWithFlags(&joins[slot], cudaEventDisableTiming);
    if (error != cudaSuccess)
      status = m2n::runtime::cudaFailure(error, "creating a helper stream");
  }
  if (status != M2N_SUCCESS) {
    for (size_t slot = 0; slot < slots; ++slot) {
      if (helpers[slot]) cudaStreamDestroy(helpers[slot]);
      if (forks[slot]) cudaEventDestroy(forks[slot]);
      if (joins[slot]) cudaEventDestroy(joins[slot]);
    }
    return status;
  }
  context->helperStreams = std::move(helpers);
  context->forkEvents = std::move(forks);
  context->joinEvents = std::move(joins);
  return M2N_SUCCESS;
}

namespace {

/// Binds a reshard or a group (m2n_cuda_bind, m2n_cuda_group_bind).
/// Whether a member of `state` quantizes (writes scales).
bool quantizes(const ReshardState &state) {
  for (const m2n::CompiledReshard *member : state.members)
    if (member->program.scaling)
      return true;
  return false;
}

m2n_status bindState(m2n_cuda_context context, ReshardState &state,
                     void *const *src, const size_t *srcBytes,
                     void *const *dst, const size_t *dstBytes,
                     void *const *scales, const size_t *scaleBytes) {
  if (!src || !dst || !srcBytes || !dstBytes)
    return fail(M2N_INVALID_ARGUMENT,
                "binding " + state.name + ": null buffer arrays");
  // What every process finds the same way may fail before the exchange.
  // (A quantizing member's tables live on their own ranks; the other
  // processes map them, resolveAddresses.)
  const bool quantizing = quantizes(state);
  if (quantizing && !scales)
    return fail(M2N_INVALID_ARGUMENT,
                "binding " + state.name +
                    ": it quantizes and writes a scale tensor per rank: bind "
                    "it with m2n_cuda_bind_scaled / m2n_cuda_group_bind_scaled");
  for (const auto &[rank, program] : state.program().ranks) {
    if (rank >= context->ranks)
      return fail(M2N_INVALID_ARGUMENT,
                  state.name + " needs rank " + std::to_string(rank) +
                      ", the context has " + std::to_string(context->ranks));
  }
  if (m2n::runtime::hasNetworkSteps(state.program())) {
    if (!context->network)
      M2N_TRY(m2n::runtime::createNetwork(context, context->network));
    m2n::runtime::planNetwork(state);
  }
  state.bound = false;
  // Local failures (CUDA errors, out of memory, bad buffers) go into the
  // collective exchange as this process's status, so that its peers fail
  // with a message instead of waiting for it.
  m2n_status local = createHelperStreams(context);
  if (local == M2N_SUCCESS)
    local = allocateOwned(context, state);
  if (local == M2N_SUCCESS)
    local = checkBuffers(context, state, src, srcBytes, dst, dstBytes, scales,
                         scaleBytes);
  M2N_TRY(resolveAddresses(context, state, src, dst, local));
  const size_t entries = context->localRanks.size() * state.members.size();
  // The scale tensors (quantizing members: each rank's own, written by its
  // own kernel only).
  state.scales.assign(state.members.size(),
                      std::vector<char *>(context->ranks, nullptr));
  for (size_t t = 0; scales && t < state.members.size(); ++t)
    for (size_t slot = 0; slot < context->localRanks.size(); ++slot)
      state.scales[t][context->localRanks[slot]] =
          static_cast<char *>(scales[t * context->localRanks.size() + slot]);
  M2N_TRY(buildTables(context, state));
  state.boundSrc.assign(src, src + entries);
  state.boundDst.assign(dst, dst + entries);
  if (scales)
    state.boundScales.assign(scales, scales + entries);
  else
    state.boundScales.clear();
  state.bound = true;
  return M2N_SUCCESS;
}

/// Enqueues a bound reshard or group (m2n_cuda_launch,
/// m2n_cuda_group_launch).
m2n_status launchState(m2n_cuda_context context, ReshardState &state,
                       void *const *streams) {
  const m2n::Artifact &a = context->artifact->artifact;
  void *errorDevice = nullptr;
  M2N_CUDA(cudaHostGetDevicePointer(&errorDevice, context->errorRecord, 0));
  const bool network = !state.networkMoves.empty();
  if (network)
    M2N_TRY(m2n::runtime::networkBeforeKernels(context, streams));
  // Which stream each rank's kernel runs on: the caller's, or a helper
  // forked from it when an earlier rank already launches there.
  const size_t slots = context->localRanks.size();
  std::vector<cudaStream_t> kernelStream(slots, nullptr);
  std::vector<bool> forked(slots, false);
  std::set<std::pair<int, cudaStream_t>> taken;
  // A rank runs something: kernel items or copy-engine copies.
  auto runs = [&](int rank) {
    auto count = state.itemCounts.find(rank);
    auto copies = state.engineCopies.find(rank);
    return (count != state.itemCounts.end() && count->second > 0) ||
           (copies != state.engineCopies.end() && !copies->second.empty());
  };
  for (size_t slot = 0; slot < slots; ++slot) {
    if (!runs(context->localRanks[slot]))
      continue;
    const int device = context->localDevices[slot];
    cudaStream_t stream =
        streams ? static_cast<cudaStream_t>(streams[slot]) : nullptr;
    kernelStream[slot] = stream;
    if (taken.insert({device, stream}).second)
      continue;
    // The fork point is recorded before any kernel on `stream`, so the
    // helper does not wait for the ranks launched there.
    M2N_CUDA(cudaSetDevice(device));
    M2N_CUDA(cudaEventRecord(context->forkEvents[slot], stream));
    M2N_CUDA(cudaStreamWaitEvent(context->helperStreams[slot],
                                 context->forkEvents[slot]));
    kernelStream[slot] = context->helperStreams[slot];
    forked[slot] = true;
  }
  for (size_t slot = 0; slot < slots; ++slot) {
    const int rank = context->localRanks[slot];
    if (!runs(rank))
      continue;
    const int device = context->localDevices[slot];
    M2N_CUDA(cudaSetDevice(device));
    cudaStream_t stream = kernelStream[slot];
    // Slots start at zero (the amax of nothing) every launch: nobody reads
    // the last launch's any more (its readers reported their reads before
    // this rank's kernel ended), and nobody reads this launch's before
    // this rank's amax items signal.
    for (const auto &[slots, bytes] : state.slotsToClear[rank])
      M2N_CUDA(cudaMemsetAsync(slots, 0, bytes, stream));
    // The rank's own bytes, by the copy engine, before its kernel.
    for (const std::array<uint64_t, 3> &copy : state.engineCopies[rank])
      M2N_CUDA(cudaMemcpyAsync(reinterpret_cast<void *>(copy[0]),
                               reinterpret_cast<const void *>(copy[1]),
                               copy[2], cudaMemcpyDefault, stream));
    uint64_t items = state.itemCounts[rank], timeout = context->timeoutCycles;
    const m2n::LaunchShape &shape = state.shapes.at(rank);
    uint64_t stageBytes = shape.stageBytes, stages = shape.stages;
    uint64_t *epochWords =
        state.ownCounters.at(rank) + counterWords(state.program(), rank) - 2;
    void *args[] = {&state.tables[rank], &items,  &errorDevice, &timeout,
                    &stageBytes,         &stages, &epochWords};
    if (items > 0)
      M2N_CU(driver.launchKernel(context->kernels.at(device), a.kernel.ctas, 1,
                                 1, shape.threads, shape.walkers, 1,
                                 static_cast<unsigned>(shape.sharedBytes()),
                                 stream, args, nullptr));
    if (forked[slot]) { // Join: the caller's stream waits for the helper.
      cudaStream_t caller =
          streams ? static_cast<cudaStream_t>(streams[slot]) : nullptr;
      M2N_CUDA(cudaEventRecord(context->joinEvents[slot], stream));
      M2N_CUDA(cudaStreamWaitEvent(caller, context->joinEvents[slot]));
      stream = caller;
    }
    context->pending.insert({device, stream});
  }
  if (network) {
    M2N_TRY(m2n::runtime::enqueueNetwork(context, state, streams));
    for (size_t slot = 0; slot < context->localRanks.size(); ++slot)
      context->pending.insert(
          {context->localDevices[slot],
           streams ? static_cast<cudaStream_t>(streams[slot]) : nullptr});
  }
  return M2N_SUCCESS;
}

} // namespace

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
  if (!context)
    return;
  for (auto *states : {&context->reshards, &context->groups})
  for (auto &[index, state] : *states) {
    for (auto &[i, p] : state.ownScratch)
      cudaFree(p);
    for (auto &[rank, p] : state.ownCounters)
      cudaFree(p);
    for (auto &[rank, p] : state.tables)
      cudaFree(p);
    for (auto &[device, p] : state.maps)
      cudaFree(p);
    for (auto &[key, p] : state.ownAmaxTables)
      cudaFree(p);
  }
  m2n::runtime::destroyNetwork(context->network);
  for (size_t slot = 0; slot < context->helperStreams.size(); ++slot) {
    if (!context->helperStreams[slot])
      continue;
    cudaSetDevice(context->localDevices[slot]);
    cudaStreamDestroy(context->helperStreams[slot]);
    cudaEventDestroy(context->forkEvents[slot]);
    cudaEventDestroy(context->joinEvents[slot]);
  }
  if (!context->opened.empty()) {
    cudaSetDevice(context->localDevices[0]);
    for (auto &[key, base] : context->opened)
      cudaIpcCloseMemHandle(base);
  }
  cudaFreeHost(context->errorRecord);
  delete context;
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
