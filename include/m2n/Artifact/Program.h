//===- Program.h - per-rank work-item programs -------------------*- C++
//-*-===//
//
// What a lowered reshard is for the runtime (lib/Codegen/TransferProgram.cpp
// lowers schedules into it, docs/codegen.md): for every rank, the table of
// work items its transfer kernel walks, the network transfers its runtime
// posts through NCCL, the copy-engine copies before its kernel, and the
// counters that order them. Part of the artifact format (docs/artifact.md):
// plain C++, shared by the compiler and the runtime, which checks a program
// with verifyTransferProgram before it trusts it.
//
//===----------------------------------------------------------------------===//

#ifndef M2N_ARTIFACT_PROGRAM_H
#define M2N_ARTIFACT_PROGRAM_H

#include "m2n/Base/Buffer.h"
#include "m2n/Base/ElementType.h"
#include "m2n/Base/InlineList.h"
#include "m2n/Base/Layout.h"

#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace m2n {

/// How a movement's bytes move: the one mechanism enum of m2n (the
/// dialect's `m2n.move` stores it as a property; the kernel's work items
/// carry the three kernel mechanisms' values in KernelItem::kind). Plain
/// C++, as the runtime builds without LLVM. Where it lands: kernel items
/// (RankProgram::items) are Bulk, Tile or Vector, network receives Network,
/// copy-engine copies Engine; LoweringOptions says which movement gets
/// which.
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
  /// A copy the copy engine makes before the kernel (cudaMemcpyAsync).
  Engine = 3,
  /// A receive the runtime posts through NCCL (its sender posts the send).
  Network = 4,
};
constexpr uint8_t kMechanismCount = 5;
/// "bulk", "tile", "vector", "engine", "network".
const char *toString(Mechanism mechanism);
/// The mechanism toString names `name`, or std::nullopt.
std::optional<Mechanism> parseMechanism(std::string_view name);
/// Whether the transfer kernel moves it (bulk, tile, vector).
constexpr bool isKernelMechanism(Mechanism mechanism) {
  return mechanism == Mechanism::Bulk || mechanism == Mechanism::Tile ||
         mechanism == Mechanism::Vector;
}

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
  bool operator==(const CounterWait &other) const {
    return counter == other.counter && value == other.value;
  }
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

/// One level of a repeated movement (Movement::repeats): `count` instances,
/// each `srcStride` and `dstStride` further than the one before: bytes, or
/// for a tile coordinates of dimension `dim` (the same in both buffers).
struct Repeat {
  int64_t count = 1;
  int64_t srcStride = 0, dstStride = 0;
  int64_t dim = -1; // Tiles: the dimension the strides advance; else -1.
  /// A movement with a BlockLookup: table entries each instance's lookup
  /// starts further than the one before (0 elsewhere).
  int64_t entryStride = 0;
  bool operator==(const Repeat &other) const {
    return count == other.count && srcStride == other.srcStride &&
           dstStride == other.dstStride && dim == other.dim &&
           entryStride == other.entryStride;
  }
};

/// Where the elements of a run of a quantizing reshard find their block's
/// entry in a table of f32 amaxes (docs/fp8-scaling.md): element i (from 0)
/// of the run uses entry `entry + (phase + i) / width` (row-major over the
/// table's blocks). The run lies in one row of its source buffer, so the
/// entries it uses are consecutive blocks of one block row: `width` is the
/// blocks' width in elements and `phase` the run's first element's column
/// in its block (or, for a run inside one block, any width past the run
/// and phase 0). An amax move max-combines |x| into the entries of its
/// destination slots; a quantizing move reads them from its source rank's
/// quantizer table and divides by each block's scale.
struct BlockLookup {
  int64_t entry = 0, phase = 0, width = 1;
  bool operator==(const BlockLookup &other) const {
    return entry == other.entry && phase == other.phase &&
           width == other.width;
  }
  /// The entry of element `i`.
  int64_t entryOf(int64_t i) const { return entry + (phase + i) / width; }
};

