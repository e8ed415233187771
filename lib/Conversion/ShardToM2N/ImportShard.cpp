//===- ImportShard.cpp - --m2n-import-shard: upstream shard -> m2n -===//
//
// A resharding point of MLIR's `shard` dialect is a pair of annotations:
//   %a = shard.shard %x to %s0 : tensor<...>                   (how %x lies)
//   %b = shard.shard %a to %s1 annotate_for_users : tensor<...> (how users
//                                                                want it)
// with %s0 != %s1, or any other shard.shard of a shard.shard's result with
// another sharding (upstream's shard-partition reshards every chained pair,
// whatever their annotate_for_users flags). Upstream lowers only a few
// such pairs; here each becomes one m2n.reshard between the layouts of the two
// shardings, between casts that keep the rest of the function on tensors:
//   %d = unrealized_conversion_cast %x : tensor -> !m2n.dist<..., s0>
//   %r = m2n.reshard %d on %comm : ... -> !m2n.dist<..., s1>
//   %t = unrealized_conversion_cast %r : !m2n.dist -> tensor   (uses of %b)
// The communicator is the grid's devices, numbered as upstream numbers them
// (row-major over the grid shape); a value of !m2n.comm<N> comes from a
// cast of nothing (a runtime binds the real one).
//
// Layouts: grid axes that split tensor dim d, in their listed order (the
// first is the outermost, as upstream linearizes an in-group index), become
// shard<d> placements; m2n applies mesh axes in increasing order, so the m2n
// mesh lists the grid axes in split order (an explicit rank list keeps each
// device's number) and the unused axes, replicated, after them. Upstream
// splits evenly (it requires divisibility); uneven splits need
// sharded_dims_offsets, which become the dimension's explicit boundaries
// (shard<d, [...]>, written shard<d> where they are torch.chunk's). Halos,
// dynamic sizes and dynamic offsets are refused.
//
//===----------------------------------------------------------------------===//

#include "ImportCommon.h"

#include "m2n/Conversion/M2NToGPU/M2NToGPU.h"
#include "m2n/Dialect/M2N/IR/LayoutInterop.h"
#include "m2n/Dialect/M2N/IR/M2NOps.h"
#include "m2n/Base/Layout.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Shard/IR/ShardDialect.h"
#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/InterleavedRange.h"

#include <functional>

namespace mlir::m2n {
#define GEN_PASS_DEF_IMPORTSHARD
#include "m2n/Conversion/Passes.h.inc"
} // namespace mlir::m2n

using namespace mlir;
using namespace mlir::m2n;

