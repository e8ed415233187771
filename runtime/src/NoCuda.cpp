//===- NoCuda.cpp - the CUDA backend's API in a build without CUDA --------===//

#include "Internal.h"

namespace {
m2n_status noCuda() {
  return m2n::runtime::fail(M2N_UNSUPPORTED,
                            "this m2n runtime was built without CUDA");
}
} // namespace

extern "C" {

m2n_status m2n_cuda_device_count(int *count) {
  if (count)
    *count = 0;
  return noCuda();
}

m2n_status m2n_cuda_context_create(m2n_artifact, int, const int *, double,
                                   m2n_cuda_context *) {
  return noCuda();
}

m2n_status m2n_cuda_comm_create(m2n_artifact, int, int, int, const int *,
                                const int *, m2n_allgather_fn, void *, double,
                                m2n_cuda_context *) {
  return noCuda();
}

void m2n_cuda_context_destroy(m2n_cuda_context) {}

m2n_status m2n_cuda_bind(m2n_cuda_context, int, void *const *, const size_t *,
                         void *const *, const size_t *) {
  return noCuda();
}

m2n_status m2n_cuda_bind_scaled(m2n_cuda_context, int, void *const *,
                                const size_t *, void *const *, const size_t *,
                                void *const *, const size_t *) {
  return noCuda();
}

m2n_status m2n_cuda_launch(m2n_cuda_context, int, void *const *) {
  return noCuda();
}

m2n_status m2n_cuda_execute(m2n_cuda_context, int, void *const *,
                            const size_t *, void *const *, const size_t *,
                            void *const *) {
  return noCuda();
}

m2n_status m2n_cuda_execute_scaled(m2n_cuda_context, int, void *const *,
                                   const size_t *, void *const *,
                                   const size_t *, void *const *,
                                   const size_t *, void *const *) {
  return noCuda();
}

m2n_status m2n_cuda_group_create(m2n_cuda_context, int, const int *, int *) {
  return noCuda();
}

m2n_status m2n_cuda_group_bind(m2n_cuda_context, int, void *const *,
                               const size_t *, void *const *, const size_t *) {
  return noCuda();
}

m2n_status m2n_cuda_group_bind_scaled(m2n_cuda_context, int, void *const *,
                                      const size_t *, void *const *,
                                      const size_t *, void *const *,
                                      const size_t *) {
  return noCuda();
}

m2n_status m2n_cuda_group_launch(m2n_cuda_context, int, void *const *) {
  return noCuda();
}

m2n_status m2n_cuda_synchronize(m2n_cuda_context) { return noCuda(); }

} // extern "C"
