//===- HostRun.h - one run of reshards on the host backend ------*- C++ -*-===//

#ifndef M2N_UNITTESTS_RUNTIME_HOSTRUN_H
#define M2N_UNITTESTS_RUNTIME_HOSTRUN_H

#include "m2n/runtime.h"

#include <vector>

/// Runs reshards `members` of `artifact` once on the host backend with
/// `ranks` ranks, as a caller of the C API does: a context, a group of
/// them, m2n_group_execute. Buffers are member-major by rank; the first
/// failing call's status is returned, its message in m2n_last_error().
inline m2n_status hostRun(m2n_artifact artifact, std::vector<int> members,
                          int ranks, const void *const *src,
                          const size_t *srcBytes, void *const *dst,
                          const size_t *dstBytes,
                          void *const *scales = nullptr,
                          const size_t *scaleBytes = nullptr) {
  m2n_context_options options = {};
  options.version = M2N_RUNTIME_API_VERSION;
  options.backend = M2N_BACKEND_HOST;
  options.ranks = ranks;
  m2n_context context = nullptr;
  m2n_status status = m2n_context_create(artifact, &options, &context);
  if (status != M2N_SUCCESS)
    return status;
  int group = -1;
  status = m2n_group_create(context, static_cast<int>(members.size()),
                            members.data(), &group);
  if (status == M2N_SUCCESS) {
    const m2n_buffers buffers = {src,
                                 srcBytes,
                                 dst,
                                 dstBytes,
                                 scales,
                                 scaleBytes};
    status = m2n_group_execute(context, group, &buffers, nullptr);
  }
  m2n_context_destroy(context);
  return status;
}

#endif // M2N_UNITTESTS_RUNTIME_HOSTRUN_H