namespace {

/// The static shape of a grid, or a diagnostic naming its dynamic axis.
FailureOr<ArrayRef<int64_t>> staticGridShape(shard::GridOp grid) {
  for (auto [axis, size] : llvm::enumerate(grid.getShape()))
    if (ShapedType::isDynamic(size))
      return grid.emitError("grid axis ")
             << axis << " is dynamic; m2n needs static grid shapes";
  // Upstream's verifier lets an axis of 0 devices and any product through;
  // an m2n mesh has at least one device an axis, and its devices are ranks
  // of one communicator.
  int64_t devices = 1;
  for (auto [axis, size] : llvm::enumerate(grid.getShape())) {
    if (size < 1)
      return grid.emitError("grid axis ")
             << axis << " has " << size
             << " devices; an m2n mesh axis has at least one";
    if (devices > ::m2n::kMaxCommunicatorRanks / size)
      return grid.emitError("grid @")
             << grid.getSymName() << " has more than "
             << ::m2n::kMaxCommunicatorRanks
             << " devices, the most one communicator holds";
    devices *= size;
  }
  return grid.getShape();
}

/// The m2n layout of `sharding` for a tensor of `shape`, or a diagnostic on
/// `op` naming what does not map.
FailureOr<LayoutAttr> layoutOf(Operation *op, Value shardingValue,
                               ArrayRef<int64_t> shape,
                               SymbolTableCollection &symbols) {
  auto sharding = shardingValue.getDefiningOp<shard::ShardingOp>();
  if (!sharding)
    return op->emitError("the sharding must come from a shard.sharding op "
                         "to be imported");
  auto grid = symbols.lookupNearestSymbolFrom<shard::GridOp>(
      sharding, sharding.getGridAttr());
  if (!grid)
    return sharding.emitError("names grid @")
           << sharding.getGrid() << ", which is not a shard.grid";
  FailureOr<ArrayRef<int64_t>> staticShape = staticGridShape(grid);
  if (failed(staticShape))
    return failure();
  ArrayRef<int64_t> gridShape = *staticShape;
  if (!sharding.getDynamicHaloSizes().empty() ||
      !sharding.getStaticHaloSizes().empty())
    return sharding.emitError("halo sizes have no m2n layout (a reshard "
                              "moves owned elements only)");
  if (!sharding.getDynamicShardedDimsOffsets().empty())
    return sharding.emitError("dynamic sharded_dims_offsets have no m2n "
                              "layout; give static offsets");
  ArrayRef<shard::GridAxesAttr> splitAxes = sharding.getSplitAxes().getAxes();
  if (splitAxes.size() > shape.size())
    return sharding.emitError("splits ")
           << splitAxes.size() << " dimensions of a rank-" << shape.size()
           << " tensor";

  // The m2n mesh axes: the split axes in split order, then the others.
  SmallVector<int64_t> order;
  SmallVector<::m2n::Placement> placements;
  llvm::SmallDenseSet<int64_t> used;
  for (auto [dim, axes] : llvm::enumerate(splitAxes))
    for (int16_t axis : axes.asArrayRef()) {
      if (axis < 0 || axis >= static_cast<int64_t>(gridShape.size()) ||
          !used.insert(axis).second)
        return sharding.emitError("grid axis ")
               << axis << " is out of range or splits twice";
      order.push_back(axis);
      placements.push_back(::m2n::Placement::shard(dim));
    }
  for (int64_t axis = 0; axis < static_cast<int64_t>(gridShape.size()); ++axis)
    if (!used.count(axis)) {
      order.push_back(axis);
      placements.push_back(::m2n::Placement::replicate());
    }

  // Explicit offsets: each split dimension's boundaries, its parts numbered
  // row-major over its split axes as m2n numbers them (the first axis
  // sharding it carries them).
  ArrayRef<int64_t> offsets = sharding.getStaticShardedDimsOffsets();
  size_t at = 0;
  for (auto [dim, axes] : llvm::enumerate(splitAxes)) {
    if (axes.empty())
      continue;
    int64_t parts = 1;
    for (int16_t axis : axes.asArrayRef())
      parts *= gridShape[axis];
    if (offsets.empty()) {
      if (shape[dim] % parts)
        return sharding.emitError("splits dimension ")
               << dim << " of extent " << shape[dim] << " into " << parts
               << " uneven parts without sharded_dims_offsets (upstream "
                  "requires an even split)";
      continue;
    }
    // One offset per shard of the grid axes splitting the dimension (the
    // product of their sizes; upstream's verifier counts their sum) and
    // its end.
    if (at + parts + 1 > offsets.size())
      return sharding.emitError("sharded_dims_offsets has too few entries: "
                                "dimension ")
             << dim << " needs " << parts + 1
             << " (one per shard of the grid axes splitting it, and the end)";
    ArrayRef<int64_t> bounds = offsets.slice(at, parts + 1);
    auto wrong = [&]() {
      return sharding.emitError("sharded_dims_offsets of dimension ")
             << dim << " (" << llvm::interleaved(bounds, ", ") << ") ";
    };
    if (bounds.front() != 0)
      return wrong() << "do not start at 0";
    for (int64_t p = 1; p <= parts; ++p)
      if (bounds[p] < bounds[p - 1])
        return wrong() << "decrease at shard " << p - 1;
    if (bounds.back() != shape[dim])
      return wrong() << "do not end at its extent " << shape[dim];
    for (::m2n::Placement &placement : placements)
      if (placement.isShard() && placement.dim == static_cast<int64_t>(dim)) {
        placement.boundaries.assign(bounds.begin(), bounds.end());
        break;
      }
    at += parts + 1;
  }
  if (!offsets.empty() && at != offsets.size())
    return sharding.emitError("sharded_dims_offsets has too many entries: ")
           << at << " (one per shard of each split dimension, and its end), "
           << offsets.size() << " given";

  MLIRContext *ctx = op->getContext();
  MeshAttr mesh = meshInOrder(ctx, gridShape, order);
  SmallVector<PlacementAttrInterface> attrs;
  for (const ::m2n::Placement &placement : placements)
    attrs.push_back(
        placement.isShard()
            ? PlacementAttrInterface(
                  ShardAttr::get(ctx, placement.dim, placement.boundaries))
            : PlacementAttrInterface(ReplicateAttr::get(ctx)));
  return canonicalLayout(LayoutAttr::get(ctx, mesh, attrs), shape);
}

/// A collective of partitioned code works on each device's local tensor and
/// groups the devices along `grid_axes`; the devices along the other grid
/// axes form independent groups. As one m2n collective: a distributed tensor
/// with one leading dimension per other grid axis, sharded by it (so every
/// group holds its own slice), then the local tensor's dimensions. A
/// device's local part of it has the local tensor's bytes (leading 1s).
struct CollectiveImport {
  MeshAttr mesh;
  SmallVector<PlacementAttrInterface> batchPlacements; // Other grid axes.
  SmallVector<int64_t> batchDims;                      // Their extents.
  SmallVector<int64_t> groupAxes; // m2n mesh axes of `grid_axes`, in order.
  int64_t groupSize = 1;
  int64_t commSize = 1;
};

FailureOr<CollectiveImport> importGroups(Operation *op, StringRef gridName,
                                         ArrayRef<int16_t> gridAxes,
                                         SymbolTableCollection &symbols) {
  auto grid = symbols.lookupNearestSymbolFrom<shard::GridOp>(
      op, FlatSymbolRefAttr::get(op->getContext(), gridName));
  if (!grid)
    return op->emitError("names grid @") << gridName
                                         << ", which is not a "
                                            "shard.grid";
  FailureOr<ArrayRef<int64_t>> gridShape = staticGridShape(grid);
  if (failed(gridShape))
    return failure();
  CollectiveImport result;
  llvm::SmallDenseSet<int64_t> inGroup;
  for (int16_t axis : gridAxes)
    if (axis < 0 || axis >= static_cast<int64_t>(gridShape->size()) ||
        !inGroup.insert(axis).second)
      return op->emitError("grid axis ")
             << axis << " is out of range or listed twice";
  SmallVector<int64_t> order;
  MLIRContext *ctx = op->getContext();
  for (int64_t axis = 0; axis < static_cast<int64_t>(gridShape->size()); ++axis)
    if (!inGroup.count(axis)) {
      result.batchPlacements.push_back(
          ShardAttr::get(ctx, static_cast<int64_t>(result.batchDims.size())));
      result.batchDims.push_back((*gridShape)[axis]);
      order.push_back(axis);
    }
  for (int16_t axis : gridAxes) {
    result.groupAxes.push_back(static_cast<int64_t>(order.size()));
    result.groupSize *= (*gridShape)[axis];
    order.push_back(axis);
  }
  result.mesh = meshInOrder(ctx, *gridShape, order);
  for (int64_t size : *gridShape)
    result.commSize *= size;
  return result;
}

/// Upstream lets a collective's result have another element type (its
/// accumulation type); m2n's keep the operand's, so that is a diagnostic,
/// not a cast of the moved values to the result's type.
LogicalResult checkSameElementType(Operation *op, RankedTensorType input,
                                   RankedTensorType output) {
  if (input.getElementType() == output.getElementType())
    return success();
  return op->emitError("converts ")
         << input.getElementType() << " to " << output.getElementType()
         << "; m2n moves and reduces in the tensor's own element type";
}

/// Imports one collective over the group's tensor of `groupShape`: the
/// group axes take `group(batch)` (with `batch` leading dimensions added),
/// `buildOp` creates the m2n op on the distributed input.
template <typename GroupFn, typename BuildFn>
LogicalResult importCollective(Operation *op, Value input, Type resultType,
                               StringRef grid, ArrayRef<int16_t> gridAxes,
                               GroupFn group, ArrayRef<int64_t> groupShape,
                               SymbolTableCollection &symbols,
                               BuildFn buildOp) {
  auto inputType = dyn_cast<RankedTensorType>(input.getType());
  auto outputType = dyn_cast<RankedTensorType>(resultType);
  if (!inputType || !outputType || !inputType.hasStaticShape() ||
      !outputType.hasStaticShape())
    return op->emitError("collectives on memrefs or on tensors with dynamic "
                         "shapes cannot be imported");
  if (failed(checkSameElementType(op, inputType, outputType)))
    return failure();
  if (gridAxes.empty()) { // A group of one device: nothing moves.
    if (inputType != outputType)
      return op->emitError("a collective over no grid axes must keep its type");
    op->getResult(0).replaceAllUsesWith(input);
    op->erase();
    return success();
  }
  FailureOr<CollectiveImport> groups =
      importGroups(op, grid, gridAxes, symbols);
  if (failed(groups))
    return failure();
  MLIRContext *ctx = op->getContext();
  SmallVector<int64_t> shape(groups->batchDims);
  shape.append(groupShape.begin(), groupShape.end());
  SmallVector<PlacementAttrInterface> placements(groups->batchPlacements);
  placements.append(groups->groupAxes.size(),
                    group(static_cast<int64_t>(groups->batchDims.size())));
  auto layout = LayoutAttr::get(ctx, groups->mesh, placements);
  auto distType = DistType::getChecked([&] { return op->emitError(); }, ctx,
                                       ArrayRef<int64_t>(shape),
                                       inputType.getElementType(), layout);
  if (!distType)
    return failure();
  OpBuilder builder(op);
  Location loc = op->getLoc();
  Value comm =
      UnrealizedConversionCastOp::create(
          builder, loc, CommType::get(ctx, groups->commSize), ValueRange{})
          .getResult(0);
  Value dist = UnrealizedConversionCastOp::create(builder, loc, distType,
                                                  ValueRange{input})
                   .getResult(0);
  FailureOr<Value> moved =
      buildOp(builder, loc, dist, comm, groups->groupAxes,
              static_cast<int64_t>(groups->batchDims.size()));
  if (failed(moved))
    return failure();
  Value back = UnrealizedConversionCastOp::create(builder, loc, outputType,
                                                  ValueRange{*moved})
                   .getResult(0);
  op->getResult(0).replaceAllUsesWith(back);
  op->erase();
  return success();
}

/// The m2n reduction of an upstream one, or a diagnostic.
FailureOr<ReductionKind> toM2NReduction(Operation *op,
                                        shard::ReductionKind kind) {
  switch (kind) {
  case shard::ReductionKind::Sum:
    return ReductionKind::Sum;
  case shard::ReductionKind::Max:
    return ReductionKind::Max;
  case shard::ReductionKind::Min:
    return ReductionKind::Min;
  default:
    return op->emitError("reduction '")
           << shard::stringifyReductionKind(kind)
           << "' has no m2n form (sum, max and min do)";
  }
}

/// The static shape of `type`, or empty when it has none.
SmallVector<int64_t> staticShapeOf(Type type) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  if (!tensor || !tensor.hasStaticShape())
    return {};
  return SmallVector<int64_t>(tensor.getShape());
}

