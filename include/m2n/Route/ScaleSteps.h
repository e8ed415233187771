//===- ScaleSteps.h - a quantizing schedule's amax exchange ------*- C++ -*-===//
//
// Routing a quantizing reshard (docs/fp8-scaling.md): its data steps are
// routed like any reshard's, and every move out of a source quantizes with
// the scales of its source rank's quantizer table, whoever executes it (the
// destination pulling over NVLink, the sender packing for a network hop,
// gather-bcast's root): the plan's semantics, on every route. The scale
// plan's shares, exchange and scale writes become steps of the schedule,
// in phase order before the data steps:
//
//   amax   src(R) [blocks] -> slots(R) [blocks]     a source rank's share
//   copy   slots(S) [..] -> quantizer(R) [..]       the exchange (then max
//   reduce<max> slots(S) [..] -> holder(D) [..]      of straddling blocks)
//   scale  holder(D) [all] -> scales(D) [all]       a destination's scales
//
//===----------------------------------------------------------------------===//

#ifndef M2N_ROUTE_SCALESTEPS_H
#define M2N_ROUTE_SCALESTEPS_H

#include "m2n/Base/Topology.h"
#include "m2n/Plan/ScalePlan.h"
#include "m2n/Route/Schedule.h"

namespace m2n {

/// `data` (the routed and chunked data steps of a quantizing reshard of
/// `shape` from `src` to `dst`, no dependencies yet) after the steps of
/// `scalePlan`'s shares, exchange (into every quantizer and holder table)
/// and scale writes, with `scaling` set; links by `topology`. A route that
/// reads a source the plan does not (gather-bcast's root reads its own
/// copy of what the plan takes from a replica) gets that rank's quantizer
/// table planned as planScales plans any.
Schedule withScaleSteps(Schedule data, const Scaling &scaling,
                        const Layout &src, const Layout &dst,
                        const std::vector<int64_t> &shape,
                        const ScalePlan &scalePlan, const Topology &topology);

} // namespace m2n

#endif // M2N_ROUTE_SCALESTEPS_H
