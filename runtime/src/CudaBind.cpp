//===- CudaBind.cpp - binding a group to buffers --------------------------===//
//
// Binding resolves a launch's buffer-relative work items to addresses this
// process can use: it checks the caller's buffers, allocates the runtime's
// own, exchanges handles with the other processes, encodes the tensor maps
// and uploads each local rank's table. Local failures go into the
// collective exchange as this process's status, so that its peers fail with
// a message instead of waiting for it.
//
//===----------------------------------------------------------------------===//

#include "CudaBackend.h"

namespace m2n::runtime {

namespace {

/// Whether a member of `state` quantizes (writes scales).
bool quantizes(const ReshardState &state) {
  for (const m2n::CompiledReshard *member : state.members)
    if (member->program.scaling)
      return true;
  return false;
}

/// The most kernels a GPU runs at once (compute capability 9.0 in the CUDA
/// programming guide's table of limits).
constexpr int kMaxConcurrentKernels = 128;

/// Refuses more local ranks with kernels on one device than it runs at
/// once where a rank waits for another: the kernels that cannot start
/// would leave the others waiting until the timeout (issue 35: 256
/// virtual ranks on one H200 waited minutes for M2N_TIMEOUT).
m2n_status checkConcurrentKernels(const CudaContext *context,
                                  const ReshardState &state) {
  std::map<int, int> kernelsOn; // By device.
  // A wait on the rank's own counter waits for peers too where they signal
  // it (reads done): any wait may need another kernel to run.
  bool waits = false;
  const TransferProgram &program = state.program();
  for (size_t slot = 0; slot < context->localRanks.size(); ++slot) {
    auto it = program.ranks.find(context->localRanks[slot]);
    if (it == program.ranks.end() || it->second.items.empty())
      continue;
    ++kernelsOn[context->localDevices[slot]];
    for (const Movement &m : it->second.items)
      waits |= !m.waits.empty();
  }
  for (const auto &[device, kernels] : kernelsOn)
    if (waits && kernels > kMaxConcurrentKernels)
      return fail(M2N_UNSUPPORTED,
                  "binding " + state.name + ": " + std::to_string(kernels) +
                      " ranks of this process launch a kernel on device " +
                      std::to_string(device) + ", which runs at most " +
                      std::to_string(kMaxConcurrentKernels) +
                      " kernels at once, and they wait for each other: the "
                      "kernels that could not start would leave the others "
                      "waiting. Run at most " +
                      std::to_string(kMaxConcurrentKernels) +
                      " ranks a GPU in one process (more GPUs or processes)");
  return M2N_SUCCESS;
}

} // namespace

m2n_status bindState(CudaContext *context, ReshardState &state,
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
                    "it with its scale buffers (m2n_buffers.scales)");
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
  m2n_status local = checkConcurrentKernels(context, state);
  if (local == M2N_SUCCESS)
    local = createHelperStreams(context);
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

} // namespace m2n::runtime
