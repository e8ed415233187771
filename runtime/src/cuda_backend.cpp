//===- cuda_backend.cpp - the runtime's CUDA backend (one process) ----------===//
//
// One process drives every rank; rank r runs on device devices[r]. The
// transfer kernel of the artifact is loaded on each device; an execution
// resolves the reshard's buffer-relative work items over the user's device
// buffers (scratch buffers and counters belong to the context), encodes the
// tensor maps over them, and launches every rank's kernel on its stream.
//
// Counters are never reset: each execution of a reshard raises every counter
// by the same amount, so the n-th execution (the kernel's epoch parameter)
// waits for n times the item's value. A rank can never see a stale "ready"
// left by the previous execution, and no rank has to wait for another
// rank's reset.
//
// Work-item tables and tensor maps depend only on the buffer addresses: they
// are built on the first execution over a set of buffers and reused after.
//
//===----------------------------------------------------------------------===//

#include "Internal.h"

#include "m2n/Codegen/KernelABI.h"

#include <cuda.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <map>
#include <memory>
#include <type_traits>
#include <set>
#include <vector>

namespace {

using m2n::runtime::fail;

/// The few driver-API functions the backend needs, found through the
/// runtime API, so that the library does not link libcuda: it loads on
/// machines without a driver (CI), and reports the missing GPU at first use.
struct Driver {
  decltype(&cuModuleLoadData) moduleLoadData = nullptr;
  decltype(&cuModuleGetFunction) moduleGetFunction = nullptr;
  decltype(&cuFuncSetAttribute) funcSetAttribute = nullptr;
  decltype(&cuTensorMapEncodeTiled) tensorMapEncodeTiled = nullptr;
  decltype(&cuLaunchKernel) launchKernel = nullptr;
  decltype(&cuGetErrorString) getErrorString = nullptr;

