//===- ScalePlan.h - the amax exchange of a quantizing reshard ---*- C++ -*-===//
//
// What a reshard with a scaling (m2n/Base/Scaling.h) needs beyond its
// transfers (docs/fp8-scaling.md, "How it is planned"). Plain C++ beside
// the intersection planner, a pure function of the layouts, the shape and
// the plan (every rank derives the same one). Everything is in blocks (the
// scale tensor's coordinates):
//
//  * Slots. Every source rank has an f32 array with one slot per block its
//    local box touches (`slotBoxes`, row-major), for the partial amaxes it
//    computes: the amax of its elements of each block of `amaxBoxes`, a
//    sub-box of its slot box. Replicas (ranks holding the same box) split
//    the blocks of their box: torch.chunk of its widest block dimension.
//  * Tables. A source rank quantizes with the scales of the blocks its
//    transfers touch (its quantizer table: its slot box again); a
//    destination rank holds the scales of the blocks its local box touches
//    (its holder table, the shape of its scale tensor). Tables hold amaxes
//    until the scale rule turns them into scales.
//  * The exchange: box transfers from slots into tables, a copy from the
//    first source box of each table block and a max-reduction from every
//    other one (blocks straddling source shards have several).
//
// Invariants (tested on random layouts, ScalePlanTest):
//  1. Every element of the tensor is in exactly one amax box piece: the
//     maximum over a block's pieces is the block's amax.
//  2. After the exchange every table entry is its block's amax, and the
//     exchange reads only slots that their ranks compute.
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

/// Which of a rank's two tables a transfer of the exchange fills.
enum class ScaleTable : uint8_t { Quantizer, Holder };

/// One transfer of the exchange: a box of `srcRank`'s slots (coordinates
/// relative to its slot box) into a box of `dstRank`'s `table` (relative to
/// that table's box); copy, or max-reduce.
struct AmaxTransfer {
  Transfer transfer;
  ScaleTable table = ScaleTable::Quantizer;
};

struct ScalePlan {
  Dims scaleShape;
  /// Per source rank: the blocks its box touches (its slots and its
  /// quantizer table) and those whose partial amaxes it computes.
  std::map<int64_t, Box> slotBoxes, amaxBoxes;
  /// Per destination rank: the blocks its scale tensor holds.
  std::map<int64_t, Box> holderBoxes;
  /// Copies before max-reductions, each group in rank order.
  std::vector<AmaxTransfer> exchange;

  /// The box of `rank`'s `table` (of rank 0 when it has none).
  Box tableBox(int64_t rank, ScaleTable table) const;
};

/// The scale plan of `plan` (a plan of src -> dst for `shape`; `scaling`
/// passes checkScaling for it, the source has no partial axes).
ScalePlan planScales(const Scaling &scaling, const Layout &src,
                     const Layout &dst, const std::vector<int64_t> &shape,
                     const ReshardPlan &plan);

/// The boxes a scale plan derives from the layouts rather than stores:
/// every source rank's slot box, every destination rank's holder box.
void deriveScaleBoxes(const Scaling &scaling, const Layout &src,
                      const Layout &dst, const std::vector<int64_t> &shape,
                      ScalePlan &scalePlan);

/// Checks a scale plan of `plan` (planScales's, or one read from the IR,
/// with deriveScaleBoxes applied): every amax share inside its rank's slot
/// box and every element in exactly one share; every exchange transfer
/// reading slots its source rank computes and writing inside a table; every
/// table of a rank that sends (quantizer) or receives (holder) given, for each block, one copy and a max-reduction
/// from every other share of the block, nothing twice. At most `maxIssues`
/// problems, `transfer` indexing `exchange` (-1: the plan as a whole);
/// empty means correct.
std::vector<PlanIssue>
verifyScalePlan(const Scaling &scaling, const Layout &src, const Layout &dst,
                const std::vector<int64_t> &shape, const ReshardPlan &plan,
                const ScalePlan &scalePlan, size_t maxIssues = 8);

/// Calls visit(index) for every index of `box`, row-major (last dimension
/// fastest): the walk over blocks and elements the scale plan, its verifier
/// and its simulator share.
template <typename Visit> void forEachIndex(const Box &box, Visit &&visit) {
  if (box.empty())
    return;
  Dims index = box.offsets;
  for (int64_t i = 0, n = box.volume(); i < n; ++i) {
    visit(static_cast<const Dims &>(index));
    for (size_t d = index.size(); d-- > 0;) {
      if (++index[d] < box.offsets[d] + box.sizes[d])
        break;
      index[d] = box.offsets[d];
    }
  }
}

/// The elements of block `coords` (cut by the tensor's end).
Box blockElements(const Scaling &scaling, const Dims &shape,
                  const Dims &coords);

} // namespace m2n

#endif // M2N_PLAN_SCALEPLAN_H
