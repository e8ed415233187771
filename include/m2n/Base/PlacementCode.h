//===- PlacementCode.h - placements as the C APIs number them ---*- C++ -*-===//
//
// The runtime's m2n_layout_local_box and the compiler's structured request
// take placements as numbers (m2n_placement in m2n/runtime.h: kind 0 shard,
// 1 replicate, 2 partial; reduction 0 sum, 1 max, 2 min; explicit
// boundaries). One decoder for both.
//
//===----------------------------------------------------------------------===//

#ifndef M2N_BASE_PLACEMENTCODE_H
#define M2N_BASE_PLACEMENTCODE_H

#include "m2n/Base/Layout.h"

#include <cstdint>
#include <optional>
#include <string>

namespace m2n {

/// The placement the numbers describe, or what is wrong with them.
std::optional<std::string> decodePlacement(int kind, int64_t dim,
                                           int reduction,
                                           const int64_t *boundaries,
                                           int boundaryCount,
                                           Placement &placement);

} // namespace m2n

#endif // M2N_BASE_PLACEMENTCODE_H
