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

#include "m2n/Artifact/KernelTable.h"

#include <algorithm>
#include <map>

namespace m2n::runtime {

namespace {

/// Whether a member of `state` quantizes (writes scales).
bool quantizes(const ReshardState &state) {
  for (const m2n::CompiledReshard *member : state.members)
    if (member->program.scaling)
      return true;
  return false;
}

/// What one SM of `device` holds: shared memory (with what the driver
/// reserves per block), threads, blocks and registers.
struct SmCapacity {
  int sharedBytes = 0, reservedPerBlock = 0, threads = 0, blocks = 0,
      registers = 0;
};

m2n_status smCapacity(int device, SmCapacity &sm) {
  M2N_CUDA(cudaDeviceGetAttribute(
      &sm.sharedBytes, cudaDevAttrMaxSharedMemoryPerMultiprocessor, device));
  M2N_CUDA(cudaDeviceGetAttribute(
      &sm.reservedPerBlock, cudaDevAttrReservedSharedMemoryPerBlock, device));
  M2N_CUDA(cudaDeviceGetAttribute(
      &sm.threads, cudaDevAttrMaxThreadsPerMultiProcessor, device));
  M2N_CUDA(cudaDeviceGetAttribute(
      &sm.blocks, cudaDevAttrMaxBlocksPerMultiprocessor, device));
  M2N_CUDA(cudaDeviceGetAttribute(
      &sm.registers, cudaDevAttrMaxRegistersPerMultiprocessor, device));
  return M2N_SUCCESS;
}

/// Refuses what cannot run at once on a device where ranks wait for each
/// other, before anything waits:
///  * more CTAs than fit on its SMs together: by the kernel's occupancy
///    where every rank has one launch shape (exact), and where shapes
///    differ by each resource summed over the CTAs (shared memory, threads,
///    blocks, registers: CTAs of different shapes may share an SM, so only
///    a total beyond the SMs' is sure not to fit);
///  * more kernels than a GPU runs at once even where the ranks of each
///    launch shape share a stream (one launch each), or, with other
///    processes, more ranks with kernels than that: their streams are known
///    only at launch, whose refusal (launchState counts the launches the
///    streams give) would not reach the other processes, which would wait.
/// The CTAs or kernels that could not start would leave the others waiting
/// until the timeout (issue 35: 256 virtual ranks on one H200 waited
/// minutes for M2N_TIMEOUT). Counted over every local rank once any item
/// waits: a rank that never waits frees its SMs when it ends, so this is
/// conservative there.
m2n_status checkCoResidency(const CudaContext *context, ReshardState &state) {
  // A wait on the rank's own counter waits for peers too where they signal
  // it (reads done): any wait may need another kernel to run.
  bool waits = false;
  const TransferProgram &program = state.program();
  struct DeviceLoad {
    size_t kernels = 0;
    std::vector<LaunchShape> shapes; // Distinct: launches at the fewest.
    double smShare = 0; // The SMs its CTAs fill, by occupancy.
    uint64_t ctas = 0;
    // Summed over the CTAs.
    uint64_t sharedBytes = 0, threads = 0, registers = 0;
    int staticShared = 0, registersPerThread = 0; // The kernel's.
  };
  std::map<int, DeviceLoad> loadOn;
  for (size_t slot = 0; slot < context->localRanks.size(); ++slot) {
    auto it = program.ranks.find(context->localRanks[slot]);
    if (it == program.ranks.end() || it->second.items.empty() ||
        !it->second.launch)
      continue;
    const int device = context->localDevices[slot];
    const Artifact &artifact = context->artifact->artifact;
    const LaunchShape shape = launchShape(artifact.kernel, *it->second.launch,
                                          context->maxThreads);
    // The CTAs walkRankTable will launch, counted without the table.
    const uint64_t items = kernelItemCount(it->second);
    const uint64_t ctas =
        items ? launchedCtas(items, artifact.kernel.ctas, shape.walkers) : 0;
    int perSm = 0;
    M2N_CUDA(cudaSetDevice(device));
    M2N_CU(driver.occupancyMaxActiveBlocksPerMultiprocessor(
        &perSm, context->kernels.at(device),
        static_cast<int>(shape.threads * shape.walkers),
        static_cast<size_t>(shape.sharedBytes())));
    auto [at, first] = loadOn.try_emplace(device);
    DeviceLoad &load = at->second;
    if (first) { // The kernel's own needs, once a device.
      M2N_CU(driver.funcGetAttribute(&load.staticShared,
                                     CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES,
                                     context->kernels.at(device)));
      M2N_CU(driver.funcGetAttribute(&load.registersPerThread,
                                     CU_FUNC_ATTRIBUTE_NUM_REGS,
                                     context->kernels.at(device)));
    }
    ++load.kernels;
    if (std::find(load.shapes.begin(), load.shapes.end(), shape) ==
        load.shapes.end())
      load.shapes.push_back(shape);
    load.ctas += ctas;
    const uint64_t threads = uint64_t{shape.threads} * shape.walkers;
    load.sharedBytes += ctas * (shape.sharedBytes() + load.staticShared);
    load.threads += ctas * threads;
    load.registers += ctas * threads * load.registersPerThread;
    // (A block that fits no SM fails at launch with CUDA's own error.)
    if (perSm > 0)
      load.smShare += static_cast<double>(ctas) / perSm;
    for (const Movement &m : it->second.items)
      waits |= !m.waits.empty();
  }
  state.kernelsWait = waits;
  if (!waits)
    return M2N_SUCCESS;
  for (const auto &[device, load] : loadOn) {
    const size_t fewestKernels =
        context->processes > 1 ? load.kernels : load.shapes.size();
    if (fewestKernels > kMaxConcurrentKernels)
      return fail(M2N_UNSUPPORTED,
                  "binding " + state.name + ": " +
                      std::to_string(fewestKernels) + " kernels of " +
                      std::to_string(load.kernels) +
                      " ranks of this process would run on device " +
                      std::to_string(device) + ", which runs at most " +
                      std::to_string(kMaxConcurrentKernels) +
                      " kernels at once, and they wait for each other: the "
                      "kernels that could not start would leave the others "
                      "waiting. Run fewer ranks a GPU in one process" +
                      (context->processes > 1
                           ? std::string(" (with other processes every rank "
                                         "counts as a kernel: streams are "
                                         "known only at launch)")
                           : std::string(" (ranks of different launch "
                                         "shapes are different kernels)")));
    int sms = 0;
    M2N_CUDA(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount,
                                    device));
    SmCapacity sm;
    M2N_TRY(smCapacity(device, sm));
    const uint64_t smCount = static_cast<uint64_t>(sms);
    const bool beyondSms =
        load.shapes.size() == 1
            // Within a millionth: shares of SMs summed in floating point.
            ? load.smShare > sms * (1 + 1e-6)
            : load.sharedBytes + load.ctas * sm.reservedPerBlock >
                      smCount * sm.sharedBytes ||
                  load.threads > smCount * sm.threads ||
                  load.ctas > smCount * sm.blocks ||
                  load.registers > smCount * sm.registers;
    if (beyondSms)
      return fail(M2N_UNSUPPORTED,
                  "binding " + state.name + ": the " +
                      std::to_string(load.kernels) +
                      " ranks of this process on device " +
                      std::to_string(device) + " launch " +
                      std::to_string(load.ctas) +
                      " CTAs that wait for each other, more than its " +
                      std::to_string(sms) +
                      " SMs hold at once at their blocks' shared memory and "
                      "registers: the CTAs that could not start would leave "
                      "the others waiting. Compile with a smaller max-ctas "
                      "or smaller stages, or run fewer ranks a GPU");
  }
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
  m2n_status local = checkCoResidency(context, state);
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
