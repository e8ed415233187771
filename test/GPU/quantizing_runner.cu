// Runs the quantizing reshards of an m2n artifact (docs/fp8-scaling.md)
// through the runtime's CUDA backend on this machine's GPUs, checks them
// bit for bit, and times them beside the artifact's other reshards.
//
//   quantizing_runner ARTIFACT [--bench N] [--checks C]
//
// Rank r runs on GPU r % G (several ranks per GPU are virtual ranks), one
// process for every rank. Each quantizing reshard is bound once
// (m2n_group_bind with its scales) and launched three times, each time with fresh
// source values (zeros, NaNs, values over 30 binades: the simulator's
// simulateQuantizingBuffers) and poisoned destinations and scales; every
// destination element and scale must equal the reference quantizer's
// (quantizeTensor) after each launch: the scales are computed from the data
// of the launch, not kept from the one before.
//
// --checks C (1-3, default 3): checked launches per quantizing reshard (the
// host's reference of a 7168 x 18432 weight takes tens of seconds).
// --bench N: every reshard of the artifact (quantizing or not) is also timed
// the common way: CUDA events on every rank's stream around N back-to-back
// launches after a warm-up, the slowest stream, median of 7 repetitions.
#include "m2n/Artifact/Artifact.h"
#include "m2n/Sim/QuantizingSimulator.h"
#include "m2n/runtime.h"

#include "CudaCheck.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

namespace {

/// The runtime's last failure as a message, or "" on success.
std::string statusMessage(m2n_status status) {
  if (status == M2N_SUCCESS)
    return "";
  return std::string(m2n_status_name(status)) + ": " + m2n_last_error();
}

/// One reshard's device buffers, by rank (NULL where the rank has none).
struct DeviceBuffers {
  std::vector<void *> src, dst, scales;
  std::vector<size_t> srcBytes, dstBytes, scaleBytes;
  explicit DeviceBuffers(int ranks)
      : src(ranks, nullptr), dst(ranks, nullptr), scales(ranks, nullptr),
        srcBytes(ranks, 0), dstBytes(ranks, 0), scaleBytes(ranks, 0) {}
  ~DeviceBuffers() {
    for (auto *list : {&src, &dst, &scales})
      for (void *p : *list)
        cudaFree(p);
  }
};

/// Allocates rank `rank`'s buffers of `reshard` on `device`.
void allocate(m2n_artifact artifact, int reshard, int rank, int device,
              DeviceBuffers &buffers) {
  CUDA_CHECK(cudaSetDevice(device));
  size_t srcBytes = 0, dstBytes = 0;
  if (m2n_artifact_buffer_bytes(artifact, reshard, rank, &srcBytes,
                                &dstBytes) != M2N_SUCCESS)
    return;
  int present = 0, dims = 0, elementBytes = 0;
  int64_t shape[8];
  size_t scaleBytes = 0;
  if (m2n_artifact_scale_shape(artifact, reshard, rank, &present, &dims, shape,
                               &elementBytes) == M2N_SUCCESS &&
      present) {
    scaleBytes = static_cast<size_t>(elementBytes);
    for (int d = 0; d < dims; ++d)
      scaleBytes *= static_cast<size_t>(shape[d]);
  }
  auto make = [&](size_t bytes, void *&pointer, size_t &size) {
    size = bytes;
    if (bytes)
      CUDA_CHECK(cudaMalloc(&pointer, bytes));
  };
  make(srcBytes, buffers.src[rank], buffers.srcBytes[rank]);
  make(dstBytes, buffers.dst[rank], buffers.dstBytes[rank]);
  make(scaleBytes, buffers.scales[rank], buffers.scaleBytes[rank]);
}

/// Microseconds per launch of the bound reshard: CUDA events on every
/// rank's default stream around `launches` back-to-back launches, the
/// slowest stream, median of 7 repetitions.
double timeLaunches(m2n_context context, int group,
                    const std::vector<int> &deviceOf, int launches) {
  const int ranks = static_cast<int>(deviceOf.size());
  auto launchAll = [&](int count) {
    for (int i = 0; i < count; ++i) {
      m2n_status status = m2n_group_launch(context, group, nullptr);
      if (status != M2N_SUCCESS) {
        std::printf("launch: %s\n", statusMessage(status).c_str());
        std::exit(2);
      }
    }
  };
  launchAll(3); // Warm-up.
  CUDA_CHECK(cudaDeviceSynchronize());
  std::vector<double> repetitions;
  for (int rep = 0; rep < 7; ++rep) {
    std::vector<cudaEvent_t> start(ranks), stop(ranks);
    for (int r = 0; r < ranks; ++r) {
      CUDA_CHECK(cudaSetDevice(deviceOf[r]));
      CUDA_CHECK(cudaEventCreate(&start[r]));
      CUDA_CHECK(cudaEventCreate(&stop[r]));
      CUDA_CHECK(cudaEventRecord(start[r], nullptr));
    }
    launchAll(launches);
    double slowest = 0;
    for (int r = 0; r < ranks; ++r) {
      CUDA_CHECK(cudaSetDevice(deviceOf[r]));
      CUDA_CHECK(cudaEventRecord(stop[r], nullptr));
      CUDA_CHECK(cudaEventSynchronize(stop[r]));
      float ms = 0;
      CUDA_CHECK(cudaEventElapsedTime(&ms, start[r], stop[r]));
      slowest = std::max(slowest, static_cast<double>(ms));
      cudaEventDestroy(start[r]);
      cudaEventDestroy(stop[r]);
    }
    repetitions.push_back(slowest * 1000.0 / launches);
  }
  if (m2n_context_synchronize(context) != M2N_SUCCESS) {
    std::printf("synchronize: %s\n", m2n_last_error());
    std::exit(2);
  }
  std::sort(repetitions.begin(), repetitions.end());
  return repetitions[repetitions.size() / 2];
}

} // namespace

