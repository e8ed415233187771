// One check for every CUDA runtime and driver call of the GPU drivers: print
// the call's error and location, exit with status 2.
#ifndef M2N_TEST_GPU_CUDACHECK_H
#define M2N_TEST_GPU_CUDACHECK_H

#include <cuda.h>
#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>

#define CUDA_CHECK(x)                                                          \
  do {                                                                         \
    cudaError_t e = (x);                                                       \
    if (e != cudaSuccess) {                                                    \
      std::printf("CUDA error %s at %s:%d: %s\n", cudaGetErrorName(e),         \
                  __FILE__, __LINE__, cudaGetErrorString(e));                  \
      std::exit(2);                                                            \
    }                                                                          \
  } while (0)

#define CU_CHECK(x)                                                            \
  do {                                                                         \
    CUresult r = (x);                                                          \
    if (r != CUDA_SUCCESS) {                                                   \
      const char *s = nullptr;                                                 \
      cuGetErrorString(r, &s);                                                 \
      std::printf("CUDA driver error %d at %s:%d: %s\n", (int)r, __FILE__,     \
                  __LINE__, s ? s : "?");                                      \
      std::exit(2);                                                            \
    }                                                                          \
  } while (0)

#include "m2n/Artifact/KernelTable.h"
using Item = m2n::KernelItem;

#endif // M2N_TEST_GPU_CUDACHECK_H
