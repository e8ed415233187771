//===- Internal.h - shared by the runtime's C API files ---------*- C++ -*-===//

#ifndef M2N_RUNTIME_INTERNAL_H
#define M2N_RUNTIME_INTERNAL_H

#include "m2n/runtime.h"

#include "m2n/Artifact/Artifact.h"

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

/// Returns the status of `call` unless it is M2N_SUCCESS.
#define M2N_TRY(call)                                                          \
  do {                                                                         \
    m2n_status m2nStatus = (call);                                             \
    if (m2nStatus != M2N_SUCCESS)                                              \
      return m2nStatus;                                                        \
  } while (0)

struct m2n_artifact_t {
  m2n::Artifact artifact;
  /// Each reshard's scaling, spelled for m2n_artifact_reshard_scaling.
  std::vector<std::string> scalingNames;
  /// Merged programs of groups by member list: the artifact's compiled
  /// groups (from the load), and those of other member lists, merged once
  /// when first run (groupProgram).
  std::mutex mergedMutex;
  std::map<std::vector<int>, std::shared_ptr<const m2n::TransferProgram>> merged;
};

namespace m2n::runtime {

/// Records `message` as this thread's last error and returns `status`.
m2n_status fail(m2n_status status, std::string message);

/// Inside a catch handler: the status of the exception in flight (bad_alloc:
/// M2N_OUT_OF_MEMORY, anything else M2N_INTERNAL_ERROR), recorded with
/// `entry`'s name.
m2n_status failFromException(const char *entry) noexcept;

/// Runs the body of the C entry point `entry`: no C++ exception crosses
/// the C API; one becomes a status with a message.
template <typename Body>
m2n_status guarded(const char *entry, Body &&body) noexcept {
  try {
    return body();
  } catch (...) {
    return failFromException(entry);
  }
}

/// The reshard, or nullptr for a bad handle or index.
const CompiledReshard *reshardAt(m2n_artifact artifact, int reshard);

/// The element type of the reshard's source (`source`) or destination
/// buffers: they differ for an in-flight cast.
ElementType sideType(const CompiledReshard &reshard, bool source);

/// Bytes of rank `rank`'s local part of the source (`source`) or the
/// destination (0 outside its mesh).
int64_t localBytes(const CompiledReshard &reshard, bool source, int rank);

/// Bytes of rank `rank`'s scale buffer of kind `kind` (slots, quantizer,
/// holder: f32 amaxes; scales: f32, or e8m0 bytes for mx) of a quantizing
/// reshard: one entry per block its local box touches (0 when the reshard
/// does not quantize or the rank holds no such buffer).
int64_t scaleBufferBytes(const CompiledReshard &reshard, BufferKind kind,
                         int rank);

/// Checks that a caller buffer has the alignment its reshard was compiled
/// for (TransferProgram::bufferAlignment) and its elements'; `which` names
/// it in the message ("source buffer of rank 3").
m2n_status checkAlignment(const CompiledReshard &reshard, bool source,
                          const void *pointer, const std::string &which);

/// The reshards `reshards[0..members)` of `artifact`, or a failure naming a
/// bad index (after `what`, the API's name).
m2n_status groupMembers(const char *what, m2n_artifact artifact, int members,
                        const int *reshards,
                        std::vector<const CompiledReshard *> &group);

/// The program of the group of `members` (reshard indices `key`, more
/// than one): the artifact's compiled group of that member list, or their
/// programs merged (mergePrograms) and kept for the next call.
std::shared_ptr<const TransferProgram>
groupProgram(m2n_artifact artifact, const std::vector<int> &key,
             const std::vector<const CompiledReshard *> &members);

/// A caller buffer of a launch, for checkDisjoint.
struct CallerBuffer {
  const void *pointer;
  size_t bytes;
  bool written; // A destination.
  std::string name; // "@f#0: the destination buffer of rank 3".
};
/// Refuses buffers of one launch of which one is written and shares a byte
/// with another (sources may alias each other: they are only read).
m2n_status checkDisjoint(std::vector<CallerBuffer> buffers);

} // namespace m2n::runtime

#endif // M2N_RUNTIME_INTERNAL_H