/// A movement's repeat levels, outermost first (most have one or two).
using Repeats = InlineList<Repeat, 2>;

/// One contiguous run, from a byte offset of one buffer to a byte offset of
/// another; or, for a tile, one box through two tensor maps. With repeats,
/// a regular pattern of such runs or tiles (the rows of a box, the stage-
/// sized pieces of a long run, a grid of tiles), which the runtime expands
/// when it binds a rank: the program stays proportional to the steps, not
/// to the bytes.
struct Movement {
  /// What it does with its bytes, as the schedule step it lowers: a move
  /// copies, reduces or converts; a quantizing reshard's amax move reads
  /// `bytes` of a source run and max-combines each element's |x| into the
  /// slot `lookup` names (atomic: slots start at zero every execution); its
  /// scale move turns the f32 amaxes of a holder table into the scales of
  /// a scale buffer (as a cast: `bytes` counts the scales).
  StepKind kind = StepKind::Move;
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
  InlineList<CounterWait, 2> waits;
  /// A kernel item that reads another rank's buffer increments this counter
  /// of that rank once its bytes have been read; that rank's kernel ends
  /// only when every such read is done (its "reads-done" item), so that its
  /// caller may overwrite the buffer once the stream passes the kernel.
  std::optional<CounterRef> readDone;
  /// A vector reduction that writes `accumulator ⊕ src` instead of
  /// `dst ⊕ src`: the accumulator is read at the source's offset (every
  /// instance's) in this buffer, the executing rank's own source of the same
  /// tensor (read-only, so nothing orders its reads). The lowering fuses a
  /// rank's copy of its own partial with the first reduction onto it
  /// (LoweringOptions::fuseReductions): one pass reads both operands and
  /// writes the sum once, where copy-then-reduce wrote it twice and read it
  /// back.
  std::optional<BufferRef> accumulator;
  /// Amax moves and moves that quantize (out of a source of a quantizing
  /// reshard): the table entries of the run's elements.
  std::optional<BlockLookup> lookup;
  int64_t step = -1; // The schedule step it comes from (-1: a join).
  /// Outermost level first; empty: one instance. Every instance signals,
  /// waits and reports reads as the movement says: a dependent waits for
  /// one increment per instance.
  Repeats repeats;

  /// The number of instances: the product of the repeat counts.
  int64_t instances() const;
  /// The instance at `index` (one per repeat level), without repeats.
  Movement instance(const std::vector<int64_t> &index) const;
  /// Calls fn(instance) for every instance, the last level fastest.
  template <typename Fn> void forEachInstance(Fn fn) const {
    if (repeats.empty()) {
      fn(*this);
      return;
    }
    std::vector<int64_t> index(repeats.size(), 0);
    while (true) {
      fn(instance(index));
      size_t level = repeats.size();
      while (level > 0 && ++index[level - 1] == repeats[level - 1].count)
        index[--level] = 0;
      if (level == 0)
        return;
    }
  }

  bool isTile() const { return mechanism == Mechanism::Tile; }
  bool isCopy() const { return !reduction; }
  /// E.g. "add.f32 src(1)+0 -> dst(0)+0 64B wait 0:0>=1"; tiles and vector
  /// items are named after the op ("copy vector ...", "copy tile ..."),
  /// receives and copy-engine copies by the list that holds them.
  std::string str(ElementType type) const;

  /// Whether the waits order only the store: the source is a reshard source,
  /// which no step writes (lowerSchedule rejects schedules that do), so the
  /// kernel may load the bytes before the dependencies are met.
  bool waitsOrderOnlyTheStore() const { return src.kind == BufferKind::Source; }
};

/// The most walkers a CTA may run: 8 warps (256 threads) fit every build of
/// the kernel (the one with every op has 166 registers a thread, 384
/// threads a block on H200); measured up to 8 (engine-2026-12-02.md).
constexpr uint32_t kMaxWalkers = 8;

