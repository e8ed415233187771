//===- NoCuda.cpp - the CUDA backend in a build without CUDA --------------===//

#include "Backend.h"

namespace {
m2n_status noCuda() {
  return m2n::runtime::fail(M2N_UNSUPPORTED,
                            "this m2n runtime was built without CUDA");
}
} // namespace

m2n_status m2n::runtime::createCudaBackend(m2n_artifact,
                                           const ContextOptions &,
                                           std::unique_ptr<Backend> &) {
  return noCuda();
}

extern "C" m2n_status m2n_cuda_device_count(int *count) {
  if (count)
    *count = 0;
  return noCuda();
}
