//===- ImportSdy.cpp - --m2n-import-sdy: Shardy (sdy, mpmd) -> m2n --------===//
//
// A Shardy sharding names, per tensor dimension, the mesh axes that split
// it (major first), optionally as sub-axes "x":(m)k (the middle factor of x
// reshaped to [m, k, n/(m*k)]), plus replicated and unreduced axes. Its m2n
// layout: every mesh axis is first cut into the factors that the two
// shardings of a reshard use (a refined grid, whose row-major order is the
// mesh's, so devices keep their positions); the factors that split dim d
// become shard<d> placements in their listed order, unreduced factors
// partial<kind>, the others replicate; an explicit rank list keeps each
// device's number (Shardy's row-major numbering, device_ids, and for MPMD
// the mesh's offset in the topology).
//
// Each reshard point (sdy.reshard, sdy.sharding_constraint, the explicit
// collectives, mpmd.transfer) becomes an m2n.reshard between casts from
// the operand's sharding to its own; a collective's parameters are checked
// against its out_sharding first.
//
//===----------------------------------------------------------------------===//

#include "ImportCommon.h"

#include "m2n/Conversion/M2NToGPU/M2NToGPU.h"
#include "m2n/Base/Layout.h"
#include "m2n/Dialect/M2N/IR/LayoutInterop.h"
#include "m2n/Dialect/M2N/IR/M2NOps.h"
#include "m2n/Dialect/Shardy/ShardyDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/TypeSwitch.h"

#include <map>
#include <set>

namespace mlir::m2n {
#define GEN_PASS_DEF_IMPORTSDY
#include "m2n/Conversion/Passes.h.inc"
} // namespace mlir::m2n

using namespace mlir;
using namespace mlir::m2n;

