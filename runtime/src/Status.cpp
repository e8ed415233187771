//===- Status.cpp - statuses and the last error ---------------------------===//
//
// Every entry point reports a status and, on failure, a message kept per
// thread (m2n_last_error); a C++ exception never crosses the C API.
//
//===----------------------------------------------------------------------===//

#include "Internal.h"

#include <exception>
#include <new>
#include <string>

namespace {
thread_local std::string lastError;
} // namespace

namespace m2n::runtime {

m2n_status fail(m2n_status status, std::string message) {
  lastError = std::move(message);
  return status;
}

m2n_status failFromException(const char *entry) noexcept {
  // Called inside a catch handler: what was thrown, as a status. Building
  // the message may itself run out of memory; the status still returns.
  m2n_status status = M2N_INTERNAL_ERROR;
  const char *what = "an unknown C++ exception";
  try {
    throw;
  } catch (const std::bad_alloc &) {
    status = M2N_OUT_OF_MEMORY;
    what = "out of host memory";
  } catch (const std::exception &e) {
    what = e.what();
  } catch (...) {
  }
  try {
    lastError = std::string(entry) + ": " + what;
  } catch (...) {
    lastError.clear();
  }
  return status;
}

} // namespace m2n::runtime

extern "C" {

const char *m2n_status_name(m2n_status status) {
  switch (status) {
  case M2N_SUCCESS:
    return "M2N_SUCCESS";
  case M2N_INVALID_ARGUMENT:
    return "M2N_INVALID_ARGUMENT";
  case M2N_INVALID_ARTIFACT:
    return "M2N_INVALID_ARTIFACT";
  case M2N_UNSUPPORTED:
    return "M2N_UNSUPPORTED";
  case M2N_EXECUTION_FAILED:
    return "M2N_EXECUTION_FAILED";
  case M2N_IO_ERROR:
    return "M2N_IO_ERROR";
  case M2N_TIMEOUT:
    return "M2N_TIMEOUT";
  case M2N_CUDA_ERROR:
    return "M2N_CUDA_ERROR";
  case M2N_OUT_OF_MEMORY:
    return "M2N_OUT_OF_MEMORY";
  case M2N_INTERNAL_ERROR:
    return "M2N_INTERNAL_ERROR";
  }
  return "M2N_UNKNOWN_STATUS";
}

const char *m2n_last_error(void) { return lastError.c_str(); }

} // extern "C"
