//===- CudaBackend.cpp - m2n-run on GPUs through the runtime's CUDA API ---===//

#include "Backends.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>

namespace m2n::run {

namespace {
/// The first failing CUDA call of a run, as a problem.
struct CudaCheck {
  std::string &problem;
  bool operator()(cudaError_t error, const char *what) {
    if (error != cudaSuccess && problem.empty())
      problem = std::string(what) + ": " + cudaGetErrorString(error);
    return error == cudaSuccess;
  }
};

/// Set once a kernel failure (a trap after a timeout, a fault) has left the
/// process's CUDA context unusable: every later CUDA call would fail with
/// the same error, so later reshards say so instead.
std::string lostContext;
} // namespace

RunResult runOnCuda(m2n_artifact artifact, const std::vector<int> &members,
                    LaunchBuffers &host, int repeat) {
  RunResult result;
  if (!lostContext.empty()) {
    result.problem = "not run: " + lostContext;
    return result;
  }
  CudaCheck check{result.problem};
  // Buffer b is member b / ranks's buffer of rank b % ranks.
  const int buffers = static_cast<int>(host.src.size());
  const int ranks = buffers / static_cast<int>(members.size());
  int devices = 0;
  if (!check(cudaGetDeviceCount(&devices), "cudaGetDeviceCount"))
    return result;
  std::vector<int> deviceOf(ranks);
  for (int rank = 0; rank < ranks; ++rank)
    deviceOf[rank] = rank % devices;
  std::vector<void *> srcPointers(buffers, nullptr),
      dstPointers(buffers, nullptr), scalePointers(buffers, nullptr);
  std::vector<size_t> srcBytes(buffers), dstBytes(buffers),
      scaleBytes(host.scaleBytes);
  const bool quantizing = host.quantizes();
  auto release = [&]() {
    for (int rank = 0; rank < buffers; ++rank) {
      cudaSetDevice(deviceOf[rank % ranks]);
      cudaFree(srcPointers[rank]);
      cudaFree(dstPointers[rank]);
      cudaFree(scalePointers[rank]);
    }
  };
  for (int rank = 0; rank < buffers && result.problem.empty(); ++rank) {
    srcBytes[rank] = host.srcBytes[rank];
    dstBytes[rank] = host.dstBytes[rank];
    check(cudaSetDevice(deviceOf[rank % ranks]), "cudaSetDevice");
    if (srcBytes[rank] &&
        check(cudaMalloc(&srcPointers[rank], srcBytes[rank]), "cudaMalloc"))
      check(cudaMemcpy(srcPointers[rank], host.src[rank], srcBytes[rank],
                       cudaMemcpyHostToDevice),
            "cudaMemcpy");
    if (dstBytes[rank] &&
        check(cudaMalloc(&dstPointers[rank], dstBytes[rank]), "cudaMalloc"))
      check(cudaMemcpy(dstPointers[rank], host.dst[rank], dstBytes[rank],
                       cudaMemcpyHostToDevice),
            "cudaMemcpy");
    // A quantizing member's scales, poisoned as the host's are.
    if (scaleBytes[rank] &&
        check(cudaMalloc(&scalePointers[rank], scaleBytes[rank]), "cudaMalloc"))
      check(cudaMemcpy(scalePointers[rank], host.scales[rank],
                       scaleBytes[rank], cudaMemcpyHostToDevice),
            "cudaMemcpy");
  }
  m2n_context context = nullptr;
  auto fail = [&](m2n_status status) {
    if (status != M2N_SUCCESS && result.problem.empty())
      result.problem =
          std::string(m2n_status_name(status)) + ": " + m2n_last_error();
    return status == M2N_SUCCESS;
  };
  m2n_context_options options = {};
  options.version = M2N_RUNTIME_API_VERSION;
  options.backend = M2N_BACKEND_CUDA;
  options.ranks = ranks;
  options.devices = deviceOf.data();
  if (result.problem.empty() &&
      fail(m2n_context_create(artifact, &options, &context))) {
    // The group (one reshard or several) is created and bound once, then
    // launched.
    const m2n_buffers bound = {
        srcPointers.data(), srcBytes.data(),
        dstPointers.data(), dstBytes.data(),
        quantizing ? scalePointers.data() : nullptr,
        quantizing ? scaleBytes.data() : nullptr};
    int group = -1;
    if (fail(m2n_group_create(context, static_cast<int>(members.size()),
                              members.data(), &group)))
      fail(m2n_group_bind(context, group, &bound));
    std::vector<double> times;
    for (int run = 0; run < repeat && result.problem.empty(); ++run) {
      auto start = std::chrono::steady_clock::now();
      if (fail(m2n_group_launch(context, group, nullptr)) &&
          fail(m2n_context_synchronize(context)))
        times.push_back(std::chrono::duration<double, std::milli>(
                            std::chrono::steady_clock::now() - start)
                            .count());
    }
    if (!times.empty()) {
      std::sort(times.begin(), times.end());
      result.medianMs = times[times.size() / 2];
    }
    m2n_context_destroy(context);
  }
  for (int rank = 0; rank < buffers && result.problem.empty(); ++rank)
    if (dstBytes[rank]) {
      check(cudaSetDevice(deviceOf[rank % ranks]), "cudaSetDevice");
      check(cudaMemcpy(host.dst[rank], dstPointers[rank], dstBytes[rank],
                       cudaMemcpyDeviceToHost),
            "cudaMemcpy");
    }
  for (int rank = 0; rank < buffers && result.problem.empty(); ++rank)
    if (scaleBytes[rank]) {
      check(cudaSetDevice(deviceOf[rank % ranks]), "cudaSetDevice");
      check(cudaMemcpy(host.scales[rank], scalePointers[rank],
                       scaleBytes[rank], cudaMemcpyDeviceToHost),
            "cudaMemcpy");
    }
  release();
  if (!result.problem.empty())
    for (int device = 0; device < devices; ++device)
      if (cudaSetDevice(device) != cudaSuccess ||
          cudaDeviceSynchronize() != cudaSuccess) {
        lostContext = "an earlier kernel failure left the CUDA context "
                      "unusable (run this reshard in a process of its own)";
        break;
      }
  return result;
}

} // namespace m2n::run
