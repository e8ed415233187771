//===- ImportCommon.h - shared by the shard and Shardy importers -*- C++
//-*-===//
//
// Both importers turn a resharding point of a foreign program into an
// m2n.reshard between unrealized casts, over a device grid numbered the way
// the foreign dialect numbers it.
//
//===----------------------------------------------------------------------===//

#ifndef M2N_LIB_CONVERSION_SHARDTOM2N_IMPORTCOMMON_H
#define M2N_LIB_CONVERSION_SHARDTOM2N_IMPORTCOMMON_H

#include "m2n/Dialect/M2N/IR/M2NOps.h"

#include "mlir/IR/Builders.h"

namespace mlir::m2n {

/// A grid of `gridShape` (row-major positions, the first axis major) as an
/// m2n mesh whose axis i is grid axis order[i]; each m2n mesh position keeps
/// its device: deviceAt[p] for the grid's row-major position p (p itself
/// when deviceAt is empty), plus `base`.
MeshAttr meshInOrder(MLIRContext *ctx, ArrayRef<int64_t> gridShape,
                     ArrayRef<int64_t> order, ArrayRef<int64_t> deviceAt = {},
                     int64_t base = 0);

/// Replaces a resharding point: `input` (a value of any type holding the
/// tensor of `tensor`'s shape) becomes !m2n.dist in `from`, an m2n.reshard
/// to `to` on a communicator of every rank both name (a cast of nothing:
/// a runtime binds the real one), cast back to `resultType`. Returns the
/// cast back.
Value importReshard(OpBuilder &builder, Location loc, Value input,
                    RankedTensorType tensor, LayoutAttr from, LayoutAttr to,
                    Type resultType);

} // namespace mlir::m2n

#endif // M2N_LIB_CONVERSION_SHARDTOM2N_IMPORTCOMMON_H
