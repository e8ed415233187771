//===- TopologySource.h - where a pass finds the topology --------*- C++ -*-===//

#ifndef M2N_DIALECT_M2N_TRANSFORMS_TOPOLOGYSOURCE_H
#define M2N_DIALECT_M2N_TRANSFORMS_TOPOLOGYSOURCE_H

#include "m2n/Base/Topology.h"

#include "mlir/IR/Operation.h"

namespace mlir::m2n {

/// The topology for `op` on a communicator of `commSize` ranks: the JSON
/// file `file` when it is not empty, else the nearest enclosing
/// `m2n.topology` attribute, else one NVLink domain over the communicator.
/// Reports a missing or invalid file, or a topology that does not fit the
/// communicator, on `op`.
FailureOr<::m2n::Topology> resolveTopology(Operation *op, StringRef file,
                                           int64_t commSize);

} // namespace mlir::m2n

#endif // M2N_DIALECT_M2N_TRANSFORMS_TOPOLOGYSOURCE_H
