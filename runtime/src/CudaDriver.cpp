//===- CudaDriver.cpp - driver entry points, CUDA errors ------------------===//
//
// The driver functions the backend needs, found at first use
// (CudaDriver.h), and CUDA failures as statuses with messages.
//
//===----------------------------------------------------------------------===//

#include "CudaDriver.h"

#include <type_traits>

namespace m2n::runtime {

Driver driver;

bool Driver::load() {
  if (moduleLoadData)
    return true;
  auto find = [](const char *name, auto &slot) {
    void *pointer = nullptr;
    cudaDriverEntryPointQueryResult found;
    if (cudaGetDriverEntryPointByVersion(name, &pointer, 12000,
                                         cudaEnableDefault,
                                         &found) != cudaSuccess ||
        found != cudaDriverEntryPointSuccess)
      return false;
    slot = reinterpret_cast<std::remove_reference_t<decltype(slot)>>(pointer);
    return true;
  };
  return find("cuModuleGetFunction", moduleGetFunction) &&
         find("cuFuncSetAttribute", funcSetAttribute) &&
         find("cuFuncGetAttribute", funcGetAttribute) &&
         find("cuTensorMapEncodeTiled", tensorMapEncodeTiled) &&
         find("cuLaunchKernel", launchKernel) &&
         find("cuOccupancyMaxActiveBlocksPerMultiprocessor",
              occupancyMaxActiveBlocksPerMultiprocessor) &&
         find("cuGetErrorString", getErrorString) &&
         find("cuMemGetAddressRange", memGetAddressRange) &&
         find("cuStreamWaitValue64", streamWaitValue64) &&
         find("cuStreamWriteValue64", streamWriteValue64) &&
         find("cuModuleLoadData", moduleLoadData);
}

m2n_status cudaFailure(cudaError_t error, const std::string &what) {
  return fail(M2N_CUDA_ERROR, what + ": " + cudaGetErrorName(error) + ": " +
                                  cudaGetErrorString(error));
}

m2n_status driverFailure(CUresult result, const std::string &what) {
  const char *name = nullptr;
  if (driver.getErrorString)
    driver.getErrorString(result, &name);
  return fail(M2N_CUDA_ERROR,
              what + ": " + (name ? name : "unknown error"));
}

} // namespace m2n::runtime
