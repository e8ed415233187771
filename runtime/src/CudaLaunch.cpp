//===- CudaLaunch.cpp - launching a bound reshard on streams --------------===//
//
// Launching only enqueues each local rank's kernel (after its slots are
// cleared and its copy-engine copies), so launches can be captured in CUDA
// graphs. Ranks of one device given one stream run on helper streams forked
// from it, since ranks wait for each other.
//
// Counters are never reset: each execution of a reshard raises every counter
// by the same amount, so the n-th execution waits for n times the item's
// value. The execution count lives on the device (two words after each
// rank's counters) and the kernel advances it: a replayed graph counts too.
//
//===----------------------------------------------------------------------===//

#include "CudaBackend.h"

#include <algorithm>
#include <set>

namespace m2n::runtime {

/// A helper stream and its events for every slot whose device runs another
/// local rank too (see CudaContext::helperStreams); once per context.
m2n_status createHelperStreams(CudaContext *context) {
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

/// Enqueues a bound group (m2n_group_launch).
m2n_status launchState(CudaContext *context, ReshardState &state,
                       void *const *streams) {
  void *errorDevice = context->errorDevice;
  const bool network = !state.networkMoves.empty();
  if (network)
    M2N_TRY(m2n::runtime::networkBeforeKernels(context, streams));
  // Which stream each rank's kernel runs on: the caller's, or a helper
  // forked from it when an earlier rank already launches there.
  const size_t slots = context->localRanks.size();
  std::vector<cudaStream_t> kernelStream(slots, nullptr);
  std::vector<bool> forked(slots, false);
  std::set<std::pair<int, cudaStream_t>> taken;
  // Every CUDA call costs the launch host time (small reshards are bound by
  // it): the device is set only when it changes.
  int current = -1;
  auto useDevice = [&](int device) -> m2n_status {
    if (device != current)
      M2N_CUDA(cudaSetDevice(device));
    current = device;
    return M2N_SUCCESS;
  };
  // A rank runs something: kernel items or copy-engine copies.
  auto runs = [&](int rank) {
    auto table = state.tables.find(rank);
    auto copies = state.engineCopies.find(rank);
    return (table != state.tables.end() && table->second.items > 0) ||
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
    M2N_TRY(useDevice(device));
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
    M2N_TRY(useDevice(device));
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
    const ReshardState::DeviceTable &table = state.tables[rank];
    uint64_t timeout = context->timeoutCycles;
    const m2n::LaunchShape &shape = state.shapes.at(rank);
    uint64_t stageBytes = shape.stageBytes, stages = shape.stages;
    uint64_t *epochWords =
        state.ownCounters.at(rank) + counterWords(state.program(), rank) - 2;
    char *templates = table.device,
         *walkers = table.device + table.walkersAt,
         *visits = table.device + table.visitsAt;
    void *args[] = {&templates, &walkers,    &visits, &errorDevice,
                    &timeout,   &stageBytes, &stages, &epochWords};
    if (table.items > 0)
      M2N_CU(driver.launchKernel(context->kernels.at(device), table.ctas, 1,
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

} // namespace m2n::runtime
