//===- LayoutInterop.cpp - m2n attributes <-> plain layout structs ----------===//

#include "m2n/Dialect/M2N/IR/LayoutInterop.h"

#include "mlir/IR/BuiltinTypes.h"

namespace mlir::m2n {

::m2n::Reduction toReduction(ReductionKind kind) {
  switch (kind) {
  case ReductionKind::Sum:
    return ::m2n::Reduction::Sum;
  case ReductionKind::Max:
    return ::m2n::Reduction::Max;
  case ReductionKind::Min:
    return ::m2n::Reduction::Min;
  }
  llvm_unreachable("unknown reduction kind");
}

ReductionKind toReductionKind(::m2n::Reduction reduction) {
  switch (reduction) {
  case ::m2n::Reduction::Sum:
    return ReductionKind::Sum;
  case ::m2n::Reduction::Max:
    return ReductionKind::Max;
  case ::m2n::Reduction::Min:
    return ReductionKind::Min;
  }
  llvm_unreachable("unknown reduction");
}

::m2n::Mesh toMesh(MeshAttr mesh) {
  std::vector<int64_t> shape(mesh.getShape().begin(), mesh.getShape().end());
  if (mesh.getRanks().empty())
    return ::m2n::Mesh::contiguous(std::move(shape), mesh.getBase());
  return ::m2n::Mesh::explicitRanks(
      std::move(shape),
      std::vector<int64_t>(mesh.getRanks().begin(), mesh.getRanks().end()));
}

::m2n::Layout toLayout(LayoutAttr layout) {
  ::m2n::Layout result{toMesh(layout.getMesh()), {}};
  for (PlacementAttrInterface placement : layout.getPlacements()) {
    if (auto shard = dyn_cast<ShardAttr>(placement))
      result.placements.push_back(::m2n::Placement::shard(shard.getDim()));
    else if (auto partial = dyn_cast<PartialAttr>(placement))
      result.placements.push_back(
          ::m2n::Placement::partial(toReduction(partial.getReduction())));
    else
      result.placements.push_back(::m2n::Placement::replicate());
  }
  return result;
}

std::optional<::m2n::ElementType> toElementType(Type type) {
  if (type.isBF16())
    return ::m2n::ElementType::BF16;
  if (type.isF16())
    return ::m2n::ElementType::F16;
  if (type.isF32())
    return ::m2n::ElementType::F32;
  if (type.isF64())
    return ::m2n::ElementType::F64;
  if (auto integer = dyn_cast<IntegerType>(type)) {
    switch (integer.getWidth()) {
    case 8:
      return ::m2n::ElementType::I8;
    case 16:
      return ::m2n::ElementType::I16;
    case 32:
      return ::m2n::ElementType::I32;
    case 64:
      return ::m2n::ElementType::I64;
    default:
      return std::nullopt;
    }
  }
  return std::nullopt;
}

::m2n::ReshardPlan toReshardPlan(PlanOp plan) {
  ::m2n::ReshardPlan result;
  for (auto transfer : plan.getBody().front().getOps<TransferOp>()) {
    ::m2n::Transfer t;
    t.srcRank = transfer.getSrcRank();
    t.dstRank = transfer.getDstRank();
    std::vector<int64_t> sizes(transfer.getSizes().begin(),
                               transfer.getSizes().end());
    t.srcBox = {std::vector<int64_t>(transfer.getSrcOffsets().begin(),
                                     transfer.getSrcOffsets().end()),
                sizes};
    t.dstBox = {std::vector<int64_t>(transfer.getDstOffsets().begin(),
                                     transfer.getDstOffsets().end()),
                sizes};
    if (std::optional<ReductionKind> reduction = transfer.getReduction())
      t.reduction = toReduction(*reduction);
    result.transfers.push_back(std::move(t));
  }
  return result;
}

void buildTransfers(OpBuilder &builder, Location loc,
                    const ::m2n::ReshardPlan &plan) {
  MLIRContext *ctx = builder.getContext();
  for (const ::m2n::Transfer &t : plan.transfers) {
    ReductionKindAttr reduction;
    if (t.reduction)
      reduction = ReductionKindAttr::get(ctx, toReductionKind(*t.reduction));
    TransferOp::create(builder, loc, t.srcRank, t.srcBox.offsets, t.dstRank,
                       t.dstBox.offsets, t.srcBox.sizes, reduction);
  }
}

} // namespace mlir::m2n
