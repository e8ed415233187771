//===- HostBackend.cpp - m2n-run on the runtime's host backend ------------===//

#include "Backends.h"

#include <algorithm>
#include <chrono>

namespace m2n::run {

RunResult runOnHost(m2n_artifact artifact, const std::vector<int> &members,
                    LaunchBuffers &buffers, int repeat) {
  const int ranks = static_cast<int>(buffers.src.size() / members.size());
  RunResult result;
  auto fail = [&](m2n_status status) {
    if (status != M2N_SUCCESS && result.problem.empty())
      result.problem =
          std::string(m2n_status_name(status)) + ": " + m2n_last_error();
    return status == M2N_SUCCESS;
  };
  m2n_context_options options = {};
  options.version = M2N_RUNTIME_API_VERSION;
  options.backend = M2N_BACKEND_HOST;
  options.ranks = ranks;
  m2n_context context = nullptr;
  if (!fail(m2n_context_create(artifact, &options, &context)))
    return result;
  const m2n_buffers bound = {buffers.src.data(),    buffers.srcBytes.data(),
                             buffers.dst.data(),    buffers.dstBytes.data(),
                             buffers.scales.data(), buffers.scaleBytes.data()};
  int group = -1;
  std::vector<double> times;
  if (fail(m2n_group_create(context, static_cast<int>(members.size()),
                            members.data(), &group)) &&
      fail(m2n_group_bind(context, group, &bound)))
    for (int run = 0; run < repeat; ++run) {
      auto start = std::chrono::steady_clock::now();
      if (!fail(m2n_group_launch(context, group, nullptr)))
        break;
      times.push_back(std::chrono::duration<double, std::milli>(
                          std::chrono::steady_clock::now() - start)
                          .count());
    }
  m2n_context_destroy(context);
  if (!result.problem.empty())
    return result;
  std::sort(times.begin(), times.end());
  result.medianMs = times[times.size() / 2];
  return result;
}

} // namespace m2n::run
