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

/// The 128-byte work item of lib/Conversion/M2NToGPU/TransferKernel.mlir.
struct Item {
  uint64_t src, dst;
  uint32_t bytes, op;
  uint64_t signal;
  uint64_t wait0, value0, wait1, value1;
  uint32_t kind, rank;        // kind 1: src/dst are tensor maps.
  int32_t srcCoords[5], dstCoords[5]; // Innermost first.
  uint8_t pad[16];
};
static_assert(sizeof(Item) == 128, "item record is 128 bytes");

#endif // M2N_TEST_GPU_CUDACHECK_H
