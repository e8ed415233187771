//===- ScaleSteps.h - a quantizing schedule's amax exchange ------*- C++ -*-===//
//
// Routing a quantizing reshard (docs/fp8-scaling.md): its data steps are
// routed like any reshard's, and every move out of a source quantizes where
// it executes, on the destination rank that pulls it, with the scales of
// that rank's holder table. The scale plan's shares and holder exchange
// become steps of the schedule, in phase order before the data steps:
//
//   amax   src(R) [blocks] -> slots(R) [blocks]     a source rank's share
//   copy   slots(S) [..] -> holder(D) [..]          the exchange (then
//   reduce<max> slots(S) [..] -> holder(D) [..]      max of straddling blocks)
//   scale  holder(D) [all] -> scales(D) [all]       a destination's scales
//
// The quantizer tables of the plan serve a sender that quantizes before a
// network hop; such routes are not taken yet (withScaleSteps refuses them).
//
//===----------------------------------------------------------------------===//

#ifndef M2N_ROUTE_SCALESTEPS_H
#define M2N_ROUTE_SCALESTEPS_H

#include "m2n/Base/Topology.h"
#include "m2n/Plan/ScalePlan.h"
#include "m2n/Route/Schedule.h"

#include <string>
#include <variant>

namespace m2n {

/// `data` (the routed and chunked data steps of a quantizing reshard, no
/// dependencies yet) after the steps of `scalePlan`'s shares, holder
/// exchange and scale writes, with `scaling` set; or why this route cannot
/// quantize (a move out of a source that crosses the network or lands
/// outside its executor's destination buffer, whose holder table covers
/// it, or an amax exchange across the network).
std::variant<Schedule, std::string>
withScaleSteps(Schedule data, const Scaling &scaling,
               const ScalePlan &scalePlan, const Topology &topology);

} // namespace m2n

#endif // M2N_ROUTE_SCALESTEPS_H