int main(int argc, char **argv) {
  if (argc < 2) {
    std::printf("usage: %s ARTIFACT [--bench N]\n", argv[0]);
    return 2;
  }
  // Unbuffered: a run cut short by a timeout still shows its lines.
  std::setvbuf(stdout, nullptr, _IONBF, 0);
  int bench = 0, checks = 3;
  for (int i = 2; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--bench") && i + 1 < argc)
      bench = std::max(1, std::atoi(argv[++i]));
    else if (!std::strcmp(argv[i], "--checks") && i + 1 < argc)
      checks = std::clamp(std::atoi(argv[++i]), 1, 3);
    else {
      std::printf("quantizing_runner: unknown option %s\n", argv[i]);
      return 2;
    }
  }
  std::ifstream in(argv[1], std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  const std::string bytes = text.str();
  m2n::Artifact parsed;
  if (auto error = m2n::deserializeArtifact(bytes, parsed)) {
    std::printf("quantizing_runner: %s: %s\n", argv[1], error->c_str());
    return 2;
  }
  m2n_artifact artifact = nullptr;
  if (m2n_artifact_load(bytes.data(), bytes.size(), &artifact) != M2N_SUCCESS) {
    std::printf("quantizing_runner: %s\n", m2n_last_error());
    return 2;
  }
  int devices = 0;
  CUDA_CHECK(cudaGetDeviceCount(&devices));
  std::printf("%d GPU(s); %s; %d reshards\n", devices, argv[1],
              m2n_artifact_reshard_count(artifact));
  int failures = 0;
  for (int index = 0; index < m2n_artifact_reshard_count(artifact); ++index) {
    const m2n::CompiledReshard &r = parsed.reshards[index];
    int ranks = 0;
    if (m2n_artifact_reshard_ranks(artifact, index, &ranks) != M2N_SUCCESS)
      return 2;
    std::vector<int> deviceOf(ranks);
    for (int rank = 0; rank < ranks; ++rank)
      deviceOf[rank] = rank % devices;
    m2n_context_options options = {};
    options.version = M2N_RUNTIME_API_VERSION;
    options.backend = M2N_BACKEND_CUDA;
    options.ranks = ranks;
    options.devices = deviceOf.data();
    options.timeout_ms = 20000;
    m2n_context context = nullptr;
    int group = -1;
    if (m2n_context_create(artifact, &options, &context) != M2N_SUCCESS ||
        m2n_group_create(context, 1, &index, &group) != M2N_SUCCESS) {
      std::printf("%s: %s\n", r.name.c_str(), m2n_last_error());
      return 2;
    }
    DeviceBuffers device(ranks);
    for (int rank = 0; rank < ranks; ++rank)
      allocate(artifact, index, rank, deviceOf[rank], device);
    const bool quantizing = r.program.scaling.has_value();
    const m2n_buffers buffers = {
        device.src.data(),   device.srcBytes.data(),
        device.dst.data(),   device.dstBytes.data(),
        quantizing ? device.scales.data() : nullptr,
        quantizing ? device.scaleBytes.data() : nullptr};
    std::string problem = statusMessage(m2n_group_bind(context, group, &buffers));
    int checked = 0;
    // Three launches of one binding, each with its own data.
    for (uint64_t seed = 1;
         quantizing && problem.empty() && seed <= static_cast<uint64_t>(checks);
         ++seed) {
      m2n::SimulationReport report = m2n::simulateQuantizingBuffers(
          *r.program.scaling, r.src, r.dst, r.shape, *r.program.sourceType,
          r.type, r.program.scratches, seed,
          [&](const m2n::QuantizedBufferResolver &resolve)
              -> std::optional<std::string> {
            auto copy = [&](m2n::BufferKind kind, int rank, void *pointer,
                            size_t size, bool in) {
              auto host = resolve({kind, rank, -1, 0});
              if (!host || !pointer)
                return;
              CUDA_CHECK(cudaSetDevice(deviceOf[rank]));
              if (static_cast<size_t>(host->second) != size) {
                std::printf("%s: rank %d's buffer has %zu bytes, the "
                            "reference's %lld\n",
                            r.name.c_str(), rank, size,
                            static_cast<long long>(host->second));
                std::exit(2);
              }
              CUDA_CHECK(in ? cudaMemcpy(pointer, host->first, size,
                                         cudaMemcpyHostToDevice)
                            : cudaMemcpy(host->first, pointer, size,
                                         cudaMemcpyDeviceToHost));
            };
            for (int rank = 0; rank < ranks; ++rank) {
              copy(m2n::BufferKind::Source, rank, device.src[rank],
                   device.srcBytes[rank], true);
              copy(m2n::BufferKind::Destination, rank, device.dst[rank],
                   device.dstBytes[rank], true);
              copy(m2n::BufferKind::Scales, rank, device.scales[rank],
                   device.scaleBytes[rank], true);
            }
            std::string error =
                statusMessage(m2n_group_launch(context, group, nullptr));
            if (error.empty())
              error = statusMessage(m2n_context_synchronize(context));
            if (!error.empty())
              return error;
            for (int rank = 0; rank < ranks; ++rank) {
              copy(m2n::BufferKind::Destination, rank, device.dst[rank],
                   device.dstBytes[rank], false);
              copy(m2n::BufferKind::Scales, rank, device.scales[rank],
                   device.scaleBytes[rank], false);
            }
            return std::nullopt;
          });
      if (!report.passed)
        problem = "launch " + std::to_string(seed) + ": " + report.message;
      else
        ++checked;
    }
    std::string timing;
    if (bench && problem.empty()) {
      const double us = timeLaunches(context, group, deviceOf, bench);
      int64_t elements = 1;
      for (int64_t extent : r.shape)
        elements *= extent;
      const double readBytes =
          static_cast<double>(elements) *
          m2n::elementSize(r.program.sourceType.value_or(r.type));
      char line[160];
      std::snprintf(line, sizeof line,
                    "; %.1f us a launch (median of 7 x %d), %.0f GB/s of "
                    "source read",
                    us, bench, readBytes / (us * 1e3));
      timing = line;
    }
    std::printf("%-24s %s  %s%s, %d ranks, %d checked launches%s%s%s\n",
                r.name.c_str(), problem.empty() ? "PASS" : "FAIL",
                quantizing ? "quantizing " : "",
                quantizing ? r.program.scaling->str().c_str() : "uncast",
                ranks, checked, timing.c_str(), problem.empty() ? "" : "  ",
                problem.c_str());
    failures += !problem.empty();
    m2n_context_destroy(context);
  }
  m2n_artifact_destroy(artifact);
  std::printf("%d failed\n", failures);
  return failures ? 1 : 0;
}