/// The m2n collective `OpTy` over `meshAxes` of `dist` (its result type
/// inferred by the op's own rule), or the rule's diagnostic on `op`.
template <typename OpTy, typename... Extra>
FailureOr<Value> createCollective(Operation *op, OpBuilder &b, Location loc,
                                  Value dist, Value comm,
                                  ArrayRef<int64_t> meshAxes, Extra... extra) {
  FailureOr<DistType> type =
      OpTy::inferResultType(cast<DistType>(dist.getType()), meshAxes, extra...,
                            [&] { return op->emitError(); });
  if (failed(type))
    return failure();
  return OpTy::create(b, loc, *type, dist, comm, meshAxes, extra...)
      .getResult();
}

LogicalResult importAllGather(shard::AllGatherOp op,
                              SymbolTableCollection &symbols) {
  int64_t axis = op.getGatherAxis().getSExtValue();
  // The group's tensor is the gathered one: the result's shape.
  SmallVector<int64_t> shape = staticShapeOf(op.getResult().getType());
  MLIRContext *ctx = op.getContext();
  return importCollective(
      op, op.getInput(), op.getResult().getType(), op.getGrid(),
      op.getGridAxes(),
      [&](int64_t batch) { return ShardAttr::get(ctx, batch + axis); }, shape,
      symbols,
      [&](OpBuilder &b, Location loc, Value dist, Value comm,
          ArrayRef<int64_t> meshAxes, int64_t) {
        return createCollective<AllGatherOp>(op, b, loc, dist, comm, meshAxes);
      });
}

