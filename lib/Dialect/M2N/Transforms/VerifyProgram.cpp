//===- VerifyProgram.cpp - what the runtime trusts about m2n.program -------===//

#include "m2n/Dialect/M2N/IR/LayoutInterop.h"
#include "m2n/Dialect/M2N/IR/M2NOps.h"
#include "m2n/Dialect/M2N/Transforms/Passes.h"

namespace mlir::m2n {
#define GEN_PASS_DEF_VERIFYPROGRAM
#include "m2n/Dialect/M2N/Transforms/Passes.h.inc"
} // namespace mlir::m2n

using namespace mlir;
using namespace mlir::m2n;

namespace {
/// Reports `problem` of `program` on the move it names ("rank R: <move>
/// ..."), or on the program.
void report(ProgramOp program, const ::m2n::CompiledReshard &reshard,
            StringRef problem) {
  for (RankOp rank : program.getBody().front().getOps<RankOp>()) {
    std::string rankPrefix = "rank " + std::to_string(rank.getRank()) + ": ";
    if (!problem.starts_with(rankPrefix))
      continue;
    for (MoveOp move : rank.getBody().front().getOps<MoveOp>()) {
      std::string prefix = rankPrefix + toMovement(move).str(reshard.type);
      if (problem.starts_with(prefix)) {
        move.emitOpError() << problem.drop_front(prefix.size()).ltrim(": ");
        return;
      }
    }
  }
  program.emitOpError() << problem;
}

struct VerifyProgramPass
    : public mlir::m2n::impl::VerifyProgramBase<VerifyProgramPass> {
  void runOnOperation() override {
    bool failedAny = false;
    getOperation()->walk([&](ProgramOp program) {
      ::m2n::CompiledReshard reshard = toCompiledReshard(program);
      if (std::optional<std::string> problem = ::m2n::verifyTransferProgram(
              reshard.program, reshard.src, reshard.dst, reshard.shape)) {
        report(program, reshard, *problem);
        failedAny = true;
      }
    });
    if (failedAny)
      signalPassFailure();
    markAllAnalysesPreserved();
  }
};
} // namespace