namespace {

/// Where a sharding's devices are: its mesh and the number of its first
/// device in the communicator.
struct PlacedMesh {
  sdy::MeshAttr mesh;
  int64_t base = 0;
};

/// The factors every axis is cut into: axis index -> the pre-size products
/// at which factors start (1 first), sorted.
using Cuts = std::map<int64_t, std::set<int64_t>>;

/// Adds the cuts of `axis` (a whole axis or a sub-axis) of `mesh`, or a
/// diagnostic on `op`.
LogicalResult addCuts(Operation *op, sdy::MeshAttr mesh, sdy::AxisRefAttr axis,
                      Cuts &cuts) {
  const int64_t index = mesh.axisIndex(axis.getName().getValue());
  if (index < 0)
    return op->emitError("axis \"")
           << axis.getName().getValue() << "\" is not an axis of the mesh";
  const int64_t size = mesh.getAxisSizes()[index];
  std::set<int64_t> &at = cuts[index];
  at.insert(1);
  if (axis.isWhole())
    return success();
  const int64_t pre = axis.getPreSize(), sub = axis.getSize();
  if (pre < 1 || sub < 1 || size % (pre * sub))
    return op->emitError("sub-axis \"")
           << axis.getName().getValue() << "\":(" << pre << ")" << sub
           << " does not divide the axis of size " << size;
  at.insert(pre);
  if (pre * sub < size)
    at.insert(pre * sub);
  return success();
}

/// The sharding's axes in one list (dims, replicated, unreduced).
SmallVector<sdy::AxisRefAttr> axesOf(sdy::TensorShardingAttr sharding) {
  SmallVector<sdy::AxisRefAttr> axes;
  for (sdy::DimShardingAttr dim : sharding.getDims())
    llvm::append_range(axes, dim.getAxes());
  llvm::append_range(axes, sharding.getReplicated());
  llvm::append_range(axes, sharding.getUnreduced());
  return axes;
}

/// The refined grid of `mesh` under `cuts`: per mesh axis, its factors in
/// order (major first), as (axis, first cut) -> refined axis index.
struct RefinedGrid {
  SmallVector<int64_t> shape;
  std::map<std::pair<int64_t, int64_t>, int64_t> factorAt;
  /// Refined axes of a whole axis or sub-axis, major first.
  SmallVector<int64_t> factorsOf(sdy::MeshAttr mesh, sdy::AxisRefAttr axis,
                                 const Cuts &cuts) const {
    const int64_t index = mesh.axisIndex(axis.getName().getValue());
    const int64_t size = mesh.getAxisSizes()[index];
    const int64_t from = axis.isWhole() ? 1 : axis.getPreSize();
    const int64_t to =
        axis.isWhole() ? size : axis.getPreSize() * axis.getSize();
    SmallVector<int64_t> factors;
    for (int64_t cut : cuts.at(index))
      if (cut >= from && cut < to)
        factors.push_back(factorAt.at({index, cut}));
    return factors;
  }
};

/// The refined grid, or a diagnostic on `op` when two sub-axes of one axis
/// overlap without nesting ("x":(1)2 and "x":(1)3 of a 6: no common grid).
FailureOr<RefinedGrid> refine(Operation *op, sdy::MeshAttr mesh, Cuts &cuts) {
  RefinedGrid grid;
  for (auto [index, size] : llvm::enumerate(mesh.getAxisSizes())) {
    std::set<int64_t> &at = cuts[index];
    at.insert(1);
    SmallVector<int64_t> points(at.begin(), at.end());
    points.push_back(size);
    for (size_t i = 0; i + 1 < points.size(); ++i) {
      if (points[i + 1] % points[i])
        return op->emitError("sub-axes of axis \"")
               << cast<StringAttr>(mesh.getAxisNames()[index]).getValue()
               << "\" overlap without nesting (cuts at " << points[i] << " and "
               << points[i + 1] << ")";
      grid.factorAt[{static_cast<int64_t>(index), points[i]}] =
          static_cast<int64_t>(grid.shape.size());
      grid.shape.push_back(points[i + 1] / points[i]);
    }
  }
  return grid;
}

/// The m2n layout of `sharding` on `placed` for a tensor of `tensor`'s
/// shape, with the axes cut at `cuts`, or a diagnostic on `op`.
FailureOr<LayoutAttr> layoutOf(Operation *op, sdy::TensorShardingAttr sharding,
                               const PlacedMesh &placed, Cuts cuts,
                               RankedTensorType tensor) {
  MLIRContext *ctx = op->getContext();
  sdy::MeshAttr mesh = placed.mesh;
  if (static_cast<int64_t>(sharding.getDims().size()) != tensor.getRank())
    return op->emitError("the sharding has ")
           << sharding.getDims().size() << " dimension shardings for a rank-"
           << tensor.getRank() << " tensor";
  for (sdy::AxisRefAttr axis : axesOf(sharding))
    if (failed(addCuts(op, mesh, axis, cuts)))
      return failure();
  FailureOr<RefinedGrid> refined = refine(op, mesh, cuts);
  if (failed(refined))
    return failure();
  RefinedGrid &grid = *refined;
  // Each factor's placement; the m2n mesh keeps the grid's axis order
  // (so that two layouts on one mesh have the same m2n mesh, as partial
  // destinations need) except where a dimension is split by factors in
  // another order: m2n applies a dimension's mesh axes in increasing order,
  // so those factors take their positions in the listed order.
  const int64_t factors = static_cast<int64_t>(grid.shape.size());
  SmallVector<PlacementAttrInterface> placementOf(factors,
                                                  ReplicateAttr::get(ctx));
  SmallVector<int64_t> order = llvm::to_vector(llvm::seq<int64_t>(0, factors));
  std::set<int64_t> used;
  auto take = [&](sdy::AxisRefAttr axis, PlacementAttrInterface placement,
                  SmallVectorImpl<int64_t> &listed) -> LogicalResult {
    for (int64_t factor : grid.factorsOf(mesh, axis, cuts)) {
      if (!used.insert(factor).second)
        return op->emitError("axis \"") << axis.getName().getValue()
                                        << "\" is used twice in one sharding";
      placementOf[factor] = placement;
      listed.push_back(factor);
    }
    return success();
  };
  for (auto [dim, dimSharding] : llvm::enumerate(sharding.getDims())) {
    SmallVector<int64_t> listed;
    for (sdy::AxisRefAttr axis : dimSharding.getAxes())
      if (failed(take(axis, ShardAttr::get(ctx, dim), listed)))
        return failure();
    // An uneven split over one factor owns what Shardy's does (each part
    // ceil(n/k), the last ones fewer or none; m2n's local buffers hold the
    // owned elements only, without the padding XLA adds). Over several,
    // Shardy splits once into their product (the first listed outermost)
    // where m2n's chunk rule would round factor by factor: explicit
    // boundaries say Shardy's split (written shard<d> where they agree).
    int64_t parts = 1;
    for (int64_t factor : listed)
      parts *= grid.shape[factor];
    const int64_t extent = tensor.getDimSize(dim);
    if (listed.size() > 1 && extent % parts) {
      SmallVector<int64_t> boundaries;
      for (int64_t p = 0; p < parts; ++p)
        boundaries.push_back(::m2n::chunkOf(extent, parts, p).begin);
      boundaries.push_back(extent);
      placementOf[listed.front()] = ShardAttr::get(ctx, dim, boundaries);
    }
    SmallVector<int64_t> positions(listed);
    llvm::sort(positions);
    for (auto [position, factor] : llvm::zip(positions, listed))
      order[position] = factor;
  }
  if (!sharding.getUnreduced().empty()) {
    std::optional<ReductionKind> kind =
        symbolizeReductionKind(sharding.getUnreducedKind().getValue());
    if (!kind)
      return op->emitError("unknown reduction kind ")
             << sharding.getUnreducedKind();
    SmallVector<int64_t> listed;
    for (sdy::AxisRefAttr axis : sharding.getUnreduced())
      if (failed(take(axis, PartialAttr::get(ctx, *kind), listed)))
        return failure();
  }
  SmallVector<PlacementAttrInterface> placements;
  for (int64_t factor : order)
    placements.push_back(placementOf[factor]);
  if (!mesh.getDeviceIds().empty() &&
      static_cast<int64_t>(mesh.getDeviceIds().size()) != mesh.deviceCount())
    return op->emitError("the mesh has ")
           << mesh.getDeviceIds().size() << " device ids for "
           << mesh.deviceCount() << " devices";
  // A mesh without axes has one device.
  if (grid.shape.empty()) {
    grid.shape.push_back(1);
    order.push_back(0);
    placements.push_back(ReplicateAttr::get(ctx));
  }
  MeshAttr m2nMesh =
      meshInOrder(ctx, grid.shape, order, mesh.getDeviceIds(), placed.base);
  // The reshard's verifier checks the layout against the tensor.
  return canonicalLayout(LayoutAttr::get(ctx, m2nMesh, placements),
                         tensor.getShape());
}

/// The mesh of `sharding`: its inline mesh or the sdy.mesh it names.
FailureOr<PlacedMesh> sdyMeshOf(Operation *op,
                                sdy::TensorShardingAttr sharding) {
  if (auto mesh = dyn_cast<sdy::MeshAttr>(sharding.getMesh()))
    return PlacedMesh{mesh, 0};
  auto symbol = cast<FlatSymbolRefAttr>(sharding.getMesh());
  auto meshOp =
      SymbolTable::lookupNearestSymbolFrom<sdy::MeshOp>(op, symbol.getAttr());
  if (!meshOp)
    return op->emitError("names mesh ")
           << symbol << ", which is not an sdy.mesh";
  return PlacedMesh{meshOp.getMesh(), 0};
}

/// The layouts of a reshard from `from` to `to`, cut alike.
FailureOr<std::pair<LayoutAttr, LayoutAttr>>
layoutsOf(Operation *op, sdy::TensorShardingAttr from, PlacedMesh fromMesh,
          sdy::TensorShardingAttr to, PlacedMesh toMesh,
          RankedTensorType tensor) {
  // Each sharding cuts its mesh's axes where its own sub-axes need (so a
  // whole axis stays one m2n axis, split once). A partial destination must
  // be on the source's m2n mesh: then both cut alike.
  Cuts fromCuts, toCuts;
  const bool sameMesh =
      fromMesh.mesh == toMesh.mesh && fromMesh.base == toMesh.base;
  const bool shared = sameMesh && !to.getUnreduced().empty();
  for (sdy::AxisRefAttr axis : axesOf(from))
    if (failed(addCuts(op, fromMesh.mesh, axis, fromCuts)) ||
        (shared && failed(addCuts(op, toMesh.mesh, axis, toCuts))))
      return failure();
  for (sdy::AxisRefAttr axis : axesOf(to))
    if (failed(addCuts(op, toMesh.mesh, axis, toCuts)) ||
        (shared && failed(addCuts(op, fromMesh.mesh, axis, fromCuts))))
      return failure();
  FailureOr<LayoutAttr> src = layoutOf(op, from, fromMesh, fromCuts, tensor);
  if (failed(src))
    return failure();
  FailureOr<LayoutAttr> dst = layoutOf(op, to, toMesh, toCuts, tensor);
  if (failed(dst))
    return failure();
  if (shared && src->getMesh() != dst->getMesh())
    return op->emitError(
        "keeps unreduced axes while it reorders the axes that split a "
        "dimension; m2n keeps partial contributions on the source's mesh "
        "order (reduce first, or keep the split order)");
  return std::make_pair(*src, *dst);
}

/// A replicated sharding over `mesh` of a rank-`rank` tensor.
sdy::TensorShardingAttr replicated(MLIRContext *ctx, sdy::MeshAttr mesh,
                                   int64_t rank) {
  SmallVector<sdy::DimShardingAttr> dims(
      rank, sdy::DimShardingAttr::get(ctx, {}, true, -1));
  return sdy::TensorShardingAttr::get(ctx, mesh, dims, {}, {},
                                      StringAttr::get(ctx, "sum"));
}

/// The devices a dimension is split over: its axes' sizes multiplied.
int64_t shardedSize(sdy::MeshAttr mesh, sdy::DimShardingAttr dim) {
  int64_t size = 1;
  for (sdy::AxisRefAttr axis : dim.getAxes()) {
    int64_t index = mesh.axisIndex(axis.getName().getValue());
    size *= axis.isWhole() ? (index < 0 ? 1 : mesh.getAxisSizes()[index])
                           : axis.getSize();
  }
  return size;
}

/// Shardy's rules for sdy.collective_permute: the result on a mesh of the
/// operand's axes (not another name for the same devices), and every
/// dimension split over as many devices as before (only which device holds
/// which piece changes).
LogicalResult checkPermute(Operation *op, sdy::TensorShardingAttr operand,
                           sdy::TensorShardingAttr out) {
  FailureOr<PlacedMesh> from = sdyMeshOf(op, operand);
  FailureOr<PlacedMesh> to = sdyMeshOf(op, out);
  if (failed(from) || failed(to))
    return failure();
  if (from->mesh.getAxisNames() != to->mesh.getAxisNames() ||
      from->mesh.getAxisSizes() != to->mesh.getAxisSizes())
    return op->emitError("result mesh has different axes than operand mesh");
  if (operand.getMesh() != out.getMesh() &&
      from->mesh.getDeviceIds() == to->mesh.getDeviceIds())
    return op->emitError("result mesh name is different but same device ids "
                         "as operand");
  if (operand.getDims().size() != out.getDims().size())
    return op->emitError("out_sharding has ")
           << out.getDims().size() << " dimensions, the operand's sharding "
           << operand.getDims().size();
  for (auto [dim, pair] :
       llvm::enumerate(llvm::zip_equal(operand.getDims(), out.getDims()))) {
    int64_t before = shardedSize(from->mesh, std::get<0>(pair));
    int64_t after = shardedSize(to->mesh, std::get<1>(pair));
    if (before != after)
      return op->emitError("sharded size of result doesn't match operand on "
                           "dimension ")
             << dim << ": " << after << " != " << before;
  }
  return success();
}

/// A mesh axis or the part of it `"x":(pre)size` names, with a whole axis
/// as (1, its size): collectives compare axis lists by the devices they
/// split, so that `"x"` ends with `"x":(4)2` on an axis of 8.
struct AxisPart {
  StringAttr name;
  int64_t pre, size;
  bool operator==(const AxisPart &other) const {
    return name == other.name && pre == other.pre && size == other.size;
  }
};
using AxisParts = SmallVector<AxisPart>;

AxisParts axisParts(sdy::MeshAttr mesh, ArrayRef<sdy::AxisRefAttr> axes) {
  AxisParts parts;
  for (sdy::AxisRefAttr axis : axes) {
    int64_t index = mesh.axisIndex(axis.getName().getValue());
    int64_t whole = index < 0 ? 1 : mesh.getAxisSizes()[index];
    parts.push_back(axis.isWhole()
                        ? AxisPart{axis.getName(), 1, whole}
                        : AxisPart{axis.getName(), axis.getPreSize(),
                                   axis.getSize()});
  }
  return parts;
}

/// Adjacent parts of one axis that abut, major first, as one part: the
/// form in which two lists that split the same devices are equal.
AxisParts merged(ArrayRef<AxisPart> parts) {
  AxisParts out;
  for (const AxisPart &part : parts) {
    if (!out.empty() && out.back().name == part.name &&
        out.back().pre * out.back().size == part.pre)
      out.back().size *= part.size;
    else
      out.push_back(part);
  }
  return out;
}

/// The dimension shardings after a collective's parameters are applied to
/// its operand's (Shardy's rules), compared with out_sharding's.
LogicalResult checkCollective(Operation *op, sdy::TensorShardingAttr operand,
                              sdy::TensorShardingAttr out) {
  if (isa<sdy::ReshardOp, sdy::ShardingConstraintOp>(op))
    return success(); // Any sharding may follow any other.
  FailureOr<PlacedMesh> placed = sdyMeshOf(op, operand);
  if (failed(placed))
    return failure();
  const sdy::MeshAttr mesh = placed->mesh;
  SmallVector<AxisParts> dims;
  for (sdy::DimShardingAttr dim : operand.getDims())
    dims.push_back(axisParts(mesh, dim.getAxes()));
  // The op's per-dimension axis lists (one per dimension of the operand's
  // sharding, which its verifier does not know).
  auto perDim = [&](ArrayAttr attr) -> FailureOr<SmallVector<AxisParts>> {
    if (attr.size() != dims.size())
      return op->emitError("needs one axis list per dimension");
    SmallVector<AxisParts> axes;
    for (Attribute dim : attr)
      axes.push_back(
          axisParts(mesh, cast<sdy::DimShardingAttr>(dim).getAxes()));
    return axes;
  };
  // all_slice and reduce_scatter append their axes to each dimension's.
  auto appendToDims = [&](ArrayAttr attr) -> LogicalResult {
    FailureOr<SmallVector<AxisParts>> axes = perDim(attr);
    if (failed(axes))
      return failure();
    for (auto [dim, list] : llvm::enumerate(*axes))
      llvm::append_range(dims[dim], list);
    return success();
  };
  // Gathered axes are the minor-most devices of their dimension: a suffix
  // of its parts, where a part may end another ("x":(4)2 of "x" on 8).
  auto removeSuffix = [&](int64_t dim, AxisParts axes) -> LogicalResult {
    AxisParts &have = dims[dim];
    while (!axes.empty()) {
      AxisPart &last = have.empty() ? axes.back() : have.back();
      AxisPart &gathered = axes.back();
      if (have.empty() || last.name != gathered.name ||
          last.pre * last.size != gathered.pre * gathered.size)
        return op->emitError("gathers axes that are not the minor-most of "
                             "dimension ")
               << dim;
      if (last.size == gathered.size) {
        have.pop_back();
        axes.pop_back();
      } else if (last.size > gathered.size) { // The major rest stays.
        last.size /= gathered.size;
        axes.pop_back();
      } else { // The rest of the gathered part is the next one's.
        gathered.size /= last.size;
        have.pop_back();
      }
    }
    return success();
  };
  // m2n reduces contributions: the axes a collective reduces must be the
  // operand's unreduced ones, with their reduction.
  auto reducesUnreduced = [&](ArrayRef<sdy::AxisRefAttr> axes,
                              StringRef kind) -> LogicalResult {
    for (sdy::AxisRefAttr axis : axes)
      if (!llvm::is_contained(operand.getUnreduced(), axis))
        return op->emitError("reduces axis \"")
               << axis.getName().getValue()
               << "\", which the operand's sharding does not have unreduced "
                  "(m2n reduces contributions, not replicas)";
    if (!axes.empty() && kind != operand.getUnreducedKind().getValue())
      return op->emitError("reduces with ")
             << kind << ", the operand's unreduced axes with "
             << operand.getUnreducedKind().getValue();
    return success();
  };
  if (auto reduce = dyn_cast<sdy::AllReduceOp>(op))
    if (failed(reducesUnreduced(
            cast<sdy::DimShardingAttr>(reduce.getReductionAxes()[0]).getAxes(),
            reduce.getKind())))
      return failure();
  if (auto scatter = dyn_cast<sdy::ReduceScatterOp>(op))
    for (Attribute dim : scatter.getReduceScatterAxes())
      if (failed(reducesUnreduced(cast<sdy::DimShardingAttr>(dim).getAxes(),
                                  scatter.getKind())))
        return failure();
  LogicalResult applied =
      TypeSwitch<Operation *, LogicalResult>(op)
          .Case([&](sdy::AllGatherOp gather) -> LogicalResult {
            FailureOr<SmallVector<AxisParts>> axes =
                perDim(gather.getGatheringAxes());
            if (failed(axes))
              return failure();
            for (auto [dim, list] : llvm::enumerate(*axes))
              if (failed(removeSuffix(dim, list)))
                return failure();
            return success();
          })
          .Case([&](sdy::AllSliceOp slice) {
            return appendToDims(slice.getSlicingAxes());
          })
          .Case([&](sdy::ReduceScatterOp scatter) { // After reducing them.
            return appendToDims(scatter.getReduceScatterAxes());
          })
          .Case([&](sdy::AllToAllOp all) -> LogicalResult {
            for (Attribute param : all.getParams()) {
              auto parts = cast<ArrayAttr>(param);
              ArrayRef<sdy::AxisRefAttr> axes =
                  cast<sdy::DimShardingAttr>(parts[0]).getAxes();
              int64_t from = cast<IntegerAttr>(parts[1]).getInt();
              int64_t to = cast<IntegerAttr>(parts[2]).getInt();
              if (from < 0 || to < 0 ||
                  from >= static_cast<int64_t>(dims.size()) ||
                  to >= static_cast<int64_t>(dims.size()) || from == to)
                return op->emitError("moves axes between dimensions ")
                       << from << " and " << to << " of a rank-" << dims.size()
                       << " tensor";
              AxisParts moved = axisParts(mesh, axes);
              if (failed(removeSuffix(from, moved)))
                return failure();
              llvm::append_range(dims[to], moved);
            }
            return success();
          })
          .Default([](Operation *) { return success(); });
  if (failed(applied))
    return failure();
  // Unreduced axes stay unreduced, but for those a reduction reduces.
  SmallVector<sdy::AxisRefAttr> reduced;
  if (auto reduce = dyn_cast<sdy::AllReduceOp>(op))
    llvm::append_range(
        reduced,
        cast<sdy::DimShardingAttr>(reduce.getReductionAxes()[0]).getAxes());
  if (auto scatter = dyn_cast<sdy::ReduceScatterOp>(op))
    for (Attribute dim : scatter.getReduceScatterAxes())
      llvm::append_range(reduced, cast<sdy::DimShardingAttr>(dim).getAxes());
  llvm::SmallDenseSet<Attribute> expected, got;
  for (sdy::AxisRefAttr axis : operand.getUnreduced())
    if (!llvm::is_contained(reduced, axis))
      expected.insert(axis);
  for (sdy::AxisRefAttr axis : out.getUnreduced())
    got.insert(axis);
  if (expected.size() != got.size() ||
      llvm::any_of(got, [&](Attribute a) { return !expected.contains(a); }) ||
      (!got.empty() && out.getUnreducedKind() != operand.getUnreducedKind()))
    return op->emitError("out_sharding's unreduced axes are not the "
                         "operand's, less those the op reduces");
  if (isa<sdy::CollectivePermuteOp>(op))
    return checkPermute(op, operand, out); // Its out_sharding says the rest.
  for (auto [dim, axes] : llvm::enumerate(dims))
    if (dim >= out.getDims().size() ||
        merged(axes) !=
            merged(axisParts(mesh, out.getDims()[dim].getAxes())))
      return op->emitError("out_sharding does not match what the op's axes "
                           "make of its operand's sharding (dimension ")
             << dim << ")";
  return success();
}

struct ImportSdyPass : public mlir::m2n::impl::ImportSdyBase<ImportSdyPass> {
  /// The shardings of values seen so far (function arguments, imported
  /// results).
  DenseMap<Value, sdy::TensorShardingAttr> known;

