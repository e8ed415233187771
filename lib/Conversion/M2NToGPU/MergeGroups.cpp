//===- MergeGroups.cpp - a group of reshards as one program per rank ------===//
//
// The per-rank layout of a group (m2n::groupLayout: which members each rank
// runs, in the group's order, and where their counters begin) written into
// the m2n.group, where the verifier checks it, the artifact writer records
// the group and the runtime binds it without deciding anything.
//
//===----------------------------------------------------------------------===//

#include "m2n/Artifact/Program.h"
#include "m2n/Conversion/M2NToGPU/M2NToGPU.h"
#include "m2n/Dialect/M2N/IR/M2NOps.h"
#include "mlir/IR/Builders.h"

namespace mlir::m2n {
#define GEN_PASS_DEF_MERGEGROUPS
#include "m2n/Conversion/Passes.h.inc"
} // namespace mlir::m2n

using namespace mlir;
using namespace mlir::m2n;

namespace {
struct MergeGroupsPass
    : public mlir::m2n::impl::MergeGroupsBase<MergeGroupsPass> {
  void runOnOperation() override {
    SymbolTableCollection symbols;
    // Each shared program's counters once, however many members run it.
    llvm::DenseMap<Operation *, ::m2n::RankCounters> countersOf;
    WalkResult walk =
        GroupOp::walkGroups(getOperation(), [&](GroupOp group) {
      std::vector<Operation *> programs;
      for (unsigned index = 0; index < group.getMembers().size(); ++index) {
        ProgramOp program = group.getMemberProgram(index, symbols);
        if (!program) {
          group.emitError() << "m2n-merge-groups: member " << index
                            << " of group \"" << group.getName()
                            << "\" is not lowered to a program: run "
                               "m2n-lower-schedule first";
          return WalkResult::interrupt();
        }
        auto [it, fresh] = countersOf.try_emplace(program);
        if (fresh)
          it->second = program.getRankCounters();
        programs.push_back(program);
      }
      // Pointers once the map no longer grows.
      std::vector<const ::m2n::RankCounters *> memberCounters;
      for (Operation *program : programs)
        memberCounters.push_back(&countersOf.find(program)->second);
      Region &ranks = group.getRanks();
      ranks.getBlocks().clear();
      OpBuilder builder = OpBuilder::atBlockBegin(&ranks.emplaceBlock());
      for (const auto &[rank, layout] : ::m2n::groupLayout(memberCounters)) {
        SmallVector<int64_t> members, bases;
        for (const auto &[member, base] : layout.members) {
          members.push_back(member);
          bases.push_back(base);
        }
        // The launch is m2n-choose-launch's.
        builder.create<GroupRankOp>(group.getLoc(), rank, layout.counters,
                                    members, bases, LaunchAttr());
      }
      return WalkResult::advance();
    });
    if (walk.wasInterrupted())
      signalPassFailure();
  }
};
} // namespace
