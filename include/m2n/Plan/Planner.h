//===- Planner.h - layout-derived reshard plans ------------------*- C++ -*-===//
//
// IntersectionPlanner derives, from a source and a destination layout, the
// exact set of box transfers that turns every destination rank's local
// buffer into its part of the logical tensor. It is plain C++ so that the
// compiler pass, the simulator and the runtime share it.
//
// Invariants of a plan (checked by verifyPlan, tested on random layouts):
//  1. Exact. Every element of a destination rank's local box receives one
//     copy, plus one reduce for every further partial contributor it needs
//     (contributorsOf: all source contributors, or those that share its
//     coordinates on the partial axes the destination keeps). Nothing else
//     is sent.
//  2. Whole boxes. A transfer moves the full intersection of one source
//     rank's box with one destination rank's box, so there is at most one
//     transfer per (source box, destination rank, contributor): no
//     fragmentation into rows.
//  3. Owners. A region held by several source replicas comes from one of
//     them. A destination rank that is itself a replica copies locally; the
//     other destinations are spread over the replicas so that the number of
//     transfers each replica serves for one source box differs by at most
//     one (ties go to the replica with the fewest transfers overall).
//  4. Deterministic. The plan is a pure function of (src, dst, shape): every
//     rank derives the same plan with no communication.
//  5. Order. For each destination rank the copied contributor comes first
//     (its own contribution when it is a source contributor, so that the
//     copy is local; otherwise the lowest it needs), then the others in
//     increasing order as reduces.
//
//===----------------------------------------------------------------------===//

#ifndef M2N_PLAN_PLANNER_H
#define M2N_PLAN_PLANNER_H

#include "m2n/Base/Layout.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace m2n {

/// One box moved from a source rank's local buffer to a destination rank's
/// local buffer; both boxes have the same sizes.
struct Transfer {
  int64_t srcRank = 0;
  Box srcBox; // In the source rank's local buffer.
  int64_t dstRank = 0;
  Box dstBox; // In the destination rank's local buffer.
  /// std::nullopt: copy; otherwise combine into the destination with it.
  std::optional<Reduction> reduction;

  bool isLocal() const { return srcRank == dstRank; }
  /// "0 [0:1, 0:8] -> 4 [1:2, 0:8] copy".
  std::string str() const;
};

struct ReshardPlan {
  std::vector<Transfer> transfers;

  /// Elements moved between different ranks (local copies excluded).
  int64_t remoteElements() const;
};

class IntersectionPlanner {
public:
  /// The layouts must pass validateReshard.
  IntersectionPlanner(const Layout &src, const Layout &dst,
                      std::vector<int64_t> shape);

  ReshardPlan plan() const;

private:
  const Layout &src;
  const Layout &dst;
  std::vector<int64_t> shape;
};

/// A problem found in a plan; `transfer` is the index of the offending
/// transfer, or -1 for a coverage problem of a destination rank.
struct PlanIssue {
  int64_t transfer = -1;
  std::string message;
};

/// Checks bounds, element correspondence and exact coverage (invariant 1) of
/// a plan. Returns at most `maxIssues` problems; empty means the plan is
/// correct.
std::vector<PlanIssue> verifyPlan(const Layout &src, const Layout &dst,
                                  const std::vector<int64_t> &shape,
                                  const ReshardPlan &plan,
                                  size_t maxIssues = 8);

} // namespace m2n

#endif // M2N_PLAN_PLANNER_H
