//===- CudaNetwork.cpp - network steps of the CUDA backend ----------------===//
//
// A network step (a schedule step between NVLink domains) is not a kernel
// item: the receiving rank's program lists it as a receive, and the runtime
// moves its bytes on a network stream per local device, outside the kernel:
//
//  * between ranks of different processes, or of different devices of one
//    process: NCCL send on the source rank, receive on the destination
//    (NCCL is loaded at first use, libnccl.so.2; one communicator over the
//    processes, or over the devices of the one process);
//  * between virtual ranks of one device: a device-to-device copy.
//
// Ordering with the kernels goes through the same counters the kernel
// items use: before a send (or receive) the network stream waits until
// each counter of that rank the movement waits for reaches its value times
// the launch's epoch (cuStreamWaitValue64); after the last receive that
// signals a counter, the stream writes the counter's full value
// (cuStreamWriteValue64; only that step signals it). The epoch is counted on
// the host, so launches with network steps cannot be captured in graphs.
// Every process issues the network movements in the schedule's step order,
// one NCCL group per movement, so sends and receives pair up.
//
//===----------------------------------------------------------------------===//

#include "CudaContext.h"

#include <dlfcn.h>

#include <algorithm>
#include <cstring>
#include <tuple>
#include <type_traits>

namespace m2n::runtime {

namespace {

// The few NCCL types and calls used, declared here so that the runtime
// builds without NCCL's headers (the GPU machine's NCCL comes with torch).
struct NcclCommOpaque;
using NcclComm = NcclCommOpaque *;
struct NcclUniqueId {
  char internal[128];
};
constexpr int kNcclInt8 = 0;

struct Nccl {
  int (*getUniqueId)(NcclUniqueId *) = nullptr;
  int (*commInitRank)(NcclComm *, int, NcclUniqueId, int) = nullptr;
  int (*commInitAll)(NcclComm *, int, const int *) = nullptr;
  int (*send)(const void *, size_t, int, int, NcclComm, cudaStream_t) = nullptr;
  int (*recv)(void *, size_t, int, int, NcclComm, cudaStream_t) = nullptr;
  int (*groupStart)() = nullptr;
  int (*groupEnd)() = nullptr;
  int (*commDestroy)(NcclComm) = nullptr;
  const char *(*getErrorString)(int) = nullptr;