  FailureOr<sdy::TensorShardingAttr> shardingOf(Operation *user, Value value) {
    auto it = known.find(value);
    if (it != known.end())
      return it->second;
    if (auto argument = dyn_cast<BlockArgument>(value))
      if (auto func =
              dyn_cast<func::FuncOp>(argument.getOwner()->getParentOp()))
        if (auto sharding = func.getArgAttrOfType<sdy::TensorShardingAttr>(
                argument.getArgNumber(), "sdy.sharding"))
          return sharding;
    if (Operation *producer = value.getDefiningOp())
      if (auto perValue =
              producer->getAttrOfType<sdy::TensorShardingPerValueAttr>(
                  "sdy.sharding"))
        if (perValue.getShardings().size() == producer->getNumResults())
          return perValue
              .getShardings()[cast<OpResult>(value).getResultNumber()];
    return user->emitError("the sharding of the operand is not known: give it "
                           "an sdy.sharding (a function argument's, or "
                           "#sdy.sharding_per_value on its producer)");
  }

  LogicalResult importSdyPoint(Operation *op, sdy::TensorShardingAttr to) {
    Value input = op->getOperand(0);
    auto tensor = dyn_cast<RankedTensorType>(input.getType());
    if (!tensor || !tensor.hasStaticShape())
      return op->emitError("reshards of tensors with dynamic shapes cannot be "
                           "imported");
    FailureOr<sdy::TensorShardingAttr> from = shardingOf(op, input);
    if (failed(from) || failed(checkCollective(op, *from, to)))
      return failure();
    FailureOr<PlacedMesh> fromMesh = sdyMeshOf(op, *from);
    FailureOr<PlacedMesh> toMesh = sdyMeshOf(op, to);
    if (failed(fromMesh) || failed(toMesh))
      return failure();
    auto layouts = layoutsOf(op, *from, *fromMesh, to, *toMesh, tensor);
    if (failed(layouts))
      return failure();
    OpBuilder builder(op);
    Value back = importReshard(builder, op->getLoc(), input, tensor,
                               layouts->first, layouts->second, tensor);
    known[back] = to;
    op->getResult(0).replaceAllUsesWith(back);
    op->erase();
    return success();
  }

