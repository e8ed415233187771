//===- Backends.h - where m2n-run executes a reshard ------------*- C++ -*-===//
//
// Each backend takes every rank's source bytes and poisoned destination
// bytes in host memory, runs the reshard `repeat` times through the runtime,
// and leaves the destinations' final contents in `dst`.
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

using Buffers = std::vector<std::vector<uint8_t>>; // By rank.

RunResult runOnHost(m2n_artifact artifact, int reshard, const Buffers &src,
                    Buffers &dst, int repeat);

/// Rank r on CUDA device r % (device count); several ranks per device are
/// virtual ranks. Unavailable (a problem) in builds without CUDA.
RunResult runOnCuda(m2n_artifact artifact, int reshard, const Buffers &src,
                    Buffers &dst, int repeat);

} // namespace m2n::run

#endif // M2N_TOOLS_M2NRUN_BACKENDS_H