  m2n_status load() {
    if (send)
      return M2N_SUCCESS;
    void *library = dlopen("libnccl.so.2", RTLD_NOW | RTLD_GLOBAL);
    if (!library)
      return fail(M2N_UNSUPPORTED,
                  std::string("network steps need NCCL, and libnccl.so.2 "
                              "cannot be loaded: ") +
                      dlerror());
    auto find = [&](const char *name, auto &slot) {
      slot = reinterpret_cast<std::remove_reference_t<decltype(slot)>>(
          dlsym(library, name));
      return slot != nullptr;
    };
    if (!(find("ncclGetUniqueId", getUniqueId) &&
          find("ncclCommInitRank", commInitRank) &&
          find("ncclCommInitAll", commInitAll) && find("ncclSend", send) &&
          find("ncclRecv", recv) && find("ncclGroupStart", groupStart) &&
          find("ncclGroupEnd", groupEnd) &&
          find("ncclCommDestroy", commDestroy) &&
          find("ncclGetErrorString", getErrorString))) {
      send = nullptr;
      return fail(M2N_UNSUPPORTED, "libnccl.so.2 lacks a function m2n needs");
    }
    return M2N_SUCCESS;
  }
};

Nccl nccl;

m2n_status ncclFailure(int result, const std::string &what) {
  return fail(M2N_EXECUTION_FAILED,
              what + ": " + (nccl.getErrorString ? nccl.getErrorString(result)
                                                 : "NCCL error"));
}

#define M2N_NCCL(call)                                                         \
  do {                                                                         \
    int m2nResult = (call);                                                    \
    if (m2nResult != 0)                                                        \
      return ncclFailure(m2nResult, #call);                                    \
  } while (0)

} // namespace

class Network {
public:
  std::map<int, NcclComm> comms;         // By local device.
  std::map<int, cudaStream_t> streams;   // By local device.
  std::map<int, cudaEvent_t> inputs, outputs; // By local device.
  std::map<int64_t, int> peerOf;         // Rank -> NCCL rank.
};

bool hasNetworkSteps(const TransferProgram &program) {
  for (const auto &[rank, rankProgram] : program.ranks)
    if (!rankProgram.receives.empty())
      return true;
  return false;
}

void planNetwork(ReshardState &state) {
  state.networkSignals.clear();
  for (const auto &[rank, program] : state.program().ranks)
    for (const Movement &m : program.receives)
      if (m.signal)
        state.networkSignals[{m.signal->rank, m.signal->index}] +=
            static_cast<uint64_t>(m.instances());
  state.networkMoves = networkOrder(state.program());
}

m2n_status createNetwork(CudaContext *context, Network *&result) {
  M2N_TRY(nccl.load());
  auto network = std::make_unique<Network>();
  std::vector<int> devices = context->localDevices;
  std::sort(devices.begin(), devices.end());
  devices.erase(std::unique(devices.begin(), devices.end()), devices.end());
  if (context->processes == 1) {
    // One NCCL rank per device of this process.
    for (int rank = 0; rank < context->ranks; ++rank)
      network->peerOf[rank] = static_cast<int>(
          std::lower_bound(devices.begin(), devices.end(),
                           context->localDevices[context->slotOf.at(rank)]) -
          devices.begin());
    std::vector<NcclComm> comms(devices.size());
    M2N_NCCL(nccl.commInitAll(comms.data(), static_cast<int>(devices.size()),
                              devices.data()));
    for (size_t i = 0; i < devices.size(); ++i)
      network->comms[devices[i]] = comms[i];
  } else {
    // One NCCL rank per process; process 0's id, shared by the all-gather.
    const int me = context->processOf.at(context->localRanks.front());
    for (int rank = 0; rank < context->ranks; ++rank)
      network->peerOf[rank] = context->processOf.at(rank);
    NcclUniqueId id{};
    if (me == 0)
      M2N_NCCL(nccl.getUniqueId(&id));
    std::vector<char> block(sizeof(id)), all;
    std::memcpy(block.data(), &id, sizeof(id));
    M2N_TRY(context->exchange(block, all));
    std::memcpy(&id, all.data(), sizeof(id));
    M2N_CUDA(cudaSetDevice(devices.front()));
    NcclComm comm = nullptr;
    M2N_NCCL(nccl.commInitRank(&comm, context->processes, id, me));
    network->comms[devices.front()] = comm;
  }
  for (int device : devices) {
    M2N_CUDA(cudaSetDevice(device));
    cudaStream_t stream;
    M2N_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    network->streams[device] = stream;
    M2N_CUDA(cudaEventCreateWithFlags(&network->inputs[device],
                                      cudaEventDisableTiming));
    M2N_CUDA(cudaEventCreateWithFlags(&network->outputs[device],
                                      cudaEventDisableTiming));
  }
  result = network.release();
  return M2N_SUCCESS;
}

void destroyNetwork(Network *network) {
  if (!network)
    return;
  for (auto &[device, comm] : network->comms) {
    cudaSetDevice(device);
    nccl.commDestroy(comm);
  }
  for (auto &[device, stream] : network->streams) {
    cudaSetDevice(device);
    cudaStreamDestroy(stream);
    cudaEventDestroy(network->inputs[device]);
    cudaEventDestroy(network->outputs[device]);
  }
  delete network;
}

m2n_status networkBeforeKernels(CudaContext *context,
                                void *const *streams) {
  Network &network = *context->network;
  for (size_t slot = 0; slot < context->localRanks.size(); ++slot) {
    const int device = context->localDevices[slot];
    cudaStream_t stream =
        streams ? static_cast<cudaStream_t>(streams[slot]) : nullptr;
    cudaStreamCaptureStatus capturing = cudaStreamCaptureStatusNone;
    M2N_CUDA(cudaStreamIsCapturing(stream, &capturing));
    if (capturing != cudaStreamCaptureStatusNone)
      return fail(M2N_UNSUPPORTED, "a reshard with network steps cannot be "
                                   "captured in a CUDA graph (its epoch is "
                                   "counted on the host)");
    M2N_CUDA(cudaSetDevice(device));
    M2N_CUDA(cudaEventRecord(network.inputs[device], stream));
    M2N_CUDA(
        cudaStreamWaitEvent(network.streams[device], network.inputs[device]));
  }
  return M2N_SUCCESS;
}

m2n_status enqueueNetwork(CudaContext *context, ReshardState &state,
                          void *const *streams) {
  Network &network = *context->network;
  const uint64_t epoch = ++state.networkLaunches;
  auto deviceOf = [&](int64_t rank) {
    return context->localDevices[context->slotOf.at(rank)];
  };
  auto counterAddress = [&](const CounterRef &counter) {
    return reinterpret_cast<CUdeviceptr>(state.counters.at(counter.rank) +
                                         counter.index);
  };

  std::map<std::pair<int64_t, int64_t>, uint64_t> signalled;
  // One transfer: an instance of a (possibly repeated) receive.
  auto post = [&](int64_t to, const Movement &m) -> m2n_status {
    const int64_t from = m.src.rank;
    const bool sends = context->isLocal(from), receives = context->isLocal(to);
    // The waits of each side, on its own network stream.
    for (const CounterWait &wait : m.waits) {
      const int64_t owner = wait.counter.rank;
      if (owner != from && owner != to)
        return fail(M2N_UNSUPPORTED,
                    state.name + ": a network step waits for rank " +
                        std::to_string(owner) + ", neither its sender nor "
                                                "its receiver");
      if (!context->isLocal(owner))
        continue;
      int device = deviceOf(owner);
      M2N_CUDA(cudaSetDevice(device));
      M2N_CU(driver.streamWaitValue64(network.streams[device],
                                      counterAddress(wait.counter),
                                      wait.value * epoch,
                                      CU_STREAM_WAIT_VALUE_GEQ));
    }
    char *source = sends ? state.addressOf(m.src) + m.srcOffset : nullptr;
    char *target = receives ? state.addressOf(m.dst) + m.dstOffset : nullptr;
    const size_t bytes = static_cast<size_t>(m.bytes);
    if (sends && receives && deviceOf(from) == deviceOf(to)) {
      int device = deviceOf(to);
      M2N_CUDA(cudaSetDevice(device));
      M2N_CUDA(cudaMemcpyAsync(target, source, bytes, cudaMemcpyDeviceToDevice,
                               network.streams[device]));
    } else {
      M2N_NCCL(nccl.groupStart());
      if (sends) {
        int device = deviceOf(from);
        M2N_CUDA(cudaSetDevice(device));
        M2N_NCCL(nccl.send(source, bytes, kNcclInt8, network.peerOf.at(to),
                           network.comms.at(device), network.streams[device]));
      }
      if (receives) {
        int device = deviceOf(to);
        M2N_CUDA(cudaSetDevice(device));
        M2N_NCCL(nccl.recv(target, bytes, kNcclInt8, network.peerOf.at(from),
                           network.comms.at(device), network.streams[device]));
      }
      M2N_NCCL(nccl.groupEnd());
    }
    // The receiver signals once the step's last receive has landed.
    if (receives && m.signal) {
      auto key = std::make_pair(m.signal->rank, m.signal->index);
      const uint64_t total = state.networkSignals.at(key);
      if (++signalled[key] == total) {
        int device = deviceOf(to);
        M2N_CUDA(cudaSetDevice(device));
        M2N_CU(driver.streamWriteValue64(network.streams[device],
                                         counterAddress(*m.signal),
                                         total * epoch, 0));
      }
    }
    return M2N_SUCCESS;
  };
  for (const auto &[to, movement] : state.networkMoves) {
    // Instances share their ranks: skip what this process takes no part in
    // before expanding anything.
    if (!context->isLocal(movement->src.rank) && !context->isLocal(to))
      continue;
    m2n_status status = M2N_SUCCESS;
    movement->forEachInstance([&, to = to](const Movement &m) {
      if (status == M2N_SUCCESS)
        status = post(to, m);
    });
    if (status != M2N_SUCCESS)
      return status;
  }
  // The caller's streams see the network steps complete.
  for (auto &[device, stream] : network.streams) {
    M2N_CUDA(cudaSetDevice(device));
    M2N_CUDA(cudaEventRecord(network.outputs[device], stream));
  }
  for (size_t slot = 0; slot < context->localRanks.size(); ++slot) {
    const int device = context->localDevices[slot];
    cudaStream_t stream =
        streams ? static_cast<cudaStream_t>(streams[slot]) : nullptr;
    M2N_CUDA(cudaSetDevice(device));
    M2N_CUDA(cudaStreamWaitEvent(stream, network.outputs[device]));
  }
  return M2N_SUCCESS;
}

} // namespace m2n::runtime
