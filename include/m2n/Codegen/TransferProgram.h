//===- TransferProgram.h - schedules as work items for the kernel -*- C++ -*-===//
//
// The host-side launch description of a schedule: for every rank, the table
// of work items its transfer kernel walks (lib/Conversion/M2NToGPU/
// TransferKernel.cpp), the network transfers its runtime posts through
// NCCL, and the counters that order them. Plain C++, shared by the compiler,
// the artifact and the runtime.
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
//    kernel ends only when its buffers may be reused.
//
//===----------------------------------------------------------------------===//

#ifndef M2N_CODEGEN_TRANSFERPROGRAM_H
#define M2N_CODEGEN_TRANSFERPROGRAM_H

#include "m2n/Route/Schedule.h"
#include "m2n/Sim/ElementType.h"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace m2n {

/// How the kernel moves a movement's bytes (LoweringOptions says which
/// movement gets which).
enum class Mechanism : uint8_t {
  /// One TMA bulk copy or bulk reduction of contiguous bytes
  /// (`cp.async.bulk`, `cp.reduce.async.bulk`): 16-byte aligned addresses
  /// and sizes, reductions only where TMA has them (tmaBulkReduces).
  Bulk = 0,
  /// One box between two TMA tensor maps (`cp.async.bulk.tensor`,
  /// `cp.reduce.async.bulk.tensor`).
  Tile = 1,
  /// The CTA's threads load, combine in registers and store contiguous
  /// bytes with the widest vectors the addresses allow: any alignment, any
  /// size, every reduction on every element type.
  Vector = 2,
};
const char *toString(Mechanism mechanism);

/// Whether TMA bulk reductions (non-tensor) cover `reduction` on `type`.
/// They exist for add on f32, f64, f16, bf16, s32, u64 (i64 sums) and
/// min/max on f16, bf16, s32, s64: not f32/f64 min/max, not 8/16-bit
/// integers.
bool tmaBulkReduces(Reduction reduction, ElementType type);
/// Whether TMA tensor reductions cover `reduction` on `type` (add on f32,
/// f16, bf16, s32, u64; min/max on f16, bf16, s32).
bool tmaTileReduces(Reduction reduction, ElementType type);
/// "copy", or the reduction and type as PTX spells them ("add.f32").
std::string opName(std::optional<Reduction> reduction, ElementType type);

struct CounterRef {
  int64_t rank = 0;
  int64_t index = 0;
  bool operator==(const CounterRef &other) const {
    return rank == other.rank && index == other.index;
  }
};

struct CounterWait {
  CounterRef counter;
  uint64_t value = 0;
};

/// A TMA tensor map the runtime encodes over a buffer: the buffer's extents
/// and the box one load or store moves (row-major, rank 1-5).
struct TensorMapSpec {
  BufferRef buffer;
  Dims extents;
  Dims box;
  bool operator==(const TensorMapSpec &other) const {
    return buffer == other.buffer && extents == other.extents &&
           box == other.box;
  }
};

/// One contiguous run, from a byte offset of one buffer to a byte offset of
/// another; or, for a tile, one box through two tensor maps.
struct Movement {
  BufferRef src;
  int64_t srcOffset = 0;
  BufferRef dst;
  int64_t dstOffset = 0;
  int64_t bytes = 0;
  Mechanism mechanism = Mechanism::Bulk;
  /// Tiles: indices into TransferProgram::maps and the box's corner in each
  /// buffer (row-major); offsets are unused.
  int64_t srcMap = -1, dstMap = -1;
  Dims srcCoords, dstCoords;
  /// Combine into the destination instead of copying (element type: the
  /// program's).
  std::optional<Reduction> reduction;
  std::optional<CounterRef> signal;
  std::vector<CounterWait> waits;
  /// A kernel item that reads another rank's buffer increments this counter
  /// of that rank once its bytes have been read; that rank's kernel ends
  /// only when every such read is done (its "reads-done" item), so that its
  /// caller may overwrite the buffer once the stream passes the kernel.
  std::optional<CounterRef> readDone;
  int64_t step = -1; // The schedule step it comes from (-1: a join).

  bool isTile() const { return mechanism == Mechanism::Tile; }
  bool isCopy() const { return !reduction; }
  /// E.g. "add.f32 src(1)+0 -> dst(0)+0 64B wait 0:0>=1"; mechanisms other
  /// than bulk are named after the op ("copy vector ...", "copy tile ...").
  std::string str(ElementType type) const;

  /// Whether the waits order only the store: the source is a reshard source,
  /// which no step writes (lowerSchedule rejects schedules that do), so the
  /// kernel may load the bytes before the dependencies are met.
  bool waitsOrderOnlyTheStore() const { return src.kind == BufferKind::Source; }
};

struct RankProgram {
  /// Items of this rank's transfer kernel, in a topological order.
  std::vector<Movement> items;
  /// Network transfers this rank receives (the runtime posts the matching
  /// send on the source rank), in a topological order.
  std::vector<Movement> receives;
  /// Local copies the runtime makes with the copy engine before the kernel
  /// (LoweringOptions::copyEngine): contiguous runs, adjacent runs merged.
  std::vector<Movement> engineCopies;
  int64_t counters = 0;
};

struct TransferProgram {
  ElementType type = ElementType::F32;
  /// The alignment (bytes, a power of two) the program assumes of every
  /// caller buffer's address (LoweringOptions::bufferAlignment); the runtime
  /// refuses buffers that lack it. Below 16 no TMA item touches a caller
  /// buffer. Scratch buffers are the runtime's own and always 16-aligned.
  int64_t bufferAlignment = 16;
  std::vector<ScratchBuffer> scratches;
  std::vector<TensorMapSpec> maps;
  std::map<int64_t, RankProgram> ranks;

  int64_t itemCount() const;
};

/// Every network receive of `program` with its receiving rank, in the
/// order the runtime posts them: by step, then rank, then program order.
/// Each device posts its share on one stream in this order (one GPU: all of
/// them), so the lowering keeps step order topological.
std::vector<std::pair<int64_t, const Movement *>>
networkOrder(const TransferProgram &program);

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
  bool copyEngine = false;
  /// The smallest run the copy engine takes: below, enqueueing a copy costs
  /// more than the kernel's items (a few microseconds per copy).
  int64_t engineMinBytes = 1 << 20;
};

/// Checks what the runtime trusts blindly in a program of a reshard from
/// `src` to `dst` of `shape`: every move inside existing buffers (tiles
/// through tensor maps of their own buffers), every counter it names
/// existing and every wait value exactly what one execution adds, every
/// reduction one its mechanism has, over whole elements, copy-engine copies
/// plain copies. Returns a message naming the first problem.
std::optional<std::string> verifyTransferProgram(const TransferProgram &program,
                                                 const Layout &src,
                                                 const Layout &dst,
                                                 const std::vector<int64_t> &shape);

/// Lowers `schedule` (of a reshard from `src` to `dst` of `shape`) into
/// per-rank programs, or returns a message naming what cannot be lowered.
std::optional<std::string>
lowerSchedule(const Schedule &schedule, const Layout &src, const Layout &dst,
              const std::vector<int64_t> &shape, ElementType type,
              const LoweringOptions &options, TransferProgram &program);

} // namespace m2n

#endif // M2N_CODEGEN_TRANSFERPROGRAM_H
