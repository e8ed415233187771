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

} // namespace m2n
