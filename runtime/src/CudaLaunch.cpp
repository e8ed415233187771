//===- CudaLaunch.cpp - launching a bound reshard on streams --------------===//
//
// Launching only enqueues each local rank's kernel (after its slots are
// cleared and its copy-engine copies), so launches can be captured in CUDA
// graphs. Ranks wait for each other, so the kernels of ranks of one device
// given one stream run concurrently: as one launch where they share a launch
// shape (ReshardState::MergedLaunch: a launch costs the host microseconds,
// which bound small reshards), else on helper streams forked from it.
//
// Counters are never reset: each execution of a reshard raises every counter
// by the same amount, so the n-th execution waits for n times the item's
// value. The execution count lives on the device (two words after each
// rank's counters) and the kernel advances it: a replayed graph counts too.
//
//===----------------------------------------------------------------------===//

#include "CudaBackend.h"

#include <algorithm>
#include <map>
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

m2n_status tooManyKernels(const std::string &name, int device,
                          size_t kernels) {
  return fail(M2N_UNSUPPORTED,
              name + ": " + std::to_string(kernels) +
                  " kernels of this process's ranks would run on device " +
                  std::to_string(device) + ", which runs at most " +
                  std::to_string(kMaxConcurrentKernels) +
                  " kernels at once, and they wait for each other: the "
                  "kernels that could not start would leave the others "
                  "waiting. Give the ranks of a device one stream (ranks of "
                  "one launch shape then run as one kernel), or run fewer "
                  "ranks a GPU in one process");
}

/// Enqueues a bound group (m2n_group_launch).
m2n_status launchState(CudaContext *context, ReshardState &state,
                       void *const *streams) {
  void *errorDevice = context->errorDevice;
  const bool network = !state.networkMoves.empty();
  const size_t slots = context->localRanks.size();
  auto callerStream = [&](size_t slot) {
    return streams ? static_cast<cudaStream_t>(streams[slot]) : nullptr;
  };
  // Ranks of a merged launch that the caller gave one stream run as one
  // kernel (on the first one's stream, once the last one's copies are
  // enqueued).
  std::vector<const ReshardState::MergedLaunch *> mergedOf(slots, nullptr);
  for (const ReshardState::MergedLaunch &merged : state.mergedLaunches) {
    cudaStream_t stream = callerStream(merged.slots.front());
    if (std::all_of(merged.slots.begin(), merged.slots.end(),
                    [&](size_t slot) { return callerStream(slot) == stream; }))
      for (size_t slot : merged.slots)
        mergedOf[slot] = &merged;
  }
  auto follower = [&](size_t slot) {
    return mergedOf[slot] && mergedOf[slot]->slots.front() != slot;
  };
  // Kernels that wait for each other must all run at once: refused before
  // anything is enqueued where the streams given make more launches on a
  // device than it runs at once.
  if (state.kernelsWait && slots > kMaxConcurrentKernels) {
    std::map<int, size_t> launchesOn;
    for (size_t slot = 0; slot < slots; ++slot) {
      auto table = state.tables.find(context->localRanks[slot]);
      if (table != state.tables.end() && table->second.items > 0 &&
          !follower(slot))
        ++launchesOn[context->localDevices[slot]];
    }
    for (const auto &[device, launches] : launchesOn)
      if (launches > kMaxConcurrentKernels)
        return tooManyKernels("launching " + state.name, device, launches);
  }
  if (network)
    M2N_TRY(m2n::runtime::networkBeforeKernels(context, streams));
  // Which stream each rank's kernel runs on: the caller's, or a helper
  // forked from it when an earlier launch already runs there (ranks wait
  // for each other: their kernels must run concurrently).
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
    if (follower(slot)) { // Its copies go where the merged kernel runs.
      kernelStream[slot] = kernelStream[mergedOf[slot]->slots.front()];
      continue;
    }
    const int device = context->localDevices[slot];
    cudaStream_t stream = callerStream(slot);
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
  uint64_t timeout = context->timeoutCycles;
  auto launch = [&](int device, const m2n::LaunchShape &shape, uint32_t ctas,
                    char *walkers, cudaStream_t stream) -> m2n_status {
    uint64_t stageBytes = shape.stageBytes, stages = shape.stages;
    void *args[] = {&walkers, &errorDevice, &timeout, &stageBytes, &stages};
    M2N_CU(driver.launchKernel(context->kernels.at(device), ctas, 1, 1,
                               shape.threads, shape.walkers, 1,
                               static_cast<unsigned>(shape.sharedBytes()),
                               stream, args, nullptr));
    return M2N_SUCCESS;
  };
  std::vector<size_t> joins; // Forked slots whose launch is enqueued.
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
    // The slot whose fork (if any) the launch joins: the rank's, or a
    // merged launch's first rank's.
    size_t launcher = slot;
    if (const ReshardState::MergedLaunch *merged = mergedOf[slot]) {
      // Launched once every rank's clears and copies are enqueued.
      if (merged->slots.back() != slot)
        continue;
      M2N_TRY(launch(device, merged->shape, merged->ctas, merged->walkers,
                     stream));
      launcher = merged->slots.front();
    } else {
      const ReshardState::DeviceTable &table = state.tables[rank];
      if (table.items > 0)
        M2N_TRY(launch(device, state.shapes.at(rank), table.ctas,
                       table.device + table.walkersAt, stream));
    }
    if (forked[launcher])
      joins.push_back(launcher);
    else
      context->pending.insert({device, stream});
  }
  // Join: each caller's stream waits for its helpers, once every kernel is
  // enqueued (a merged kernel goes onto the caller's stream last of its
  // ranks: waiting for a helper before it would run the helper's rank alone).
  for (size_t slot : joins) {
    const int device = context->localDevices[slot];
    M2N_TRY(useDevice(device));
    cudaStream_t caller = callerStream(slot);
    M2N_CUDA(cudaEventRecord(context->joinEvents[slot], kernelStream[slot]));
    M2N_CUDA(cudaStreamWaitEvent(caller, context->joinEvents[slot]));
    context->pending.insert({device, caller});
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
