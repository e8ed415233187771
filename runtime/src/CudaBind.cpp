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

} // namespace m2n::runtime
