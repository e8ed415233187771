// Runs every reshard of an m2n artifact on the GPUs of this machine and checks
// the results with the reference executor's own fill rule and checker.
//
//   artifact_runner ARTIFACT [--repeat N]
//
// A minimal single-process runtime: rank r lives on GPU r % (number of GPUs)
// (several ranks per GPU are virtual ranks), buffers are cudaMalloc'ed, the
// compiler's buffer-relative work items are resolved to device addresses,
// every rank's transfer kernel is launched on its own stream, and all run
// concurrently. Network receives need the NCCL runtime (next issue): a
// reshard that has any is reported as skipped.
#include "m2n/Artifact/Artifact.h"
#include "m2n/Sim/HostSimulator.h"
#include "m2n/Codegen/TransferProgram.h"

#include "CudaCheck.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <sstream>
#include <vector>



int main(int argc, char **argv) {
  if (argc < 2) {
    std::printf("usage: %s ARTIFACT [--repeat N]\n", argv[0]);
    return 2;
  }
  int repeat = argc > 3 && !std::strcmp(argv[2], "--repeat") ? std::atoi(argv[3]) : 5;
  std::ifstream in(argv[1], std::ios::binary);
  std::stringstream bytes;
  bytes << in.rdbuf();
  m2n::Artifact artifact;
  if (auto error = m2n::deserializeArtifact(bytes.str(), artifact)) {
    std::printf("artifact_runner: %s\n", error->c_str());
    return 1;
  }
  int devices = 0;
  CUDA_CHECK(cudaGetDeviceCount(&devices));
  std::vector<CUfunction> kernels(devices);
  uint64_t *errorRecord = nullptr;
  for (int d = 0; d < devices; ++d) {
    CUDA_CHECK(cudaSetDevice(d));
    CUDA_CHECK(cudaFree(nullptr));
    for (int p = 0; p < devices; ++p)
      if (p != d) {
        int can = 0;
        CUDA_CHECK(cudaDeviceCanAccessPeer(&can, d, p));
        if (can)
          CUDA_CHECK(cudaDeviceEnablePeerAccess(p, 0));
      }
    CUmodule module;
    CU_CHECK(cuModuleLoadData(&module, artifact.ptx.c_str()));
    CU_CHECK(cuModuleGetFunction(&kernels[d], module, artifact.kernel.name.c_str()));
    CU_CHECK(cuFuncSetAttribute(kernels[d],
                                CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                (int)(artifact.kernel.stageBytes * artifact.kernel.stages)));
  }
  CUDA_CHECK(cudaSetDevice(0));
  CUDA_CHECK(cudaHostAlloc((void **)&errorRecord, 32, cudaHostAllocMapped | cudaHostAllocPortable));
  std::memset(errorRecord, 0, 32);
  std::printf("%d GPU(s); %s; %zu reshards\n", devices, argv[1], artifact.reshards.size());

  int passed = 0, failed = 0, skipped = 0;
  for (const m2n::CompiledReshard &reshard : artifact.reshards) {
    const m2n::TransferProgram &program = reshard.program;
    bool network = false;
    for (const auto &[rank, rp] : program.ranks)
      network |= !rp.receives.empty();
    if (network) {
      std::printf("%-28s SKIP  network receives need the NCCL runtime\n", reshard.name.c_str());
      ++skipped;
      continue;
    }
    auto deviceOf = [&](int64_t rank) { return (int)(rank % devices); };
    m2n::ReshardSimulator sim(reshard.src, reshard.dst, reshard.shape, reshard.type);
    sim.allocateScratch(program.scratches);

    // Device copies of every buffer, keyed like the simulator's.
    std::map<std::tuple<int, int64_t, int64_t>, char *> device;
    auto key = [](const m2n::BufferRef &ref) {
      return std::make_tuple((int)ref.kind, ref.rank, ref.scratch);
    };
    std::vector<m2n::BufferRef> refs;
    for (int64_t i = 0; i < reshard.src.mesh.size(); ++i)
      refs.push_back({m2n::BufferKind::Source, reshard.src.mesh.rankAt(i), -1});
    for (int64_t j = 0; j < reshard.dst.mesh.size(); ++j)
      refs.push_back({m2n::BufferKind::Destination, reshard.dst.mesh.rankAt(j), -1});
    for (size_t k = 0; k < program.scratches.size(); ++k)
      refs.push_back({m2n::BufferKind::Scratch, program.scratches[k].rank, (int64_t)k});
    int64_t movedBytes = 0, tileItems = 0;
    for (const auto &[rank, rp] : program.ranks)
      for (const m2n::Movement &m : rp.items) {
        movedBytes += m.bytes;
        tileItems += m.tile;
      }
    auto upload = [&]() {
      for (const m2n::BufferRef &ref : refs) {
        auto host = sim.bytesOf(ref);
        CUDA_CHECK(cudaSetDevice(deviceOf(ref.rank)));
        char *&ptr = device[key(ref)];
        if (!ptr)
          CUDA_CHECK(cudaMalloc(&ptr, std::max<int64_t>(host->second, 16)));
        CUDA_CHECK(cudaMemcpy(ptr, host->first, host->second, cudaMemcpyHostToDevice));
      }
    };
    // Counters and item tables per rank.
    std::map<int64_t, uint64_t *> counters;
    std::map<int64_t, Item *> tables;
    std::map<int64_t, cudaStream_t> streams;
    for (const auto &[rank, rp] : program.ranks) {
      CUDA_CHECK(cudaSetDevice(deviceOf(rank)));
      CUDA_CHECK(cudaMalloc(&counters[rank], std::max<int64_t>(rp.counters, 1) * 8));
      CUDA_CHECK(cudaStreamCreateWithFlags(&streams[rank], cudaStreamNonBlocking));
    }
    upload();
    // Tensor maps over the device buffers, one copy on every GPU (a
    // CUtensorMap must be 64-byte aligned; cudaMalloc gives 256).
    std::vector<CUtensorMap> maps(program.maps.size());
    for (size_t m = 0; m < program.maps.size(); ++m) {
      const m2n::TensorMapSpec &spec = program.maps[m];
      int rank = (int)spec.box.size();
      cuuint64_t dims[5], strides[4];
      cuuint32_t box[5], elementStrides[5];
      int64_t elem = m2n::elementSize(reshard.type);
      int64_t pitch = elem;
      for (int d = 0; d < rank; ++d) {
        dims[d] = spec.extents[rank - 1 - d];
        box[d] = (cuuint32_t)spec.box[rank - 1 - d];
        elementStrides[d] = 1;
        if (d > 0)
          strides[d - 1] = pitch;
        pitch *= spec.extents[rank - 1 - d];
      }
      CUtensorMapDataType dtype;
      switch (reshard.type) {
      case m2n::ElementType::F32: dtype = CU_TENSOR_MAP_DATA_TYPE_FLOAT32; break;
      case m2n::ElementType::F16: dtype = CU_TENSOR_MAP_DATA_TYPE_FLOAT16; break;
      case m2n::ElementType::BF16: dtype = CU_TENSOR_MAP_DATA_TYPE_BFLOAT16; break;
      case m2n::ElementType::F64: dtype = CU_TENSOR_MAP_DATA_TYPE_FLOAT64; break;
      case m2n::ElementType::I32: dtype = CU_TENSOR_MAP_DATA_TYPE_INT32; break;
      case m2n::ElementType::I64: dtype = CU_TENSOR_MAP_DATA_TYPE_INT64; break;
      case m2n::ElementType::I16: dtype = CU_TENSOR_MAP_DATA_TYPE_UINT16; break;
      default: dtype = CU_TENSOR_MAP_DATA_TYPE_UINT8; break;
      }
      CU_CHECK(cuTensorMapEncodeTiled(
          &maps[m], dtype, rank, device.at(key(spec.buffer)), dims, strides, box,
          elementStrides, CU_TENSOR_MAP_INTERLEAVE_NONE,
          CU_TENSOR_MAP_SWIZZLE_NONE, CU_TENSOR_MAP_L2_PROMOTION_NONE,
          CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE));
    }
    std::vector<CUtensorMap *> deviceMaps(devices, nullptr);
    if (!maps.empty())
      for (int d = 0; d < devices; ++d) {
        CUDA_CHECK(cudaSetDevice(d));
        CUDA_CHECK(cudaMalloc(&deviceMaps[d], maps.size() * sizeof(CUtensorMap)));
        CUDA_CHECK(cudaMemcpy(deviceMaps[d], maps.data(), maps.size() * sizeof(CUtensorMap), cudaMemcpyHostToDevice));
      }
    for (const auto &[rank, rp] : program.ranks) {
      std::vector<Item> items;
      for (const m2n::Movement &m : rp.items) {
        Item it{};
        if (m.tile) {
          CUtensorMap *local = deviceMaps[deviceOf(rank)];
          it.kind = 1;
          it.rank = (uint32_t)m.srcCoords.size();
          it.src = (uint64_t)(local + m.srcMap);
          it.dst = (uint64_t)(local + m.dstMap);
          for (uint32_t d = 0; d < it.rank; ++d) {
            it.srcCoords[d] = (int32_t)m.srcCoords[it.rank - 1 - d];
            it.dstCoords[d] = (int32_t)m.dstCoords[it.rank - 1 - d];
          }
          it.op = *m2n::tileOp(m.op);
        } else {
          it.src = (uint64_t)(device.at(key(m.src)) + m.srcOffset);
          it.dst = (uint64_t)(device.at(key(m.dst)) + m.dstOffset);
          it.op = (uint32_t)m.op;
        }
        it.bytes = (uint32_t)m.bytes;
        if (m.signal)
          it.signal = (uint64_t)(counters.at(m.signal->rank) + m.signal->index);
        if (m.waits.size() > 0) {
          it.wait0 = (uint64_t)(counters.at(m.waits[0].counter.rank) + m.waits[0].counter.index);
          it.value0 = m.waits[0].value;
        }
        if (m.waits.size() > 1) {
          it.wait1 = (uint64_t)(counters.at(m.waits[1].counter.rank) + m.waits[1].counter.index);
          it.value1 = m.waits[1].value;
        }
        items.push_back(it);
      }
      CUDA_CHECK(cudaSetDevice(deviceOf(rank)));
      CUDA_CHECK(cudaMalloc(&tables[rank], std::max<size_t>(items.size(), 1) * sizeof(Item)));
      CUDA_CHECK(cudaMemcpy(tables[rank], items.data(), items.size() * sizeof(Item), cudaMemcpyHostToDevice));
    }
    void *errorDevice = nullptr;
    CUDA_CHECK(cudaHostGetDevicePointer(&errorDevice, errorRecord, 0));
    auto runOnce = [&]() {
      for (const auto &[rank, rp] : program.ranks) {
        CUDA_CHECK(cudaSetDevice(deviceOf(rank)));
        CUDA_CHECK(cudaMemsetAsync(counters[rank], 0, std::max<int64_t>(rp.counters, 1) * 8, streams[rank]));
      }
      // Counters are reset on every stream before any kernel starts.
      for (const auto &[rank, rp] : program.ranks)
        CUDA_CHECK(cudaStreamSynchronize(streams[rank]));
      for (const auto &[rank, rp] : program.ranks) {
        CUDA_CHECK(cudaSetDevice(deviceOf(rank)));
        uint64_t count = rp.items.size(), timeout = 4000000000ull;
        uint64_t stageBytes = artifact.kernel.stageBytes, stages = artifact.kernel.stages;
        void *args[] = {&tables[rank], &count, &errorDevice, &timeout, &stageBytes, &stages};
        CU_CHECK(cuLaunchKernel(kernels[deviceOf(rank)], artifact.kernel.ctas, 1, 1,
                                artifact.kernel.threads, 1, 1,
                                (unsigned)(stageBytes * stages), streams[rank], args, nullptr));
      }
      for (const auto &[rank, rp] : program.ranks)
        CUDA_CHECK(cudaStreamSynchronize(streams[rank]));
    };
    runOnce(); // Warm up.
    std::vector<double> times;
    for (int r = 0; r < repeat; ++r) {
      auto start = std::chrono::steady_clock::now();
      runOnce();
      times.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
    }
    std::sort(times.begin(), times.end());
    // Fresh inputs and poisoned outputs for the checked run.
    sim.reset();
    sim.allocateScratch(program.scratches);
    upload();
    runOnce();
    for (int64_t j = 0; j < reshard.dst.mesh.size(); ++j) {
      m2n::BufferRef ref{m2n::BufferKind::Destination, reshard.dst.mesh.rankAt(j), -1};
      auto host = sim.bytesOf(ref);
      CUDA_CHECK(cudaSetDevice(deviceOf(ref.rank)));
      CUDA_CHECK(cudaMemcpy(host->first, device.at(key(ref)), host->second, cudaMemcpyDeviceToHost));
    }
    m2n::SimulationReport report = sim.check();
    double ms = times[times.size() / 2];
    std::printf("%-28s %s  %lld items (%lld tiles), %.1f MB moved by kernels, %.3f ms (median of %d, host-timed), %.1f GB/s  %s\n",
                reshard.name.c_str(), report.passed ? "PASS" : "FAIL",
                (long long)program.itemCount(), (long long)tileItems, movedBytes / 1e6, ms, repeat,
                movedBytes / (ms * 1e-3) / 1e9, report.message.c_str());
    (report.passed ? passed : failed)++;
    for (CUtensorMap *p : deviceMaps)
      if (p)
        CUDA_CHECK(cudaFree(p));
    for (auto &[k, ptr] : device) {
      CUDA_CHECK(cudaSetDevice(deviceOf(std::get<1>(k))));
      CUDA_CHECK(cudaFree(ptr));
    }
  }
  if (devices >= 2) {
    // The copy engine between the first two GPUs, for reference.
    const size_t bytes = (size_t)1 << 30;
    char *a, *b;
    CUDA_CHECK(cudaSetDevice(1));
    CUDA_CHECK(cudaMalloc(&a, bytes));
    CUDA_CHECK(cudaSetDevice(0));
    CUDA_CHECK(cudaMalloc(&b, bytes));
    std::vector<double> times;
    for (int r = 0; r < 6; ++r) {
      auto start = std::chrono::steady_clock::now();
      CUDA_CHECK(cudaMemcpyPeer(b, 0, a, 1, bytes));
      CUDA_CHECK(cudaDeviceSynchronize());
      if (r)
        times.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
    }
    std::sort(times.begin(), times.end());
    std::printf("%-28s REF   cudaMemcpyPeer GPU1 -> GPU0, 1 GiB: %.3f ms, %.1f GB/s (host-timed)\n",
                "copy engine", times[times.size() / 2],
                bytes / (times[times.size() / 2] * 1e-3) / 1e9);
  }
  std::printf("%d passed, %d failed, %d skipped\n", passed, failed, skipped);
  return failed ? 1 : 0;
}
