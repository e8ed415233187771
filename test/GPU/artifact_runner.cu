// Runs every reshard of an m2n artifact through the runtime's CUDA backend
// (m2n_cuda_*) on the GPUs of this machine, and checks the results with the
// reference executor's own fill rule and checker.
//
//   artifact_runner ARTIFACT [--repeat N]
//
// Rank r lives on GPU r % (number of GPUs); several ranks per GPU are virtual
// ranks. Buffers are plain cudaMalloc allocations handed to the runtime.
#include "m2n/Artifact/Artifact.h"
#include "m2n/Sim/HostSimulator.h"
#include "m2n/runtime.h"

#include "CudaCheck.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <fstream>
#include <sstream>
#include <vector>

#define M2N_CHECK(x)                                                           \
  do {                                                                         \
    m2n_status s = (x);                                                        \
    if (s != M2N_SUCCESS) {                                                    \
      std::printf("%s at %s:%d: %s\n", m2n_status_name(s), __FILE__, __LINE__, \
                  m2n_last_error());                                           \
      std::exit(2);                                                            \
    }                                                                          \
  } while (0)

int main(int argc, char **argv) {
  if (argc < 2) {
    std::printf("usage: %s ARTIFACT [--repeat N] [--csv FILE]\n", argv[0]);
    return 2;
  }
  int repeat = 5;
  FILE *csv = nullptr;
  for (int i = 2; i < argc; i += 2) {
    bool known = !std::strcmp(argv[i], "--repeat") || !std::strcmp(argv[i], "--csv");
    if (!known || i + 1 == argc) {
      std::printf("artifact_runner: %s %s\n", argv[i], known ? "needs a value" : "is not an option");
      return 2;
    }
    if (!std::strcmp(argv[i], "--repeat"))
      repeat = std::max(1, std::atoi(argv[i + 1]));
    else if (!(csv = std::fopen(argv[i + 1], "w"))) {
      std::printf("artifact_runner: cannot write %s\n", argv[i + 1]);
      return 2;
    }
  }
  // One row per measurement, read by bench/gpu/report.py.
  if (csv)
    std::fprintf(csv, "name,status,items,ctas,moved_bytes,ms\n");
  std::ifstream in(argv[1], std::ios::binary);
  std::stringstream bytes;
  bytes << in.rdbuf();
  std::string text = bytes.str();
  m2n::Artifact parsed;
  if (auto error = m2n::deserializeArtifact(text, parsed)) {
    std::printf("artifact_runner: %s\n", error->c_str());
    return 1;
  }
  m2n_artifact artifact = nullptr;
  M2N_CHECK(m2n_artifact_load(text.data(), text.size(), &artifact));
  int devices = 0;
  CUDA_CHECK(cudaGetDeviceCount(&devices));
  std::printf("%d GPU(s); %s; %d reshards; runtime CUDA backend\n", devices,
              argv[1], m2n_artifact_reshard_count(artifact));

  int passed = 0, failed = 0, skipped = 0;
  for (int index = 0; index < m2n_artifact_reshard_count(artifact); ++index) {
    const m2n::CompiledReshard &reshard = parsed.reshards[index];
    int ranks = 0;
    M2N_CHECK(m2n_artifact_reshard_ranks(artifact, index, &ranks));
    std::vector<int> deviceOf(ranks);
    for (int r = 0; r < ranks; ++r)
      deviceOf[r] = r % devices;
    m2n_cuda_context context = nullptr;
    M2N_CHECK(m2n_cuda_context_create(artifact, ranks, deviceOf.data(),
                                      /*timeout_ms=*/2000, &context));

    m2n::ReshardSimulator sim(reshard.src, reshard.dst, reshard.shape, reshard.type);
    std::vector<void *> src(ranks, nullptr), dst(ranks, nullptr), streams(ranks, nullptr);
    std::vector<size_t> srcBytes(ranks, 0), dstBytes(ranks, 0);
    auto upload = [&]() {
      for (int r = 0; r < ranks; ++r) {
        CUDA_CHECK(cudaSetDevice(deviceOf[r]));
        for (bool source : {true, false}) {
          m2n::BufferRef ref{source ? m2n::BufferKind::Source : m2n::BufferKind::Destination, r, -1};
          auto host = sim.bytesOf(ref);
          if (!host)
            continue;
          void *&ptr = source ? src[r] : dst[r];
          (source ? srcBytes[r] : dstBytes[r]) = host->second;
          if (!ptr)
            CUDA_CHECK(cudaMalloc(&ptr, std::max<int64_t>(host->second, 16)));
          CUDA_CHECK(cudaMemcpy(ptr, host->first, host->second, cudaMemcpyHostToDevice));
        }
      }
    };
    upload();
    int64_t movedBytes = 0, tiles = 0;
    for (const auto &[rank, rp] : reshard.program.ranks)
      for (const m2n::Movement &m : rp.items) {
        movedBytes += m.bytes;
        tiles += m.tile;
      }
    m2n_status status = m2n_cuda_execute(context, index, src.data(), srcBytes.data(),
                                         dst.data(), dstBytes.data(), streams.data());
    if (status == M2N_UNSUPPORTED) {
      std::printf("%-28s SKIP  %s\n", reshard.name.c_str(), m2n_last_error());
      ++skipped;
      m2n_cuda_context_destroy(context);
      continue;
    }
    M2N_CHECK(status);
    M2N_CHECK(m2n_cuda_synchronize(context));
    std::vector<double> times;
    for (int r = 0; r < repeat; ++r) {
      auto start = std::chrono::steady_clock::now();
      M2N_CHECK(m2n_cuda_execute(context, index, src.data(), srcBytes.data(),
                                 dst.data(), dstBytes.data(), streams.data()));
      M2N_CHECK(m2n_cuda_synchronize(context));
      times.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
    }
    std::sort(times.begin(), times.end());
    // Fresh inputs and poisoned outputs for the checked execution.
    sim.reset();
    upload();
    M2N_CHECK(m2n_cuda_execute(context, index, src.data(), srcBytes.data(),
                               dst.data(), dstBytes.data(), streams.data()));
    M2N_CHECK(m2n_cuda_synchronize(context));
    for (int r = 0; r < ranks; ++r) {
      auto host = sim.bytesOf({m2n::BufferKind::Destination, r, -1});
      if (!host)
        continue;
      CUDA_CHECK(cudaSetDevice(deviceOf[r]));
      CUDA_CHECK(cudaMemcpy(host->first, dst[r], host->second, cudaMemcpyDeviceToHost));
    }
    m2n::SimulationReport report = sim.check();
    double ms = times[times.size() / 2];
    std::printf("%-28s %s  %lld items (%lld tiles), %.1f MB moved by kernels, %.3f ms (median of %d, host-timed), %.1f GB/s  %s\n",
                reshard.name.c_str(), report.passed ? "PASS" : "FAIL",
                (long long)reshard.program.itemCount(), (long long)tiles, movedBytes / 1e6, ms, repeat,
                movedBytes / (ms * 1e-3) / 1e9, report.message.c_str());
    if (csv)
      std::fprintf(csv, "%s,%s,%lld,%u,%lld,%.6f\n", reshard.name.c_str(),
                   report.passed ? "PASS" : "FAIL", (long long)reshard.program.itemCount(),
                   parsed.kernel.ctas, (long long)movedBytes, ms);
    (report.passed ? passed : failed)++;
    m2n_cuda_context_destroy(context);
    for (int r = 0; r < ranks; ++r) {
      CUDA_CHECK(cudaSetDevice(deviceOf[r]));
      if (src[r]) CUDA_CHECK(cudaFree(src[r]));
      if (dst[r]) CUDA_CHECK(cudaFree(dst[r]));
    }
  }
  if (devices >= 2) {
    // The copy engine between the first two GPUs, for reference.
    for (size_t bytes : {(size_t)256 << 20, (size_t)1 << 30}) {
      char *a, *b;
      CUDA_CHECK(cudaSetDevice(1));
      CUDA_CHECK(cudaMalloc(&a, bytes));
      CUDA_CHECK(cudaSetDevice(0));
      CUDA_CHECK(cudaMalloc(&b, bytes));
      std::vector<double> times;
      for (int r = 0; r <= repeat; ++r) {
        auto start = std::chrono::steady_clock::now();
        CUDA_CHECK(cudaMemcpyPeer(b, 0, a, 1, bytes));
        CUDA_CHECK(cudaDeviceSynchronize());
        if (r) // the first copy warms up
          times.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
      }
      std::sort(times.begin(), times.end());
      double ms = times[times.size() / 2];
      std::printf("%-28s REF   cudaMemcpyPeer GPU1 -> GPU0, %zu MiB: %.3f ms, %.1f GB/s (host-timed)\n",
                  "copy engine", bytes >> 20, ms, bytes / (ms * 1e-3) / 1e9);
      if (csv)
        std::fprintf(csv, "copy_engine__u8__%zu,REF,0,0,%zu,%.6f\n", bytes, bytes, ms);
      CUDA_CHECK(cudaFree(b));
      CUDA_CHECK(cudaSetDevice(1));
      CUDA_CHECK(cudaFree(a));
    }
  }
  if (csv)
    std::fclose(csv);
  m2n_artifact_destroy(artifact);
  std::printf("%d passed, %d failed, %d skipped\n", passed, failed, skipped);
  return failed ? 1 : 0;
}
