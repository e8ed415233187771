//===- HostExecutor.h - run transfer programs on host memory -----*- C++ -*-===//
//
// Executes the per-rank programs of a lowered schedule the way the GPU does:
// copy-engine copies first (they precede each rank's kernel), each rank's
// kernel items are dealt round-robin to `ctasPerRank` CTAs that
// walk their share in order (items as the kernel has them: a block
// lookup's band of rows is one item, foldsInnermostLevel), network receives run one after the other in
// the order the runtime posts them (networkOrder: as on one GPU), and a movement
// starts only when the counters it waits for have reached their values. A
// CTA's signals and reads-done count when the kernel releases them (held
// over runs of one counter, released when an item signals another counter
// or reads another peer or none, before a wait that may block and at the
// end; a wait on the counter the CTA last waited for, for no more, cannot). A
// state where nothing can start but work remains is reported as a deadlock.
// The semantics of the artifact's programs on the host: the runtime's host
// backend (M2N_BACKEND_HOST) and the compiler's reference runs
// (m2n/Codegen/ProgramExecutor.h) both execute through it.
//
//===----------------------------------------------------------------------===//

#ifndef M2N_ARTIFACT_HOSTEXECUTOR_H
#define M2N_ARTIFACT_HOSTEXECUTOR_H

#include "m2n/Artifact/Program.h"

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>

namespace m2n {

/// The memory of a buffer and its size in bytes, or std::nullopt when the
/// caller has no such buffer.
using BufferResolver =
    std::function<std::optional<std::pair<uint8_t *, int64_t>>(const BufferRef &)>;

/// Runs `program` on the buffers `resolve` returns (scratch buffers
/// included).
std::optional<std::string> executeProgram(const TransferProgram &program,
                                          const BufferResolver &resolve,
                                          int64_t ctasPerRank);

} // namespace m2n

#endif // M2N_ARTIFACT_HOSTEXECUTOR_H
