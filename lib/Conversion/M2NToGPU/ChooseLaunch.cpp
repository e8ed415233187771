//===- ChooseLaunch.cpp - how every rank's transfer kernel is launched -----===//
//
// The launch is a compile-time decision like any other: the kernel's (CTAs,
// the SM path's block, the compiled stages) as the module attribute
// m2n.kernel_launch, every rank's (threads, walkers, stage bytes) on its
// m2n.rank and m2n.group_rank. The artifact writer stores them and the
// runtime launches them as written; the verifiers check them with the rule
// the loader uses (m2n::checkLaunch).
//
//===----------------------------------------------------------------------===//

#include "m2n/Artifact/Artifact.h"
#include "m2n/Conversion/M2NToGPU/M2NToGPU.h"
#include "m2n/Dialect/M2N/IR/M2NOps.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/Threading.h"

namespace mlir::m2n {
#define GEN_PASS_DEF_CHOOSELAUNCH
#include "m2n/Conversion/Passes.h.inc"
} // namespace mlir::m2n

using namespace mlir;
using namespace mlir::m2n;

namespace {
/// Gives every rank of `program` chooseLaunch's launch; fails, on the move,
/// where a move does not fit through one of the kernel's stages.
LogicalResult chooseRankLaunches(ProgramOp program,
                                 const ::m2n::KernelLaunch &kernel) {
  const uint64_t compiledStage = (kernel.stageBytes + 127) / 128 * 128;
  MLIRContext *context = program.getContext();
  for (RankOp rank : program.getBody().front().getOps<RankOp>()) {
    for (MoveOp move : rank.getBody().front().getOps<MoveOp>())
      if (::m2n::isKernelMechanism(move.getMechanism()) &&
          static_cast<uint64_t>(move.getBytes()) > compiledStage)
        return move.emitOpError()
               << "moves " << move.getBytes()
               << " bytes in one item, more than a stage of "
               << kernel.stageBytes
               << ": lower with m2n-lower-schedule{stage-bytes="
               << kernel.stageBytes << "}";
    rank.setLaunchAttr(LaunchAttr::get(
        context, ::m2n::chooseLaunch(kernel, rank.getLaunchDemand())));
  }
  return success();
}

struct ChooseLaunchPass
    : public mlir::m2n::impl::ChooseLaunchBase<ChooseLaunchPass> {
  using ChooseLaunchBase::ChooseLaunchBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    std::optional<::m2n::KernelOps> ops = parseKernelOpsAttr(
        module->getAttrOfType<DictionaryAttr>(kKernelOpsAttrName));
    if (!ops) {
      module.emitError("m2n-choose-launch: no valid ")
          << kKernelOpsAttrName
          << " attribute: run m2n-convert-to-gpu first (the SM path's block "
             "depends on the kernel's ops)";
      return signalPassFailure();
    }
    ::m2n::KernelLaunch kernel;
    kernel.ctas = maxCtas;
    kernel.stages = stages;
    kernel.stageBytes = stageBytes < 0 ? 0 : static_cast<uint64_t>(stageBytes);
    kernel.walkers = walkers;
    kernel.threads = ::m2n::smPathThreads(
        !ops->vector.empty(),
        llvm::any_of(ops->vector, ::m2n::isElementWiseOp));
    if (std::optional<std::string> wrong = ::m2n::checkKernelLaunch(kernel)) {
      module.emitError("m2n-choose-launch: ") << *wrong;
      return signalPassFailure();
    }

    SmallVector<ProgramOp> programs;
    SmallVector<GroupOp> groups;
    module.walk<WalkOrder::PreOrder>([&](Operation *op) {
      if (auto program = dyn_cast<ProgramOp>(op)) {
        programs.push_back(program);
        return WalkResult::skip();
      }
      if (auto group = dyn_cast<GroupOp>(op)) {
        groups.push_back(group);
        return WalkResult::skip();
      }
      if (isa<gpu::GPUModuleOp, gpu::BinaryOp>(op))
        return WalkResult::skip();
      return WalkResult::advance();
    });
    if (failed(failableParallelForEach(
            &getContext(), programs, [&](ProgramOp program) {
              return chooseRankLaunches(program, kernel);
            })))
      return signalPassFailure();

    // A group rank runs its members one after the other: their launches of
    // the rank combined (what chooseLaunch gives the merged items).
    SymbolTableCollection symbols;
    llvm::DenseMap<Operation *, llvm::DenseMap<int64_t, LaunchAttr>> launchesOf;
    for (GroupOp group : groups) {
      if (!group.isMerged())
        continue; // m2n-write-artifact says so.
      SmallVector<ProgramOp, 4> memberPrograms =
          group.getMemberPrograms(symbols);
      for (auto rank : group.getRanks().front().getOps<GroupRankOp>()) {
        std::optional<::m2n::RankLaunch> combined;
        for (int64_t member : rank.getMembers()) {
          ProgramOp program =
              member >= 0 && static_cast<size_t>(member) < memberPrograms.size()
                  ? memberPrograms[member]
                  : ProgramOp();
          if (!program)
            continue; // The group's verifier names it.
          auto [launches, fresh] = launchesOf.try_emplace(program);
          if (fresh)
            for (RankOp memberRank :
                 program.getBody().front().getOps<RankOp>())
              launches->second[memberRank.getRank()] =
                  memberRank.getLaunchAttr();
          if (LaunchAttr own = launches->second.lookup(rank.getRank()))
            combined = combined ? ::m2n::combineLaunches(*combined,
                                                         own.getRankLaunch())
                                : own.getRankLaunch();
        }
        if (combined)
          rank.setLaunchAttr(LaunchAttr::get(&getContext(), *combined));
      }
    }
    module->setAttr(M2NDialect::getKernelLaunchAttrName(),
                    KernelLaunchAttr::get(&getContext(), kernel));
  }
};
} // namespace
