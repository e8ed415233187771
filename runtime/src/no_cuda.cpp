//===- no_cuda.cpp - the CUDA backend's API in a build without CUDA ---------===//

#include "Internal.h"

extern "C" {

m2n_status m2n_cuda_context_create(m2n_artifact, int, const int *, double,
                                   m2n_cuda_context *) {
  return m2n::runtime::fail(M2N_UNSUPPORTED,
                            "this m2n runtime was built without CUDA");
}

void m2n_cuda_context_destroy(m2n_cuda_context) {}

m2n_status m2n_cuda_execute(m2n_cuda_context, int, void *const *,
                            const size_t *, void *const *, const size_t *,
                            void *const *) {
  return m2n::runtime::fail(M2N_UNSUPPORTED,
                            "this m2n runtime was built without CUDA");
}

m2n_status m2n_cuda_synchronize(m2n_cuda_context) {
  return m2n::runtime::fail(M2N_UNSUPPORTED,
                            "this m2n runtime was built without CUDA");
}

} // extern "C"
