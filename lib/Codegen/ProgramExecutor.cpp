//===- ProgramExecutor.cpp - run transfer programs on host memory -----------===//

#include "m2n/Codegen/ProgramExecutor.h"

#include <cstring>
#include <deque>
#include <map>

namespace m2n {

std::optional<std::string> executeProgram(const TransferProgram &program,
                                          ReshardSimulator &simulator,
                                          int64_t ctasPerRank) {
  simulator.allocateScratch(program.scratches);
  return executeProgram(
      program, [&](const BufferRef &ref) { return simulator.bytesOf(ref); },
      ctasPerRank);
}

SimulationReport simulateQuantizingProgram(const TransferProgram &program,
                                           const Layout &src, const Layout &dst,
                                           const std::vector<int64_t> &shape,
                                           int64_t ctasPerRank, uint64_t seed,
                                           QuantizedBuffers *keep) {
  if (!program.scaling || !program.sourceType) {
    SimulationReport report;
    report.message = "the program does not quantize (it has no scaling and "
                     "source element type)";
    return report;
  }
  return simulateQuantizingBuffers(
      *program.scaling, src, dst, shape, *program.sourceType, program.type,
      program.scratches, seed,
      [&](const QuantizedBufferResolver &resolve) {
        return executeProgram(program, resolve, ctasPerRank);
      },
      keep);
}

} // namespace m2n