LogicalResult importReduceScatter(shard::ReduceScatterOp op,
                                  SymbolTableCollection &symbols) {
  FailureOr<ReductionKind> reduction = toM2NReduction(op, op.getReduction());
  if (failed(reduction))
    return failure();
  int64_t axis = op.getScatterAxis().getSExtValue();
  MLIRContext *ctx = op.getContext();
  return importCollective(
      op, op.getInput(), op.getResult().getType(), op.getGrid(),
      op.getGridAxes(),
      [&](int64_t) { return PartialAttr::get(ctx, *reduction); },
      staticShapeOf(op.getInput().getType()), symbols,
      [&](OpBuilder &b, Location loc, Value dist, Value comm,
          ArrayRef<int64_t> meshAxes, int64_t batch) {
        return createCollective<ReduceScatterOp>(op, b, loc, dist, comm,
                                                 meshAxes, batch + axis);
      });
}

LogicalResult importAllToAll(shard::AllToAllOp op,
                             SymbolTableCollection &symbols) {
  int64_t split = op.getSplitAxis().getSExtValue();
  int64_t concat = op.getConcatAxis().getSExtValue();
  // With split == concat the pieces are permuted inside one dimension: no
  // layout of one tensor describes both sides.
  if (split == concat)
    return op.emitError("an all_to_all that splits and concatenates the same "
                        "axis permutes pieces of one dimension; it has no m2n "
                        "layout");
  // The group's tensor: the split axis as the input has it, the concat axis
  // as the result has it.
  SmallVector<int64_t> shape = staticShapeOf(op.getInput().getType());
  SmallVector<int64_t> result = staticShapeOf(op.getResult().getType());
  if (!shape.empty() && !result.empty() && concat >= 0 &&
      concat < static_cast<int64_t>(shape.size()))
    shape[concat] = result[concat];
  MLIRContext *ctx = op.getContext();
  return importCollective(
      op, op.getInput(), op.getResult().getType(), op.getGrid(),
      op.getGridAxes(),
      [&](int64_t batch) { return ShardAttr::get(ctx, batch + concat); }, shape,
      symbols,
      [&](OpBuilder &b, Location loc, Value dist, Value comm,
          ArrayRef<int64_t> meshAxes, int64_t batch) {
        return createCollective<AllToAllOp>(op, b, loc, dist, comm, meshAxes,
                                            batch + split);
      });
}

