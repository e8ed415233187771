//===- CudaContext.cpp - contexts: ranks, processes, devices --------------===//
//
// A context runs some ranks of a communicator in this process (all of them
// with one process); other processes run the rest. Creating one
// checks that every process loaded the same artifact and that every rank is
// run once, enables peer access between the devices, loads the kernel on
// each, and sets up the mapped error record kernels report timeouts in.
// Destroying one frees what its bindings allocated.
//
//===----------------------------------------------------------------------===//

#include "CudaBackend.h"

#include <algorithm>
#include <cstring>
#include <memory>
#include <set>

namespace m2n::runtime {

m2n_status createContext(m2n_artifact artifact, const ContextOptions &options,
                         CudaContext *&context) {
  const m2n::Artifact &a = artifact->artifact;
  const int ranks = options.ranks, processes = options.processes;
  const std::vector<int> &localRanks = options.localRanks,
                         &localDevices = options.localDevices;
  const double timeoutMs = options.timeoutMs;
  auto state = std::make_unique<CudaContext>();
  state->artifact = artifact;
  state->ranks = ranks;
  state->processes = processes;
  state->localRanks = localRanks;
  state->localDevices = localDevices;
  state->allgather = options.allgather;
  state->user = options.allgatherUser;
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
    CUfunction function;
    uint32_t maxThreads = 0;
    M2N_TRY(loadKernel(a, device, function, maxThreads));
    state->maxThreads = std::min(state->maxThreads, maxThreads);
    state->kernels[device] = function;
    M2N_CUDA(cudaDeviceGetAttribute(&clockKHz, cudaDevAttrClockRate, device));
  }
  state->timeoutCycles =
      static_cast<uint64_t>(timeoutMs * std::max(clockKHz, 1000000));
  M2N_CUDA(cudaHostAlloc(reinterpret_cast<void **>(&state->errorRecord),
                         4 * sizeof(uint64_t),
                         cudaHostAllocMapped | cudaHostAllocPortable));
  std::fill(state->errorRecord, state->errorRecord + 4, 0);
  if (cudaError_t error = cudaHostGetDevicePointer(&state->errorDevice,
                                                   state->errorRecord, 0)) {
    cudaFreeHost(state->errorRecord);
    return m2n::runtime::cudaFailure(error, "cudaHostGetDevicePointer");
  }

  context = state.release();
  return M2N_SUCCESS;
}

void releaseState(ReshardState &state) {
  for (auto &[i, p] : state.ownScratch)
    cudaFree(p);
  for (auto &[rank, p] : state.ownCounters)
    cudaFree(p);
  for (auto &[rank, table] : state.tables)
    cudaFree(table.device);
  for (ReshardState::MergedLaunch &merged : state.mergedLaunches)
    cudaFree(merged.walkers);
  for (auto &[device, p] : state.maps)
    cudaFree(p);
  for (auto &[key, p] : state.ownAmaxTables)
    cudaFree(p);
}

void destroyContext(CudaContext *context) {
  for (auto &[index, state] : context->groups)
    releaseState(state);
  destroyNetwork(context->network);
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

} // namespace m2n::runtime
