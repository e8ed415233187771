//===- Schedule.h - per-rank steps with dependencies -------------*- C++ -*-===//
//
// A schedule is what a plan becomes once every byte has a path: a list of
// steps, each moving (copying or reducing) one box from a buffer of one rank
// to a buffer of another, over a link class, after the steps it depends on.
// Buffers are a rank's source buffer (its local part of the input, read
// only), its destination buffer (its local part of the output) and scratch
// buffers that routing introduces (a leader's landing zone for raw partial
// contributions, the root's full tensor in gather-bcast).
//
// A quantizing reshard (docs/fp8-scaling.md) adds the steps of its amax
// exchange, in blocks: `amax` steps (a source rank computes the partial
// amaxes of its share of blocks into its slots), moves from slots into
// quantizer and holder tables (copies and max-reductions), and `scale`
// steps (a destination rank turns its holder table into its scale tensor).
// Every move out of a source buffer then quantizes, dividing each element
// by the scale of its block in the source rank's quantizer table, whoever
// executes it.
//
// Execution model: a step may start once all its dependencies have
// completed. The rank that executes a step is the receiving rank (it pulls
// over NVLink, or posts the receive of a network transfer whose send the
// runtime posts on the source rank).
//
//===----------------------------------------------------------------------===//

#ifndef M2N_ROUTE_SCHEDULE_H
#define M2N_ROUTE_SCHEDULE_H

#include "m2n/Base/Buffer.h"
#include "m2n/Base/Layout.h"
#include "m2n/Base/Strategy.h"
#include "m2n/Base/Topology.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace m2n {

struct Step {
  StepKind kind = StepKind::Move;
  BufferRef from;
  Box fromBox;
  BufferRef to;
  Box toBox; // Same sizes as fromBox.
  std::optional<Reduction> reduction;
  LinkClass link = LinkClass::Local;
  /// Indices of the steps that must complete first.
  std::vector<int64_t> deps;

  int64_t executor() const { return to.rank; }
  bool operator==(const Step &other) const {
    return kind == other.kind && from == other.from &&
           fromBox == other.fromBox && to == other.to &&
           toBox == other.toBox && reduction == other.reduction &&
           link == other.link && deps == other.deps;
  }
  /// "copy src(0) [0:1, 0:8] -> dst(4) [0:1, 0:8] via network after [2]",
  /// "amax src(0) [0:2, 0:1] -> slots(0) [0:2, 0:1] via local".
  std::string str() const;
};

/// Whether `step` belongs to a quantizing schedule's amax exchange: an amax
/// or scale step, or a move of blocks (between scale buffers or the
/// schedule's `scratches` that stage amaxes for the network).
bool isScaleStep(const Step &step,
                 const std::vector<ScratchBuffer> &scratches = {});
/// Why `step` joins buffers its kind does not, or std::nullopt: an amax
/// step reads a source into the same blocks of the same rank's slots, a
/// scale step a holder table into the same blocks of the same rank's
/// scales, blocks move (copy or max) only from slots into quantizer and
/// holder tables, through scratches of `scratches` that stage amaxes (by
/// copy), and no move of elements touches a scale buffer.
std::optional<std::string>
checkStepKind(const Step &step,
              const std::vector<ScratchBuffer> &scratches = {});

struct Schedule {
  Strategy strategy = Strategy::Hierarchical;
  /// A quantizing reshard's: its blocks (the scale buffers' shapes) and
  /// what its moves out of a source do.
  std::optional<Scaling> scaling;
  std::vector<ScratchBuffer> scratches;
  std::vector<Step> steps;
};

/// The part of `step` that moves `size` elements of dimension `dim` from
/// `begin` on (relative to its boxes' offsets), dependencies kept.
Step sliceStep(const Step &step, int64_t dim, int64_t begin, int64_t size);

/// The most pieces chunkSchedule cuts one step into: a pipeline this deep
/// already overlaps forwarding with arrival, and a 4 TiB step cut into 4 MiB
/// chunks would be a million steps. Larger steps get larger chunks.
constexpr int64_t kMaxChunksPerStep = 1024;

/// Splits every step whose box is larger than `chunkBytes` into pieces along
/// its outermost dimension of extent > 1, so that a forwarding step can start
/// on the first chunk while later chunks are still arriving; at most
/// kMaxChunksPerStep pieces per step; with `keepSourceReads`, steps that
/// read a source buffer stay whole (a quantizing schedule cuts those by
/// bands of blocks: withScaleSteps). Dependencies are dropped; call
/// addDataDependencies afterwards.
Schedule chunkSchedule(Schedule schedule, int64_t elementSize,
                       int64_t chunkBytes, bool keepSourceReads = false);

/// Replaces every step's dependencies by those its data needs: a step that
/// reads a region of a destination, scratch or scale buffer waits for every
/// step that writes an overlapping region of it, and a reduce waits for the
/// copies into overlapping regions of its target. (Source buffers are ready
/// from the start; every region is written once by a copy, then only
/// reduced into.) For schedules without scaling: a quantizing one needs
/// the form below (verifySchedule names a move out of a source that does
/// not wait for its quantizer blocks).
void addDataDependencies(Schedule &schedule);
/// The same for a schedule of `shape` from `src`, where a quantizing move
/// out of a source waits only for the steps that write the blocks of its
/// source rank's quantizer table that its box touches (and for no others:
/// the data of one band of blocks moves while later bands' amaxes are
/// still exchanged).
void addDataDependencies(Schedule &schedule, const Layout &src,
                         const std::vector<int64_t> &shape);

} // namespace m2n

#endif // M2N_ROUTE_SCHEDULE_H