  LogicalResult importTransfer(mpmd::TransferOp transfer) {
    auto func = transfer->getParentOfType<func::FuncOp>();
    auto topology =
        func ? func->getAttrOfType<mpmd::TopologyAttr>("topology") : nullptr;
    if (!topology)
      return transfer.emitError("needs the #mpmd.topology of its function "
                                "(the attribute 'topology')");
    auto place = [&](mpmd::MeshTensorType type) -> FailureOr<PlacedMesh> {
      int64_t base = 0;
      for (auto [index, name] : llvm::enumerate(topology.getNames())) {
        sdy::MeshAttr mesh = topology.getMeshes()[index];
        if (cast<StringAttr>(name) == type.getMeshName())
          return PlacedMesh{mesh, base};
        base += mesh.deviceCount();
      }
      return transfer.emitError("mesh \"")
             << type.getMeshName().getValue()
             << "\" is not in the function's topology";
    };
    auto fromType = cast<mpmd::MeshTensorType>(transfer.getTensor().getType());
    auto toType = cast<mpmd::MeshTensorType>(transfer.getResult().getType());
    RankedTensorType tensor = fromType.getRankedTensorType();
    if (tensor != toType.getRankedTensorType())
      return transfer.emitError("moves a ")
             << tensor << " to a " << toType.getRankedTensorType();
    if (!tensor.hasStaticShape())
      return transfer.emitError("transfers of tensors with dynamic shapes "
                                "cannot be imported");
    FailureOr<PlacedMesh> fromMesh = place(fromType);
    FailureOr<PlacedMesh> toMesh = place(toType);
    if (failed(fromMesh) || failed(toMesh))
      return failure();
    MLIRContext *ctx = transfer.getContext();
    // The sharding's mesh symbol is a placeholder for the named mesh.
    auto onMesh = [&](sdy::TensorShardingAttr sharding,
                      const PlacedMesh &mesh) {
      if (!sharding)
        return replicated(ctx, mesh.mesh, tensor.getRank());
      return sdy::TensorShardingAttr::get(
          ctx, mesh.mesh, sharding.getDims(), sharding.getReplicated(),
          sharding.getUnreduced(), sharding.getUnreducedKind());
    };
    auto layouts = layoutsOf(
        transfer, onMesh(fromType.getSharding(), *fromMesh), *fromMesh,
        onMesh(toType.getSharding(), *toMesh), *toMesh, tensor);
    if (failed(layouts))
      return failure();
    OpBuilder builder(transfer);
    Value back = importReshard(builder, transfer.getLoc(), transfer.getTensor(),
                               tensor, layouts->first, layouts->second, toType);
    transfer.getResult().replaceAllUsesWith(back);
    transfer.erase();
    return success();
  }

