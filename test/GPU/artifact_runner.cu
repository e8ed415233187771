// Runs every reshard of an m2n artifact through the runtime's CUDA backend
// on the GPUs of this machine and checks every destination.
//
//   artifact_runner ARTIFACT [--repeat N] [--csv FILE] [--processes P] [--checks C]
//                   [--misalign BYTES] [--refs MIB,MIB] [--group]
//                   [--stream-per-device]
//
// Rank r runs on GPU r % G (G GPUs; several ranks per GPU are virtual
// ranks). With --processes P, P processes are forked, process p runs the
// ranks r with r % P == p, all on GPU p % G, and the processes exchange
// buffer handles through an all-gather over shared memory
// (a context of several processes): with P = G the one-process-per-GPU model, with
// P > G several processes share a GPU (CUDA IPC within one device; without
// MPS their kernels time-slice, so waits get a longer timeout). Otherwise
// one process drives every rank.
//
// Each reshard: buffers sit 4 KiB inside larger cudaMalloc allocations (the
// runtime finds the allocation), surrounded by guard bytes; it is timed
// (below), then checked three times with fresh seeded inputs
// and poisoned destinations: a direct launch, and twice a CUDA graph that
// captured the launch (the second replay proves the device-side epoch
// advances). Every destination must match the reference values bit for bit
// and every guard byte must be untouched. --checks 1 keeps only the direct
// launch (the benchmark: host-side checks of GiB buffers take seconds).
//
// Timing, the method of every m2n benchmark row and its baselines: CUDA
// events on every rank's stream around B back-to-back launches (B sized for
// ~3 ms, at most --repeat x 20), after a warm-up, --repeat repetitions; a
// repetition takes the slowest stream (of every process); the median, min
// and max per launch are reported. The same launches captured in one CUDA
// graph per stream are timed the same way (reshards without network steps).
//
// --group runs every reshard of the artifact at once, as one group
// (m2n_group_create: one kernel per rank for all of them), each on its
// own guarded buffers: a direct launch and, where no member has network
// steps, two graph replays, every member checked.
//
// --stream-per-device gives the ranks of one device one stream, as m2n-run
// and the Python frontend do: the runtime runs ranks of one launch shape as
// one kernel (else on helper streams forked from it). By default each rank
// has a stream of its own.
#include "m2n/Artifact/Artifact.h"
#include "m2n/Sim/RankData.h"
#include "m2n/runtime.h"

#include "CudaCheck.h"

#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <new>
#include <chrono>
#include <cstring>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#define M2N_CHECK(x)                                                           \
  do {                                                                         \
    m2n_status m2nStatus = (x);                                                \
    if (m2nStatus != M2N_SUCCESS) {                                            \
      std::printf("%s at %s:%d: %s\n", m2n_status_name(m2nStatus), __FILE__,   \
                  __LINE__, m2n_last_error());                                 \
      std::exit(2);                                                            \
    }                                                                          \
  } while (0)

