//===- LayoutInterop.h - m2n attributes <-> plain layout structs -*- C++ -*-===//
//
// The planner, the plan verifier and the simulator work on the plain C++
// structs of m2n/Layout (shared with the runtime); these functions convert
// between them and the dialect's attributes and ops.
//
//===----------------------------------------------------------------------===//

#ifndef M2N_DIALECT_M2N_IR_LAYOUTINTEROP_H
#define M2N_DIALECT_M2N_IR_LAYOUTINTEROP_H

#include "m2n/Artifact/Artifact.h"
#include "m2n/Dialect/M2N/IR/M2NOps.h"
#include "m2n/Layout/Planner.h"
#include "m2n/Route/Schedule.h"
#include "m2n/Route/Topology.h"
#include "m2n/Sim/ElementType.h"

#include "mlir/IR/Builders.h"

namespace mlir::m2n {

::m2n::Reduction toReduction(ReductionKind kind);
ReductionKind toReductionKind(::m2n::Reduction reduction);
::m2n::Mesh toMesh(MeshAttr mesh);
::m2n::Layout toLayout(LayoutAttr layout);
/// std::nullopt for types the simulator does not model (e.g. f8).
std::optional<::m2n::ElementType> toElementType(Type type);

::m2n::Topology toTopology(TopologyAttr topology);
TopologyAttr toTopologyAttr(MLIRContext *ctx, const ::m2n::Topology &topology);

/// The steps and scratch buffers of a schedule op.
::m2n::Schedule toSchedule(ScheduleOp schedule);
/// Appends the scratch declarations and steps of `schedule` at the builder's
/// position.
void buildSchedule(OpBuilder &builder, Location loc,
                   const ::m2n::Schedule &schedule);

/// The transfers of a plan op.
::m2n::ReshardPlan toReshardPlan(PlanOp plan);
/// Appends one m2n.transfer per transfer of `plan` at the builder's position.
void buildTransfers(OpBuilder &builder, Location loc,
                    const ::m2n::ReshardPlan &plan);

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