/// all_slice keeps each device's chunk of a group-replicated tensor: a
/// reshard from replicate to shard<slice_axis> over the group axes, which
/// m2n plans as local copies.
LogicalResult importAllSlice(shard::AllSliceOp op,
                             SymbolTableCollection &symbols) {
  int64_t axis = op.getSliceAxis().getSExtValue();
  MLIRContext *ctx = op.getContext();
  return importCollective(
      op, op.getInput(), op.getResult().getType(), op.getGrid(),
      op.getGridAxes(), [&](int64_t) { return ReplicateAttr::get(ctx); },
      staticShapeOf(op.getInput().getType()), symbols,
      [&](OpBuilder &b, Location loc, Value dist, Value comm,
          ArrayRef<int64_t> meshAxes, int64_t batch) -> FailureOr<Value> {
        auto input = cast<DistType>(dist.getType());
        if (axis < 0 || batch + axis >= input.getRank())
          return op.emitError("slice_axis ") << axis << " is out of range";
        SmallVector<PlacementAttrInterface> placements(
            input.getLayout().getPlacements());
        for (int64_t meshAxis : meshAxes)
          placements[meshAxis] = ShardAttr::get(ctx, batch + axis);
        DistType result =
            input.withLayout(input.getLayout().withPlacements(placements));
        return ReshardOp::create(b, loc, result, dist, comm,
                                 /*scale=*/FloatAttr())
            .getResult();
      });
}

LogicalResult importAllReduce(shard::AllReduceOp op,
                              SymbolTableCollection &symbols) {
  FailureOr<ReductionKind> reduction = toM2NReduction(op, op.getReduction());
  if (failed(reduction))
    return failure();
  MLIRContext *ctx = op.getContext();
  return importCollective(
      op, op.getInput(), op.getResult().getType(), op.getGrid(),
      op.getGridAxes(),
      [&](int64_t) { return PartialAttr::get(ctx, *reduction); },
      staticShapeOf(op.getInput().getType()), symbols,
      [&](OpBuilder &b, Location loc, Value dist, Value comm,
          ArrayRef<int64_t> meshAxes, int64_t) {
        return createCollective<AllReduceOp>(op, b, loc, dist, comm, meshAxes);
      });
}

/// One side of a rooted collective (broadcast, gather, reduce, scatter):
/// every device of each group, with `group(batch)` on the group axes, or
/// only each group's root device.
struct RootedSide {
  bool root = false;
  std::function<PlacementAttrInterface(int64_t batch)> group;
  SmallVector<int64_t> groupShape; // The tensor of one group.
};

