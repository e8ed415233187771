//===- ScalePlan.h - the amax exchange of a quantizing reshard ---*- C++ -*-===//
//
// What a reshard with a scaling (m2n/Base/Scaling.h) needs beyond its
// transfers (docs/fp8-scaling.md, "How it is planned"): the pieces of every
// block whose partial amaxes source ranks compute, and which ranks need
// which block's scale. Plain C++ beside the intersection planner, a pure
// function of the layouts, the shape and the plan (every rank derives the
// same one).
//
// Invariants (tested on random layouts):
//  1. Every element of the tensor is in exactly one piece, and a piece lies
//     in one block and in its rank's local box: the maximum over a block's
//     pieces is the block's amax.
//  2. Replicas share the work: a block's piece of a box that several source
//     ranks hold goes to one of them, chosen by the block's index.
//  3. A source rank needs the scale of every block its transfers touch (it
//     quantizes as it sends); a destination rank holds the scales of the
//     blocks its local box touches.
//
//===----------------------------------------------------------------------===//

#ifndef M2N_PLAN_SCALEPLAN_H
#define M2N_PLAN_SCALEPLAN_H

#include "m2n/Base/Layout.h"
#include "m2n/Base/Scaling.h"
#include "m2n/Plan/Planner.h"

#include <cstdint>
#include <map>
#include <vector>

namespace m2n {

/// The amax of one block's elements in one source rank's local buffer,
/// computed by that rank into slot `slot` of its partial-amax array.
struct AmaxPiece {
  int64_t rank = 0;
  Box box;           // In the rank's local buffer.
  int64_t block = 0; // Row-major over the scale tensor.
  int64_t slot = 0;
};

struct ScalePlan {
  Dims scaleShape;
  /// Ordered by rank, then slot (slots count from 0 on every rank).
  std::vector<AmaxPiece> pieces;
  /// The pieces of block b: piecesByBlock[blockStart[b] .. blockStart[b+1]),
  /// indices into `pieces`.
  std::vector<int64_t> blockStart, piecesByBlock;
  /// Per source rank, the blocks (sorted) whose scales it quantizes with.
  std::map<int64_t, std::vector<int64_t>> quantizedBlocks;
  /// Per destination rank, the blocks its scale tensor holds (a box of the
  /// scale tensor, blocksTouching its local box).
  std::map<int64_t, Box> heldBlocks;

  int64_t blockCount() const {
    return static_cast<int64_t>(blockStart.size()) - 1;
  }
};

/// The scale plan of `plan` (a plan of src -> dst for `shape`; `scaling`
/// passes checkScaling for it, the source has no partial axes).
ScalePlan planScales(const Scaling &scaling, const Layout &src,
                     const Layout &dst, const std::vector<int64_t> &shape,
                     const ReshardPlan &plan);

} // namespace m2n

#endif // M2N_PLAN_SCALEPLAN_H
