//===- CudaBackend.cpp - the CUDA backend behind the context API ----------===//
//
// Groups bound and launched by the files CudaBackend.h lists, and
// m2n_cuda_device_count.
//
//===----------------------------------------------------------------------===//

#include "CudaBackend.h"

#include <vector>

namespace m2n::runtime {

namespace {

class CudaBackend final : public Backend {
public:
  explicit CudaBackend(CudaContext *context) : context(context) {}
  ~CudaBackend() override { destroyContext(context); }

  m2n_status addGroup(int group, const GroupMembers &members) override {
    ReshardState &state = context->groups[group];
    static_cast<GroupMembers &>(state) = members;
    return M2N_SUCCESS;
  }

  m2n_status bind(int group, const m2n_buffers &buffers) override {
    // Sources are only read; the backend keeps one pointer type.
    return bindState(context, context->groups.at(group),
                     const_cast<void *const *>(buffers.src),
                     buffers.src_bytes, buffers.dst, buffers.dst_bytes,
                     buffers.scales, buffers.scale_bytes);
  }

  m2n_status launch(int group, void *const *streams) override {
    ReshardState &state = context->groups.at(group);
    if (!state.bound)
      return fail(M2N_INVALID_ARGUMENT,
                  "launching " + state.name + ": it is not bound to buffers");
    return launchState(context, state, streams);
  }

  m2n_status synchronize() override {
    m2n_status status = M2N_SUCCESS;
    for (auto [device, stream] : context->pending) {
      cudaSetDevice(device);
      cudaError_t error = cudaStreamSynchronize(stream);
      if (error != cudaSuccess && status == M2N_SUCCESS) {
        if (context->errorRecord[0])
          status = fail(M2N_TIMEOUT,
                        "a transfer kernel waited longer than the timeout: "
                        "work item " +
                            std::to_string(context->errorRecord[1]) +
                            " saw counter value " +
                            std::to_string(context->errorRecord[3]) +
                            " (a peer never signalled)");
        else
          status = cudaFailure(error, "cudaStreamSynchronize");
      }
    }
    context->pending.clear();
    return status;
  }

private:
  CudaContext *context;
};

} // namespace

m2n_status createCudaBackend(m2n_artifact artifact,
                             const ContextOptions &options,
                             std::unique_ptr<Backend> &backend) {
  CudaContext *context = nullptr;
  M2N_TRY(createContext(artifact, options, context));
  backend = std::make_unique<CudaBackend>(context);
  return M2N_SUCCESS;
}

} // namespace m2n::runtime

extern "C" m2n_status m2n_cuda_device_count(int *count) {
  using m2n::runtime::fail;
  return m2n::runtime::guarded("m2n_cuda_device_count", [&]() -> m2n_status {
    if (!count)
      return fail(M2N_INVALID_ARGUMENT, "m2n_cuda_device_count: null count");
    *count = 0;
    cudaError_t error = cudaGetDeviceCount(count);
    if (error != cudaSuccess) {
      *count = 0;
      cudaGetLastError();
      return fail(M2N_UNSUPPORTED, std::string("no CUDA device: ") +
                                       cudaGetErrorString(error));
    }
    return M2N_SUCCESS;
  });
}
