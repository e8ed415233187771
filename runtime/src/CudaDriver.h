//===- CudaDriver.h - driver entry points and CUDA error reporting -*- C++ -*-===//
//
// The CUDA backend links only the static CUDA runtime: the few driver-API
// functions it needs are found through cudaGetDriverEntryPointByVersion, so
// that the library loads on machines without a driver (CI) and reports the
// missing GPU at first use.
//
//===----------------------------------------------------------------------===//

#ifndef M2N_RUNTIME_CUDADRIVER_H
#define M2N_RUNTIME_CUDADRIVER_H

#include "Internal.h"

#include <cuda.h>
#include <cuda_runtime.h>

#include <string>

namespace m2n::runtime {

struct Driver {
  decltype(&cuModuleLoadData) moduleLoadData = nullptr;
  decltype(&cuModuleGetFunction) moduleGetFunction = nullptr;
  decltype(&cuFuncSetAttribute) funcSetAttribute = nullptr;
  decltype(&cuFuncGetAttribute) funcGetAttribute = nullptr;
  decltype(&cuTensorMapEncodeTiled) tensorMapEncodeTiled = nullptr;
  decltype(&cuLaunchKernel) launchKernel = nullptr;
  decltype(&cuOccupancyMaxActiveBlocksPerMultiprocessor)
      occupancyMaxActiveBlocksPerMultiprocessor = nullptr;
  decltype(&cuGetErrorString) getErrorString = nullptr;
  decltype(&cuMemGetAddressRange) memGetAddressRange = nullptr;
  decltype(&cuStreamWaitValue64) streamWaitValue64 = nullptr;
  decltype(&cuStreamWriteValue64) streamWriteValue64 = nullptr;

  /// Resolves every entry point once; false when the driver lacks one.
  bool load();
};

extern Driver driver;

m2n_status cudaFailure(cudaError_t error, const std::string &what);
m2n_status driverFailure(CUresult result, const std::string &what);

} // namespace m2n::runtime

#define M2N_CUDA(call)                                                         \
  do {                                                                         \
    cudaError_t m2nError = (call);                                             \
    if (m2nError != cudaSuccess)                                               \
      return ::m2n::runtime::cudaFailure(m2nError, #call);                     \
  } while (0)
#define M2N_CU(call)                                                           \
  do {                                                                         \
    CUresult m2nResult = (call);                                               \
    if (m2nResult != CUDA_SUCCESS)                                             \
      return ::m2n::runtime::driverFailure(m2nResult, #call);                  \
  } while (0)

#endif // M2N_RUNTIME_CUDADRIVER_H
