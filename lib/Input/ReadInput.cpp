//===- ReadInput.cpp - parse and verify the IR users give m2n -------------===//

#include "m2n/Input/ReadInput.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/DenseMap.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassRegistry.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/MathExtras.h"
#include "llvm/Support/SourceMgr.h"

using namespace mlir;

namespace {

/// The attributes naming a dimension of the operand that a shard collective's
/// verifier indexes the operand's shape with unchecked.
SmallVector<StringRef, 2> tensorAxisAttributes(StringRef opName) {
  return llvm::StringSwitch<SmallVector<StringRef, 2>>(opName)
      .Cases("shard.all_gather", "shard.gather", {"gather_axis"})
      .Case("shard.all_slice", {"slice_axis"})
      .Case("shard.all_to_all", {"split_axis", "concat_axis"})
      .Cases("shard.reduce_scatter", "shard.scatter", {"scatter_axis"})
      .Default({});
}

LogicalResult checkTensorAxes(Operation *op) {
  SmallVector<StringRef, 2> names = tensorAxisAttributes(op->getName().getStringRef());
  if (names.empty() || op->getNumOperands() == 0)
    return success();
  // Ranks that differ are the op verifier's diagnostic (it runs first).
  auto operandType = dyn_cast<RankedTensorType>(op->getOperand(0).getType());
  auto resultType = op->getNumResults() == 1
                        ? dyn_cast<RankedTensorType>(op->getResult(0).getType())
                        : RankedTensorType();
  if (!operandType || !resultType ||
      operandType.getRank() != resultType.getRank())
    return success();
  for (StringRef name : names) {
    auto axis = op->getAttrOfType<IntegerAttr>(name);
    if (!axis)
      continue; // A missing attribute is the op verifier's diagnostic.
    const APInt &value = axis.getValue();
    if (value.getSignificantBits() > 64 || value.isNegative() ||
        value.getSExtValue() >= operandType.getRank())
    {
      SmallString<24> text;
      value.toStringSigned(text);
      return op->emitOpError()
             << name << " " << text << " is not a dimension of the operand ("
             << "rank " << operandType.getRank() << ")";
    }
  }
  return success();
}

/// The module's grids by name, the first of each name (a duplicate is the
/// verifier's diagnostic): collected by a walk, as a SymbolTable would
/// assert on the unverified IR's duplicates.
using Grids = llvm::DenseMap<StringAttr, Operation *>;

/// A collective's device group: the grid axes it names must have devices
/// (the verifiers divide by the group's size) and their product must be a
/// number (they multiply the sizes unchecked). A dynamic axis makes the
/// size dynamic: upstream divides by nothing then.
LogicalResult checkDeviceGroup(Operation *op, const Grids &grids) {
  auto gridName = op->getAttrOfType<FlatSymbolRefAttr>("grid");
  auto axes = op->getAttrOfType<DenseI16ArrayAttr>("grid_axes");
  if (!gridName || !axes)
    return success();
  Operation *grid = grids.lookup(gridName.getAttr());
  auto shape = grid ? grid->getAttrOfType<DenseI64ArrayAttr>("shape")
                    : DenseI64ArrayAttr();
  if (!shape)
    return success(); // An unknown grid is the verifier's diagnostic.
  SmallVector<std::pair<int16_t, int64_t>> sizes; // Axis, size.
  for (int16_t axis : axes.asArrayRef()) {
    if (axis < 0 || axis >= static_cast<int64_t>(shape.size()))
      continue; // Axes out of range are the verifier's diagnostic.
    if (shape[axis] < 0)
      return success(); // Dynamic.
    sizes.push_back({axis, shape[axis]});
  }
  int64_t devices = 1;
  for (auto [axis, size] : sizes) {
    if (size == 0)
      return op->emitOpError()
             << "groups devices along axis " << axis << " of grid "
             << gridName << ", which has size 0: a collective needs devices";
    if (llvm::MulOverflow(devices, size, devices))
      return op->emitOpError()
             << "groups more than 2^63 devices (grid axes ["
             << axes.asArrayRef() << "]"
             << " of grid " << gridName << ")";
  }
  return success();
}

} // namespace

LogicalResult mlir::m2n::checkUpstreamVerifierPreconditions(Operation *root) {
  // Only the shard dialect's verifiers need the guard: nothing to walk
  // when no input used it.
  if (!root->getContext()->getLoadedDialect("shard"))
    return success();
  Grids grids;
  root->walk([&](Operation *op) {
    if (op->getName().getStringRef() == "shard.grid")
      if (auto name = op->getAttrOfType<StringAttr>("sym_name"))
        grids.try_emplace(name, op);
  });
  WalkResult walk = root->walk([&](Operation *op) {
    if (op->getName().getDialectNamespace() != "shard")
      return WalkResult::advance();
    if (failed(checkTensorAxes(op)) || failed(checkDeviceGroup(op, grids)))
      return WalkResult::interrupt();
    return WalkResult::advance();
  });
  return failure(walk.wasInterrupted());
}

LogicalResult mlir::m2n::verifyInput(Operation *root) {
  if (failed(checkUpstreamVerifierPreconditions(root)))
    return failure();
  return verify(root);
}

OwningOpRef<ModuleOp> mlir::m2n::parseInput(llvm::StringRef text,
                                            MLIRContext *context,
                                            llvm::StringRef sourceName) {
  ParserConfig config(context, /*verifyAfterParse=*/false);
  OwningOpRef<ModuleOp> module =
      parseSourceString<ModuleOp>(text, config, sourceName);
  if (!module || failed(verifyInput(*module)))
    return {};
  return module;
}

OwningOpRef<ModuleOp> mlir::m2n::parseInput(llvm::SourceMgr &sourceMgr,
                                            MLIRContext *context) {
  ParserConfig config(context, /*verifyAfterParse=*/false);
  OwningOpRef<ModuleOp> module = parseSourceFile<ModuleOp>(sourceMgr, config);
  if (!module || failed(verifyInput(*module)))
    return {};
  return module;
}

namespace {

struct VerifyInputPass
    : PassWrapper<VerifyInputPass, OperationPass<>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(VerifyInputPass)

  StringRef getArgument() const final { return "m2n-verify-input"; }
  StringRef getDescription() const final {
    return "Verifies the parsed input, refusing first what upstream "
           "verifiers would crash on";
  }
  void runOnOperation() final {
    if (failed(mlir::m2n::verifyInput(getOperation())))
      return signalPassFailure();
    markAllAnalysesPreserved();
  }
};

} // namespace

std::unique_ptr<Pass> mlir::m2n::createVerifyInputPass() {
  return std::make_unique<VerifyInputPass>();
}

void mlir::m2n::registerVerifyInputPass() {
  PassRegistration<VerifyInputPass>();
}
