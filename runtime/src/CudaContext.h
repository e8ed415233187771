//===- CudaContext.h - the CUDA backend's state -----------------*- C++ -*-===//
//
// What the CUDA backend's files share: a context (the ranks this process
// runs, their kernels, the exchange with other processes) and the device
// state of each reshard bound to buffers.
//
//===----------------------------------------------------------------------===//

#ifndef M2N_RUNTIME_CUDACONTEXT_H
#define M2N_RUNTIME_CUDACONTEXT_H

#include "Backend.h"
#include "CudaDriver.h"

#include "m2n/Artifact/Artifact.h"
#include "m2n/Artifact/KernelABI.h"

#include <array>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <tuple>
#include <vector>

namespace m2n::runtime {

class Network;
struct CudaContext;

/// One buffer as another process can map it.
struct SharedBuffer {
  cudaIpcMemHandle_t handle;
  uint64_t offset = 0;
  uint64_t present = 0;
};

/// What a process tells the others about a rank it runs: whether it runs
/// it, and its counters; then one TensorRecord per member and rank.
struct RankRecord {
  uint64_t present = 0;
  SharedBuffer counters;
};
/// A rank's source and destination buffer of one member of a launch.
struct TensorRecord {
  SharedBuffer src, dst;
};

/// Device state of what one launch runs: a reshard, or a group of reshards
/// merged into one program (mergePrograms), bound to buffers in this
/// process. Addresses are usable here: local buffers or IPC mappings.
struct ReshardState : GroupMembers {
  bool bound = false;
  /// Whether a kernel item waits (for a peer, or for peers' reads of its
  /// rank's buffers): then every kernel must run at once (checkCoResidency,
  /// launchState).
  bool kernelsWait = false;
  std::vector<void *> boundSrc, boundDst; // By member, then local slot.
  std::vector<std::vector<char *>> src, dst; // By member, then rank.
  std::vector<uint64_t *> counters;       // By rank.
  std::vector<char *> scratch;            // By scratch index.
  std::map<int64_t, uint64_t *> ownCounters; // Local ranks: counters, epoch.
  std::map<int64_t, char *> ownScratch;      // By scratch index.
  /// A local rank's kernel table on its device (m2n/Artifact/KernelTable.h):
  /// templates, then walkers, then visits, in one allocation.
  struct DeviceTable {
    char *device = nullptr;
    uint64_t capacity = 0; // Bytes allocated.
    uint64_t walkersAt = 0, visitsAt = 0;
    uint64_t items = 0; // The rank's instances: 0, no kernel.
    uint32_t ctas = 0;  // The CTAs its kernel launches (walkRankTable).
  };
  std::map<int64_t, DeviceTable> tables; // Local ranks.
  /// Local ranks of one device and one launch shape, two or more, whose
  /// kernels run as one launch when the caller gives them one stream
  /// (launchState): the CTAs of each rank in slot order, finding their
  /// rank's table through the walker records, laid end to end here (a
  /// launch costs the host microseconds: small reshards are bound by it).
  struct MergedLaunch {
    int device = 0;
    std::vector<size_t> slots;
    m2n::LaunchShape shape;
    uint32_t ctas = 0;       // The ranks' CTAs together.
    char *walkers = nullptr; // On the device.
    uint64_t capacity = 0;   // Bytes allocated there.
  };
  std::vector<MergedLaunch> mergedLaunches;
  /// Local ranks: the launch of the rank's kernel, the program's own
  /// (RankProgram::launch, m2n::launchShape): the SM path's block where an
  /// item is a vector item, else walkers of one warp each (an elected
  /// thread issues every TMA op of its share).
  std::map<int64_t, m2n::LaunchShape> shapes;
  /// Local ranks: copy-engine copies (destination, source, bytes) enqueued
  /// on the rank's stream before its kernel.
  std::map<int64_t, std::vector<std::array<uint64_t, 3>>> engineCopies;
  std::map<int, CUtensorMap *> maps;         // By local device.
  /// A quantizing member's scale tensors (the caller's), by member, then
  /// rank, and as bound (by member, then local slot).
  std::vector<std::vector<char *>> scales;
  std::vector<void *> boundScales;
  /// A quantizing member's tables of f32 amaxes (slots, quantizer, holder:
  /// the runtime's), by (kind, member, rank): those of the local ranks,
  /// allocated here (ownAmaxTables), and the other processes' ranks' mapped
  /// through their IPC handles (amaxTables holds both).
  std::map<std::tuple<BufferKind, int64_t, int64_t>, char *> ownAmaxTables;
  std::map<std::tuple<BufferKind, int64_t, int64_t>, char *> amaxTables;
  /// Local ranks: the slots (address, bytes) cleared before each launch of
  /// the rank's kernel (amax moves only max into them).
  std::map<int64_t, std::vector<std::pair<char *, size_t>>> slotsToClear;
  uint64_t networkLaunches = 0; // Host-side epoch of the network steps.
  /// The network movements in step order (with their receiving rank) and
  /// each counter they signal with its full value per launch: planned once
  /// at bind (planNetwork), walked by every launch.
  std::vector<std::pair<int64_t, const Movement *>> networkMoves;
  std::map<std::pair<int64_t, int64_t>, uint64_t> networkSignals;

