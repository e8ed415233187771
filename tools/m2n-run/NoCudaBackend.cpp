//===- NoCudaBackend.cpp - m2n-run in a build without CUDA ----------------===//

#include "Backends.h"

namespace m2n::run {

RunResult runOnCuda(m2n_artifact, const std::vector<int> &, LaunchBuffers &,
                    int) {
  return {"this m2n-run was built without CUDA", 0};
}

} // namespace m2n::run
