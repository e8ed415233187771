//===- Backends.h - where m2n-run executes a reshard ------------*- C++ -*-===//
//
// Each backend takes every rank's source bytes and poisoned destination
// bytes in host memory, runs the reshard (or a group of reshards, launched
// as one) `repeat` times through the runtime, and leaves the destinations'
// final contents in `dst`.
//
//===----------------------------------------------------------------------===//

#ifndef M2N_TOOLS_M2NRUN_BACKENDS_H
#define M2N_TOOLS_M2NRUN_BACKENDS_H

#include "m2n/runtime.h"

#include <cstdint>
#include <string>
#include <vector>

namespace m2n::run {

struct RunResult {
  std::string problem; // Empty when every run succeeded.
  double medianMs = 0; // Host-timed, per run.
};

/// The host buffers of a launch, by member of the launch, then rank:
/// src[m * ranks + rank]; NULL and 0 where a rank has no such buffer.
/// `scales`: the scale tensors of quantizing members (all NULL when no
/// member quantizes).
struct LaunchBuffers {
  std::vector<const void *> src;
  std::vector<void *> dst, scales;
  std::vector<size_t> srcBytes, dstBytes, scaleBytes;

  explicit LaunchBuffers(size_t count)
      : src(count, nullptr), dst(count, nullptr), scales(count, nullptr),
        srcBytes(count, 0), dstBytes(count, 0), scaleBytes(count, 0) {}
  bool quantizes() const {
    for (void *p : scales)
      if (p)
        return true;
    return false;
  }
};

/// Runs reshards `members` as one group (m2n_group_create): one reshard, or
/// several run as one program per rank.
RunResult runOnHost(m2n_artifact artifact, const std::vector<int> &members,
                    LaunchBuffers &buffers, int repeat);

/// Rank r on CUDA device r % (device count); several ranks per device are
/// virtual ranks. Unavailable (a problem) in builds without CUDA.
RunResult runOnCuda(m2n_artifact artifact, const std::vector<int> &members,
                    LaunchBuffers &buffers, int repeat);

} // namespace m2n::run

#endif // M2N_TOOLS_M2NRUN_BACKENDS_H