/// Imports a rooted collective as one m2n.reshard from `from` to `to` over
/// the groups of `gridAxes` (a leading dimension per other grid axis, as
/// importCollective): the root side's mesh has the root device of each
/// group, at in-group index `root` (in `gridAxes` order). What upstream
/// leaves undefined (non-root results) m2n does not write.
LogicalResult importRooted(Operation *op, Value input, Type resultType,
                           StringRef grid, ArrayRef<int16_t> gridAxes,
                           ArrayRef<int64_t> root, ValueRange rootDynamic,
                           const RootedSide &from, const RootedSide &to,
                           SymbolTableCollection &symbols) {
  auto inputType = dyn_cast<RankedTensorType>(input.getType());
  auto outputType = dyn_cast<RankedTensorType>(resultType);
  if (!inputType || !outputType || !inputType.hasStaticShape() ||
      !outputType.hasStaticShape() ||
      from.groupShape.empty() != to.groupShape.empty())
    return op->emitError("collectives on memrefs or on tensors with dynamic "
                         "shapes cannot be imported");
  if (failed(checkSameElementType(op, inputType, outputType)))
    return failure();
  if (!rootDynamic.empty())
    return op->emitError("a dynamic root cannot be imported (plans are "
                         "computed at compile time)");
  FailureOr<CollectiveImport> groups =
      importGroups(op, grid, gridAxes, symbols);
  if (failed(groups))
    return failure();
  MLIRContext *ctx = op->getContext();
  if (root.size() != gridAxes.size())
    return op->emitError("root has ") << root.size() << " coordinates for "
                                      << gridAxes.size() << " grid axes";
  int64_t rootIndex = 0;
  ArrayRef<int64_t> meshShape = groups->mesh.getShape();
  for (auto [i, coordinate] : llvm::enumerate(root)) {
    int64_t extent = meshShape[groups->groupAxes[i]];
    if (coordinate < 0 || coordinate >= extent)
      return op->emitError("root coordinate ")
             << coordinate << " is outside grid axis " << gridAxes[i]
             << " of size " << extent;
    rootIndex = rootIndex * extent + coordinate;
  }
  // The root of batch position b is at groups-mesh position
  // b * groupSize + rootIndex.
  const int64_t batches = groups->mesh.getNumRanks() / groups->groupSize;
  SmallVector<int64_t> rootRanks;
  for (int64_t b = 0; b < batches; ++b)
    rootRanks.push_back(
        groups->mesh.getRank(b * groups->groupSize + rootIndex));
  SmallVector<int64_t> rootShape(groups->batchDims);
  SmallVector<PlacementAttrInterface> rootPlacements(groups->batchPlacements);
  if (rootShape.empty()) {
    rootShape.push_back(1);
    rootPlacements.push_back(ReplicateAttr::get(ctx));
  }
  const int64_t batch = static_cast<int64_t>(groups->batchDims.size());
  auto layoutOf = [&](const RootedSide &side) {
    if (side.root)
      return LayoutAttr::get(ctx, MeshAttr::get(ctx, rootShape, 0, rootRanks),
                             rootPlacements);
    SmallVector<PlacementAttrInterface> placements(groups->batchPlacements);
    placements.append(groups->groupAxes.size(), side.group(batch));
    return LayoutAttr::get(ctx, groups->mesh, placements);
  };
  SmallVector<int64_t> shape(groups->batchDims);
  shape.append(from.groupShape.begin(), from.groupShape.end());
  SmallVector<int64_t> toShape(groups->batchDims);
  toShape.append(to.groupShape.begin(), to.groupShape.end());
  if (shape != toShape)
    return op->emitError("the group's tensor changes shape");
  OpBuilder builder(op);
  Value back =
      importReshard(builder, op->getLoc(), input,
                    RankedTensorType::get(shape, inputType.getElementType()),
                    layoutOf(from), layoutOf(to), outputType);
  op->getResult(0).replaceAllUsesWith(back);
  op->erase();
  return success();
}

/// The root's tensor to every device of its group.
LogicalResult importBroadcast(shard::BroadcastOp op,
                              SymbolTableCollection &symbols) {
  MLIRContext *ctx = op.getContext();
  SmallVector<int64_t> shape = staticShapeOf(op.getInput().getType());
  return importRooted(
      op, op.getInput(), op.getResult().getType(), op.getGrid(),
      op.getGridAxes(), op.getRoot(), op.getRootDynamic(),
      RootedSide{true, {}, shape},
      RootedSide{false, [&](int64_t) { return ReplicateAttr::get(ctx); },
                 shape},
      symbols);
}

/// The group's tensors concatenated along gather_axis, on the root.
LogicalResult importGather(shard::GatherOp op, SymbolTableCollection &symbols) {
  MLIRContext *ctx = op.getContext();
  int64_t axis = op.getGatherAxis().getSExtValue();
  SmallVector<int64_t> shape = staticShapeOf(op.getResult().getType());
  if (axis < 0 || axis >= static_cast<int64_t>(shape.size()))
    return op.emitError("gather_axis ") << axis << " is out of range";
  return importRooted(op, op.getInput(), op.getResult().getType(), op.getGrid(),
                      op.getGridAxes(), op.getRoot(), op.getRootDynamic(),
                      RootedSide{false,
                                 [&](int64_t batch) {
                                   return ShardAttr::get(ctx, batch + axis);
                                 },
                                 shape},
                      RootedSide{true, {}, shape}, symbols);
}

