//===- TransferProgram.h - schedules as work items for the kernel -*- C++ -*-===//
//
// The host-side launch description of a schedule: for every rank, the table
// of work items its transfer kernel walks (lib/Conversion/M2NToGPU/
// TransferKernel.mlir), the network transfers its runtime posts through
// NCCL, and the counters that order them. Plain C++, shared by the compiler,
// the artifact and the runtime.
//
// Lowering a schedule:
//  * every step becomes contiguous runs of bytes (the box decomposed along
//    the dimensions it does not cover entirely in both buffers), cut into
//    items of at most `maxItemBytes`, or, when the runs are short or not
//    16-byte aligned (TMA bulk copies need that), tiles: boxes of up to 256
//    elements per dimension that one TMA tensor copy moves through tensor
//    maps over the two buffers (rank 1-5, 16-byte row pitches, tile rows of
//    a multiple of 16 bytes). Boxes neither path can move are rejected;
//  * local and NVLink steps become kernel items on the rank they write to
//    (the executor pulls from peers: on 2x H200, pushing part of a copy from
//    the source rank made it slower); network steps become network
//    transfers;
//  * each step with dependents gets a counter on its executor, incremented
//    once per item; a dependent item waits until each dependency's counter
//    reaches its item count. An item waits for at most two counters: more
//    dependencies are combined by zero-byte join items;
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

/// The `op` field of a kernel item: a copy or a TMA bulk reduction.
enum class ItemOp : uint32_t {
  Copy = 0,
  AddF32 = 1,
  AddF16 = 2,
  AddBF16 = 3,
  MinF16 = 4,
  MaxF16 = 5,
  MinBF16 = 6,
  MaxBF16 = 7,
  AddS32 = 8,
  MinS32 = 9,
  MaxS32 = 10,
  AddU64 = 11,
  MinS64 = 12,
  MaxS64 = 13,
  AddF64 = 14,
};
const char *toString(ItemOp op);
/// The bulk reduction for `reduction` on `type`, or std::nullopt when TMA
/// has none (f32 min/max, 8- and 16-bit integers, ...).
std::optional<ItemOp> bulkReduction(Reduction reduction, ElementType type);

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
  /// Tiles: indices into TransferProgram::maps and the box's corner in each
  /// buffer (row-major); offsets are unused.
  bool tile = false;
  int64_t srcMap = -1, dstMap = -1;
  Dims srcCoords, dstCoords;
  ItemOp op = ItemOp::Copy;
  std::optional<CounterRef> signal;
  std::vector<CounterWait> waits;
  /// A kernel item that reads another rank's buffer increments this counter
  /// of that rank once its bytes have been read; that rank's kernel ends
  /// only when every such read is done (its "reads-done" item), so that its
  /// caller may overwrite the buffer once the stream passes the kernel.
  std::optional<CounterRef> readDone;
  int64_t step = -1; // The schedule step it comes from (-1: a join).

  std::string str() const;

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
  std::vector<ScratchBuffer> scratches;
  std::vector<TensorMapSpec> maps;
  std::map<int64_t, RankProgram> ranks;

  int64_t itemCount() const;
};

struct LoweringOptions {
  int64_t maxItemBytes = 65536;
  /// Boxes whose contiguous runs are shorter than this move as tiles (one
  /// TMA tensor copy per tile of up to 256 per dimension) where tensor maps
  /// can describe them.
  // 16 KiB: 8 KiB rows moved 4x faster as 128x256 tiles than as bulk runs
  // (bench/results/gpu-bench-2026-11-30.md).
  int64_t tileBelowRunBytes = 16384;
  /// Use tiles wherever tensor maps can describe the box.
  bool preferTiles = false;
  /// Steps that copy a rank's own source into its destination, with no
  /// dependencies and contiguous in both, become copy-engine copies the runtime enqueues on the
  /// rank's stream before its kernel (RankProgram::engineCopies): the copy
  /// engine moves local bytes ~6x faster than 16 CTAs of TMA (2.1 TB/s vs
  /// 347 GB/s on H200). Their dependents on the same rank need no counter
  /// (stream order); dependents elsewhere wait for a zero-byte item that
  /// signals at the start of the kernel.
  bool copyEngine = false;
};

/// The kernel's tile op for a bulk reduction (1 add, 2 min, 3 max; 0 copy),
/// or std::nullopt when TMA tensor reductions do not cover it.
std::optional<uint32_t> tileOp(ItemOp op);

/// Lowers `schedule` (of a reshard from `src` to `dst` of `shape`) into
/// per-rank programs, or returns a message naming what cannot be lowered.
std::optional<std::string>
lowerSchedule(const Schedule &schedule, const Layout &src, const Layout &dst,
              const std::vector<int64_t> &shape, ElementType type,
              const LoweringOptions &options, TransferProgram &program);

} // namespace m2n

#endif // M2N_CODEGEN_TRANSFERPROGRAM_H
