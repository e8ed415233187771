//===- Router.h - topology-aware routes for reshard plans --------*- C++ -*-===//
//
// TopologyRouter decides the path of every transfer of a plan:
//
//  * flat: every transfer of the plan as one step, source to destination
//    (each contribution sent to every destination replica);
//  * gather-bcast: the legacy path. A root (the first source rank) gathers
//    (and reduces) the whole tensor into a scratch buffer, a ring through all
//    destination ranks, ordered by NVLink domain, forwards the whole tensor,
//    and every destination copies its part out of it;
//  * hierarchical (the NCCL M2N route): a region needed by several
//    destination replicas crosses the network at most once per destination
//    domain. Destinations in a domain that holds a source replica of the
//    region pull it from that replica over NVLink. Every other domain
//    receives it once, into a leader replica, from one injecting source
//    replica, the domains forming a ring (injector -> leader of the next
//    domain -> leader of the one after...); the other replicas of a domain
//    pull it from their leader over NVLink.
//    Leaders are balanced: among the replicas of a domain, the number of
//    regions each leads differs by at most one. When destinations combine
//    several partial contributions, leaders land raw contributions in
//    scratch buffers and every replica reduces from there. With
//    setReduceShare, a region reduced for several replicas of one domain is
//    reduced once, chunk by chunk (each replica reduces one chunk of every
//    contribution), and the replicas copy each other's reduced chunks:
//    reduce-scatter, then all-gather. Auto picks the route with the smaller
//    T_SOL (the direct one on ties: 2 replicas move the same bytes either
//    way; 4 move half, 8 a quarter with reduce-share).
//    With setQuantizeOnce (quantizing reshards: the move out of a source
//    converts, and converting is what costs), destinations of one region
//    in a domain that holds a source replica do not all pull it: one of
//    them quantizes it (a destination that holds the region's source
//    itself, else the one that has quantized the fewest elements so far,
//    pulling it), and the others copy its fp8 bytes from it. Within such
//    a domain every element is quantized once (a region that also crosses
//    the network is quantized again by its injector's send).
//    With setQuantizeOnSources as well, such a region (where no destination
//    of the domain holds it) is cut into bands along its outermost
//    dimension that can be cut (at block boundaries where blocks cut it)
//    and the bands are shared among the domain's source replicas and its
//    destinations, water-filling the elements each has quantized so far
//    (an injector's send counts: it quantizes the whole region): a source
//    replica quantizes its band into a scratch of its own, a destination
//    pulls and quantizes its band (from the replica that has sent the
//    least), and every destination copies the fp8 bytes of the bands it
//    did not quantize, after every quantizing step of the schedule. The
//    element loop, which bounds a quantizing reshard (issue 32), then runs
//    on the sources' CTAs too, not only the destinations'.
//
// Every strategy delivers exactly what the plan delivers (the same bytes
// into the same destination boxes); the schedules differ in the path.
//
//===----------------------------------------------------------------------===//

#ifndef M2N_ROUTE_ROUTER_H
#define M2N_ROUTE_ROUTER_H

#include "m2n/Plan/Planner.h"
#include "m2n/Route/Schedule.h"
#include "m2n/Base/Topology.h"

#include <optional>
#include <set>
#include <string>

namespace m2n {

/// Whether hierarchical routes reduce, then share (routeReduceShare): always,
/// never, or where the cost model (CostModel.h) finds it cheaper.
enum class ReduceShare { Off, On, Auto };
/// "off", "on" (or "true"/"false") and "auto"; std::nullopt otherwise.
std::optional<ReduceShare> parseReduceShare(const std::string &text);

class TopologyRouter {
public:
  TopologyRouter(const Layout &src, const Layout &dst,
                 std::vector<int64_t> shape, const Topology &topology);

  /// Routes `plan` (an IntersectionPlanner plan of the same layouts). The
  /// steps have no dependencies yet (see addDataDependencies).
  Schedule route(const ReshardPlan &plan, Strategy strategy) const;

  /// Hierarchical routes reduce, then share (routeReduceShare) where they
  /// can: Off by default here; the passes default to Auto.
  TopologyRouter &setReduceShare(ReduceShare mode) {
    reduceShare = mode;
    return *this;
  }
  TopologyRouter &setReduceShare(bool enabled) {
    return setReduceShare(enabled ? ReduceShare::On : ReduceShare::Off);
  }
  /// Hierarchical routes of a quantizing reshard quantize each region once
  /// per domain (see above). Off by default here; the passes default to on
  /// for quantizing reshards.
  TopologyRouter &setQuantizeOnce(bool enabled) {
    quantizeOnce = enabled;
    return *this;
  }
  /// With quantizing once (only), the source replicas share the quantizing
  /// (see the file comment), cutting bands at multiples of `blocks` (the
  /// scaling's block shape, blockShape; empty: anywhere). Off by default.
  TopologyRouter &setQuantizeOnSources(bool enabled, Dims blocks = {}) {
    quantizeOnSources = enabled;
    quantizingBlocks = std::move(blocks);
    return *this;
  }

private:
  Schedule routeFlat(const ReshardPlan &plan) const;
  Schedule routeGatherBroadcast() const;
  Schedule routeHierarchical(const ReshardPlan &plan) const;
  std::set<size_t> routeReduceShare(const ReshardPlan &plan,
                                    Schedule &schedule) const;

  const Layout &src;
  const Layout &dst;
  std::vector<int64_t> shape;
  const Topology &topology;
  DomainMap domains; // The topology's rank -> domain lookups.
  MeshIndex srcIndex, dstIndex; // Rank -> grid position in each mesh.
  ReduceShare reduceShare = ReduceShare::Off;
  bool quantizeOnce = false;
  bool quantizeOnSources = false;
  Dims quantizingBlocks;
};

} // namespace m2n

#endif // M2N_ROUTE_ROUTER_H