/// The reduction of the group's tensors, on the root.
LogicalResult importReduce(shard::ReduceOp op, SymbolTableCollection &symbols) {
  FailureOr<ReductionKind> reduction = toM2NReduction(op, op.getReduction());
  if (failed(reduction))
    return failure();
  MLIRContext *ctx = op.getContext();
  SmallVector<int64_t> shape = staticShapeOf(op.getInput().getType());
  return importRooted(
      op, op.getInput(), op.getResult().getType(), op.getGrid(),
      op.getGridAxes(), op.getRoot(), op.getRootDynamic(),
      RootedSide{false,
                 [&](int64_t) { return PartialAttr::get(ctx, *reduction); },
                 shape},
      RootedSide{true, {}, shape}, symbols);
}

/// The root's tensor split along scatter_axis over its group.
LogicalResult importScatter(shard::ScatterOp op,
                            SymbolTableCollection &symbols) {
  MLIRContext *ctx = op.getContext();
  int64_t axis = op.getScatterAxis().getSExtValue();
  SmallVector<int64_t> shape = staticShapeOf(op.getInput().getType());
  if (axis < 0 || axis >= static_cast<int64_t>(shape.size()))
    return op.emitError("scatter_axis ") << axis << " is out of range";
  return importRooted(op, op.getInput(), op.getResult().getType(), op.getGrid(),
                      op.getGridAxes(), op.getRoot(), op.getRootDynamic(),
                      RootedSide{true, {}, shape},
                      RootedSide{false,
                                 [&](int64_t batch) {
                                   return ShardAttr::get(ctx, batch + axis);
                                 },
                                 shape},
                      symbols);
}

/// A rotating shift: within each line of devices along shift_axis, device
/// i's tensor goes to device (i + offset) mod n (torch.roll's direction; the
/// other grid axes, in the group or not, are independent lines). As one
/// reshard of the stacked lines, a tensor [other axes..., n, local...]
/// sharded by every grid axis, from the grid's own order to one whose
/// shift-axis ranks are rotated.
LogicalResult importShift(shard::ShiftOp op, SymbolTableCollection &symbols) {
  if (!op.getRotate())
    return op.emitError("a shift without rotate leaves devices without a "
                        "source undefined; only rotating shifts are imported");
  int64_t shiftAxis = op.getShiftAxis().getSExtValue();
  if (!llvm::is_contained(op.getGridAxes(), shiftAxis))
    return op.emitError("shift_axis ") << shiftAxis << " is not a grid axis";
  auto tensor = dyn_cast<RankedTensorType>(op.getInput().getType());
  if (!tensor || !tensor.hasStaticShape() || tensor != op.getResult().getType())
    return op.emitError("shifts of tensors with dynamic shapes cannot be "
                        "imported");
  // Every grid axis but the shift axis is a batch axis here.
  const int16_t axis16 = static_cast<int16_t>(shiftAxis);
  FailureOr<CollectiveImport> lines =
      importGroups(op, op.getGrid(), ArrayRef<int16_t>(axis16), symbols);
  if (failed(lines))
    return failure();
  MLIRContext *ctx = op.getContext();
  const int64_t n = lines->groupSize;
  const int64_t offset = ((op.getOffset() % n) + n) % n;
  const int64_t batch = static_cast<int64_t>(lines->batchDims.size());
  SmallVector<int64_t> shape(lines->batchDims);
  shape.push_back(n);
  llvm::append_range(shape, tensor.getShape());
  SmallVector<PlacementAttrInterface> placements(lines->batchPlacements);
  placements.push_back(ShardAttr::get(ctx, batch));
  // Row k of each line lives on the line's device k, then on device k+offset.
  SmallVector<int64_t> rotated;
  const int64_t devices = lines->mesh.getNumRanks();
  for (int64_t position = 0; position < devices; ++position) {
    const int64_t line = position / n, k = position % n;
    rotated.push_back(lines->mesh.getRank(line * n + (k + offset) % n));
  }
  MeshAttr to = MeshAttr::get(ctx, lines->mesh.getShape(), 0, rotated);
  OpBuilder builder(op);
  Value back =
      importReshard(builder, op.getLoc(), op.getInput(),
                    RankedTensorType::get(shape, tensor.getElementType()),
                    LayoutAttr::get(ctx, lines->mesh, placements),
                    LayoutAttr::get(ctx, to, placements), tensor);
  op.getResult().replaceAllUsesWith(back);
  op.erase();
  return success();
}

