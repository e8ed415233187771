//===- PlacementCode.cpp - placements as the C APIs number them -----------===//

#include "m2n/Base/PlacementCode.h"

namespace m2n {

std::optional<std::string> decodePlacement(int kind, int64_t dim,
                                           int reduction,
                                           const int64_t *boundaries,
                                           int boundaryCount,
                                           Placement &placement) {
  if (kind < 0 || kind > 2 || reduction < 0 || reduction > 2 ||
      boundaryCount < 0 || (boundaryCount && !boundaries))
    return std::string("has an unknown kind or reduction, or no boundaries");
  placement = Placement();
  placement.kind = static_cast<Placement::Kind>(kind);
  placement.dim = kind == 0 ? dim : -1;
  placement.reduction = static_cast<Reduction>(reduction);
  placement.boundaries.assign(boundaries, boundaries + boundaryCount);
  return std::nullopt;
}

} // namespace m2n
