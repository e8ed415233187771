//===- TransferProgram.h - schedules as work items for the kernel -*- C++ -*-===//
//
// Lowers a schedule into the per-rank programs of the artifact
// (m2n/Artifact/Program.h): the tables of work items the transfer kernel
// walks (lib/Conversion/M2NToGPU/TransferKernel.cpp), the network transfers
// the runtime posts through NCCL, and the counters that order them. Plain
// C++, part of the compiler.
//
// Lowering a schedule (docs/codegen.md, "Mechanisms"):
//  * every step becomes contiguous runs of bytes (the box decomposed along
//    the dimensions it does not cover entirely in both buffers); where the
//    runs are short or unaligned and tensor maps can describe the box, tiles
//    (Mechanism::Tile); otherwise each run is cut into an aligned middle of
//    TMA bulk items and SM-path (Mechanism::Vector) heads and tails, or is
//    all vector where TMA cannot take it (misaligned addresses, reductions
//    TMA lacks, short runs). Nothing is refused for its shape or type;
//  * local and NVLink steps become kernel items on the rank they write to
//    (the executor pulls from peers); network steps become network
//    transfers;
//  * each step with dependents gets a counter on its executor, incremented
//    once per item; a dependent item waits until each dependency's counter
//    reaches its item count. An item waits for at most two counters: more
//    dependencies are combined by zero-byte join items;
//  * vector reductions are not atomic: reduction steps onto bytes a vector
//    reduction writes are ordered;
//  * the items of a rank are in a topological order of the steps, so that
//    CTAs walking their share of the table in order cannot deadlock;
//  * reads-done: an item reading another rank's buffer increments a counter
//    of that rank, which ends its table waiting for all those reads, so its
//    kernel ends only when its buffers may be reused;
//  * a quantizing schedule (Schedule::scaling, docs/fp8-scaling.md): amax
//    steps become vector amax moves and moves out of a source quantizing
//    vector moves, over one-row runs whose BlockLookup names each
//    element's block (bands inside blocks, pieces of whole blocks); the
//    exchange moves f32 amaxes; scale steps become scale moves.
//
//===----------------------------------------------------------------------===//

#ifndef M2N_CODEGEN_TRANSFERPROGRAM_H
#define M2N_CODEGEN_TRANSFERPROGRAM_H

#include "m2n/Artifact/Program.h"
#include "m2n/Route/Schedule.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace m2n {

/// Which contiguous, dependency-free source-to-destination copies the copy
/// engine moves (LoweringOptions::copyEngine).
enum class CopyEngineUse {
  ByCost, // Where copyEngineIsFaster says so ("auto", the default).
  Always, // Every one of at least engineMinBytes ("true").
  Never,  // None ("false").
};

/// The copy engine's cost model: whether one copy of `bytes` costs less as
/// a copy-engine copy enqueued before the kernel than as work of a kernel
/// of `ctas` CTAs per rank. `sameRank`: the rank's own bytes (one device);
/// otherwise a peer's, over NVLink, which bounds both mechanisms. The
/// constants are measurements: the kernel moves ~50 GB/s per CTA end to
/// end, up to ~1,150 GB/s at 32 CTAs within a GPU (H100,
/// bench/results/read-done-2026-12-07.md); the copy engine 2,040-2,100
/// GB/s within a GPU and 394 GB/s to an NVLink peer where TMA reaches 370;
/// a copy enqueued before the kernel costs ~5 us more than kernel items
/// (H200, gpu-bench-2026-11-30.md, gpu-1gpu-2026-12-01.md).
bool copyEngineIsFaster(int64_t bytes, bool sameRank, int64_t ctas);

/// Which of a rank's copies of its own partial fuse with the first
/// reduction onto them (LoweringOptions::fuseReductions).
enum class ReductionFusion {
  ByCost, // Where fusedReductionIsFaster says so ("auto", the default).
  Always, // Every one ("true").
  Never,  // None ("false").
};

/// The fused reduction's cost model: whether a kernel of `ctas` CTAs per
/// rank moves a reduction faster fused (one SM-path pass that reads both
/// operands) than as a TMA copy and a TMA bulk reduction. Fused moves
/// fewer bytes, which wins where memory bounds both; the SM path keeps
/// fewer bytes in flight per CTA than TMA's stages, which loses where the
/// CTAs bound them (bench/results/fused-reductions-2026-12-07.md).
bool fusedReductionIsFaster(int64_t ctas);

