//===- HostBackend.cpp - m2n-run on the runtime's host backend ------------===//

#include "Backends.h"

#include <algorithm>
#include <chrono>

namespace m2n::run {

RunResult runOnHost(m2n_artifact artifact, const std::vector<int> &members,
                    LaunchBuffers &buffers, int repeat) {
  const int ranks = static_cast<int>(buffers.src.size() / members.size());
  RunResult result;
  std::vector<double> times;
  for (int run = 0; run < repeat; ++run) {
    auto start = std::chrono::steady_clock::now();
    m2n_status status = m2n_host_execute_scaled(
        artifact, static_cast<int>(members.size()), members.data(), ranks,
        buffers.src.data(), buffers.srcBytes.data(), buffers.dst.data(),
        buffers.dstBytes.data(), buffers.scales.data(),
        buffers.scaleBytes.data());
    times.push_back(std::chrono::duration<double, std::milli>(
                        std::chrono::steady_clock::now() - start)
                        .count());
    if (status != M2N_SUCCESS) {
      result.problem =
          std::string(m2n_status_name(status)) + ": " + m2n_last_error();
      return result;
    }
  }
  std::sort(times.begin(), times.end());
  result.medianMs = times[times.size() / 2];
  return result;
}

} // namespace m2n::run