/// How a rank's transfer kernel is launched (m2n-choose-launch decides it,
/// the IR and the artifact record it, the runtime launches it): blocks of
/// (threads, walkers), every walker (issuing warp) with the kernel's stages
/// of `stageBytes` each.
struct RankLaunch {
  uint32_t threads = 32, walkers = 1;
  uint64_t stageBytes = 65536;
  bool operator==(const RankLaunch &o) const {
    return threads == o.threads && walkers == o.walkers &&
           stageBytes == o.stageBytes;
  }
  bool operator!=(const RankLaunch &o) const { return !(*this == o); }
  /// "1 walker x 32 threads, stages of 65536 B".
  std::string str() const;
};

/// What a rank's kernel items ask of its launch: whether one is a vector
/// item (moved by every thread of the block) and the largest item's bytes
/// (one item goes through one stage).
struct LaunchDemand {
  bool vector = false;
  int64_t largestItem = 0;
  void add(Mechanism mechanism, int64_t bytes) {
    vector |= mechanism == Mechanism::Vector && bytes > 0;
    largestItem = std::max(largestItem, bytes);
  }
};

/// Why `launch` cannot run items of `demand`, or std::nullopt: threads 32,
/// 128 or 256 (128 and 256 are the SM path's blocks, with one walker;
/// needed where there are vector items), 1 to
/// kMaxWalkers walkers, stages a positive multiple of 128 bytes (TMA tiles
/// land 128-byte aligned) that hold the largest item. Whether the launch
/// fits the compiled kernel is checkLaunch(KernelLaunch, ...).
std::optional<std::string> checkLaunch(const RankLaunch &launch,
                                       const LaunchDemand &demand);

/// The launch of a rank that runs the members of a group one after the
/// other, whose launches are `members`: the most threads, the fewest
/// walkers and the largest stages. It runs every member's items, fits
/// wherever each member's does (fewer walkers of larger stages use no
/// more shared memory than the member with those stages), and is what
/// m2n::chooseLaunch gives the merged items.
RankLaunch combineLaunches(const RankLaunch &a, const RankLaunch &b);

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
  /// The launch of this rank's kernel; a program lowered but not yet given
  /// one (m2n-choose-launch) has none.
  std::optional<RankLaunch> launch;
  /// What the items ask of the launch.
  LaunchDemand demand() const;
};

struct TransferProgram {
  /// The element type of the destination and scratch buffers.
  ElementType type = ElementType::F32;
  /// An in-flight cast (isCastable): the source buffers' element type when
  /// it differs from `type`, and the factor each element is multiplied by
  /// on the way (castElement). Every movement out of a source buffer then
  /// converts: `bytes` counts its destination bytes, its source range holds
  /// as many elements of the source type.
  std::optional<ElementType> sourceType;
  float scale = 1.0f;
  /// The alignment (bytes, a power of two) the program assumes of every
  /// caller buffer's address (LoweringOptions::bufferAlignment); the runtime
  /// refuses buffers that lack it. Below 16 no TMA item touches a caller
  /// buffer. Scratch buffers are the runtime's own and always 16-aligned.
  int64_t bufferAlignment = 16;
  /// A quantizing reshard's (docs/fp8-scaling.md): `sourceType` converts
  /// into `type` (fp8) with per-block scales taken from the data, computed
  /// by amax moves into slots, exchanged into quantizer and holder tables
  /// (f32) and written by scale moves into the scale buffers; every move
  /// out of a source quantizes with its lookup's blocks. `scale` is unused.
  std::optional<Scaling> scaling;
  std::vector<ScratchBuffer> scratches;
  std::vector<TensorMapSpec> maps;
  std::map<int64_t, RankProgram> ranks;
  /// A group's (mergePrograms): the element type of each tensor, by
  /// BufferRef::tensor. Empty in the program of one reshard, whose buffers
  /// all hold `type`.
  std::vector<ElementType> tensorTypes;
  /// A group's: each tensor's sourceType (its `type` where it has no cast)
  /// and scale.
  std::vector<ElementType> tensorSourceTypes;
  std::vector<float> tensorScales;
  /// A group's: each tensor's scaling (std::nullopt where it does not
  /// quantize).
  std::vector<std::optional<Scaling>> tensorScalings;