struct LoweringOptions {
  int64_t maxItemBytes = 65536;
  /// The alignment every caller buffer (a rank's source or destination) is
  /// promised to have, a power of two. TMA needs 16-byte aligned addresses:
  /// below 16 the lowering cannot know where a buffer's 16-byte boundaries
  /// are, so every step that touches a caller buffer moves on the SM path
  /// (which picks its vector width from the addresses at run time). The
  /// Python frontend passes the alignment of the tensors it is given, as
  /// Triton specializes its kernels on 16-divisible pointers.
  int64_t bufferAlignment = 16;
  /// Boxes whose contiguous runs are shorter than this move as tiles (one
  /// TMA tensor copy per tile of up to 256 per dimension) where tensor maps
  /// can describe them.
  // 16 KiB: 8 KiB rows moved 4x faster as 128x256 tiles than as bulk runs
  // (bench/results/gpu-bench-2026-11-30.md).
  int64_t tileBelowRunBytes = 16384;
  /// Use tiles wherever tensor maps can describe the box.
  bool preferTiles = false;
  /// Runs shorter than this move on the SM path (Mechanism::Vector) instead
  /// of as TMA bulk items, and so does what is left of a run once its
  /// unaligned head and tail are cut off. Runs that TMA cannot take at all
  /// (misaligned against each other, a reduction TMA lacks) take the SM
  /// path whatever their size.
  // 0 until measured on H200: the SM path takes only what TMA cannot.
  int64_t vectorBelowBytes = 0;
  /// Steps that copy a source (the rank's own, or a peer's over NVLink) into
  /// the executing rank's destination, with no dependencies, one contiguous
  /// run in both and at least engineMinBytes, become copy-engine copies the
  /// runtime enqueues on the executor's stream before its kernel
  /// (RankProgram::engineCopies). The copy engine moves same-GPU bytes ~6x
  /// faster than 16 CTAs of TMA (2.1 TB/s vs 347 GB/s on H200: a rank's own
  /// copy, virtual ranks, a trainer and a generator sharing a GPU) and uses
  /// no SM; across NVLink it matched TMA (394 vs 370 GB/s, 1 GiB, 2 H200).
  /// Their dependents on the same rank need no counter (stream order);
  /// dependents elsewhere wait for a zero-byte item that signals at the
  /// start of the kernel, and a zero-byte item there reports the reads to
  /// each peer read from (reads-done).
  CopyEngineUse copyEngine = CopyEngineUse::ByCost;
  /// The smallest run the copy engine takes: below, enqueueing a copy costs
  /// more than the kernel's items (a few microseconds per copy).
  int64_t engineMinBytes = 1 << 20;
  /// CTAs per rank of the kernel the copies would otherwise run in (the
  /// pipeline's max-ctas), for the cost model.
  int64_t kernelCtas = 16;
  /// Whether a rank's copy of its own partial into its destination and the
  /// first reduction onto those bytes become one vector reduction that
  /// reads both operands (Movement::accumulator): 3 passes over the bytes
  /// instead of 5, on the SM path instead of TMA.
  ReductionFusion fuseReductions = ReductionFusion::ByCost;
};

/// An in-flight cast: the source's element type (the destination's is the
/// reshard's) and the factor every element is multiplied by.
struct ElementCast {
  ElementType source = ElementType::F32;
  float scale = 1.0f;
};

/// Network steps as single contiguous NCCL transfers: a network step whose
/// source box is strided in its buffer (or, with `castsSources`, that reads
/// a source buffer: the cast converts into staging) is packed by a local
/// step on the sending rank into a staging scratch; one whose target box is
/// strided, or that reduces (NCCL receives only copy), receives into a
/// staging scratch and a local step unpacks (or reduces) it. Dependencies
/// follow. (--m2n-stage-network-steps.)
Schedule stageNetworkSteps(const Schedule &schedule, const Layout &src,
                           const Layout &dst,
                           const std::vector<int64_t> &shape,
                           bool castsSources);

/// `schedule` with its steps numbered in emission order, the one
/// topological order every rank's items and the runtime's network posts
/// follow (so no CTA and no network stream waits for what waits behind
/// it); schedules without network steps, or with a missing step or a
/// cycle, are returned as they are. (--m2n-order-steps.)
Schedule inEmissionOrder(Schedule schedule);

/// Whether inEmissionOrder would return `schedule` as it is (without
/// building the copy).
bool isInEmissionOrder(const Schedule &schedule);

/// `schedule` with the dependencies a vector reduction needs: reduction
/// steps onto overlapping bytes of one buffer of which the lowering (with
/// `options`) moves one on the SM path (load, combine, store: not atomic,
/// unlike TMA's reductions) wait for each other, in the order the executing
/// rank's items list them. A schedule that needs none, or that cannot be
/// lowered (the lowering names why), is returned as it is. Steps keep their
/// numbers: a schedule with network steps is numbered again after it
/// (inEmissionOrder). (--m2n-order-reductions.)
Schedule orderReductions(const Schedule &schedule, const Layout &src,
                         const Layout &dst, const std::vector<int64_t> &shape,
                         ElementType type, const LoweringOptions &options,
                         std::optional<ElementCast> cast = std::nullopt);

/// Lowers a schedule that is staged and ordered (the three functions above,
/// the pipeline's passes before m2n-lower-schedule) into per-rank programs,
/// or returns a message naming what cannot be lowered: a network step that
/// still needs staging, a numbering that is not the emission order and a
/// vector reduction not ordered against the reductions it overlaps are
/// refused by name. With `cast`, the source holds
/// cast->source elements: every step out of a source buffer converts on
/// the SM path, everything after moves `type`.
std::optional<std::string>
lowerPreparedSchedule(const Schedule &schedule, const Layout &src,
                      const Layout &dst, const std::vector<int64_t> &shape,
                      ElementType type, const LoweringOptions &options,
                      TransferProgram &program,
                      std::optional<ElementCast> cast = std::nullopt);

/// stageNetworkSteps, orderReductions, inEmissionOrder and
/// lowerPreparedSchedule in a row:
/// what --m2n-pipeline's passes compute, for C++ callers.
/// Lowers `schedule` (of a reshard from `src` to `dst` of `shape`, whose
/// destination holds `type`) into per-rank programs, or returns a message
/// naming what cannot be lowered. With `cast`, the source holds
/// cast->source elements: every step out of a source buffer converts on
/// the SM path (a network step out of one is packed into staging first,
/// converting there), everything after moves `type`.
std::optional<std::string>
lowerSchedule(const Schedule &schedule, const Layout &src, const Layout &dst,
              const std::vector<int64_t> &shape, ElementType type,
              const LoweringOptions &options, TransferProgram &program,
              std::optional<ElementCast> cast = std::nullopt);

} // namespace m2n

#endif // M2N_CODEGEN_TRANSFERPROGRAM_H
