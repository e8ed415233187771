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
/// The list of a rank's program a move of `mechanism` belongs to (the
/// lowering's and toCompiledReshard's split, in order within each).
::m2n::ProgramIssue::List listOf(::m2n::Mechanism mechanism) {
  switch (mechanism) {
  case ::m2n::Mechanism::Engine:
    return ::m2n::ProgramIssue::List::EngineCopies;
  case ::m2n::Mechanism::Network:
    return ::m2n::ProgramIssue::List::Receives;
  default:
    return ::m2n::ProgramIssue::List::Items;
  }
}

/// Reports `issue` of `program` on the move it lies in, or on the program.
void report(ProgramOp program, const ::m2n::ProgramIssue &issue) {
  if (issue.rank >= 0)
    for (RankOp rank : program.getBody().front().getOps<RankOp>()) {
      if (rank.getRank() != issue.rank)
        continue;
      size_t index = 0;
      for (MoveOp move : rank.getBody().front().getOps<MoveOp>())
        if (listOf(move.getMechanism()) == issue.list &&
            index++ == issue.index) {
          move.emitOpError() << issue.detail;
          return;
        }
    }
  program.emitOpError() << issue.message;
}

struct VerifyProgramPass
    : public mlir::m2n::impl::VerifyProgramBase<VerifyProgramPass> {
  void runOnOperation() override {
    bool failedAny = false;
    getOperation()->walk([&](ProgramOp program) {
      ::m2n::CompiledReshard reshard = toCompiledReshard(program);
      if (std::optional<::m2n::ProgramIssue> issue =
              ::m2n::checkTransferProgram(reshard.program, reshard.src,
                                          reshard.dst, reshard.shape)) {
        report(program, *issue);
        failedAny = true;
      }
    });
    if (failedAny)
      signalPassFailure();
    markAllAnalysesPreserved();
  }
};
} // namespace