  void runOnOperation() override {
    SmallVector<Operation *> points;
    getOperation().walk([&](Operation *op) {
      if (isa<sdy::ReshardOp, sdy::ShardingConstraintOp, sdy::AllGatherOp,
              sdy::AllSliceOp, sdy::AllToAllOp, sdy::CollectivePermuteOp,
              sdy::AllReduceOp, sdy::ReduceScatterOp, mpmd::TransferOp>(op))
        points.push_back(op);
    });
    for (Operation *op : points) {
      LogicalResult imported =
          TypeSwitch<Operation *, LogicalResult>(op)
              .Case([&](sdy::ReshardOp o) {
                return importSdyPoint(o, o.getSharding());
              })
              .Case([&](sdy::ShardingConstraintOp o) {
                return importSdyPoint(o, o.getSharding());
              })
              .Case<sdy::AllGatherOp, sdy::AllSliceOp, sdy::AllToAllOp,
                    sdy::CollectivePermuteOp, sdy::AllReduceOp,
                    sdy::ReduceScatterOp>(
                  [&](auto o) { return importSdyPoint(o, o.getOutSharding()); })
              .Case([&](mpmd::TransferOp o) { return importTransfer(o); })
              .Default([](Operation *) { return failure(); });
      if (failed(imported))
        return signalPassFailure();
    }
  }
};
} // namespace
