//===- PlanInterop.h - plan and schedule ops <-> planner structs -*- C++ -*-===//
//
// The planner, the router and the reference executor work on the plain C++
// structs of m2n/Plan and m2n/Route; these functions convert between them
// and the dialect's plan and schedule ops. Part of the passes' library: the
// dialect's IR library does not link the compiler's planning libraries.
//
//===----------------------------------------------------------------------===//

#ifndef M2N_DIALECT_M2N_TRANSFORMS_PLANINTEROP_H
#define M2N_DIALECT_M2N_TRANSFORMS_PLANINTEROP_H

#include "m2n/Dialect/M2N/IR/LayoutInterop.h"
#include "m2n/Plan/Planner.h"
#include "m2n/Plan/ScalePlan.h"
#include "m2n/Route/Schedule.h"

namespace mlir::m2n {

/// The steps and scratch buffers of a schedule op.
::m2n::Schedule toSchedule(ScheduleOp schedule);
/// Appends the scratch declarations and steps of `schedule` at the builder's
/// position.
/// Replaces the scratch buffers and steps of `op` by `schedule`'s.
void replaceScheduleBody(ScheduleOp op, const ::m2n::Schedule &schedule);
void buildSchedule(OpBuilder &builder, Location loc,
                   const ::m2n::Schedule &schedule);

/// The transfers of a plan op.
::m2n::ReshardPlan toReshardPlan(PlanOp plan);
/// Appends one m2n.transfer per transfer of `plan` at the builder's position.
void buildTransfers(OpBuilder &builder, Location loc,
                    const ::m2n::ReshardPlan &plan);

/// The scale plan of a quantizing plan op: its m2n.amax shares and
/// m2n.exchange transfers, with the boxes the layouts give
/// (deriveScaleBoxes).
::m2n::ScalePlan toScalePlan(PlanOp plan);
/// Appends one m2n.amax per non-empty share and one m2n.exchange per
/// exchange transfer of `scales` at the builder's position.
void buildScaleOps(OpBuilder &builder, Location loc,
                   const ::m2n::ScalePlan &scales);

} // namespace mlir::m2n

#endif // M2N_DIALECT_M2N_TRANSFORMS_PLANINTEROP_H
