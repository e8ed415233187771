//===- VerifySchedule.h - a schedule delivers exactly the destination ----*- C++ -*-===//
//
// The proof that a schedule (routed or written by hand) computes the
// reshard: an abstract execution in dependency order that tracks, for every
// region of every buffer, which global elements it holds and which partial
// contributions are summed in it. At the end every destination rank's
// buffer must hold its local box, each element once, reduced over exactly
// the contributors the layouts give it (contributorsOf). On the way:
// boxes inside their buffers and of equal sizes, no write to a source, each
// region written once by a copy and then only reduced into (disjoint
// contributors, the same elements), reads only of written regions, and
// every step that reads or reduces a region after all the steps that wrote
// it (through its dependencies), so that the order the runtime may pick
// cannot change the result.
//
//===----------------------------------------------------------------------===//

#ifndef M2N_ROUTE_VERIFYSCHEDULE_H
#define M2N_ROUTE_VERIFYSCHEDULE_H

#include "m2n/Route/Schedule.h"

#include <optional>
#include <string>

namespace m2n {

struct ScheduleIssue {
  int64_t step = -1; // The step at fault, or -1 for the schedule.
  std::string message;
};

/// The first way in which `schedule` does not compute the reshard of
/// `shape` from `src` to `dst`, or std::nullopt.
std::optional<ScheduleIssue> verifySchedule(const Schedule &schedule,
                                            const Layout &src,
                                            const Layout &dst,
                                            const std::vector<int64_t> &shape);

} // namespace m2n

#endif // M2N_ROUTE_VERIFYSCHEDULE_H