  /// A buffer's address in this process.
  char *addressOf(const BufferRef &ref) const {
    if (ref.kind == BufferKind::Scratch)
      return scratch.at(ref.scratch);
    if (ref.kind == BufferKind::Scales)
      return scales.at(ref.tensor).at(ref.rank);
    if (isScaleBuffer(ref.kind))
      return amaxTables.at({ref.kind, ref.tensor, ref.rank});
    return ref.kind == BufferKind::Source ? src.at(ref.tensor).at(ref.rank)
                                          : dst.at(ref.tensor).at(ref.rank);
  }
};

/// Counters of `rank` in `program`, plus the two epoch words after them.
inline size_t counterWords(const m2n::TransferProgram &program, int64_t rank) {
  auto it = program.ranks.find(rank);
  return (it == program.ranks.end() ? 0 : it->second.counters) + 2;
}

/// Network steps (between NVLink domains) run outside the kernel: NCCL
/// send/receive between processes or devices, a copy between virtual ranks
/// of one device; see CudaNetwork.cpp.
bool hasNetworkSteps(const TransferProgram &program);
/// Fills state.networkMoves and state.networkSignals.
void planNetwork(ReshardState &state);
/// Sets up NCCL over this context's devices or processes. Collective.
m2n_status createNetwork(CudaContext *context, Network *&network);
void destroyNetwork(Network *network);
/// Before the kernels of a launch: the network streams wait for the work the
/// caller enqueued so far on `streams` (by local slot).
m2n_status networkBeforeKernels(CudaContext *context,
                                void *const *streams);
/// After the kernels: enqueues the reshard's network steps of the local
/// ranks, signalling their counters as the kernels expect, and makes the
/// caller's streams wait for them.
m2n_status enqueueNetwork(CudaContext *context, ReshardState &state,
                          void *const *streams);

/// The CUDA backend's state: the ranks this process runs, their kernels,
/// the exchange with other processes, and each group bound to buffers.
struct CudaContext {
  m2n_artifact artifact = nullptr;
  int ranks = 0;
  int processes = 1;
  std::vector<int> localRanks, localDevices; // By local slot.
  std::map<int, int> slotOf;                 // Local rank -> slot.
  m2n_allgather_fn allgather = nullptr;
  void *user = nullptr;
  std::map<int, CUfunction> kernels; // By device.
  uint64_t timeoutCycles = 0;
  /// The largest block every device's loaded kernel allows (its registers).
  uint32_t maxThreads = 1024;
  uint64_t *errorRecord = nullptr; // Host-mapped u64[4].
  void *errorDevice = nullptr;      // Its device address (every launch's).
  std::map<int, ReshardState> groups; // By the context's group number.
  std::set<std::pair<int, cudaStream_t>> pending;
  std::map<std::string, char *> opened; // IPC handle bytes -> mapping.
  std::vector<int> processOf;           // By rank: the process running it.
  /// Set up by the first bind that has network steps.
  Network *network = nullptr;
  /// By slot, for ranks that share a device: a stream forked from the
  /// caller's when another rank launches on the same stream (ranks that wait
  /// for each other must run at the same time), with its fork and join
  /// events. Created by the first bind, so that launches stay capturable.
  std::vector<cudaStream_t> helperStreams;
  std::vector<cudaEvent_t> forkEvents, joinEvents;

  bool isLocal(int64_t rank) const { return slotOf.count(rank) != 0; }

  /// All-gathers `block` (the same size on every process) into `all`.
  m2n_status exchange(const std::vector<char> &block, std::vector<char> &all) {
    all.assign(block.size() * processes, 0);
    if (processes == 1) {
      std::copy(block.begin(), block.end(), all.begin());
      return M2N_SUCCESS;
    }
    if (allgather(block.data(), all.data(), block.size(), user) != 0)
      return fail(M2N_EXECUTION_FAILED, "the all-gather callback failed");
    return M2N_SUCCESS;
  }

  /// A peer's buffer mapped into this process (cached per allocation).
  m2n_status map(const SharedBuffer &shared, char *&address) {
    std::string key(reinterpret_cast<const char *>(&shared.handle),
                    sizeof(shared.handle));
    auto it = opened.find(key);
    if (it == opened.end()) {
      void *base = nullptr;
      M2N_CUDA(cudaSetDevice(localDevices[0]));
      M2N_CUDA(cudaIpcOpenMemHandle(&base, shared.handle,
                                    cudaIpcMemLazyEnablePeerAccess));
      it = opened.emplace(key, static_cast<char *>(base)).first;
    }
    address = it->second + shared.offset;
    return M2N_SUCCESS;
  }
};

} // namespace m2n::runtime

#endif // M2N_RUNTIME_CUDACONTEXT_H
