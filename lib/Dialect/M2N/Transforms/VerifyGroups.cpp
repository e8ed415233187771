//===- VerifyGroups.cpp - a merged m2n.group is its members' merge --------===//

#include "m2n/Dialect/M2N/IR/M2NOps.h"
#include "m2n/Dialect/M2N/Transforms/Passes.h"

namespace mlir::m2n {
#define GEN_PASS_DEF_VERIFYGROUPS
#include "m2n/Dialect/M2N/Transforms/Passes.h.inc"
} // namespace mlir::m2n

using namespace mlir;
using namespace mlir::m2n;

namespace {
struct VerifyGroupsPass
    : public mlir::m2n::impl::VerifyGroupsBase<VerifyGroupsPass> {
  void runOnOperation() override {
    SymbolTableCollection symbols;
    bool failedAny = false;
    GroupOp::walkGroups(getOperation(), [&](GroupOp group) {
      failedAny |= failed(group.verifyMerge(symbols));
      return WalkResult::advance();
    });
    if (failedAny)
      signalPassFailure();
    markAllAnalysesPreserved();
  }
};
} // namespace
