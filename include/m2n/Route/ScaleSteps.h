//===- ScaleSteps.h - a quantizing schedule's amax exchange ------*- C++ -*-===//
//
// Routing a quantizing reshard (docs/fp8-scaling.md): its data steps are
// routed like any reshard's, and every move out of a source quantizes with
// the scales of its source rank's quantizer table, whoever executes it (the
// destination pulling over NVLink, the sender packing for a network hop,
// gather-bcast's root): the plan's semantics, on every route. The scale
// plan's shares, exchange and scale writes become steps of the schedule:
//
//   amax   src(R) [blocks] -> slots(R) [blocks]     a source rank's share
//   copy   slots(S) [..] -> quantizer(R) [..]       the exchange (then max
//   reduce<max> slots(S) [..] -> holder(D) [..]      of straddling blocks)
//   scale  holder(D) [all] -> scales(D) [all]       a destination's scales
//
// in one band by default, or (scale-bands > 1) in bands of block rows, so
// that the moves out of a source (which wait only for the quantizer blocks
// they read) start on the first band while the sources still compute the
// amaxes of later ones. In list order, which
// the lowering's CTAs follow: per band its shares and its exchange into
// quantizer tables, then the data steps, then the exchange into holder
// tables and the scale steps (nothing but the scales waits for those).
//
//===----------------------------------------------------------------------===//

#ifndef M2N_ROUTE_SCALESTEPS_H
#define M2N_ROUTE_SCALESTEPS_H

#include "m2n/Base/Topology.h"
#include "m2n/Plan/ScalePlan.h"
#include "m2n/Route/Schedule.h"

namespace m2n {

/// The most bands a quantizing schedule is cut into: the amax pass is
/// exposed for one band of them, and every band adds a step per share,
/// transfer and move out of a source.
constexpr int64_t kMaxScaleBands = 8;

/// How many bands of block rows a quantizing reshard of `shape` into
/// `elementBytes`-byte elements is cut into: one per `chunkBytes` of the
/// tensor, at most kMaxScaleBands; one where `chunkBytes` is 0 (nothing is
/// cut).
int64_t scaleBandCount(const std::vector<int64_t> &shape, int64_t elementBytes,
                       int64_t chunkBytes);

/// `data` (the routed and chunked data steps of a quantizing reshard of
/// `shape` from `src` to `dst`, no dependencies yet) with the steps of
/// `scalePlan`'s shares, exchange (into every quantizer and holder table)
/// and scale writes, with `scaling` set; links by `topology`. The shares,
/// the exchange and the moves out of a source are cut into `bands` bands
/// along the first dimension of the scale tensor with more than one block
/// (equal numbers of block rows, the last one shorter; one band where there
/// is no such dimension). A route that reads a source the plan does not
/// (gather-bcast's root reads its own copy of what the plan takes from a
/// replica) gets that rank's quantizer table planned as planScales plans
/// any.
Schedule withScaleSteps(Schedule data, const Scaling &scaling,
                        const Layout &src, const Layout &dst,
                        const std::vector<int64_t> &shape,
                        const ScalePlan &scalePlan, const Topology &topology,
                        int64_t bands = 1);

/// The schedule of a quantizing reshard routed as `routed`: chunked by
/// `chunkBytes` but for the moves out of a source, which the bands cut
/// instead (scaleBandCount, at most `maxBands`: 1, the passes' default
/// scale-bands, is the amax pass, then the data), the amax exchange added
/// by withScaleSteps, and the dependencies (addDataDependencies).
Schedule quantizingSchedule(Schedule routed, const Scaling &scaling,
                            const Layout &src, const Layout &dst,
                            const std::vector<int64_t> &shape,
                            const ScalePlan &scalePlan,
                            const Topology &topology, int64_t elementBytes,
                            int64_t chunkBytes,
                            int64_t maxBands = 1);

} // namespace m2n

#endif // M2N_ROUTE_SCALESTEPS_H
