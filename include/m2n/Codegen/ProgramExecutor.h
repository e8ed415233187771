//===- ProgramExecutor.h - run transfer programs on host memory --*- C++ -*-===//
//
// Runs the per-rank programs of a lowered schedule on the reference
// executor's buffers, through the artifact's host executor
// (m2n/Artifact/HostExecutor.h, the runtime's host backend), which executes
// them the way the GPU does:
// copy-engine copies first (they precede each rank's kernel), each rank's
// kernel items are dealt round-robin to `ctasPerRank` CTAs that
// walk their share in order, network receives run one after the other in
// the order the runtime posts them (networkOrder: as on one GPU), and a movement
// starts only when the counters it waits for have reached their values. A
// state where nothing can start but work remains is reported as a deadlock.
//
//===----------------------------------------------------------------------===//

#ifndef M2N_CODEGEN_PROGRAMEXECUTOR_H
#define M2N_CODEGEN_PROGRAMEXECUTOR_H

#include "m2n/Artifact/HostExecutor.h"
#include "m2n/Sim/HostSimulator.h"
#include "m2n/Sim/QuantizingSimulator.h"

namespace m2n {

/// Runs `program` on the simulator's buffers (allocating its scratch).
std::optional<std::string> executeProgram(const TransferProgram &program,
                                          ReshardSimulator &simulator,
                                          int64_t ctasPerRank);

/// Runs the program of a quantizing reshard (`program.scaling`) from `src`
/// to `dst` of `shape` on fresh buffers (simulateQuantizingBuffers: varied
/// values, poisoned tables, scales and destinations) and compares every
/// destination element and scale with quantizeTensor, bit for bit.
SimulationReport simulateQuantizingProgram(const TransferProgram &program,
                                           const Layout &src, const Layout &dst,
                                           const std::vector<int64_t> &shape,
                                           int64_t ctasPerRank,
                                           uint64_t seed = 1,
                                           QuantizedBuffers *keep = nullptr);

} // namespace m2n

#endif // M2N_CODEGEN_PROGRAMEXECUTOR_H
