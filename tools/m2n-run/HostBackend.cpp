//===- HostBackend.cpp - m2n-run on the runtime's host backend ------------===//

#include "Backends.h"

#include <algorithm>
#include <chrono>

namespace m2n::run {

RunResult runOnHost(m2n_artifact artifact, const std::vector<int> &members,
                    const Buffers &src, Buffers &dst, int repeat) {
  const int buffers = static_cast<int>(src.size());
  const int ranks = buffers / static_cast<int>(members.size());
  std::vector<const void *> srcPointers(buffers, nullptr);
  std::vector<void *> dstPointers(buffers, nullptr);
  std::vector<size_t> srcBytes(buffers), dstBytes(buffers);
  for (int rank = 0; rank < buffers; ++rank) {
    srcBytes[rank] = src[rank].size();
    dstBytes[rank] = dst[rank].size();
    if (!src[rank].empty())
      srcPointers[rank] = src[rank].data();
    if (!dst[rank].empty())
      dstPointers[rank] = dst[rank].data();
  }
  RunResult result;
  std::vector<double> times;
  for (int run = 0; run < repeat; ++run) {
    auto start = std::chrono::steady_clock::now();
    m2n_status status = m2n_host_execute_group(
        artifact, static_cast<int>(members.size()), members.data(), ranks,
        srcPointers.data(), srcBytes.data(), dstPointers.data(),
        dstBytes.data());
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
