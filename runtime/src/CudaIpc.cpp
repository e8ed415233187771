//===- CudaIpc.cpp - buffers shared between processes ---------------------===//
//
// With one process per rank (or per group of ranks), each process shares
// its ranks' buffers, counters, scratch buffers and tables of amaxes through
// CUDA IPC handles in the caller's all-gather, and maps the others'. A
// process whose own buffers were refused still takes part, so that no peer
// waits in the all-gather forever.
//
//===----------------------------------------------------------------------===//

#include "CudaBackend.h"

#include <cstring>
#include <iterator>

namespace m2n::runtime {

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

} // namespace

/// Fills `state`'s addresses: local ones directly, the other processes'
/// through their IPC handles. Collective with more than one process.
m2n_status resolveAddresses(CudaContext *context, ReshardState &state,
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

} // namespace m2n::runtime
