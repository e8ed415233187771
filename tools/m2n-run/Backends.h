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

/// By member of the launch, then rank: buffers[m * ranks + rank].
using Buffers = std::vector<std::vector<uint8_t>>;

/// Runs reshards `members` (one: a reshard; more: a group, as
/// m2n_host_execute_group / m2n_cuda_group_create take them).
RunResult runOnHost(m2n_artifact artifact, const std::vector<int> &members,
                    const Buffers &src, Buffers &dst, int repeat);

/// Rank r on CUDA device r % (device count); several ranks per device are
/// virtual ranks. Unavailable (a problem) in builds without CUDA.
RunResult runOnCuda(m2n_artifact artifact, const std::vector<int> &members,
                    const Buffers &src, Buffers &dst, int repeat);

} // namespace m2n::run

#endif // M2N_TOOLS_M2NRUN_BACKENDS_H
