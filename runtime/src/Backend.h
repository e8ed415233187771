//===- Backend.h - what a context runs its groups on ------------*- C++ -*-===//
//
// The context API (m2n_context_create, m2n_group_*; ContextApi.cpp) checks
// its arguments, keeps the groups' members and calls one backend: the host
// backend (HostBackend.cpp) or the CUDA backend (CudaBackend.cpp; NoCuda.cpp
// in a build without CUDA).
//
//===----------------------------------------------------------------------===//

#ifndef M2N_RUNTIME_BACKEND_H
#define M2N_RUNTIME_BACKEND_H

#include "Internal.h"

#include <memory>
#include <vector>

namespace m2n::runtime {

/// m2n_context_options, checked and with its defaults filled in.
struct ContextOptions {
  m2n_backend backend = M2N_BACKEND_HOST;
  int ranks = 0;
  int processes = 1;
  std::vector<int> localRanks;   // By local slot.
  std::vector<int> localDevices; // By local slot (CUDA).
  m2n_allgather_fn allgather = nullptr;
  void *allgatherUser = nullptr;
  double timeoutMs = M2N_DEFAULT_TIMEOUT_MS;
};

/// A group: reshards of the artifact run as one program per rank.
struct GroupMembers {
  std::string name; // The reshard's, or "a group of N reshards".
  std::vector<int> reshards; // The members' reshard indices.
  std::vector<const CompiledReshard *> members;
  /// The merged program of several members (groupProgram), null for one.
  std::shared_ptr<const TransferProgram> merged;
  const TransferProgram &program() const {
    return merged ? *merged : members.front()->program;
  }
};

/// What a context runs its groups on. Groups are numbered by the context
/// in creation order; the backend keeps each one's bound state.
class Backend {
public:
  virtual ~Backend() = default;
  /// Group `group` (the next number) of `members`.
  virtual m2n_status addGroup(int group, const GroupMembers &members) = 0;
  /// Binds `group` to the local ranks' buffers (collective with several
  /// processes); a failure leaves it unbound.
  virtual m2n_status bind(int group, const m2n_buffers &buffers) = 0;
  /// Runs the bound `group` once (CUDA: enqueues it on `streams`).
  virtual m2n_status launch(int group, void *const *streams) = 0;
  /// Waits for everything launched since the last call.
  virtual m2n_status synchronize() = 0;
};

/// The host backend: every rank in this process, on host memory.
m2n_status createHostBackend(m2n_artifact artifact,
                             const ContextOptions &options,
                             std::unique_ptr<Backend> &backend);
/// The CUDA backend (M2N_UNSUPPORTED in a build without CUDA). Collective
/// with several processes.
m2n_status createCudaBackend(m2n_artifact artifact,
                             const ContextOptions &options,
                             std::unique_ptr<Backend> &backend);

} // namespace m2n::runtime

/// A context: its artifact, its options, its groups and their backend.
struct m2n_context_t {
  m2n_artifact artifact = nullptr;
  m2n::runtime::ContextOptions options;
  std::vector<m2n::runtime::GroupMembers> groups; // By group number.
  /// By group: the buffers it was last bound to, pointers and sizes (empty
  /// while unbound), for m2n_group_execute.
  struct Bound {
    bool bound = false;
    std::vector<const void *> src;
    std::vector<void *> dst, scales;
    std::vector<size_t> srcBytes, dstBytes, scaleBytes;
  };
  std::vector<Bound> bound;
  std::unique_ptr<m2n::runtime::Backend> backend;
};

#endif // M2N_RUNTIME_BACKEND_H