  /// Resolves every entry point; false when the driver lacks one.
  bool load() {
    auto find = [](const char *name, auto &slot) {
      void *pointer = nullptr;
      cudaDriverEntryPointQueryResult found;
      if (cudaGetDriverEntryPointByVersion(name, &pointer, 12000,
                                           cudaEnableDefault,
                                           &found) != cudaSuccess ||
          found != cudaDriverEntryPointSuccess)
        return false;
      slot = reinterpret_cast<std::remove_reference_t<decltype(slot)>>(pointer);
      return true;
    };
    return find("cuModuleLoadData", moduleLoadData) &&
           find("cuModuleGetFunction", moduleGetFunction) &&
           find("cuFuncSetAttribute", funcSetAttribute) &&
           find("cuTensorMapEncodeTiled", tensorMapEncodeTiled) &&
           find("cuLaunchKernel", launchKernel) &&
           find("cuGetErrorString", getErrorString);
  }
};

Driver driver;

using Item = m2n::KernelItem;

m2n_status cudaFailure(cudaError_t error, const char *what) {
  return fail(M2N_CUDA_ERROR, std::string(what) + ": " +
                                  cudaGetErrorName(error) + ": " +
                                  cudaGetErrorString(error));
}

m2n_status driverFailure(CUresult result, const char *what) {
  const char *name = nullptr;
  if (driver.getErrorString)
    driver.getErrorString(result, &name);
  return fail(M2N_CUDA_ERROR,
              std::string(what) + ": " + (name ? name : "unknown error"));
}

#define M2N_CUDA(call)                                                         \
  do {                                                                         \
    cudaError_t m2nError = (call);                                             \
    if (m2nError != cudaSuccess)                                               \
      return cudaFailure(m2nError, #call);                                     \
  } while (0)
#define M2N_CU(call)                                                           \
  do {                                                                         \
    CUresult m2nResult = (call);                                               \
    if (m2nResult != CUDA_SUCCESS)                                             \
      return driverFailure(m2nResult, #call);                                  \
  } while (0)

CUtensorMapDataType mapType(m2n::ElementType type) {
  switch (type) {
  case m2n::ElementType::F32:
    return CU_TENSOR_MAP_DATA_TYPE_FLOAT32;
  case m2n::ElementType::F16:
    return CU_TENSOR_MAP_DATA_TYPE_FLOAT16;
  case m2n::ElementType::BF16:
    return CU_TENSOR_MAP_DATA_TYPE_BFLOAT16;
  case m2n::ElementType::F64:
    return CU_TENSOR_MAP_DATA_TYPE_FLOAT64;
  case m2n::ElementType::I32:
    return CU_TENSOR_MAP_DATA_TYPE_INT32;
  case m2n::ElementType::I64:
    return CU_TENSOR_MAP_DATA_TYPE_INT64;
  case m2n::ElementType::I16:
    return CU_TENSOR_MAP_DATA_TYPE_UINT16;
  case m2n::ElementType::I8:
    return CU_TENSOR_MAP_DATA_TYPE_UINT8;
  }
  return CU_TENSOR_MAP_DATA_TYPE_UINT8;
}

/// Device state of one reshard: scratch, counters, tables, tensor maps.
/// Tables and maps depend on the user's buffer addresses only: they are
/// rebuilt when those change, and reused otherwise.
struct ReshardState {
  uint64_t executions = 0;
  std::vector<void *> builtFor; // The buffer addresses the tables hold.
  std::map<int64_t, uint64_t> itemCounts; // By rank.
  std::vector<void *> scratch;            // By scratch index.
  std::map<int64_t, uint64_t *> counters; // By rank.
  std::map<int64_t, Item *> tables;       // By rank.
  std::map<int, CUtensorMap *> maps;      // By device.
};

} // namespace

struct m2n_cuda_context_t {
  m2n_artifact artifact = nullptr;
  std::vector<int> devices; // By rank.
  std::map<int, CUfunction> kernels;
  uint64_t timeoutCycles = 0;
  uint64_t *errorRecord = nullptr; // Host-mapped u64[4].
  std::map<int, ReshardState> reshards;
  std::set<std::pair<int, cudaStream_t>> pending;
};

extern "C" {

m2n_status m2n_cuda_context_create(m2n_artifact artifact, int ranks,
                                   const int *devices, double timeout_ms,
                                   m2n_cuda_context *context) {
  if (!artifact || ranks <= 0 || !devices || !context || !(timeout_ms > 0))
    return fail(M2N_INVALID_ARGUMENT, "m2n_cuda_context_create: bad argument");
  int count = 0;
  M2N_CUDA(cudaGetDeviceCount(&count));
  if (!driver.moduleLoadData && !driver.load())
    return fail(M2N_CUDA_ERROR, "the CUDA driver lacks an entry point the "
                                "m2n runtime needs (driver too old?)");
  auto state = std::make_unique<m2n_cuda_context_t>();
  state->artifact = artifact;
  state->devices.assign(devices, devices + ranks);
  std::set<int> used(devices, devices + ranks);
  for (int device : used)
    if (device < 0 || device >= count)
      return fail(M2N_INVALID_ARGUMENT,
                  "m2n_cuda_context_create: device " + std::to_string(device) +
                      " does not exist (" + std::to_string(count) +
                      " devices)");
  const m2n::Artifact &a = artifact->artifact;
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
        return cudaFailure(enabled, "cudaDeviceEnablePeerAccess");
    }
    CUmodule module;
    M2N_CU(driver.moduleLoadData(&module, a.ptx.c_str()));
    CUfunction function;
    M2N_CU(driver.moduleGetFunction(&function, module, a.kernel.name.c_str()));
    M2N_CU(driver.funcSetAttribute(function,
                              CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                              static_cast<int>(a.kernel.stageBytes *
                                               a.kernel.stages)));
    state->kernels[device] = function;
    M2N_CUDA(cudaDeviceGetAttribute(&clockKHz, cudaDevAttrClockRate, device));
  }
  state->timeoutCycles =
      static_cast<uint64_t>(timeout_ms * std::max(clockKHz, 1000000));
  M2N_CUDA(cudaHostAlloc(reinterpret_cast<void **>(&state->errorRecord),
                         4 * sizeof(uint64_t),
                         cudaHostAllocMapped | cudaHostAllocPortable));
  std::fill(state->errorRecord, state->errorRecord + 4, 0);
  *context = state.release();
  return M2N_SUCCESS;
}

void m2n_cuda_context_destroy(m2n_cuda_context context) {
  if (!context)
    return;
  for (auto &[index, state] : context->reshards) {
    for (void *p : state.scratch)
      cudaFree(p);
    for (auto &[rank, p] : state.counters)
      cudaFree(p);
    for (auto &[rank, p] : state.tables)
      cudaFree(p);
    for (auto &[device, p] : state.maps)
      cudaFree(p);
  }
  cudaFreeHost(context->errorRecord);
  delete context;
}

m2n_status m2n_cuda_execute(m2n_cuda_context context, int reshard,
                            void *const *src, const size_t *src_bytes,
                            void *const *dst, const size_t *dst_bytes,
                            void *const *streams) {
  if (!context)
    return fail(M2N_INVALID_ARGUMENT, "m2n_cuda_execute: null context");
  const m2n::CompiledReshard *r =
      m2n::runtime::reshardAt(context->artifact, reshard);
  if (!r || !src || !dst || !src_bytes || !dst_bytes)
    return fail(M2N_INVALID_ARGUMENT,
                "m2n_cuda_execute: bad reshard or buffer arrays");
  const int ranks = static_cast<int>(context->devices.size());
  for (const auto &[rank, program] : r->program.ranks) {
    if (rank >= ranks)
      return fail(M2N_INVALID_ARGUMENT,
                  r->name + " needs rank " + std::to_string(rank) +
                      ", the context has " + std::to_string(ranks));
    if (!program.receives.empty())
      return fail(M2N_UNSUPPORTED,
                  r->name + ": network receives need the NCCL path, which "
                            "this runtime does not have yet");
  }
  // Every buffer: present, large enough, on its rank's device.
  for (int rank = 0; rank < ranks; ++rank)
    for (bool source : {true, false}) {
      int64_t want = m2n::runtime::localBytes(*r, source ? r->src : r->dst, rank);
      void *pointer = source ? src[rank] : dst[rank];
      size_t have = source ? src_bytes[rank] : dst_bytes[rank];
      if (want == 0)
        continue;
      std::string which = std::string(source ? "source" : "destination") +
                          " buffer of rank " + std::to_string(rank);
      if (!pointer || have < static_cast<size_t>(want))
        return fail(M2N_INVALID_ARGUMENT,
                    which + " must have " + std::to_string(want) + " bytes");
      cudaPointerAttributes attributes;
      if (cudaPointerGetAttributes(&attributes, pointer) != cudaSuccess ||
          attributes.type != cudaMemoryTypeDevice ||
          attributes.device != context->devices[rank]) {
        cudaGetLastError();
        return fail(M2N_INVALID_ARGUMENT,
                    which + " is not memory of device " +
                        std::to_string(context->devices[rank]));
      }
    }

  ReshardState &state = context->reshards[reshard];
  const m2n::TransferProgram &program = r->program;
  const int64_t elementBytes = m2n::elementSize(r->type);
  if (state.scratch.empty() && !program.scratches.empty())
    for (const m2n::ScratchBuffer &buffer : program.scratches) {
      M2N_CUDA(cudaSetDevice(context->devices.at(buffer.rank)));
      void *p = nullptr;
      M2N_CUDA(cudaMalloc(&p, std::max<int64_t>(
                                  m2n::Box{m2n::Dims(buffer.shape.size(), 0),
                                           buffer.shape}
                                          .volume() *
                                      elementBytes,
                                  16)));
      state.scratch.push_back(p);
    }
  for (const auto &[rank, rankProgram] : program.ranks)
    if (!state.counters.count(rank)) {
      M2N_CUDA(cudaSetDevice(context->devices[rank]));
      uint64_t *counters = nullptr;
      size_t bytes = std::max<int64_t>(rankProgram.counters, 1) * 8;
      M2N_CUDA(cudaMalloc(&counters, bytes));
      M2N_CUDA(cudaMemset(counters, 0, bytes));
      state.counters[rank] = counters;
    }
  auto addressOf = [&](const m2n::BufferRef &ref) -> char * {
    if (ref.kind == m2n::BufferKind::Scratch)
      return static_cast<char *>(state.scratch.at(ref.scratch));
    return static_cast<char *>(ref.kind == m2n::BufferKind::Source
                                   ? src[ref.rank]
                                   : dst[ref.rank]);
  };

  std::vector<void *> addresses(src, src + ranks);
  addresses.insert(addresses.end(), dst, dst + ranks);
  if (addresses != state.builtFor) {
    // Tensor maps over the buffers, one copy per device.
    std::vector<CUtensorMap> maps(program.maps.size());
    for (size_t m = 0; m < program.maps.size(); ++m) {
      const m2n::TensorMapSpec &spec = program.maps[m];
      const int rank = static_cast<int>(spec.box.size());
      cuuint64_t dims[5], strides[4];
      cuuint32_t box[5], elementStrides[5];
      int64_t pitch = elementBytes;
      for (int d = 0; d < rank; ++d) {
        dims[d] = spec.extents[rank - 1 - d];
        box[d] = static_cast<cuuint32_t>(spec.box[rank - 1 - d]);
        elementStrides[d] = 1;
        if (d > 0)
          strides[d - 1] = pitch;
        pitch *= spec.extents[rank - 1 - d];
      }
      M2N_CU(driver.tensorMapEncodeTiled(
          &maps[m], mapType(r->type), rank, addressOf(spec.buffer), dims,
          strides, box, elementStrides, CU_TENSOR_MAP_INTERLEAVE_NONE,
          CU_TENSOR_MAP_SWIZZLE_NONE, CU_TENSOR_MAP_L2_PROMOTION_NONE,
          CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE));
    }
    for (const auto &[rank, rankProgram] : program.ranks) {
      const int device = context->devices[rank];
      M2N_CUDA(cudaSetDevice(device));
      if (!maps.empty() && !state.maps.count(device)) {
        CUtensorMap *deviceMaps = nullptr;
        M2N_CUDA(cudaMalloc(&deviceMaps, maps.size() * sizeof(CUtensorMap)));
        M2N_CUDA(cudaMemcpy(deviceMaps, maps.data(),
                            maps.size() * sizeof(CUtensorMap),
                            cudaMemcpyHostToDevice));
        state.maps[device] = deviceMaps;
      }
      std::vector<Item> items;
      items.reserve(rankProgram.items.size());
      for (const m2n::Movement &m : rankProgram.items) {
        Item it{};
        if (m.tile) {
          it.kind = 1;
          it.rank = static_cast<uint32_t>(m.srcCoords.size());
          it.src = reinterpret_cast<uint64_t>(state.maps[device] + m.srcMap);
          it.dst = reinterpret_cast<uint64_t>(state.maps[device] + m.dstMap);
          for (uint32_t d = 0; d < it.rank; ++d) {
            it.srcCoords[d] = static_cast<int32_t>(m.srcCoords[it.rank - 1 - d]);
            it.dstCoords[d] = static_cast<int32_t>(m.dstCoords[it.rank - 1 - d]);
          }
          it.op = *m2n::tileOp(m.op);
        } else {
          it.src = reinterpret_cast<uint64_t>(addressOf(m.src) + m.srcOffset);
          it.dst = reinterpret_cast<uint64_t>(addressOf(m.dst) + m.dstOffset);
          it.op = static_cast<uint32_t>(m.op);
        }
        it.bytes = static_cast<uint32_t>(m.bytes);
        if (m.waitsOrderOnlyTheStore())
          it.flags |= m2n::kStoreWaits;
        if (m.signal)
          it.signal = reinterpret_cast<uint64_t>(
              state.counters.at(m.signal->rank) + m.signal->index);
        // The kernel multiplies wait values by the execution's epoch.
        if (m.waits.size() > 0) {
          it.wait0 = reinterpret_cast<uint64_t>(
              state.counters.at(m.waits[0].counter.rank) +
              m.waits[0].counter.index);
          it.value0 = m.waits[0].value;
        }
        if (m.waits.size() > 1) {
          it.wait1 = reinterpret_cast<uint64_t>(
              state.counters.at(m.waits[1].counter.rank) +
              m.waits[1].counter.index);
          it.value1 = m.waits[1].value;
        }
        items.push_back(it);
      }
      if (!state.tables.count(rank)) {
        Item *table = nullptr;
        M2N_CUDA(cudaMalloc(&table,
                            std::max<size_t>(items.size(), 1) * sizeof(Item)));
        state.tables[rank] = table;
      }
      M2N_CUDA(cudaMemcpy(state.tables[rank], items.data(),
                          items.size() * sizeof(Item), cudaMemcpyHostToDevice));
      state.itemCounts[rank] = items.size();
    }
    state.builtFor = addresses;
  }

  void *errorDevice = nullptr;
  M2N_CUDA(cudaHostGetDevicePointer(&errorDevice, context->errorRecord, 0));
  const m2n::Artifact &a = context->artifact->artifact;
  uint64_t epoch = state.executions + 1;
  for (const auto &[rank, rankProgram] : program.ranks) {
    const int device = context->devices[rank];
    M2N_CUDA(cudaSetDevice(device));
    cudaStream_t stream =
        streams ? static_cast<cudaStream_t>(streams[rank]) : nullptr;
    uint64_t count = state.itemCounts[rank], timeout = context->timeoutCycles;
    uint64_t stageBytes = a.kernel.stageBytes, stages = a.kernel.stages;
    void *args[] = {&state.tables[rank], &count,  &errorDevice, &timeout,
                    &stageBytes,         &stages, &epoch};
    if (count)
      M2N_CU(driver.launchKernel(context->kernels.at(device), a.kernel.ctas, 1,
                                 1, a.kernel.threads, 1, 1,
                                 static_cast<unsigned>(stageBytes * stages),
                                 stream, args, nullptr));
    context->pending.insert({device, stream});
  }
  ++state.executions;
  return M2N_SUCCESS;
}

m2n_status m2n_cuda_synchronize(m2n_cuda_context context) {
  if (!context)
    return fail(M2N_INVALID_ARGUMENT, "m2n_cuda_synchronize: null context");
  m2n_status status = M2N_SUCCESS;
  for (auto [device, stream] : context->pending) {
    cudaSetDevice(device);
    cudaError_t error = cudaStreamSynchronize(stream);
    if (error != cudaSuccess && status == M2N_SUCCESS) {
      if (context->errorRecord[0])
        status = fail(M2N_TIMEOUT,
                      "a transfer kernel waited longer than the timeout: work "
                      "item " + std::to_string(context->errorRecord[1]) +
                          " saw counter value " +
                          std::to_string(context->errorRecord[3]) +
                          " (a peer never signalled)");
      else
        status = cudaFailure(error, "cudaStreamSynchronize");
    }
  }
  context->pending.clear();
  return status;
}

} // extern "C"
