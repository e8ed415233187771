//===- CudaModule.cpp - the transfer kernel loaded on a device ------------===//
//
// The artifact's PTX as a module of one device: its kernel, with the
// dynamic shared memory the artifact's stages need, and the largest block
// the kernel's registers allow.
//
//===----------------------------------------------------------------------===//

#include "CudaBackend.h"

#include <algorithm>

namespace m2n::runtime {

m2n_status loadKernel(const Artifact &artifact, int device,
                      CUfunction &function, uint32_t &maxThreads) {
  M2N_CUDA(cudaSetDevice(device));
  CUmodule module;
  M2N_CU(driver.moduleLoadData(&module, artifact.ptx.c_str()));
  M2N_CU(driver.moduleGetFunction(&function, module,
                                  artifact.kernel.name.c_str()));
  M2N_CU(driver.funcSetAttribute(
      function, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
      static_cast<int>(sharedMemoryBudget(artifact.kernel))));
  // Walkers stay within the block the kernel's registers allow.
  int threads = 0;
  M2N_CU(driver.funcGetAttribute(
      &threads, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, function));
  maxThreads = static_cast<uint32_t>(std::max(threads, 32));
  return M2N_SUCCESS;
}

} // namespace m2n::runtime