namespace {

constexpr size_t kGuard = 4096;
constexpr uint8_t kGuardByte = 0xA5;

/// Shared memory of the forked processes: a barrier, an all-gather area and
/// one verdict per (reshard, process).
struct Shared {
  std::atomic<uint64_t> arrived; // Barrier arrivals, ever.
  int processes;
  char verdict[256][8]; // 0 pass, 1 fail; by reshard and process.
  char message[8][512];
  uint64_t calls[8];    // All-gathers each process has made.
  float elapsedMs[8];   // A timed repetition's slowest stream, by process.
  char area[1 << 20];
};

Shared *shared = nullptr;
int process = 0;
uint64_t barriers = 0; // Barriers this process has passed.

/// Waits for every process; a peer that does not arrive within two minutes
/// (it died, or took another path) ends the test instead of hanging it.
void barrier() {
  if (!shared)
    return;
  ++barriers;
  shared->arrived.fetch_add(1);
  auto start = std::chrono::steady_clock::now();
  while (shared->arrived.load() < barriers * shared->processes) {
    if (std::chrono::steady_clock::now() - start > std::chrono::seconds(120)) {
      std::printf("process %d: timed out in barrier %llu (a peer did not arrive)\n", process,
                  (unsigned long long)barriers);
      std::fflush(stdout);
      _exit(3);
    }
    usleep(20);
  }
}

/// The GPU of rank r: r % G with one process, else its process's
/// (r % P) % G: every rank of a process on one device, as the runtime
/// requires of several processes.
int deviceOf(int r, int processes, int devices) {
  return processes == 1 ? r % devices : (r % processes) % devices;
}

/// How long a kernel waits for a peer: processes sharing a GPU time-slice
/// (no MPS), so a peer's kernel may wait for the GPU for a while.
double waitTimeoutMs(int processes, int devices) {
  return processes > devices ? 30000 : 2000;
}

/// The all-gather the runtime calls. Each call is numbered, so that
/// processes out of step are reported instead of exchanging garbage.
int allgather(const void *send, void *recv, size_t bytes, void *) {
  if (bytes * shared->processes > sizeof(shared->area))
    return 1;
  shared->calls[process] += 1;
  std::memcpy(shared->area + process * bytes, send, bytes);
  barrier();
  bool inStep = true;
  for (int p = 0; p < shared->processes; ++p)
    inStep &= shared->calls[p] == shared->calls[process];
  std::memcpy(recv, shared->area, bytes * shared->processes);
  barrier();
  if (!inStep)
    std::printf("process %d: all-gather %llu out of step with a peer\n", process,
                (unsigned long long)shared->calls[process]);
  return inStep ? 0 : 1;
}

/// A CUDA context of `ranks` ranks in which this process runs `localRanks`
/// on `localDevices` (with one process, every rank).
m2n_context createContext(m2n_artifact artifact, int ranks, int processes,
                          const std::vector<int> &localRanks,
                          const std::vector<int> &localDevices, int devices) {
  m2n_context_options options = {};
  options.version = M2N_RUNTIME_API_VERSION;
  options.backend = M2N_BACKEND_CUDA;
  options.ranks = ranks;
  options.processes = processes;
  if (processes > 1) {
    options.local_count = static_cast<int>(localRanks.size());
    options.local_ranks = localRanks.data();
    options.allgather = allgather;
  }
  options.devices = localDevices.data();
  options.timeout_ms = waitTimeoutMs(processes, devices);
  m2n_context context = nullptr;
  M2N_CHECK(m2n_context_create(artifact, &options, &context));
  return context;
}

/// Bytes every buffer starts past a 16-byte boundary (--misalign): the
/// runtime then moves bulk items on the SM path.
static size_t misalign = 0;

/// A device buffer with guard bytes on both sides.
struct Guarded {
  char *base = nullptr;
  size_t bytes = 0;
  char *data() const { return base ? base + kGuard + misalign : nullptr; }
};

Guarded allocate(size_t bytes) {
  Guarded g;
  g.bytes = bytes;
  CUDA_CHECK(cudaMalloc(&g.base, bytes + 2 * kGuard + misalign));
  CUDA_CHECK(cudaMemset(g.base, kGuardByte, bytes + 2 * kGuard + misalign));
  return g;
}

std::optional<std::string> guardsIntact(const Guarded &g) {
  std::vector<uint8_t> guard(kGuard);
  for (char *at : {g.base + misalign, g.base + kGuard + misalign + g.bytes}) {
    CUDA_CHECK(cudaMemcpy(guard.data(), at, kGuard, cudaMemcpyDeviceToHost));
    for (size_t i = 0; i < kGuard; ++i)
      if (guard[i] != kGuardByte)
        return std::string(at == g.base + misalign ? "the guard before" : "the guard after") +
               " a buffer was overwritten at byte " + std::to_string(i);
  }
  return std::nullopt;
}

/// Per-launch times of a batch, over repetitions (ms).
struct Spread {
  double medianMs, minMs, maxMs;
};

std::string formatMs(double ms) {
  char text[32];
  std::snprintf(text, sizeof(text), ms < 1.0 ? "%.4f" : "%.3f", ms);
  return text;
}

/// CUDA events on every stream around what `enqueue` puts on them: the
/// slowest stream, over every process (the barrier starts them together).
class EventTimer {
public:
  EventTimer(const std::vector<cudaStream_t> &streams, const std::vector<int> &devices)
      : streams(streams), devices(devices), starts(streams.size()), stops(streams.size()) {
    for (size_t s = 0; s < streams.size(); ++s) {
      CUDA_CHECK(cudaSetDevice(devices[s]));
      CUDA_CHECK(cudaEventCreate(&starts[s]));
      CUDA_CHECK(cudaEventCreate(&stops[s]));
    }
  }
  ~EventTimer() {
    for (size_t s = 0; s < streams.size(); ++s) {
      cudaSetDevice(devices[s]);
      cudaEventDestroy(starts[s]);
      cudaEventDestroy(stops[s]);
    }
  }
  /// Milliseconds per launch of `launches` launches enqueued by `enqueue`.
  template <typename Enqueue> float time(int launches, Enqueue enqueue) {
    for (size_t s = 0; s < streams.size(); ++s) {
      CUDA_CHECK(cudaSetDevice(devices[s]));
      CUDA_CHECK(cudaStreamSynchronize(streams[s]));
    }
    barrier();
    for (size_t s = 0; s < streams.size(); ++s) {
      CUDA_CHECK(cudaSetDevice(devices[s]));
      CUDA_CHECK(cudaEventRecord(starts[s], streams[s]));
    }
    enqueue();
    float slowest = 0;
    for (size_t s = 0; s < streams.size(); ++s) {
      CUDA_CHECK(cudaSetDevice(devices[s]));
      CUDA_CHECK(cudaEventRecord(stops[s], streams[s]));
    }
    for (size_t s = 0; s < streams.size(); ++s) {
      CUDA_CHECK(cudaSetDevice(devices[s]));
      CUDA_CHECK(cudaEventSynchronize(stops[s]));
      float ms = 0;
      CUDA_CHECK(cudaEventElapsedTime(&ms, starts[s], stops[s]));
      slowest = std::max(slowest, ms);
    }
    if (shared) {
      shared->elapsedMs[process] = slowest;
      barrier();
      for (int p = 0; p < shared->processes; ++p)
        slowest = std::max(slowest, shared->elapsedMs[p]);
      barrier();
    }
    return slowest / launches;
  }
  /// `repetitions` timed batches after one untimed.
  template <typename Enqueue> Spread repeat(int repetitions, int launches, Enqueue enqueue) {
    time(launches, enqueue);
    std::vector<double> perLaunch;
    for (int r = 0; r < repetitions; ++r)
      perLaunch.push_back(time(launches, enqueue));
    std::sort(perLaunch.begin(), perLaunch.end());
    return {perLaunch[perLaunch.size() / 2], perLaunch.front(), perLaunch.back()};
  }

private:
  std::vector<cudaStream_t> streams;
  std::vector<int> devices;
  std::vector<cudaEvent_t> starts, stops;
};

/// One executable graph per stream of what `enqueue` puts on the streams.
template <typename Enqueue>
std::vector<cudaGraphExec_t> captureGraphs(const std::vector<cudaStream_t> &streams,
                                           const std::vector<int> &devices, Enqueue enqueue) {
  for (size_t s = 0; s < streams.size(); ++s) {
    CUDA_CHECK(cudaSetDevice(devices[s]));
    CUDA_CHECK(cudaStreamBeginCapture(streams[s], cudaStreamCaptureModeRelaxed));
  }
  enqueue();
  std::vector<cudaGraphExec_t> graphs(streams.size());
  for (size_t s = 0; s < streams.size(); ++s) {
    CUDA_CHECK(cudaSetDevice(devices[s]));
    cudaGraph_t graph;
    CUDA_CHECK(cudaStreamEndCapture(streams[s], &graph));
    CUDA_CHECK(cudaGraphInstantiate(&graphs[s], graph, 0));
    CUDA_CHECK(cudaGraphDestroy(graph));
  }
  return graphs;
}

/// --stream-per-device: the ranks of one device share one stream, as m2n-run
/// and the Python frontend launch them (the runtime runs them as one
/// kernel); otherwise each rank has a stream of its own.
static bool streamPerDevice = false;

/// The streams m2n_group_launch gets, one per local slot, and the distinct
/// ones among them: what is timed, captured, replayed and synchronized.
struct LaunchStreams {
  std::vector<cudaStream_t> bySlot, distinct;
  std::vector<int> devices; // Of `distinct`.
  explicit LaunchStreams(const std::vector<int> &localDevices) {
    for (int device : localDevices) {
      auto shared = std::find(devices.begin(), devices.end(), device);
      if (streamPerDevice && shared != devices.end()) {
        bySlot.push_back(distinct[shared - devices.begin()]);
        continue;
      }
      cudaStream_t stream;
      CUDA_CHECK(cudaSetDevice(device));
      CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
      bySlot.push_back(stream);
      distinct.push_back(stream);
      devices.push_back(device);
    }
  }
  ~LaunchStreams() {
    for (size_t s = 0; s < distinct.size(); ++s) {
      cudaSetDevice(devices[s]);
      cudaStreamDestroy(distinct[s]);
    }
  }
  void **args() { return reinterpret_cast<void **>(bySlot.data()); }
  void synchronize() const {
    for (size_t s = 0; s < distinct.size(); ++s) {
      CUDA_CHECK(cudaSetDevice(devices[s]));
      CUDA_CHECK(cudaStreamSynchronize(distinct[s]));
    }
  }
  void replay(const std::vector<cudaGraphExec_t> &graphs) const {
    for (size_t s = 0; s < graphs.size(); ++s) {
      CUDA_CHECK(cudaSetDevice(devices[s]));
      CUDA_CHECK(cudaGraphLaunch(graphs[s], distinct[s]));
    }
  }
};

/// With M2N_RUNNER_TRACE set: where a run is, on stderr (a run that stalls
/// shows its last step).
void trace(const char *step, int value = -1) {
  static const bool on = std::getenv("M2N_RUNNER_TRACE") != nullptr;
  if (on && value >= 0)
    std::fprintf(stderr, "[trace] %s %d\n", step, value);
  else if (on)
    std::fprintf(stderr, "[trace] %s\n", step);
}

/// --group: every reshard of the artifact bound and launched as one group.
int runGroup(m2n_artifact artifact, const m2n::Artifact &parsed, uint64_t seed, int processes,
             int devices, int checks) {
  const bool reporter = process == 0;
  const int members = m2n_artifact_reshard_count(artifact);
  int ranks = 0;
  bool network = false;
  for (int index = 0; index < members; ++index) {
    int needed = 0;
    M2N_CHECK(m2n_artifact_reshard_ranks(artifact, index, &needed));
    ranks = std::max(ranks, needed);
    for (const auto &[rank, rp] : parsed.reshards[index].program.ranks)
      network = network || !rp.receives.empty();
  }
  std::vector<int> localRanks, localDevices;
  for (int r = 0; r < ranks; ++r)
    if (processes == 1 || r % processes == process) {
      localRanks.push_back(r);
      localDevices.push_back(deviceOf(r, processes, devices));
    }
  m2n_context context =
      createContext(artifact, ranks, processes, localRanks, localDevices, devices);
  const size_t slots = localRanks.size();
  // Member-major, as m2n_group_bind takes them.
  std::vector<Guarded> src(members * slots), dst(members * slots);
  std::vector<void *> srcPointers(members * slots, nullptr), dstPointers(members * slots, nullptr);
  std::vector<size_t> srcBytes(members * slots, 0), dstBytes(members * slots, 0);
  for (int t = 0; t < members; ++t)
    for (size_t s = 0; s < slots; ++s) {
      const size_t at = t * slots + s;
      CUDA_CHECK(cudaSetDevice(localDevices[s]));
      M2N_CHECK(m2n_artifact_buffer_bytes(artifact, t, localRanks[s], &srcBytes[at], &dstBytes[at]));
      if (srcBytes[at])
        srcPointers[at] = (src[at] = allocate(srcBytes[at])).data();
      if (dstBytes[at])
        dstPointers[at] = (dst[at] = allocate(dstBytes[at])).data();
    }
  LaunchStreams streams(localDevices);
  auto upload = [&](uint64_t runSeed) {
    for (int t = 0; t < members; ++t) {
      const m2n::CompiledReshard &r = parsed.reshards[t];
      for (size_t s = 0; s < slots; ++s) {
        const size_t at = t * slots + s;
        CUDA_CHECK(cudaSetDevice(localDevices[s]));
        if (srcBytes[at]) {
          std::vector<uint8_t> values =
              m2n::sourceBytes(r.src, r.shape, r.program.sourceType.value_or(r.type),
                               localRanks[s], runSeed + t);
          CUDA_CHECK(cudaMemcpy(srcPointers[at], values.data(), srcBytes[at], cudaMemcpyHostToDevice));
        }
        if (dstBytes[at])
          CUDA_CHECK(cudaMemset(dstPointers[at], m2n::kPoisonByte, dstBytes[at]));
      }
    }
    for (size_t s = 0; s < slots; ++s) {
      CUDA_CHECK(cudaSetDevice(localDevices[s]));
      CUDA_CHECK(cudaDeviceSynchronize());
    }
    barrier();
  };
  auto verify = [&](uint64_t runSeed) -> std::optional<std::string> {
    for (int t = 0; t < members; ++t) {
      const m2n::CompiledReshard &r = parsed.reshards[t];
      for (size_t s = 0; s < slots; ++s) {
        const size_t at = t * slots + s;
        CUDA_CHECK(cudaSetDevice(localDevices[s]));
        for (const Guarded *g : {&src[at], &dst[at]})
          if (g->base)
            if (auto broken = guardsIntact(*g))
              return r.name + " rank " + std::to_string(localRanks[s]) + ": " + *broken;
        if (!dstBytes[at])
          continue;
        std::vector<uint8_t> got(dstBytes[at]);
        CUDA_CHECK(cudaMemcpy(got.data(), dstPointers[at], dstBytes[at], cudaMemcpyDeviceToHost));
        if (auto wrong = m2n::checkDestination(r.src, r.dst, r.shape, r.type, localRanks[s],
                                               runSeed + t, got.data(), r.program.sourceType,
                                               r.program.scale))
          return r.name + ": " + *wrong;
      }
    }
    return std::nullopt;
  };
  std::vector<int> indices(members);
  for (int t = 0; t < members; ++t)
    indices[t] = t;
  int group = -1;
  M2N_CHECK(m2n_group_create(context, members, indices.data(), &group));
  upload(seed);
  const m2n_buffers buffers = {srcPointers.data(), srcBytes.data(), dstPointers.data(),
                               dstBytes.data(), nullptr, nullptr};
  trace("binding");
  M2N_CHECK(m2n_group_bind(context, group, &buffers));
  trace("bound");
  void **streamArgs = streams.args();
  std::optional<std::string> problem;
  // Launch 1 direct, then (without network steps) graph replays; with
  // network steps, more direct launches.
  for (int check = 0; check < checks && !problem; ++check) {
    trace("check", check);
    upload(seed + 1000 * check);
    trace("uploaded", check);
    const bool replay = check > 0 && !network;
    auto launch = [&] { M2N_CHECK(m2n_group_launch(context, group, streamArgs)); };
    std::vector<cudaGraphExec_t> graphs;
    if (replay) {
      graphs = captureGraphs(streams.distinct, streams.devices, launch);
      streams.replay(graphs);
    } else {
      launch();
    }
    if (replay) {
      streams.synchronize();
      barrier();
    } else {
      M2N_CHECK(m2n_context_synchronize(context));
      barrier();
    }
    trace("launched", check);
    for (cudaGraphExec_t graph : graphs)
      CUDA_CHECK(cudaGraphExecDestroy(graph));
    if ((problem = verify(seed + 1000 * check)))
      *problem = (check ? (replay ? "graph replay " : "launch ") + std::to_string(check + 1) + ": "
                        : std::string("launch 1: ")) + *problem;
  }
  bool ok = !problem;
  std::string message = problem ? *problem : "";
  if (shared) {
    shared->verdict[0][process] = !ok;
    std::snprintf(shared->message[process], sizeof(shared->message[process]), "%s", message.c_str());
    barrier();
    for (int p = 0; p < processes; ++p)
      if (shared->verdict[0][p] && ok) {
        ok = false;
        message = std::string("process ") + std::to_string(p) + ": " + shared->message[p];
      }
    barrier();
  }
  int64_t items = 0;
  for (const m2n::CompiledReshard &r : parsed.reshards)
    items += r.program.itemCount();
  if (reporter)
    std::printf("group of %d reshards (%d ranks%s)  %s  %lld items, %d checks  %s\n", members, ranks,
                network ? ", network steps" : "", ok ? "PASS" : "FAIL", (long long)items, checks,
                message.c_str());
  m2n_context_destroy(context);
  for (size_t at = 0; at < src.size(); ++at) {
    if (src[at].base) CUDA_CHECK(cudaFree(src[at].base));
    if (dst[at].base) CUDA_CHECK(cudaFree(dst[at].base));
  }
  if (reporter)
    std::printf("%d passed, %d failed, 0 skipped\n", ok ? 1 : 0, ok ? 0 : 1);
  return ok ? 0 : 1;
}

} // namespace

