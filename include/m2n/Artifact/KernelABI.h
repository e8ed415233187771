//===- KernelABI.h - the transfer kernel's work-item record ------*- C++ -*-===//
//
// The one definition of the 128-byte record the transfer kernel reads: the
// runtime fills it (runtime/src/CudaTables.cpp) and the kernel generator
// (lib/Conversion/M2NToGPU/TransferKernel.cpp) takes every field offset from
// it with offsetof, so the two cannot drift apart. The op codes below are
// also the kernel's: its generator emits one case per code an artifact uses.
//
//===----------------------------------------------------------------------===//

#ifndef M2N_ARTIFACT_KERNELABI_H
#define M2N_ARTIFACT_KERNELABI_H

#include "m2n/Artifact/Program.h"

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace m2n {

struct KernelItem {
  uint64_t src, dst;    // Addresses (bulk, vector) or CUtensorMap addresses
                        // (tile).
  uint32_t bytes, op;   // Bytes moved; the op code of the item's kind.
  uint64_t signal;      // Counter to increment once the bytes landed, or 0.
  uint64_t wait0, value0, wait1, value1; // Counters and values (x epoch).
  uint32_t kind, rank;  // The item's Mechanism (bulk, tile or vector, as
                        // Program.h numbers them); tile rank (1-5).
  int32_t srcCoords[5], dstCoords[5]; // Tile corners, innermost first.
  uint32_t flags;       // KernelItemFlags.
  float scale;          // Cast items: the factor (castElement); else 0.
  uint64_t readDone;    // A peer's counter to increment once the bytes are
                        // read (the item reads that peer's buffer), or 0.
};

/// Bits of KernelItem::flags.
enum KernelItemFlags : uint32_t {
  /// The waits order only the store: the load may be issued ahead.
  kStoreWaits = 1,
  /// A vector reduction with an accumulator (Movement::accumulator): its
  /// first operand is read at src + the accumulator delta
  /// (accumulatorDeltaOf) instead of at dst.
  kAccumulates = 2,
};
static_assert(sizeof(KernelItem) == 128, "the kernel reads 128-byte items");

/// The kernel's mbarriers: a launch of W walkers per CTA (block (32, W)) with
/// S stages each needs W x S of them.
constexpr uint32_t kMaxKernelBarriers = 64;
/// The ring of item records the walkers materialize their items into
/// (m2n/Artifact/KernelTable.h): stages + 1 records a walker.
constexpr uint64_t kKernelRecordBytes =
    (kMaxKernelBarriers + kMaxWalkers) * sizeof(KernelItem);
/// The dynamic shared memory a kernel launch may ask for on sm_90: the
/// opt-in 227 KiB per block less the kernel's static shared memory (its
/// barriers, item records and each walker's two-word cursor).
constexpr uint64_t kMaxStageMemory = 227 * 1024 - 8 * kMaxKernelBarriers -
                                     kKernelRecordBytes - 16 * kMaxWalkers;

/// Op codes of bulk items: 0 copy, then one per TMA bulk reduction
/// (cp.reduce.async.bulk .<op>.<type>; 16-bit floats with .noftz).
enum class BulkOp : uint32_t {
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
constexpr uint32_t kBulkOpCount = 15;

/// The bulk op code of a copy or reduction on `type`, or std::nullopt when
/// TMA has no such bulk reduction (tmaBulkReduces).
std::optional<BulkOp> bulkOp(std::optional<Reduction> reduction,
                             ElementType type);
/// The tile op code: 0 copy, 1 add, 2 min, 3 max (the element type is the
/// tensor map's).
uint32_t tileOp(std::optional<Reduction> reduction);
/// The vector op code: 0 copy (bytes, whatever the type), otherwise
/// 1 + reduction + 3 * reducibleTypeIndex(type), one per (reduction,
/// reducible element type).
uint32_t vectorOp(std::optional<Reduction> reduction, ElementType type);
constexpr uint32_t kVectorOpCount = 1 + 3 * kReducibleTypeCount;
/// The (reduction, type) of vector op code `op` (1..kVectorOpCount-1).
std::pair<Reduction, ElementType> vectorOpMeaning(uint32_t op);

/// Vector op codes of casts follow the others: kVectorOpCount + 5 * from +
/// to, the types numbered f32, f16, bf16, f8E4M3FN, f8E5M2 (castTypeIndex).
constexpr uint32_t kCastTypeCount = 5;
constexpr uint32_t kCastOpCount = kCastTypeCount * kCastTypeCount;
/// The type's number among the castable ones, or -1.
int castTypeIndex(ElementType type);
ElementType castTypeAt(int index);
uint32_t castOp(ElementType from, ElementType to);
/// The (from, to) of cast op code `op`, or std::nullopt for another code.
std::optional<std::pair<ElementType, ElementType>> castOpMeaning(uint32_t op);

/// Op codes of a quantizing reshard's vector items (docs/fp8-scaling.md)
/// follow the casts': amax items, one per source type (f32, f16, bf16:
/// quantizingSourceIndex); scale items, one per (fp8 type, e8m0 scales or
/// f32); quantizing items, one per (source type, fp8 type, e8m0 or f32).
constexpr uint32_t kAmaxOpBase = kVectorOpCount + kCastOpCount;
constexpr uint32_t kScaleOpBase = kAmaxOpBase + 3;
constexpr uint32_t kQuantizeOpBase = kScaleOpBase + 4;
constexpr uint32_t kQuantizingOpEnd = kQuantizeOpBase + 12;
/// What a quantizing op code does: `kind` Amax (from), Scale (to, the
/// scales' encoding) or Move (quantize from into to).
struct QuantizingOp {
  StepKind kind = StepKind::Move;
  ElementType from = ElementType::F32, to = ElementType::F8E4M3FN;
  bool exponentScales = false; // mx: power-of-two scales (e8m0).
};
uint32_t amaxOp(ElementType from);
uint32_t scaleOp(ElementType to, bool exponentScales);
uint32_t quantizeOp(ElementType from, ElementType to, bool exponentScales);
/// The meaning of quantizing op code `op`, or std::nullopt for another code.
std::optional<QuantizingOp> quantizingOpMeaning(uint32_t op);

/// A quantizing vector item's block lookup (Movement::lookup) where a tile
/// keeps its coordinates: the address of its table of f32 amaxes (an amax
/// item's slots, a quantizing item's quantizer table) and the run's first
/// entry, phase and width, so that element i uses entry
/// `entry + (phase + i) / width`. One item may stand for `rows` instances
/// of its movement's innermost repeat level (0 or 1: one), each `srcStride`
/// and `dstStride` bytes and `entryStride` entries further than the one
/// before: it signals and reports reads once per instance, as the
/// movement's instances would (encodeItems folds them).
struct ItemLookup {
  uint64_t table;
  int64_t entry;
  uint32_t phase, width;
  uint32_t rows, srcStride, dstStride, entryStride;
};
constexpr size_t kItemLookupOffset = offsetof(KernelItem, srcCoords);
static_assert(kItemLookupOffset % 8 == 0 &&
                  kItemLookupOffset + sizeof(ItemLookup) <=
                      offsetof(KernelItem, flags),
              "the lookup fits in the tile coordinates");
/// Where a vector reduction with an accumulator keeps its delta (the
/// accumulator's address less the source's, as an int64): in the tile
/// coordinates, where a block lookup keeps its table address, which
/// materializing an instance leaves as it is (instanceItem: the source
/// advances, the accumulator with it). Such an item has no lookup.
constexpr size_t kItemAccumulatorOffset = offsetof(KernelItem, srcCoords);
static_assert(kItemAccumulatorOffset ==
                  kItemLookupOffset + offsetof(ItemLookup, table),
              "an instance's materialization leaves the delta as it is");
void setAccumulatorDelta(KernelItem &item, int64_t delta);
int64_t accumulatorDeltaOf(const KernelItem &item);

/// Whether vector op code `op` is a quantizing reshard's (amax, scale,
/// quantize): its item's signals count ItemLookup::rows instances.
constexpr bool isQuantizingOp(uint32_t op) {
  return op >= kAmaxOpBase && op < kQuantizingOpEnd;
}
/// Whether vector op code `op` combines elements (a reduction) or
/// quantizes: element-wise work that asks for the wider block.
constexpr bool isElementWiseOp(uint32_t op) {
  return (op >= 1 && op < kVectorOpCount) || isQuantizingOp(op);
}
/// The threads of the kernel's block (its SM path's): 32 without vector
/// ops, 256 where some combine or quantize elements, 128 otherwise.
/// Element-wise work is instruction-bound where one warp a scheduler does
/// not keep up (issue 32's quantizing: ~11 instructions an element), and a
/// reduction loads two operands a vector: 256 threads keep twice the bytes
/// in flight. 256 threads always fit the register file (255 registers a
/// thread at most).
constexpr uint32_t smPathThreads(bool vector, bool elementWise) {
  return !vector ? 32 : elementWise ? 256 : 128;
}
/// Whether a kernel or a launch may have blocks of `threads`.
constexpr bool isBlockThreads(uint32_t threads) {
  return threads == 32 || threads == 128 || threads == 256;
}
void setLookup(KernelItem &item, const ItemLookup &lookup);
ItemLookup lookupOf(const KernelItem &item);

/// The op code of `movement` in its kind (KernelItem::op) when it does not
/// cast.
uint32_t kernelOp(const Movement &movement, ElementType type);
/// The op code of `movement` of `program`: a cast op where it casts, a
/// quantizing op where it is an amax or scale move or quantizes.
uint32_t kernelOp(const Movement &movement, const TransferProgram &program);

/// Where encodeItem finds device addresses: a buffer's first byte, a
/// counter's, a tensor map's.
struct ItemAddresses {
  std::function<uint64_t(const BufferRef &)> buffer;
  std::function<uint64_t(const CounterRef &)> counter;
  std::function<uint64_t(int64_t map)> tensorMap;
};
/// The work item of one instance (no repeats) of kernel item `movement` of
/// `program`: what the runtime uploads for the kernel.
KernelItem encodeItem(const Movement &movement, const TransferProgram &program,
                      const ItemAddresses &addresses);
/// Whether the kernel walks `movement`'s innermost repeat level inside one
/// item (ItemLookup's rows): block lookups whose level's count and strides
/// fit 32 bits.
bool foldsInnermostLevel(const Movement &movement);
/// The work items of every instance of kernel item `movement`, in order,
/// appended to `items`: one per instance, except that a movement with a
/// block lookup walks its innermost repeat level in one item (ItemLookup's
/// rows) where its strides fit 32 bits: a band of a block's rows is one
/// item instead of one per row. Refuses (a message) a lookup whose phase
/// or width does not fit 32 bits.
std::optional<std::string> encodeItems(const Movement &movement,
                                       const TransferProgram &program,
                                       const ItemAddresses &addresses,
                                       std::vector<KernelItem> &items);

/// The op codes a transfer kernel implements, per kind: the generator emits
/// only these (a kernel for a copy-only artifact has no reduction code).
struct KernelOps {
  std::set<uint32_t> bulk;                       // BulkOp codes.
  std::set<std::pair<uint32_t, uint32_t>> tile;  // (tile op, tile rank).
  std::set<uint32_t> vector;                     // Vector op codes.

  /// Every op of every kind (hand-built tables, tests).
  static KernelOps all();
  /// Adds what the items of `program` use.
  void add(const TransferProgram &program);
  /// Adds what kernel item `item` of `program` uses (its element types and
  /// cast come from the program; its ranks, counters and repeats are not
  /// read).
  void add(const Movement &item, const TransferProgram &program);
  /// The first item of `program` the kernel cannot run, printed.
  std::optional<std::string> missing(const TransferProgram &program) const;
  bool empty() const { return bulk.empty() && tile.empty() && vector.empty(); }
};

} // namespace m2n

#endif // M2N_ARTIFACT_KERNELABI_H