struct ImportShardPass
    : public mlir::m2n::impl::ImportShardBase<ImportShardPass> {
  void runOnOperation() override {
    SymbolTableCollection symbols;
    // A resharding point is every shard.shard whose operand another
    // shard.shard annotates with a different sharding, whatever their
    // annotate_for_users flags (upstream's shard-partition reshards every
    // such chained pair: `@sharding_triplet` gathers at its third
    // annotation). In program order, each with the sharding it comes from:
    // a chain of points reshards step by step, each from the last one's
    // result.
    SmallVector<std::pair<shard::ShardOp, Value>> points;
    getOperation().walk([&](shard::ShardOp use) {
      auto producer = use.getSrc().getDefiningOp<shard::ShardOp>();
      if (producer && shard::Sharding(producer.getSharding()) !=
                          shard::Sharding(use.getSharding()))
        points.push_back({use, producer.getSharding()});
    });
    for (auto [use, fromSharding] : points) {
      // The tensor the annotations stand for: past the annotations that
      // remain in front of it (an earlier point's result is a tensor too).
      Value input = use.getSrc();
      while (auto annotation = input.getDefiningOp<shard::ShardOp>())
        input = annotation.getSrc();
      auto tensor = dyn_cast<RankedTensorType>(input.getType());
      if (!tensor || !tensor.hasStaticShape()) {
        use.emitError("reshards of tensors with dynamic shapes cannot be "
                      "imported");
        return signalPassFailure();
      }
      FailureOr<LayoutAttr> from =
          layoutOf(use, fromSharding, tensor.getShape(), symbols);
      if (failed(from))
        return signalPassFailure();
      FailureOr<LayoutAttr> to =
          layoutOf(use, use.getSharding(), tensor.getShape(), symbols);
      if (failed(to))
        return signalPassFailure();
      OpBuilder builder(use);
      Value back = importReshard(builder, use.getLoc(), input, tensor, *from,
                                 *to, tensor);
      Value annotated = use.getSrc();
      use.getResult().replaceAllUsesWith(back);
      use.erase();
      // The annotations in front of it that nothing else reads.
      while (auto annotation = annotated.getDefiningOp<shard::ShardOp>()) {
        if (!annotation->use_empty())
          break;
        annotated = annotation.getSrc();
        annotation.erase();
      }
    }
    // The collectives of partitioned code.
    SmallVector<Operation *> collectives;
    getOperation().walk([&](Operation *op) {
      if (isa<shard::AllGatherOp, shard::AllReduceOp, shard::ReduceScatterOp,
              shard::AllToAllOp, shard::AllSliceOp, shard::BroadcastOp,
              shard::GatherOp, shard::ReduceOp, shard::ScatterOp,
              shard::ShiftOp, shard::SendOp, shard::RecvOp>(op))
        collectives.push_back(op);
    });
    for (Operation *op : collectives) {
      LogicalResult imported =
          TypeSwitch<Operation *, LogicalResult>(op)
              .Case([&](shard::AllGatherOp c) {
                return importAllGather(c, symbols);
              })
              .Case([&](shard::AllReduceOp c) {
                return importAllReduce(c, symbols);
              })
              .Case([&](shard::ReduceScatterOp c) {
                return importReduceScatter(c, symbols);
              })
              .Case([&](shard::AllToAllOp c) {
                return importAllToAll(c, symbols);
              })
              .Case([&](shard::AllSliceOp c) {
                return importAllSlice(c, symbols);
              })
              .Case([&](shard::BroadcastOp c) {
                return importBroadcast(c, symbols);
              })
              .Case([&](shard::GatherOp c) { return importGather(c, symbols); })
              .Case([&](shard::ReduceOp c) { return importReduce(c, symbols); })
              .Case(
                  [&](shard::ScatterOp c) { return importScatter(c, symbols); })
              .Case([&](shard::ShiftOp c) { return importShift(c, symbols); })
              .Case<shard::SendOp, shard::RecvOp>([](Operation *c) {
                return c->emitError("point-to-point send/recv pairs (two ops "
                                    "of the program) are not imported yet");
              })
              .Default([](Operation *other) {
                return other->emitError("is not an importable collective");
              });
      if (failed(imported))
        return signalPassFailure();
    }
    // Shardings nothing uses any more.
    getOperation().walk([&](shard::ShardingOp sharding) {
      if (sharding->use_empty())
        sharding.erase();
    });
  }
};
} // namespace