int main(int argc, char **argv) {
  if (argc < 2) {
    std::printf("usage: %s ARTIFACT [--repeat N] [--csv FILE] [--processes P] [--checks C] [--group] [--stream-per-device]\n", argv[0]);
    return 2;
  }
  setvbuf(stdout, nullptr, _IOLBF, 0); // Complete lines, even when killed.
  int repeat = 5, processes = 1, checks = 3;
  const char *csvPath = nullptr;
  // Copy-engine references after the reshards (--refs MIB,MIB; 0: none).
  std::vector<size_t> refSizes = {(size_t)256 << 20, (size_t)1 << 30};
  bool groupMode = false;
  for (int i = 2; i < argc; i += 2) {
    if (!std::strcmp(argv[i], "--group") || // The options without a value.
        !std::strcmp(argv[i], "--stream-per-device")) {
      (argv[i][2] == 'g' ? groupMode : streamPerDevice) = true;
      --i;
      continue;
    }
    bool known = !std::strcmp(argv[i], "--repeat") || !std::strcmp(argv[i], "--csv") ||
                 !std::strcmp(argv[i], "--misalign") || !std::strcmp(argv[i], "--refs") ||
                 !std::strcmp(argv[i], "--processes") || !std::strcmp(argv[i], "--checks");
    if (!known || i + 1 == argc) {
      std::printf("artifact_runner: %s %s\n", argv[i], known ? "needs a value" : "is not an option");
      return 2;
    }
    if (!std::strcmp(argv[i], "--repeat"))
      repeat = std::max(1, std::atoi(argv[i + 1]));
    else if (!std::strcmp(argv[i], "--misalign"))
      misalign = std::strtoul(argv[i + 1], nullptr, 10);
    else if (!std::strcmp(argv[i], "--processes"))
      processes = std::max(1, std::atoi(argv[i + 1]));
    else if (!std::strcmp(argv[i], "--checks"))
      checks = std::clamp(std::atoi(argv[i + 1]), 1, 3);
    else if (!std::strcmp(argv[i], "--refs")) {
      refSizes.clear();
      std::stringstream list(argv[i + 1]);
      for (std::string mib; std::getline(list, mib, ',');)
        if (std::strtoull(mib.c_str(), nullptr, 10) > 0)
          refSizes.push_back(std::strtoull(mib.c_str(), nullptr, 10) << 20);
    }
    else
      csvPath = argv[i + 1];
  }
  std::ifstream in(argv[1], std::ios::binary);
  std::stringstream bytes;
  bytes << in.rdbuf();
  std::string text = bytes.str();
  m2n::Artifact parsed;
  if (auto error = m2n::deserializeArtifact(text, parsed)) {
    std::printf("artifact_runner: %s\n", error->c_str());
    return 1;
  }
  for (m2n::CompiledReshard &reshard : parsed.reshards)
    m2n::expandRepeats(reshard.program); // As the runtime does at bind.
  // One verdict per reshard and process (a group has one).
  if ((!groupMode && parsed.reshards.size() > 256) || processes > 8) {
    std::printf("artifact_runner: at most 256 reshards (but in a group) and "
                "8 processes\n");
    return 2;
  }

  // One seed for every process: each checks what the others filled in.
  uint64_t seed = std::chrono::steady_clock::now().time_since_epoch().count();
  // Fork before CUDA is initialized: each child is one process of the
  // communicator; the parent only waits.
  if (processes > 1) {
    shared = static_cast<Shared *>(mmap(nullptr, sizeof(Shared), PROT_READ | PROT_WRITE,
                                        MAP_SHARED | MAP_ANONYMOUS, -1, 0));
    new (&shared->arrived) std::atomic<uint64_t>(0);
    shared->processes = processes;
    std::vector<pid_t> children;
    for (int p = 0; p < processes; ++p) {
      pid_t pid = fork();
      if (pid == 0) {
        process = p;
        break;
      }
      children.push_back(pid);
    }
    if (static_cast<int>(children.size()) == processes) {
      int worst = 0;
      for (pid_t pid : children) {
        int status = 0;
        waitpid(pid, &status, 0);
        int code = WIFEXITED(status) ? WEXITSTATUS(status) : 3;
        worst = std::max(worst, code);
      }
      return worst;
    }
  }
  const bool reporter = process == 0;
  FILE *csv = nullptr;
  if (csvPath && reporter && !(csv = std::fopen(csvPath, "w"))) {
    std::printf("artifact_runner: cannot write %s\n", csvPath);
    return 2;
  }
  // One row per measurement, read by bench/gpu/report.py.
  if (csv)
    std::fprintf(csv, "name,status,items,ctas,moved_bytes,ms,ms_min,ms_max,graph_ms,batch\n");

  m2n_artifact artifact = nullptr;
  M2N_CHECK(m2n_artifact_load(text.data(), text.size(), &artifact));
  int devices = 0;
  CUDA_CHECK(cudaGetDeviceCount(&devices));
  if (processes > 1 && processes < devices) {
    std::printf("artifact_runner: --processes needs at least one process per GPU (%d)\n",
                devices);
    return 2;
  }
  if (reporter)
    std::printf("%d GPU(s); %s; %d reshards; runtime CUDA backend, %s\n", devices, argv[1],
                m2n_artifact_reshard_count(artifact),
                processes > 1 ? (processes == devices
                                     ? "one process per GPU (IPC handles, all-gather)"
                                     : "several processes per GPU (IPC handles, all-gather)")
                              : "one process for every rank");

  if (groupMode) {
    int code = runGroup(artifact, parsed, seed, processes, devices, checks);
    m2n_artifact_destroy(artifact);
    return code;
  }
  int passed = 0, failed = 0, skipped = 0;
  for (int index = 0; index < m2n_artifact_reshard_count(artifact); ++index) {
    const m2n::CompiledReshard &reshard = parsed.reshards[index];
    int ranks = 0;
    M2N_CHECK(m2n_artifact_reshard_ranks(artifact, index, &ranks));
    std::vector<int> localRanks, localDevices;
    for (int r = 0; r < ranks; ++r)
      if (processes == 1 || r % processes == process) {
        localRanks.push_back(r);
        localDevices.push_back(deviceOf(r, processes, devices));
      }
    // A process may run no rank of a small reshard: it still takes part in
    // the exchanges, with a rank-less view (then it has nothing to launch).
    if (processes > 1 && localRanks.empty()) {
      // Only reshards with at least as many ranks as processes are run in
      // this mode (every process must run a rank of the communicator).
      std::printf("artifact_runner: process %d runs no rank of %s\n", process, reshard.name.c_str());
      return 2;
    }

    m2n_context context =
        createContext(artifact, ranks, processes, localRanks, localDevices, devices);
    // The reshard is a group of one.
    int group = -1;
    M2N_CHECK(m2n_group_create(context, 1, &index, &group));
    const size_t slots = localRanks.size();
    std::vector<Guarded> src(slots), dst(slots);
    std::vector<void *> srcPointers(slots, nullptr), dstPointers(slots, nullptr);
    std::vector<size_t> srcBytes(slots, 0), dstBytes(slots, 0);
    LaunchStreams streams(localDevices);
    for (size_t s = 0; s < slots; ++s) {
      CUDA_CHECK(cudaSetDevice(localDevices[s]));
      M2N_CHECK(m2n_artifact_buffer_bytes(artifact, index, localRanks[s], &srcBytes[s], &dstBytes[s]));
      if (srcBytes[s])
        srcPointers[s] = (src[s] = allocate(srcBytes[s])).data();
      if (dstBytes[s])
        dstPointers[s] = (dst[s] = allocate(dstBytes[s])).data();
    }
    // Fresh seeded sources and poisoned destinations.
    // Fresh seeded sources (unless `poisonOnly`) and poisoned destinations.
    auto upload = [&](uint64_t runSeed, bool poisonOnly = false) {
      for (size_t s = 0; s < slots; ++s) {
        CUDA_CHECK(cudaSetDevice(localDevices[s]));
        if (srcBytes[s] && !poisonOnly) {
          std::vector<uint8_t> values = m2n::sourceBytes(
              reshard.src, reshard.shape, reshard.program.sourceType.value_or(reshard.type),
              localRanks[s], runSeed);
          CUDA_CHECK(cudaMemcpy(srcPointers[s], values.data(), srcBytes[s], cudaMemcpyHostToDevice));
        }
        if (dstBytes[s])
          CUDA_CHECK(cudaMemset(dstPointers[s], m2n::kPoisonByte, dstBytes[s]));
      }
      for (size_t s = 0; s < slots; ++s) {
        CUDA_CHECK(cudaSetDevice(localDevices[s]));
        CUDA_CHECK(cudaDeviceSynchronize());
      }
      barrier();
    };
    auto verify = [&](uint64_t runSeed) -> std::optional<std::string> {
      for (size_t s = 0; s < slots; ++s) {
        CUDA_CHECK(cudaSetDevice(localDevices[s]));
        for (const Guarded *g : {&src[s], &dst[s]})
          if (g->base)
            if (auto broken = guardsIntact(*g))
              return "rank " + std::to_string(localRanks[s]) + ": " + *broken;
        if (!dstBytes[s])
          continue;
        std::vector<uint8_t> got(dstBytes[s]);
        CUDA_CHECK(cudaMemcpy(got.data(), dstPointers[s], dstBytes[s], cudaMemcpyDeviceToHost));
        if (auto wrong = m2n::checkDestination(reshard.src, reshard.dst, reshard.shape,
                                               reshard.type, localRanks[s], runSeed, got.data(),
                                               reshard.program.sourceType, reshard.program.scale))
          return wrong;
      }
      return std::nullopt;
    };
    auto synchronize = [&]() {
      M2N_CHECK(m2n_context_synchronize(context));
      barrier();
    };

    upload(seed);
    const m2n_buffers buffers = {srcPointers.data(), srcBytes.data(), dstPointers.data(),
                                 dstBytes.data(), nullptr, nullptr};
    m2n_status status = m2n_group_bind(context, group, &buffers);
    if (status == M2N_UNSUPPORTED) {
      if (reporter)
        std::printf("%-28s SKIP  %s\n", reshard.name.c_str(), m2n_last_error());
      ++skipped;
      m2n_context_destroy(context);
      continue;
    }
    M2N_CHECK(status);
    void **streamArgs = streams.args();
    M2N_CHECK(m2n_group_launch(context, group, streamArgs)); // Warm-up.
    synchronize();
    bool network = false;
    for (const auto &[rank, rp] : reshard.program.ranks)
      network = network || !rp.receives.empty();
    EventTimer timer(streams.distinct, streams.devices);
    // The batch: ~3 ms of launches, from one timed launch (every process
    // takes the largest estimate, so that all launch alike).
    int batch = 1;
    {
      float one = timer.time(1, [&] { M2N_CHECK(m2n_group_launch(context, group, streamArgs)); });
      batch = std::clamp(static_cast<int>(3.0f / std::max(one, 1e-3f)), 1, 20 * repeat);
      if (shared) {
        shared->elapsedMs[process] = static_cast<float>(batch);
        barrier();
        for (int p = 0; p < processes; ++p)
          batch = std::min(batch, static_cast<int>(shared->elapsedMs[p]));
        barrier();
      }
    }
    auto launchBatch = [&] {
      for (int i = 0; i < batch; ++i)
        M2N_CHECK(m2n_group_launch(context, group, streamArgs));
    };
    Spread direct = timer.repeat(repeat, batch, launchBatch);
    // The same batch, captured as one graph per stream.
    std::optional<Spread> graphed;
    if (!network) {
      std::vector<cudaGraphExec_t> batchGraphs =
          captureGraphs(streams.distinct, streams.devices, launchBatch);
      graphed = timer.repeat(repeat, batch, [&] { streams.replay(batchGraphs); });
      for (cudaGraphExec_t g : batchGraphs)
        CUDA_CHECK(cudaGraphExecDestroy(g));
    }
    synchronize();

    // Check 1: a direct launch (m2n_group_execute on the bound buffers). With
    // one check, the timed launches' sources serve again (they are only read).
    std::optional<std::string> problem;
    if (checks == 1)
      upload(seed, /*poisonOnly=*/true);
    else
      upload(++seed);
    M2N_CHECK(m2n_group_execute(context, group, &buffers, streamArgs));
    synchronize();
    problem = verify(seed);
    // Checks 2 and 3: one CUDA graph per stream captured the launch, replayed.
    // A reshard with network steps counts its epoch on the host, so the
    // runtime refuses to capture it: it runs two more direct launches.
    if (network) {
      // ... and says so instead of capturing something that cannot replay.
      for (size_t s = 0; s < streams.distinct.size(); ++s) {
        CUDA_CHECK(cudaSetDevice(streams.devices[s]));
        CUDA_CHECK(cudaStreamBeginCapture(streams.distinct[s], cudaStreamCaptureModeRelaxed));
      }
      m2n_status captured = m2n_group_launch(context, group, streamArgs);
      for (size_t s = 0; s < streams.distinct.size(); ++s) {
        CUDA_CHECK(cudaSetDevice(streams.devices[s]));
        cudaGraph_t graph = nullptr;
        cudaStreamEndCapture(streams.distinct[s], &graph);
        if (graph)
          CUDA_CHECK(cudaGraphDestroy(graph));
      }
      cudaGetLastError();
      if (captured != M2N_UNSUPPORTED && !problem)
        problem = "capturing a reshard with network steps was not refused";
      for (int again = 0; again + 1 < checks; ++again) {
        upload(++seed);
        M2N_CHECK(m2n_group_launch(context, group, streamArgs));
        synchronize();
        if (!problem && (problem = verify(seed)))
          *problem = "launch " + std::to_string(again + 2) + ": " + *problem;
      }
    }
    std::vector<cudaGraphExec_t> graphs;
    if (!network && checks > 1)
      graphs = captureGraphs(streams.distinct, streams.devices,
                             [&] { M2N_CHECK(m2n_group_launch(context, group, streamArgs)); });
    // Every process runs both replays (the barriers stay in step), whatever
    // it found so far.
    for (int replay = 0; replay + 1 < checks && !graphs.empty(); ++replay) {
      upload(++seed);
      streams.replay(graphs);
      // Replays bypass the runtime, so m2n_context_synchronize does not know
      // them (it waits for the streams of m2n's own launches): wait for the
      // streams here. (Before 2026-12-01 the second replay was checked
      // before it finished; slower kernels showed it as poisoned bytes.)
      streams.synchronize();
      barrier();
      if (!problem && (problem = verify(seed)))
        *problem = "graph replay " + std::to_string(replay + 1) + ": " + *problem;
    }
    for (cudaGraphExec_t graph : graphs)
      CUDA_CHECK(cudaGraphExecDestroy(graph));

    // Every process's verdict, reported by process 0.
    bool ok = !problem;
    std::string message = problem ? *problem : "";
    if (shared) {
      shared->verdict[index][process] = !ok;
      std::snprintf(shared->message[process], sizeof(shared->message[process]), "%s", message.c_str());
      barrier();
      for (int p = 0; p < processes; ++p)
        if (shared->verdict[index][p] && ok) {
          ok = false;
          message = std::string("process ") + std::to_string(p) + ": " + shared->message[p];
        }
      barrier();
    }
    int64_t movedBytes = 0, tiles = 0;
    for (const auto &[rank, rp] : reshard.program.ranks)
      for (const m2n::Movement &m : rp.items) {
        movedBytes += m.bytes;
        tiles += m.isTile();
      }
    double ms = direct.medianMs;
    if (reporter) {
      std::string graphText = graphed ? ", graph " + formatMs(graphed->medianMs) : std::string();
      std::printf("%-28s %s  %lld items (%lld tiles), %.1f MB moved by kernels, %s ms/launch [%s-%s]%s (events, %d x %d), %.1f GB/s  %s\n",
                  reshard.name.c_str(), ok ? "PASS" : "FAIL", (long long)reshard.program.itemCount(),
                  (long long)tiles, movedBytes / 1e6, formatMs(ms).c_str(), formatMs(direct.minMs).c_str(),
                  formatMs(direct.maxMs).c_str(), graphText.c_str(), repeat, batch,
                  movedBytes / (ms * 1e-3) / 1e9, message.c_str());
      if (csv)
        std::fprintf(csv, "%s,%s,%lld,%u,%lld,%.6f,%.6f,%.6f,%s,%d\n", reshard.name.c_str(), ok ? "PASS" : "FAIL",
                     (long long)reshard.program.itemCount(), parsed.kernel.ctas, (long long)movedBytes, ms,
                     direct.minMs, direct.maxMs,
                     graphed ? std::to_string(graphed->medianMs).c_str() : "", batch);
    }
    (ok ? passed : failed)++;
    m2n_context_destroy(context);
    for (size_t s = 0; s < slots; ++s) {
      CUDA_CHECK(cudaSetDevice(localDevices[s]));
      if (src[s].base) CUDA_CHECK(cudaFree(src[s].base));
      if (dst[s].base) CUDA_CHECK(cudaFree(dst[s].base));
    }
  }
  if (processes == 1 && !refSizes.empty()) {
    // The copy engine on GPU 0, device to device, for reference: timed the
    // way the reshards are (events around a batch of back-to-back copies).
    CUDA_CHECK(cudaSetDevice(0));
    cudaStream_t stream;
    CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    for (size_t bytes : refSizes) {
      char *a, *b;
      CUDA_CHECK(cudaMalloc(&a, bytes));
      CUDA_CHECK(cudaMalloc(&b, bytes));
      EventTimer timer({stream}, {0});
      auto copy = [&] { CUDA_CHECK(cudaMemcpyAsync(b, a, bytes, cudaMemcpyDeviceToDevice, stream)); };
      int batch = std::clamp(static_cast<int>(3.0f / std::max(timer.time(1, copy), 1e-3f)), 1, 20 * repeat);
      Spread t = timer.repeat(repeat, batch, [&] { for (int i = 0; i < batch; ++i) copy(); });
      std::printf("%-28s REF   cudaMemcpyAsync GPU0 -> GPU0, %zu MiB: %s ms/copy [%s-%s] (events, %d x %d), %.1f GB/s\n",
                  "copy engine", bytes >> 20, formatMs(t.medianMs).c_str(), formatMs(t.minMs).c_str(),
                  formatMs(t.maxMs).c_str(), repeat, batch, bytes / (t.medianMs * 1e-3) / 1e9);
      if (csv)
        std::fprintf(csv, "same_gpu_copy__u8__%zu,REF,0,0,%zu,%.6f,%.6f,%.6f,,%d\n", bytes, bytes, t.medianMs,
                     t.minMs, t.maxMs, batch);
      CUDA_CHECK(cudaFree(a));
      CUDA_CHECK(cudaFree(b));
    }
    CUDA_CHECK(cudaStreamDestroy(stream));
  }
  if (devices >= 2 && processes == 1 && !refSizes.empty()) {
    // The copy engine between the first two GPUs, for reference.
    for (size_t bytes : refSizes) {
      char *a, *b;
      CUDA_CHECK(cudaSetDevice(1));
      CUDA_CHECK(cudaMalloc(&a, bytes));
      CUDA_CHECK(cudaSetDevice(0));
      CUDA_CHECK(cudaMalloc(&b, bytes));
      cudaStream_t stream;
      CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
      EventTimer timer({stream}, {0});
      auto copy = [&] { CUDA_CHECK(cudaMemcpyPeerAsync(b, 0, a, 1, bytes, stream)); };
      int batch = std::clamp(static_cast<int>(3.0f / std::max(timer.time(1, copy), 1e-3f)), 1, 20 * repeat);
      Spread t = timer.repeat(repeat, batch, [&] { for (int i = 0; i < batch; ++i) copy(); });
      std::printf("%-28s REF   cudaMemcpyPeerAsync GPU1 -> GPU0, %zu MiB: %s ms/copy [%s-%s] (events, %d x %d), %.1f GB/s\n",
                  "copy engine", bytes >> 20, formatMs(t.medianMs).c_str(), formatMs(t.minMs).c_str(),
                  formatMs(t.maxMs).c_str(), repeat, batch, bytes / (t.medianMs * 1e-3) / 1e9);
      if (csv)
        std::fprintf(csv, "copy_engine__u8__%zu,REF,0,0,%zu,%.6f,%.6f,%.6f,,%d\n", bytes, bytes, t.medianMs,
                     t.minMs, t.maxMs, batch);
      CUDA_CHECK(cudaStreamDestroy(stream));
      CUDA_CHECK(cudaFree(b));
      CUDA_CHECK(cudaSetDevice(1));
      CUDA_CHECK(cudaFree(a));
    }
  }
  if (csv)
    std::fclose(csv);
  m2n_artifact_destroy(artifact);
  if (reporter)
    std::printf("%d passed, %d failed, %d skipped\n", passed, failed, skipped);
  return failed ? 1 : 0;
}
