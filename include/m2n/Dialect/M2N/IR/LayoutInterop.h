//===- LayoutInterop.h - m2n attributes <-> plain layout structs -*- C++ -*-===//
//
// The verifiers share the layout semantics and the program checks of the
// plain C++ base and artifact libraries (m2n/Base, m2n/Artifact: what the
// runtime links); these functions convert between their structs and the
// dialect's attributes and ops. Plans and schedules, the compiler's own
// structs, convert in m2n/Dialect/M2N/Transforms/PlanInterop.h.
//
//===----------------------------------------------------------------------===//

#ifndef M2N_DIALECT_M2N_IR_LAYOUTINTEROP_H
#define M2N_DIALECT_M2N_IR_LAYOUTINTEROP_H

#include "m2n/Artifact/Artifact.h"
#include "m2n/Base/ElementType.h"
#include "m2n/Base/Topology.h"
#include "m2n/Dialect/M2N/IR/M2NOps.h"

#include "mlir/IR/Builders.h"

namespace mlir::m2n {

::m2n::Reduction toReduction(ReductionKind kind);
ReductionKind toReductionKind(::m2n::Reduction reduction);
::m2n::Mesh toMesh(MeshAttr mesh);
::m2n::Layout toLayout(LayoutAttr layout);
::m2n::Layout toLayout(MeshAttr mesh,
                       ArrayRef<PlacementAttrInterface> placements);
/// `layout` of a tensor of `shape` with the explicit boundaries that are
/// torch.chunk's written `shard<d>` (::m2n::canonicalLayout): one spelling
/// of every partition. Boundaries that do not fit `shape` stay for the
/// verifier to name.
LayoutAttr canonicalLayout(LayoutAttr layout, ArrayRef<int64_t> shape);
/// `layout` with every shard<d, [...]> written shard<d>
/// (::m2n::withoutBoundaries).
LayoutAttr withoutBoundaries(LayoutAttr layout);
/// std::nullopt for types the simulator does not model (e.g. f8).
std::optional<::m2n::ElementType> toElementType(Type type);

::m2n::Topology toTopology(TopologyAttr topology);
TopologyAttr toTopologyAttr(MLIRContext *ctx, const ::m2n::Topology &topology);

/// A buffer operand triple (kind, rank, scratch) as the plain struct, and
/// back.
::m2n::BufferRef toBufferRef(BufferKind kind, int64_t rank, int64_t scratch);
BufferKind toBufferKind(::m2n::BufferKind kind);

/// The reshard a program op describes: its layouts, shape, element type and
/// per-rank programs (the name is left empty). The op must verify, except
/// inside its own verifier, which checks the result.
::m2n::CompiledReshard toCompiledReshard(ProgramOp program);
/// One move as the lowering's plain struct (the list it belongs to follows
/// from its mechanism: engine, network or the kernel's items).
::m2n::Movement toMovement(MoveOp move);
/// Appends the scratch declarations, tensor maps and rank programs of
/// `program` at the builder's position.
void buildProgram(OpBuilder &builder, Location loc,
                  const ::m2n::TransferProgram &program);

} // namespace mlir::m2n

#endif // M2N_DIALECT_M2N_IR_LAYOUTINTEROP_H