  /// The scaling of tensor `tensor` (the program's own outside a group).
  const std::optional<Scaling> &scalingOf(int64_t tensor) const {
    return tensorScalings.empty() ? scaling : tensorScalings.at(tensor);
  }

  /// Kernel items once expanded: the instances of every rank's items.
  int64_t itemCount() const;
  /// The element type `buffer` holds.
  ElementType typeOf(const BufferRef &buffer) const {
    if (buffer.kind == BufferKind::Scratch && holdsAmaxes(buffer, scratches))
      return ElementType::F32;
    if (isScaleBuffer(buffer.kind)) {
      const std::optional<Scaling> &blocks = scalingOf(buffer.tensor);
      return buffer.kind == BufferKind::Scales && blocks &&
                     hasExponentScales(*blocks)
                 ? ElementType::F8E8M0FNU
                 : ElementType::F32;
    }
    if (buffer.kind == BufferKind::Source)
      return tensorTypes.empty() ? sourceType.value_or(type)
                                 : tensorSourceTypes.at(buffer.tensor);
    return tensorTypes.empty() ? type : tensorTypes.at(buffer.tensor);
  }
  /// Whether `movement` converts its elements (it reads a source buffer of
  /// another type than it writes).
  bool casts(const Movement &movement) const {
    return movement.kind == StepKind::Move &&
           typeOf(movement.src) != typeOf(movement.dst);
  }
  /// Whether `movement` quantizes (a move with a lookup: out of a source
  /// of a quantizing reshard).
  bool quantizes(const Movement &movement) const {
    return movement.kind == StepKind::Move && movement.lookup.has_value();
  }
  /// The factor a cast of `movement` multiplies by.
  float scaleOf(const Movement &movement) const {
    return tensorScales.empty() ? scale : tensorScales.at(movement.dst.tensor);
  }
  /// Bytes `movement` reads from its source: `bytes` (an amax move's
  /// too), or for a cast (a scale move's) as many source elements as it
  /// writes.
  int64_t sourceBytes(const Movement &movement) const;
  /// Bytes of scratch buffer `index`.
  int64_t scratchBytes(size_t index) const;
  /// Whether TMA may address `buffer`: scratch (the runtime's, 16-byte
  /// aligned) or a caller buffer the program assumes 16-byte aligned.
  bool tmaAddressable(const BufferRef &buffer) const;
};

/// Every network receive of `program` with its receiving rank, in the
/// order the runtime posts them: by step, then rank, then program order.
/// Each device posts its share on one stream in this order (one GPU: all of
/// them), so the lowering keeps step order topological.
std::vector<std::pair<int64_t, const Movement *>>
networkOrder(const TransferProgram &program);

/// Where the members of a group run and where their counters begin, per
/// rank: `members` (member index, counter base) in the group's order and
/// the rank's counters in all. Every rank runs its members in one order,
/// the group's, which is what keeps the merged queues deadlock free.
struct GroupRank {
  int64_t counters = 0;
  std::vector<std::pair<int64_t, int64_t>> members;
};
/// The ranks a program runs on, ascending, each with the counters it owns.
using RankCounters = std::vector<std::pair<int64_t, int64_t>>;
/// The per-rank layout of a group whose member `t` runs on the ranks of
/// `*memberCounters[t]`: what --m2n-merge-groups writes, the GroupOp
/// verifier checks and mergePrograms follows.
std::map<int64_t, GroupRank>
groupLayout(const std::vector<const RankCounters *> &memberCounters);

/// One program for several reshards launched together (a group): per rank,
/// the members' items, receives and copy-engine copies one member after
/// the other, every buffer tagged with its member (BufferRef::tensor),
/// scratch buffers, tensor maps and each rank's counters renumbered after
/// those of the members before, and steps numbered after theirs, so that
/// networkOrder posts the members one after the other. Each member's
/// queues are subsequences of one topological order of its steps, and the
/// members share nothing, so the concatenations are too: whatever CTA an
/// item lands on, the group cannot deadlock. Members must not alias one
/// another's buffers (the runtime checks).
TransferProgram
mergePrograms(const std::vector<const TransferProgram *> &members);

