//===- ImportCommon.cpp - shared by the shard and Shardy importers --------===//

#include "ImportCommon.h"

#include "mlir/IR/BuiltinOps.h"

using namespace mlir;
using namespace mlir::m2n;

MeshAttr mlir::m2n::meshInOrder(MLIRContext *ctx, ArrayRef<int64_t> gridShape,
                                ArrayRef<int64_t> order,
                                ArrayRef<int64_t> deviceAt, int64_t base) {
  SmallVector<int64_t> meshShape;
  for (int64_t axis : order)
    meshShape.push_back(gridShape[axis]);
  if (deviceAt.empty() &&
      llvm::equal(order, llvm::seq<int64_t>(0, order.size())))
    return MeshAttr::get(ctx, meshShape, base, {});
  int64_t devices = 1;
  for (int64_t size : gridShape)
    devices *= size;
  SmallVector<int64_t> ranks, gridCoords(order.size());
  for (int64_t position = 0; position < devices; ++position) {
    int64_t rest = position;
    for (int64_t i = static_cast<int64_t>(order.size()) - 1; i >= 0; --i) {
      gridCoords[order[i]] = rest % meshShape[i];
      rest /= meshShape[i];
    }
    int64_t gridPosition = 0;
    for (size_t axis = 0; axis < gridShape.size(); ++axis)
      gridPosition = gridPosition * gridShape[axis] + gridCoords[axis];
    ranks.push_back(base +
                    (deviceAt.empty() ? gridPosition : deviceAt[gridPosition]));
  }
  return MeshAttr::get(ctx, meshShape, 0, ranks);
}

Value mlir::m2n::importReshard(OpBuilder &builder, Location loc, Value input,
                               RankedTensorType tensor, LayoutAttr from,
                               LayoutAttr to, Type resultType) {
  MLIRContext *ctx = builder.getContext();
  const int64_t commSize =
      std::max(from.getMesh().getMaxRank(), to.getMesh().getMaxRank()) + 1;
  auto srcType =
      DistType::get(ctx, tensor.getShape(), tensor.getElementType(), from);
  auto dstType =
      DistType::get(ctx, tensor.getShape(), tensor.getElementType(), to);
  Value comm = UnrealizedConversionCastOp::create(
                   builder, loc, CommType::get(ctx, commSize), ValueRange{})
                   .getResult(0);
  Value dist = UnrealizedConversionCastOp::create(builder, loc, srcType,
                                                  ValueRange{input})
                   .getResult(0);
  Value moved =
      ReshardOp::create(builder, loc, dstType, dist, comm, /*scale=*/FloatAttr())
          .getResult();
  return UnrealizedConversionCastOp::create(builder, loc, resultType,
                                            ValueRange{moved})
      .getResult(0);
}