/// Replaces every repeated movement of `program` by its instances, in
/// order: what the runtime executes. `program` must have passed
/// verifyTransferProgram (the instance counts are bounded).
void expandRepeats(TransferProgram &program);

/// The largest caller-buffer alignment a program may assume: a page (what
/// any allocator m2n's callers use can promise; cudaMalloc gives 256).
constexpr int64_t kMaxBufferAlignment = 4096;
/// Why `alignment` is no buffer alignment a program may assume (a power of
/// two, 1 to kMaxBufferAlignment), or std::nullopt: the one rule the
/// pipeline's options, m2n-lower-schedule and the program verifier apply.
std::optional<std::string> checkBufferAlignment(int64_t alignment);

/// The most instances one movement may stand for, and the most kernel
/// items and network transfers one rank's program may expand to
/// (verifyTransferProgram): 2^28 items of 128 bytes are 32 GiB of tables.
constexpr int64_t kMaxInstances = int64_t{1} << 32;
constexpr int64_t kMaxRankItems = int64_t{1} << 28;
/// The largest scratch buffer a program may ask for: 1 TiB, more than any
/// GPU or host of the machines m2n targets holds (docs/artifact.md); a
/// larger one is a corrupted artifact, not a reshard.
constexpr int64_t kMaxScratchBytes = int64_t{1} << 40;

/// Checks what the runtime trusts blindly in a program of a reshard from
/// `src` to `dst` of `shape`: every move inside existing buffers (tiles
/// through tensor maps of their own buffers), every counter it names
/// existing and every wait value exactly what one execution adds, every
/// reduction one its mechanism has, over whole elements, copy-engine copies
/// plain copies, repeats well-formed (every instance is checked: the first,
/// the last and one step along each level, which bound the rest). Returns a
/// message naming the first problem.
std::optional<std::string>
verifyTransferProgram(const TransferProgram &program, const Layout &src,
                      const Layout &dst, const std::vector<int64_t> &shape);

/// The first problem verifyTransferProgram finds, and where it lies: in one
/// movement (a rank, one of its three lists, an index into it), or in the
/// program as a whole (rank -1). The IR reports it on that m2n.move.
struct ProgramIssue {
  enum class List { Items, Receives, EngineCopies };
  /// The whole message, as verifyTransferProgram returns it.
  std::string message;
  /// For a movement: what is wrong with it, without naming it.
  std::string detail;
  int64_t rank = -1;
  List list = List::Items;
  size_t index = 0;
};
std::optional<ProgramIssue>
checkTransferProgram(const TransferProgram &program, const Layout &src,
                     const Layout &dst, const std::vector<int64_t> &shape);

/// The most move instances (repeats expanded) checkProgramOrder expands:
/// 16M kernel items and transfers, far beyond what a reshard lowers to
/// (one item carries up to a stage of bytes).
constexpr int64_t kMaxOrderedInstances = int64_t{1} << 24;

/// What the waits of a program checkTransferProgram accepts must order
/// (ProgramOrder.cpp), byte by byte: every destination byte copied by
/// exactly one move, each scratch byte at most once; every reduction after
/// the copy of its bytes, and one on the SM path ordered against every
/// other reduction of its bytes; every read of a destination or scratch
/// byte after every move that writes it; no cycle of waits. A move is after
/// another when it waits, directly or through other moves, for a counter
/// the other adds to (a rank's copy-engine copies come before its kernel).
/// checkTransferProgram runs it last.
std::optional<ProgramIssue>
checkProgramOrder(const TransferProgram &program, const Layout &src,
                  const Layout &dst, const std::vector<int64_t> &shape);

} // namespace m2n

#endif // M2N_ARTIFACT_PROGRAM_H
