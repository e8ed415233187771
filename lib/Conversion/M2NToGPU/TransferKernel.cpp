//===- TransferKernel.cpp - the transfer kernel, built for an artifact -----===//
//
// The GPU side of every m2n schedule: each rank launches this kernel over its
// own table of work items (m2n/Artifact/KernelABI.h). It is built here with
// typed ops (gpu, scf, arith, llvm, nvvm) and specialized to the op codes an
// artifact's items use (KernelOps): a copy-only artifact gets no reduction
// code, one without tiles no tensor-map code.
//
// Per walker, one thread walks the items b, b + grid, ... of its rank's
// instance sequence (a CTA of (32, W) threads is W walkers, warp w walking
// as CTA bid x W + w of a W times larger grid, with stages and barriers of
// its own; one thread issues ~1M items/s, so small items want several).
// The table holds one template per repeated movement and, per walker, the
// visits of templates that are its items (m2n/Artifact/KernelTable.h): the
// walker materializes each item from its template into a ring of records
// in shared memory, which the rest of the kernel reads:
//  * it waits for an item's dependencies (counters in peer-visible memory,
//    `ld.acquire.sys` polled up to a cycle budget; past it, it writes an error
//    record to host-mapped memory and traps: a peer that never signals ends
//    in a launch error, never a hang);
//  * bulk and tile items: it loads the bytes with TMA into one of `stages`
//    shared-memory stages (mbarrier completion) and stores or reduces them
//    with TMA; loads of later items are in flight while earlier ones store;
//  * vector items (the SM path): every thread of the CTA loads, combines in
//    registers and stores, with the widest vectors both addresses allow;
//  * signals are held back: the CTA adds up its items' signals to one
//    counter and releases the sum once (bytes landed, async-proxy fence,
//    `red.release.sys`), when the next item signals another counter, before
//    a wait that may block (the wait may need the sum) and at its end;
//  * read-done: an item that read a peer's buffer adds 1 to that peer's
//    counter once its bytes are read (held back like signals: released
//    when an item reads another peer or none, before a wait that may block,
//    and at the end), so that the peer's kernel ends only when nobody reads its
//    buffers any more;
//  * a wait already met: each walker remembers the last counter it waited
//    for and the value it waited for; a later item whose one wait asks no
//    more of that counter neither polls nor releases what it holds (it
//    cannot block). The items of a repeated movement share their waits, so
//    only the first of a walker's run polls;
//  * epochs: counters are never reset, execution n waits for n times the
//    values in the table; the epoch lives on the device (two words) so that
//    CUDA-graph replays advance it.
//
// Item k of a walker uses stage k % stages and completes one phase of that
// stage's mbarrier, whatever its kind (zero-byte and vector items arrive
// without bytes), so the parity a CTA waits for is its item count.
//
// Inline PTX only where MLIR 22 has no op, each in one helper below:
// the non-tensor bulk reduction `cp.reduce.async.bulk`, `ld.acquire.sys`,
// `red.release.sys`, `fence.sc.sys`.
//
//===----------------------------------------------------------------------===//

#include "m2n/Conversion/M2NToGPU/TransferKernel.h"
#include "m2n/Artifact/KernelABI.h"
#include "m2n/Artifact/KernelTable.h"
#include "m2n/Conversion/M2NToGPU/M2NToGPU.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"

#include <cstddef>
#include <limits>

using namespace mlir;
using ::m2n::KernelItem;
using ::m2n::KernelLevel;
using ::m2n::KernelTemplate;
using ::m2n::KernelVisit;
using ::m2n::KernelWalker;

namespace {

using Body = llvm::function_ref<void()>;
using ValuesBody = llvm::function_ref<SmallVector<Value>()>;

constexpr int64_t kMaxTileRank = 5;
/// Vector items: chunks a thread loads before it combines and stores, to
/// keep several loads in flight over NVLink (quantizing items: rows).
constexpr int64_t kVectorUnroll = 4;
/// Cast items: elements a thread loads before it converts and stores.
constexpr int64_t kCastUnroll = 8;
/// Quantizing items' fast path: each thread's ring of 16-byte slots in the
/// item's stage, one less row than slots in flight: the deep ring where
/// the stage holds it with the item's entries (32 KB for 128 threads, 64 KB
/// for 256: stages above 64 KB), the shallow one where it holds that (16 or
/// 32 KB); smaller stages take the slow path. Kernels that quantize run 256
/// threads, so the default 64 KB stages take the shallow ring: issue 32's
/// case was fastest with it (more and fewer rows in flight were slower).
constexpr int64_t kDeepRing = 16;
constexpr int64_t kShallowRing = 8;

class KernelBuilder {
public:
  KernelBuilder(ImplicitLocOpBuilder &b, const ::m2n::KernelOps &ops)
      : b(b), ops(ops), ctx(b.getContext()) {
    i1 = b.getI1Type();
    i8 = b.getI8Type();
    i32 = b.getI32Type();
    i64 = b.getI64Type();
    global = LLVM::LLVMPointerType::get(ctx, 1);
    shared = LLVM::LLVMPointerType::get(ctx, 3);
    cluster = LLVM::LLVMPointerType::get(ctx, 7);
    generic = LLVM::LLVMPointerType::get(ctx, 0);
  }

  void build();

private:
  // Constants and arithmetic.
  Value c32(int64_t v) { return arith::ConstantIntOp::create(b, i32, v); }
  Value c64(int64_t v) { return arith::ConstantIntOp::create(b, i64, v); }
  Value cIdx(int64_t v) { return arith::ConstantIndexOp::create(b, v); }
  Value cBool(bool v) { return arith::ConstantIntOp::create(b, i1, v); }
  Value add(Value x, Value y) { return arith::AddIOp::create(b, x, y); }
  Value sub(Value x, Value y) { return arith::SubIOp::create(b, x, y); }
  Value mul(Value x, Value y) { return arith::MulIOp::create(b, x, y); }
  Value cmp(arith::CmpIPredicate p, Value x, Value y) {
    return arith::CmpIOp::create(b, p, x, y);
  }
  Value ne0(Value x) {
    return cmp(arith::CmpIPredicate::ne, x,
               x.getType() == i32 ? c32(0) : c64(0));
  }
  Value both(Value x, Value y) { return arith::AndIOp::create(b, x, y); }
  Value either(Value x, Value y) { return arith::OrIOp::create(b, x, y); }
  Value negate(Value x) { return arith::XOrIOp::create(b, x, cBool(true)); }
  Value toIndex(Value x) {
    return arith::IndexCastOp::create(b, b.getIndexType(), x);
  }
  Value toI64(Value x) { return arith::IndexCastOp::create(b, i64, x); }
  Value zext64(Value x) { return arith::ExtUIOp::create(b, i64, x); }

  // Memory.
  Value byteOffset(Value base, Value offset) {
    return LLVM::GEPOp::create(b, base.getType(), i8, base,
                               ValueRange{offset});
  }
  Value byteOffset(Value base, int64_t offset) {
    // (Field offsets: a constant GEP index is 32 bits.)
    assert(offset >= INT32_MIN && offset <= INT32_MAX && "offset too large");
    return LLVM::GEPOp::create(
        b, base.getType(), i8, base,
        ArrayRef<LLVM::GEPArg>{static_cast<int32_t>(offset)});
  }
  Value elementAt(Value base, Type element, Value index) {
    return LLVM::GEPOp::create(b, base.getType(), element, base,
                               ValueRange{index});
  }
  /// The field at `offset` of the item record `record`.
  Value field(Value record, size_t offset, Type type) {
    return LLVM::LoadOp::create(b, type,
                                byteOffset(record, static_cast<int64_t>(offset)));
  }
  Value pointerField(Value record, size_t offset, Type pointer) {
    return field(record, offset, pointer);
  }

  // Structured control flow.
  void ifThen(Value cond, Body then) {
    scf::IfOp::create(b, cond, [&](OpBuilder &, Location) {
      then();
      scf::YieldOp::create(b);
    });
  }
  SmallVector<Value> ifElse(Value cond, ValuesBody then, ValuesBody otherwise) {
    auto op = scf::IfOp::create(
        b, cond,
        [&](OpBuilder &, Location) { scf::YieldOp::create(b, then()); },
        [&](OpBuilder &, Location) { scf::YieldOp::create(b, otherwise()); });
    return SmallVector<Value>(op.getResults());
  }
  /// for (i = lo; i < hi; i += step) body(i), on i64 values.
  void forRange(Value lo, Value hi, Value step,
                llvm::function_ref<void(Value)> body) {
    scf::ForOp::create(b, toIndex(lo), toIndex(hi), toIndex(step),
                       ValueRange{},
                       [&](OpBuilder &, Location, Value iv, ValueRange) {
                         body(toI64(iv));
                         scf::YieldOp::create(b);
                       });
  }
  /// One region per case of `cases` on the i32 `value`; others do nothing.
  void switchOn(Value value, ArrayRef<int64_t> cases,
                llvm::function_ref<void(int64_t)> body) {
    if (cases.empty())
      return;
    auto op = scf::IndexSwitchOp::create(b, TypeRange{}, toIndex(value),
                                         cases, cases.size());
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(&op.getDefaultRegion().emplaceBlock());
    scf::YieldOp::create(b);
    for (auto [region, value] : llvm::zip(op.getCaseRegions(), cases)) {
      b.setInsertionPointToStart(&region.emplaceBlock());
      body(value);
      scf::YieldOp::create(b);
    }
  }

  // PTX without an MLIR op.
  void ptx(StringRef code, ValueRange operands = {}) {
    NVVM::InlinePtxOp::create(b, TypeRange{}, operands, ValueRange{}, code,
                              Value());
  }
  /// `ld.acquire.sys.global.u64`: polling a peer's counter.
  Value loadAcquire(Value address) {
    auto op = NVVM::InlinePtxOp::create(
        b, TypeRange{i64}, ValueRange{address}, ValueRange{},
        "ld.acquire.sys.global.u64 $0, [$1];", Value());
    return op.getResult(0);
  }
  /// `red.release.sys.global.add.u64`: signalling a counter.
  void addRelease(Value address, Value count) {
    ptx("red.release.sys.global.add.u64 [$0], $1;", {address, count});
  }
  void fenceSystem() { ptx("fence.sc.sys;"); }
  void fenceProxyAsync() {
    NVVM::FenceProxyOp::create(b, NVVM::ProxyKind::async_global,
                               NVVM::SharedSpaceAttr());
  }

  // Pieces of the kernel.
  void declareSharedMemory();
  void buildRelease();
  void buildWait();
  void buildIssue();
  void buildNext();
  void buildKernel();
  void storeBulk(Value dst, Value stage, Value bytes, Value op);
  void storeTile(Value record, Value stage, Value op);
  void loadTile(Value record, Value stage, Value bar);
  void moveVector(Value record, Value src, Value dst, Value bytes, Value op,
                  Value scale, Value thread, Value threads, Value stage,
                  Value stageBytes);
  void quantizingLoop(Value record, Value src, Value dst, Value bytes,
                      Value thread, Value threads, Value stage,
                      Value stageBytes, const ::m2n::QuantizingOp &op);
  Value quantizingReciprocal(Value amax, Value scale);
  Value scaleFromAmax(Value amax, const ::m2n::QuantizingOp &op,
                      Value *exponentByte = nullptr);
  void castLoop(Value src, Value dst, Value bytes, Value scale, Value thread,
                Value threads, ::m2n::ElementType from, ::m2n::ElementType to);
  Value toF32(Value element, ::m2n::ElementType type);
  Value fromF32(Value value, ::m2n::ElementType type);
  Value keepNaN(Value converted, Value x, ::m2n::ElementType type);
  void vectorLoop(Value src, Value dst, Value bytes, Value thread,
                  Value threads, std::optional<::m2n::Reduction> reduction,
                  ::m2n::ElementType type);
  Value combine(::m2n::Reduction reduction, ::m2n::ElementType type, Value acc,
                Value x);
  Type elementType(::m2n::ElementType type);

  /// A private, always-inlined helper function; the builder is left at the
  /// start of its body (callers keep an InsertionGuard).
  func::FuncOp beginHelper(StringRef name, ArrayRef<Type> arguments) {
    auto helper =
        func::FuncOp::create(b, name, b.getFunctionType(arguments, {}));
    helper.setPrivate();
    helper->setAttr("always_inline", b.getUnitAttr());
    b.setInsertionPointToStart(helper.addEntryBlock());
    return helper;
  }
  /// The `rank` tile coordinates of `record` starting at byte `offset`.
  SmallVector<Value> tileCoords(Value record, size_t offset, int64_t rank) {
    SmallVector<Value> coords;
    for (int64_t d = 0; d < rank; ++d)
      coords.push_back(field(record, offset + 4 * d, i32));
    return coords;
  }

  void callRelease(Value address, Value count) {
    func::CallOp::create(b, release, ValueRange{address, count});
  }
  /// Reports `count` reads done to the counter at `address` (an i64), if
  /// any: the loads have landed, so no bulk group is waited for.
  void releaseReads(Value address, Value count) {
    ifThen(ne0(count), [&] {
      addRelease(LLVM::IntToPtrOp::create(b, global, address), count);
    });
  }
  void callWait(Value record, Value g, Value error, Value timeout,
                Value epoch) {
    func::CallOp::create(b, wait, ValueRange{record, g, error, timeout, epoch});
  }

  bool hasTiles() const { return !ops.tile.empty(); }
  /// A quantizing reshard's vector items (amax, scale, quantize).
  bool hasQuantizingOps() const {
    return llvm::any_of(ops.vector, [](uint32_t op) {
      return ::m2n::isQuantizingOp(op);
    });
  }
  /// Vector items other than the no-op: the CTA's threads take part.
  bool hasVectors() const { return !ops.vector.empty(); }
  SmallVector<int64_t> tileRanks() const {
    std::set<int64_t> ranks;
    for (auto [op, rank] : ops.tile)
      ranks.insert(rank);
    return SmallVector<int64_t>(ranks.begin(), ranks.end());
  }

  ImplicitLocOpBuilder &b;
  const ::m2n::KernelOps &ops;
  MLIRContext *ctx;
  Type i1, i8, i32, i64, global, shared, cluster, generic;
  func::FuncOp release, wait, issue, next;
};

constexpr llvm::StringLiteral kStagesName = "m2n_stages";
constexpr llvm::StringLiteral kBarriersName = "m2n_bars";
/// Barriers for every walker's stages: walkers x stages may not exceed it
/// (m2n::kMaxKernelBarriers: launchShape and the artifact reader keep to it).
constexpr int64_t kMaxBarriers = ::m2n::kMaxKernelBarriers;
constexpr llvm::StringLiteral kRecordsName = "m2n_records";
constexpr llvm::StringLiteral kCursorsName = "m2n_cursors";
/// Item records: a ring of stages + 1 per walker (walkers x stages <=
/// kMaxBarriers, walkers <= kMaxWalkers).
constexpr int64_t kRecordBytes = sizeof(KernelItem);
static_assert(::m2n::kKernelRecordBytes ==
                  (kMaxBarriers + ::m2n::kMaxWalkers) * kRecordBytes,
              "the shared memory the stages leave is the records'");

void KernelBuilder::declareSharedMemory() {
  LLVM::GlobalOp::create(b, LLVM::LLVMArrayType::get(i8, 0),
                         /*isConstant=*/false, LLVM::Linkage::External,
                         kStagesName, Attribute(), /*alignment=*/128,
                         /*addrSpace=*/3);
  LLVM::GlobalOp::create(b, LLVM::LLVMArrayType::get(i64, kMaxBarriers),
                         /*isConstant=*/false, LLVM::Linkage::Internal,
                         kBarriersName, Attribute(), /*alignment=*/8,
                         /*addrSpace=*/3);
  LLVM::GlobalOp::create(
      b, LLVM::LLVMArrayType::get(i8, ::m2n::kKernelRecordBytes),
      /*isConstant=*/false, LLVM::Linkage::Internal, kRecordsName,
      Attribute(), /*alignment=*/128, /*addrSpace=*/3);
  // Per walker: its next visit and the instance within it.
  LLVM::GlobalOp::create(b, LLVM::LLVMArrayType::get(i64, 2 * ::m2n::kMaxWalkers),
                         /*isConstant=*/false, LLVM::Linkage::Internal,
                         kCursorsName, Attribute(), /*alignment=*/8,
                         /*addrSpace=*/3);
}

/// m2n_next(templates, visits, grid, cursor, record): materializes the
/// walker's next item into `record` (shared memory): the template of the
/// visit at the cursor, its instance `first + j x grid` added (addresses,
/// or a tile's coordinates, and a block lookup's entry; the same
/// arithmetic as m2n::instanceItem), and advances the cursor.
void KernelBuilder::buildNext() {
  OpBuilder::InsertionGuard guard(b);
  next = beginHelper("m2n_next", {global, global, i64, shared, shared});
  Block *entry = &next.front();
  Value templates = entry->getArgument(0), visits = entry->getArgument(1),
        grid = entry->getArgument(2), cursor = entry->getArgument(3),
        record = entry->getArgument(4);
  Value visitIndex = LLVM::LoadOp::create(b, i64, cursor);
  Value cursorJ = elementAt(cursor, i64, c64(1));
  Value j = LLVM::LoadOp::create(b, i64, cursorJ);
  Value visit = byteOffset(visits, mul(visitIndex, c64(sizeof(KernelVisit))));
  Value templateIndex =
      zext64(field(visit, offsetof(KernelVisit, templateIndex), i32));
  Value count = zext64(field(visit, offsetof(KernelVisit, count), i32));
  Value instance = add(field(visit, offsetof(KernelVisit, first), i64),
                       mul(j, grid));
  Value tmpl =
      byteOffset(templates, mul(templateIndex, c64(sizeof(KernelTemplate))));
  // The item, 16 bytes at a time.
  Type pair = VectorType::get({2}, i64);
  for (int64_t at = 0; at < kRecordBytes; at += 16)
    LLVM::StoreOp::create(
        b, LLVM::LoadOp::create(b, pair, byteOffset(tmpl, at), 16),
        byteOffset(record, at), 16);
  auto levelField = [&](size_t level, size_t offset, Type type) {
    return field(tmpl, level + offset, type);
  };
  constexpr size_t outerAt = offsetof(KernelTemplate, outer),
                   innerAt = offsetof(KernelTemplate, inner);
  Value innerCount = zext64(levelField(innerAt, offsetof(KernelLevel, count), i32));
  // One level or none (inner count 1): no division.
  SmallVector<Value> index = ifElse(
      cmp(arith::CmpIPredicate::eq, innerCount, c64(1)),
      [&] { return SmallVector<Value>{instance, c64(0)}; },
      [&] {
        return SmallVector<Value>{
            arith::DivUIOp::create(b, instance, innerCount),
            arith::RemUIOp::create(b, instance, innerCount)};
      });
  Value kind = field(record, offsetof(KernelItem, kind), i32);
  Value isTile = cmp(arith::CmpIPredicate::eq, kind,
                     c32(static_cast<int64_t>(::m2n::Mechanism::Tile)));
  auto addresses = [&] {
    for (auto [field64, stride] :
         {std::pair{offsetof(KernelItem, src), offsetof(KernelLevel, srcStride)},
          std::pair{offsetof(KernelItem, dst),
                    offsetof(KernelLevel, dstStride)}}) {
      Value at = byteOffset(record, static_cast<int64_t>(field64));
      Value delta = add(mul(index[0], levelField(outerAt, stride, i64)),
                        mul(index[1], levelField(innerAt, stride, i64)));
      LLVM::StoreOp::create(b, add(LLVM::LoadOp::create(b, i64, at), delta),
                            at);
    }
    if (hasQuantizingOps()) {
      // The block lookup's entry (zero strides for items without one).
      Value at = byteOffset(record, static_cast<int64_t>(
                                        ::m2n::kItemLookupOffset +
                                        offsetof(::m2n::ItemLookup, entry)));
      constexpr size_t entryStride = offsetof(KernelLevel, entryStride);
      Value delta = add(mul(index[0], levelField(outerAt, entryStride, i64)),
                        mul(index[1], levelField(innerAt, entryStride, i64)));
      LLVM::StoreOp::create(b, add(LLVM::LoadOp::create(b, i64, at), delta),
                            at);
    }
    return SmallVector<Value>{};
  };
  auto coordinates = [&] {
    for (auto [level, i] : {std::pair{outerAt, index[0]},
                            std::pair{innerAt, index[1]}}) {
      Value coord = zext64(levelField(level, offsetof(KernelLevel, coord), i32));
      Value i32Index = arith::TruncIOp::create(b, i32, i);
      for (auto [corner, stride] :
           {std::pair{offsetof(KernelItem, srcCoords),
                      offsetof(KernelLevel, srcStride)},
            std::pair{offsetof(KernelItem, dstCoords),
                      offsetof(KernelLevel, dstStride)}}) {
        Value at = byteOffset(byteOffset(record, static_cast<int64_t>(corner)),
                              mul(coord, c64(4)));
        Value delta = mul(i32Index, arith::TruncIOp::create(
                                        b, i32, levelField(level, stride, i64)));
        LLVM::StoreOp::create(b, add(LLVM::LoadOp::create(b, i32, at), delta),
                              at);
      }
    }
    return SmallVector<Value>{};
  };
  if (hasTiles())
    ifElse(isTile, coordinates, addresses);
  else
    addresses();
  // The cursor: the next instance of this visit, or the next visit.
  Value following = add(j, c64(1));
  Value done = cmp(arith::CmpIPredicate::eq, following, count);
  LLVM::StoreOp::create(
      b, arith::SelectOp::create(b, done, add(visitIndex, c64(1)), visitIndex),
      cursor);
  LLVM::StoreOp::create(b, arith::SelectOp::create(b, done, c64(0), following),
                        cursorJ);
  func::ReturnOp::create(b);
}

/// m2n_release(address, count): adds `count` to the counter at `address`
/// once every store this thread issued has landed; nothing when it is 0.
void KernelBuilder::buildRelease() {
  OpBuilder::InsertionGuard guard(b);
  release = beginHelper("m2n_release", {i64, i64});
  Block *entry = &release.front();
  Value address = entry->getArgument(0), count = entry->getArgument(1);
  ifThen(ne0(count), [&] {
    Value pointer = LLVM::IntToPtrOp::create(b, global, address);
    NVVM::CpAsyncBulkWaitGroupOp::create(b, 0, UnitAttr());
    fenceProxyAsync();
    addRelease(pointer, count);
  });
  func::ReturnOp::create(b);
}

/// m2n_wait(record, g, error, timeout, epoch): waits until each of the item's
/// counters reaches its value times the epoch; past the timeout, records
/// the item (global index g) and traps.
void KernelBuilder::buildWait() {
  OpBuilder::InsertionGuard guard(b);
  wait = beginHelper("m2n_wait", {shared, i64, global, i64, i64});
  Block *entry = &wait.front();
  Value record = entry->getArgument(0), g = entry->getArgument(1),
        error = entry->getArgument(2), timeout = entry->getArgument(3),
        epoch = entry->getArgument(4);
  for (auto [addressAt, valueAt] :
       {std::pair{offsetof(KernelItem, wait0), offsetof(KernelItem, value0)},
        std::pair{offsetof(KernelItem, wait1), offsetof(KernelItem, value1)}}) {
    Value counter = pointerField(record, addressAt, global);
    // Counters only grow: execution `epoch` waits for epoch x the count.
    Value target = mul(field(record, valueAt, i64), epoch);
    Value counterBits = LLVM::PtrToIntOp::create(b, i64, counter);
    ifThen(ne0(counterBits), [&] {
      Value start = NVVM::Clock64Op::create(b, i64);
      auto loop = scf::WhileOp::create(
          b, TypeRange{i64}, ValueRange{c64(0)},
          [&](OpBuilder &, Location, ValueRange) {
            Value seen = loadAcquire(counter);
            Value ready = cmp(arith::CmpIPredicate::uge, seen, target);
            Value elapsed = sub(NVVM::Clock64Op::create(b, i64), start);
            Value late = cmp(arith::CmpIPredicate::ugt, elapsed, timeout);
            scf::ConditionOp::create(b, negate(either(ready, late)),
                                     ValueRange{seen});
          },
          [&](OpBuilder &, Location, ValueRange args) {
            scf::YieldOp::create(b, args);
          });
      Value seen = loop.getResult(0);
      Value ok = cmp(arith::CmpIPredicate::uge, seen, target);
      ifElse(
          ok,
          [&] {
            // Order the async-proxy loads after the acquire.
            fenceProxyAsync();
            return SmallVector<Value>{};
          },
          [&] {
            auto word = [&](int64_t index) {
              return elementAt(error, i64, c64(index));
            };
            LLVM::StoreOp::create(b, g, word(1), 0, /*isVolatile=*/true);
            LLVM::StoreOp::create(b, counterBits, word(2), 0, true);
            LLVM::StoreOp::create(b, seen, word(3), 0, true);
            fenceSystem();
            LLVM::StoreOp::create(b, c64(1), error, 0, true);
            fenceSystem();
            LLVM::Trap::create(b);
            return SmallVector<Value>{};
          });
    });
  }
  func::ReturnOp::create(b);
}

/// Loads the tile of `record` through its source tensor map into `stage`.
void KernelBuilder::loadTile(Value record, Value stage, Value bar) {
  Value map = pointerField(record, offsetof(KernelItem, src), generic);
  Value rank = field(record, offsetof(KernelItem, rank), i32);
  Value stageCluster = LLVM::AddrSpaceCastOp::create(b, cluster, stage);
  switchOn(rank, tileRanks(), [&](int64_t tileRank) {
    NVVM::CpAsyncBulkTensorGlobalToSharedClusterOp::create(
        b, stageCluster, map,
        tileCoords(record, offsetof(KernelItem, srcCoords), tileRank), bar, ValueRange{}, Value(), Value(),
        NVVM::TMALoadMode::TILE, /*isCTAOnly=*/false,
        NVVM::CTAGroupKindAttr(), Value());
  });
}

/// m2n_issue(record, k, g, stages, stageBytes, stageBase, barBase, error,
/// timeout, early, epoch, met): waits for the dependencies of the walker's
/// item k (its record; item g of the rank's sequence) unless they are known
/// `met`, then starts loading its bytes into stage k % stages. Ahead of time
/// (`early`), an item whose load waits is left for later: its dependencies
/// may be items of this very CTA that have not been stored yet.
void KernelBuilder::buildIssue() {
  OpBuilder::InsertionGuard guard(b);
  issue = beginHelper("m2n_issue", {shared, i64, i64, i64, i64, shared,
                                    shared, global, i64, i1, i64, i1});
  Block *entry = &issue.front();
  Value record = entry->getArgument(0), k = entry->getArgument(1),
        g = entry->getArgument(2), stages = entry->getArgument(3),
        stageBytes = entry->getArgument(4), stageBase = entry->getArgument(5),
        barBase = entry->getArgument(6), error = entry->getArgument(7),
        timeout = entry->getArgument(8), early = entry->getArgument(9),
        epoch = entry->getArgument(10), met = entry->getArgument(11);
  Value hasWait = ne0(either(field(record, offsetof(KernelItem, wait0), i64),
                             field(record, offsetof(KernelItem, wait1), i64)));
  Value storeWaits =
      ne0(arith::AndIOp::create(b, field(record, offsetof(KernelItem, flags), i32),
                                c32(::m2n::kStoreWaits)));
  Value waitsForLoad = both(hasWait, negate(storeWaits));
  ifThen(negate(both(early, waitsForLoad)), [&] {
    ifThen(both(waitsForLoad, negate(met)),
           [&] { callWait(record, g, error, timeout, epoch); });
    Value bytes = field(record, offsetof(KernelItem, bytes), i32);
    Value kind = field(record, offsetof(KernelItem, kind), i32);
    Value slot = arith::RemUIOp::create(b, k, stages);
    Value bar = elementAt(barBase, i64, slot);
    Value loads = ne0(bytes);
    if (hasVectors())
      loads = both(loads, cmp(arith::CmpIPredicate::ne, kind,
                              c32(static_cast<int64_t>(
                                  ::m2n::Mechanism::Vector))));
    ifElse(
        loads,
        [&] {
          Value stage = byteOffset(stageBase, mul(slot, stageBytes));
          NVVM::MBarrierArriveExpectTxOp::create(
              b, Type(), bar, bytes, NVVM::MemScopeKind::CTA,
              /*relaxed=*/false, Value());
          auto bulkLoad = [&] {
            Value src = pointerField(record, offsetof(KernelItem, src), global);
            NVVM::CpAsyncBulkGlobalToSharedClusterOp::create(
                b, LLVM::AddrSpaceCastOp::create(b, cluster, stage), src, bar,
                bytes, Value(), Value());
            return SmallVector<Value>{};
          };
          if (hasTiles())
            ifElse(
                cmp(arith::CmpIPredicate::eq, kind,
                    c32(static_cast<int64_t>(::m2n::Mechanism::Tile))),
                [&] {
                  loadTile(record, stage, bar);
                  return SmallVector<Value>{};
                },
                bulkLoad);
          else
            bulkLoad();
          return SmallVector<Value>{};
        },
        [&] {
          // A zero-byte item (a gate that only waits and signals) or a
          // vector item still completes one phase of its stage's barrier:
          // the parity the loop waits for is counted in items.
          NVVM::MBarrierArriveOp::create(b, Type(), bar, Value(),
                                         NVVM::MemScopeKind::CTA, false);
          return SmallVector<Value>{};
        });
  });
  func::ReturnOp::create(b);
}

/// The TMA store or bulk reduction of a bulk item's `bytes` from `stage`.
void KernelBuilder::storeBulk(Value dst, Value stage, Value bytes, Value op) {
  SmallVector<int64_t> cases(ops.bulk.begin(), ops.bulk.end());
  switchOn(op, cases, [&](int64_t code) {
    if (code == 0) {
      NVVM::CpAsyncBulkSharedCTAToGlobalOp::create(b, dst, stage, bytes,
                                                   Value(), Value());
      return;
    }
    static const char *const names[] = {
        "",         "add.f32",  "add.noftz.f16", "add.noftz.bf16",
        "min.f16",  "max.f16",  "min.bf16",      "max.bf16",
        "add.s32",  "min.s32",  "max.s32",       "add.u64",
        "min.s64",  "max.s64",  "add.f64"};
    static_assert(sizeof(names) / sizeof(names[0]) == ::m2n::kBulkOpCount);
    // MLIR 22 has no op for the non-tensor bulk reduction.
    ptx(std::string("cp.reduce.async.bulk.global.shared::cta.bulk_group.") +
            names[code] + " [$0], [$1], $2;",
        {dst, stage, bytes});
  });
}

/// The TMA store or reduction of a tile through its destination map.
void KernelBuilder::storeTile(Value record, Value stage, Value op) {
  Value map = pointerField(record, offsetof(KernelItem, dst), generic);
  Value rank = field(record, offsetof(KernelItem, rank), i32);
  std::set<int64_t> codes;
  for (auto [code, tileRank] : ops.tile)
    codes.insert(code);
  switchOn(op, SmallVector<int64_t>(codes.begin(), codes.end()),
           [&](int64_t code) {
             SmallVector<int64_t> ranks;
             for (auto [c, tileRank] : ops.tile)
               if (c == static_cast<uint32_t>(code))
                 ranks.push_back(tileRank);
             switchOn(rank, ranks, [&](int64_t tileRank) {
               SmallVector<Value> coords = tileCoords(
                   record, offsetof(KernelItem, dstCoords), tileRank);
               if (code == 0) {
                 NVVM::CpAsyncBulkTensorSharedCTAToGlobalOp::create(
                     b, map, stage, coords, Value(), NVVM::TMAStoreMode::TILE,
                     Value());
                 return;
               }
               NVVM::TMAReduxKind kind = code == 1   ? NVVM::TMAReduxKind::ADD
                                         : code == 2 ? NVVM::TMAReduxKind::MIN
                                                     : NVVM::TMAReduxKind::MAX;
               NVVM::CpAsyncBulkTensorReduceOp::create(
                   b, map, stage, kind, NVVM::TMAStoreMode::TILE, coords,
                   Value());
             });
           });
}

Type KernelBuilder::elementType(::m2n::ElementType type) {
  switch (type) {
  case ::m2n::ElementType::I8:
    return i8;
  case ::m2n::ElementType::I16:
    return b.getI16Type();
  case ::m2n::ElementType::I32:
    return i32;
  case ::m2n::ElementType::I64:
    return i64;
  case ::m2n::ElementType::F16:
    return b.getF16Type();
  case ::m2n::ElementType::BF16:
    return b.getBF16Type();
  case ::m2n::ElementType::F32:
    return b.getF32Type();
  case ::m2n::ElementType::F64:
    return b.getF64Type();
  case ::m2n::ElementType::F8E4M3FN: // Never reduced: moved as bytes.
  case ::m2n::ElementType::F8E5M2:
  case ::m2n::ElementType::F8E8M0FNU:
  case ::m2n::ElementType::U8: // Signless; combine compares it unsigned.
    return i8;
  }
  return i8;
}

/// dst (op) src, on scalars or vectors, as the reference executor computes
/// it (reduceElement):
/// integers wrap in their own width; f16/bf16 through f32 (one rounding, so
/// the same bits as a 16-bit add); max(a, b) = a < b ? b : a and
/// min(a, b) = b < a ? b : a, as std::max / std::min.
Value KernelBuilder::combine(::m2n::Reduction reduction,
                             ::m2n::ElementType type, Value acc, Value x) {
  Type vector = acc.getType();
  const bool narrowFloat = type == ::m2n::ElementType::F16 ||
                           type == ::m2n::ElementType::BF16;
  if (!::m2n::isFloat(type)) {
    switch (reduction) {
    case ::m2n::Reduction::Sum:
      return arith::AddIOp::create(b, acc, x);
    case ::m2n::Reduction::Max:
      return ::m2n::isUnsigned(type)
                 ? Value(arith::MaxUIOp::create(b, acc, x))
                 : Value(arith::MaxSIOp::create(b, acc, x));
    case ::m2n::Reduction::Min:
      return ::m2n::isUnsigned(type)
                 ? Value(arith::MinUIOp::create(b, acc, x))
                 : Value(arith::MinSIOp::create(b, acc, x));
    }
  }
  Value wideAcc = acc, wideX = x;
  if (narrowFloat) {
    Type wide = b.getF32Type();
    if (auto lanes = dyn_cast<VectorType>(vector))
      wide = VectorType::get(lanes.getShape(), wide);
    wideAcc = arith::ExtFOp::create(b, wide, acc);
    wideX = arith::ExtFOp::create(b, wide, x);
  }
  if (reduction == ::m2n::Reduction::Sum) {
    Value sum = arith::AddFOp::create(b, wideAcc, wideX);
    return narrowFloat ? Value(arith::TruncFOp::create(b, vector, sum)) : sum;
  }
  Value takeX =
      reduction == ::m2n::Reduction::Max
          ? arith::CmpFOp::create(b, arith::CmpFPredicate::OLT, wideAcc, wideX)
          : arith::CmpFOp::create(b, arith::CmpFPredicate::OLT, wideX, wideAcc);
  return arith::SelectOp::create(b, takeX, x, acc);
}

/// The CTA's threads move `bytes` from `src` to `dst` (copy or reduction on
/// `type`): with vectors of `width` bytes where both addresses agree modulo
/// `width`, the elements before the first and after the last full vector
/// one by one.
void KernelBuilder::vectorLoop(Value src, Value dst, Value bytes, Value thread,
                               Value threads,
                               std::optional<::m2n::Reduction> reduction,
                               ::m2n::ElementType type) {
  // Loads bypass the SM's L1 (volatile: relaxed at system scope): the bytes
  // may have been written during this kernel by another CTA or GPU, after
  // a neighbouring item brought their cache line into this SM's L1 (seen on
  // H200 as stale bytes in runs of 2-3 bytes; TMA loads never use L1).
  auto load = [&](Type type, Value address, int64_t alignment) -> Value {
    return LLVM::LoadOp::create(b, type, address, alignment,
                                /*isVolatile=*/true);
  };
  // Copies move bytes: their unit is one byte, whatever the type.
  const int64_t unit = reduction ? ::m2n::elementSize(type) : 1;
  Type scalar = reduction ? elementType(type) : i8;
  Value s = LLVM::PtrToIntOp::create(b, i64, src);
  Value d = LLVM::PtrToIntOp::create(b, i64, dst);
  Value n = zext64(bytes);
  Value misalignment = arith::AndIOp::create(b, sub(s, d), c64(15));

  auto moveScalars = [&](Value from, Value count) {
    // Elements [from, from + count) of the run, one per thread.
    Value units = arith::DivUIOp::create(b, count, c64(unit));
    forRange(thread, units, threads, [&](Value i) {
      Value at = add(from, mul(i, c64(unit)));
      Value in = load(scalar, byteOffset(src, at), unit);
      Value out = byteOffset(dst, at);
      Value result = in;
      if (reduction)
        result = combine(*reduction, type, load(scalar, out, unit), in);
      LLVM::StoreOp::create(b, result, out, unit);
    });
  };

  // Widths from 16 bytes down to the unit; the first that divides the
  // misalignment takes the run.
  SmallVector<int64_t> widths;
  for (int64_t width = 16; width > unit; width /= 2)
    widths.push_back(width);
  std::function<void(size_t)> tryWidth = [&](size_t w) {
    if (w == widths.size()) {
      moveScalars(c64(0), n);
      return;
    }
    const int64_t width = widths[w];
    Value fits = cmp(arith::CmpIPredicate::eq,
                     arith::AndIOp::create(b, misalignment, c64(width - 1)),
                     c64(0));
    ifElse(
        fits,
        [&] {
          Type lanes = VectorType::get({width / unit}, scalar);
          // Head: up to the first `width`-aligned source address.
          Value head = arith::MinUIOp::create(
              b, arith::AndIOp::create(b, sub(c64(width), arith::AndIOp::create(
                                                              b, s, c64(width - 1))),
                                       c64(width - 1)),
              n);
          Value chunks = arith::DivUIOp::create(b, sub(n, head), c64(width));
          auto chunkAt = [&](Value c) { return add(head, mul(c, c64(width))); };
          auto finish = [&](Value at, Value in) {
            Value out = byteOffset(dst, at);
            Value result = in;
            if (reduction)
              result = combine(*reduction, type, load(lanes, out, width), in);
            LLVM::StoreOp::create(b, result, out, width);
          };
          moveScalars(c64(0), head);
          // Full rounds of kVectorUnroll chunks per thread, loads first.
          Value round = mul(threads, c64(kVectorUnroll));
          Value full = mul(arith::DivUIOp::create(b, chunks, round), round);
          forRange(c64(0), full, round, [&](Value base) {
            SmallVector<Value> at, in;
            for (int64_t u = 0; u < kVectorUnroll; ++u) {
              at.push_back(
                  chunkAt(add(base, add(thread, mul(threads, c64(u))))));
              in.push_back(load(lanes, byteOffset(src, at.back()), width));
            }
            for (int64_t u = 0; u < kVectorUnroll; ++u)
              finish(at[u], in[u]);
          });
          forRange(add(full, thread), chunks, threads, [&](Value c) {
            Value at = chunkAt(c);
            finish(at, load(lanes, byteOffset(src, at), width));
          });
          Value tail = chunkAt(chunks);
          moveScalars(tail, sub(n, tail));
          return SmallVector<Value>{};
        },
        [&] {
          tryWidth(w + 1);
          return SmallVector<Value>{};
        });
  };
  tryWidth(0);
}

/// An element loaded as its storage type, in f32 (exact for every castable
/// type; the 8-bit floats through `cvt.rn.f16x2.e4m3x2` / `.e5m2x2`).
Value KernelBuilder::toF32(Value element, ::m2n::ElementType type) {
  Type f32 = b.getF32Type();
  switch (type) {
  case ::m2n::ElementType::F16:
  case ::m2n::ElementType::BF16:
    return arith::ExtFOp::create(b, f32, element);
  case ::m2n::ElementType::F8E4M3FN:
  case ::m2n::ElementType::F8E5M2: {
    Value pair = arith::ExtUIOp::create(b, b.getI16Type(), element);
    auto op = NVVM::InlinePtxOp::create(
        b, TypeRange{i32}, ValueRange{pair}, ValueRange{},
        type == ::m2n::ElementType::F8E4M3FN ? "cvt.rn.f16x2.e4m3x2 $0, $1;"
                                             : "cvt.rn.f16x2.e5m2x2 $0, $1;",
        Value());
    Value low = arith::TruncIOp::create(b, b.getI16Type(), op.getResult(0));
    Value half = LLVM::BitcastOp::create(b, b.getF16Type(), low);
    return arith::ExtFOp::create(b, f32, half);
  }
  default:
    return element;
  }
}

/// An f32 rounded to nearest even into `type`'s storage type; the 8-bit
/// floats saturate (`cvt.rn.satfinite.e4m3x2.f32`, the value in the low
/// byte), as castElement computes.
Value KernelBuilder::fromF32(Value value, ::m2n::ElementType type) {
  switch (type) {
  case ::m2n::ElementType::F16:
    return arith::TruncFOp::create(b, b.getF16Type(), value);
  case ::m2n::ElementType::BF16:
    return arith::TruncFOp::create(b, b.getBF16Type(), value);
  case ::m2n::ElementType::F8E4M3FN:
  case ::m2n::ElementType::F8E5M2: {
    // Both halves from the value (a constant operand would be taken for an
    // immediate): the low byte is the one kept.
    auto op = NVVM::InlinePtxOp::create(
        b, TypeRange{b.getI16Type()}, ValueRange{value, value}, ValueRange{},
        type == ::m2n::ElementType::F8E4M3FN
            ? "cvt.rn.satfinite.e4m3x2.f32 $0, $1, $2;"
            : "cvt.rn.satfinite.e5m2x2.f32 $0, $1, $2;",
        Value());
    return arith::TruncIOp::create(b, i8, op.getResult(0));
  }
  default:
    return value;
  }
}

/// `converted` (x scaled and converted into `type`), except that a NaN x
/// becomes the reference's NaN (storeElement): x's sign with 0x7F (e4m3) or
/// 0x7E (e5m2). The f32 product or quotient of a NaN loses its sign on the
/// GPU, and cvt gives 0x7F for e5m2.
Value KernelBuilder::keepNaN(Value converted, Value x,
                             ::m2n::ElementType type) {
  if (type != ::m2n::ElementType::F8E4M3FN &&
      type != ::m2n::ElementType::F8E5M2)
    return converted;
  Value isNaN = arith::CmpFOp::create(b, arith::CmpFPredicate::UNO, x, x);
  Value sign = arith::TruncIOp::create(
      b, i8,
      arith::AndIOp::create(
          b, arith::ShRUIOp::create(b, arith::BitcastOp::create(b, i32, x),
                                    c32(24)),
          c32(0x80)));
  Value nan = arith::OrIOp::create(
      b, sign,
      arith::ConstantIntOp::create(
          b, i8, type == ::m2n::ElementType::F8E4M3FN ? 0x7F : 0x7E));
  return arith::SelectOp::create(b, isNaN, nan, converted);
}

/// A cast item: the CTA's threads convert element by element,
/// dst[i] = to(from(src[i]) x scale), `bytes` counting destination bytes.
void KernelBuilder::castLoop(Value src, Value dst, Value bytes, Value scale,
                             Value thread, Value threads,
                             ::m2n::ElementType from, ::m2n::ElementType to) {
  // Elements move as their storage types (elementType: 8-bit floats as i8).
  const int64_t fromSize = ::m2n::elementSize(from);
  const int64_t toSize = ::m2n::elementSize(to);
  Value count = arith::DivUIOp::create(b, zext64(bytes), c64(toSize));
  // Volatile loads bypass L1, as vectorLoop's (bytes written by peers).
  auto load = [&](Value i) {
    return LLVM::LoadOp::create(b, elementType(from),
                                byteOffset(src, mul(i, c64(fromSize))),
                                fromSize, /*isVolatile=*/true);
  };
  auto convert = [&](Value in) {
    Value x = toF32(in, from);
    return keepNaN(fromF32(arith::MulFOp::create(b, x, scale), to), x, to);
  };
  auto convertAndStore = [&](Value i, Value in) {
    LLVM::StoreOp::create(b, convert(in), byteOffset(dst, mul(i, c64(toSize))),
                          toSize);
  };
  // Elements [lo, hi) one by one: rounds of kCastUnroll per thread with
  // every load first (one load at a time per thread left casts
  // latency-bound: 10 GB/s on H200), then the rest.
  auto scalars = [&](Value lo, Value hi) {
    Value n = sub(hi, lo);
    Value round = mul(threads, c64(kCastUnroll));
    Value full = mul(arith::DivUIOp::create(b, n, round), round);
    forRange(c64(0), full, round, [&](Value base) {
      SmallVector<Value> at, in;
      for (int64_t u = 0; u < kCastUnroll; ++u) {
        at.push_back(add(lo, add(base, add(thread, mul(threads, c64(u))))));
        in.push_back(load(at.back()));
      }
      for (int64_t u = 0; u < kCastUnroll; ++u)
        convertAndStore(at[u], in[u]);
    });
    forRange(add(add(lo, full), thread), hi, threads,
             [&](Value i) { convertAndStore(i, load(i)); });
  };
  // Vectors of `lanes` elements where both sides can be aligned at once
  // (at most 16 bytes on either side): a head up to the source's vector
  // boundary, whole vectors (kVectorUnroll loads in flight per thread),
  // the tail; otherwise every element by itself.
  const int64_t lanes = 16 / std::max(fromSize, toSize);
  const int64_t srcVector = lanes * fromSize, dstVector = lanes * toSize;
  Value s = LLVM::PtrToIntOp::create(b, i64, src);
  Value d = LLVM::PtrToIntOp::create(b, i64, dst);
  Value head = arith::MinUIOp::create(
      b,
      arith::DivUIOp::create(
          b,
          arith::AndIOp::create(
              b, sub(c64(srcVector), arith::AndIOp::create(b, s, c64(srcVector - 1))),
              c64(srcVector - 1)),
          c64(fromSize)),
      count);
  Value dstAligned = cmp(
      arith::CmpIPredicate::eq,
      arith::AndIOp::create(b, add(d, mul(head, c64(toSize))), c64(dstVector - 1)),
      c64(0));
  Value srcAligned = cmp(arith::CmpIPredicate::eq,
                         arith::AndIOp::create(b, s, c64(fromSize - 1)), c64(0));
  ifElse(
      both(dstAligned, srcAligned),
      [&] {
        Type fromLanes = VectorType::get({lanes}, elementType(from));
        Type toLanes = VectorType::get({lanes}, elementType(to));
        Value vectors = arith::DivUIOp::create(b, sub(count, head), c64(lanes));
        auto at = [&](Value v) { return add(head, mul(v, c64(lanes))); };
        auto finish = [&](Value v, Value in) {
          Value out = LLVM::UndefOp::create(b, toLanes);
          for (int64_t l = 0; l < lanes; ++l) {
            Value lane = c32(l);
            Value x = LLVM::ExtractElementOp::create(b, in, lane);
            out = LLVM::InsertElementOp::create(b, out, convert(x), lane);
          }
          LLVM::StoreOp::create(b, out, byteOffset(dst, mul(at(v), c64(toSize))),
                                dstVector);
        };
        auto loadVector = [&](Value v) {
          return LLVM::LoadOp::create(b, fromLanes,
                                      byteOffset(src, mul(at(v), c64(fromSize))),
                                      srcVector, /*isVolatile=*/true);
        };
        scalars(c64(0), head);
        Value round = mul(threads, c64(kVectorUnroll));
        Value full = mul(arith::DivUIOp::create(b, vectors, round), round);
        forRange(c64(0), full, round, [&](Value base) {
          SmallVector<Value> which, in;
          for (int64_t u = 0; u < kVectorUnroll; ++u) {
            which.push_back(add(base, add(thread, mul(threads, c64(u)))));
            in.push_back(loadVector(which.back()));
          }
          for (int64_t u = 0; u < kVectorUnroll; ++u)
            finish(which[u], in[u]);
        });
        forRange(add(full, thread), vectors, threads,
                 [&](Value v) { finish(v, loadVector(v)); });
        scalars(at(vectors), count);
        return SmallVector<Value>{};
      },
      [&] {
        scalars(c64(0), count);
        return SmallVector<Value>{};
      });
}

/// The scale of a block whose amax is `amax` (f32, never NaN: amaxes
/// ignore NaN), as scaleFromAmax computes it: 1 for an amax that is 0 or
/// infinite; amax / the fp8 type's largest finite value (1 where that
/// underflows); for e8m0 scales 2^(floor(log2 amax) - emax) clamped to
/// [2^-127, 2^127], whose biased exponent goes to `*exponentByte` (i8).
Value KernelBuilder::scaleFromAmax(Value amax, const ::m2n::QuantizingOp &op,
                                   Value *exponentByte) {
  Type f32 = b.getF32Type();
  auto f32c = [&](float v) {
    return arith::ConstantFloatOp::create(b, cast<FloatType>(f32),
                                          APFloat(v));
  };
  // Finite and positive: amax > 0 and amax < infinity.
  Value usable = both(
      arith::CmpFOp::create(b, arith::CmpFPredicate::OGT, amax, f32c(0.0f)),
      arith::CmpFOp::create(b, arith::CmpFPredicate::OLT, amax,
                            f32c(std::numeric_limits<float>::infinity())));
  if (!op.exponentScales) {
    const float largest =
        op.to == ::m2n::ElementType::F8E4M3FN ? 448.0f : 57344.0f;
    Value quotient = arith::DivFOp::create(b, amax, f32c(largest));
    Value underflows =
        arith::CmpFOp::create(b, arith::CmpFPredicate::OEQ, quotient,
                              f32c(0.0f));
    return arith::SelectOp::create(b, both(usable, negate(underflows)),
                                   quotient, f32c(1.0f));
  }
  // floor(log2 amax) from the exponent field; subnormals scaled by 2^64
  // first (exact) so that their leading bit reaches the field.
  Value bits = arith::BitcastOp::create(b, i32, amax);
  Value subnormal = cmp(arith::CmpIPredicate::ult, bits, c32(0x00800000));
  Value lifted = arith::BitcastOp::create(
      b, i32, arith::MulFOp::create(b, amax, f32c(0x1p64f)));
  Value field = arith::ShRUIOp::create(
      b, arith::SelectOp::create(b, subnormal, lifted, bits), c32(23));
  Value floorLog2 = sub(sub(field, c32(127)),
                        arith::SelectOp::create(b, subnormal, c32(64), c32(0)));
  const int64_t emax = op.to == ::m2n::ElementType::F8E4M3FN ? 8 : 15;
  Value shared = arith::MaxSIOp::create(
      b, arith::MinSIOp::create(b, sub(floorLog2, c32(emax)), c32(127)),
      c32(-127));
  shared = arith::SelectOp::create(b, usable, shared, c32(0));
  // 2^shared: a normal's exponent field, or 2^-127's subnormal bit.
  Value scaleBits = arith::SelectOp::create(
      b, cmp(arith::CmpIPredicate::sge, shared, c32(-126)),
      arith::ShLIOp::create(b, add(shared, c32(127)), c32(23)),
      c32(0x00400000));
  if (exponentByte)
    *exponentByte = arith::TruncIOp::create(b, i8, add(shared, c32(127)));
  return arith::BitcastOp::create(b, f32, scaleBits);
}

/// quantizingReciprocal (m2n/Base/Scaling.h): 1 / scale, or 0 where the
/// kernel divides (an amax that is not finite, a scale outside
/// [2^-80, 2^100]).
Value KernelBuilder::quantizingReciprocal(Value amax, Value scale) {
  Type f32 = b.getF32Type();
  auto f32c = [&](float v) {
    return arith::ConstantFloatOp::create(b, cast<FloatType>(f32),
                                          APFloat(v));
  };
  Value usable = both(
      arith::CmpFOp::create(b, arith::CmpFPredicate::OLT, amax,
                            f32c(std::numeric_limits<float>::infinity())),
      both(arith::CmpFOp::create(b, arith::CmpFPredicate::OGE, scale,
                                 f32c(0x1p-80f)),
           arith::CmpFOp::create(b, arith::CmpFPredicate::OLE, scale,
                                 f32c(0x1p100f))));
  return arith::SelectOp::create(
      b, usable, arith::DivFOp::create(b, f32c(1.0f), scale), f32c(0.0f));
}

/// A quantizing reshard's vector items (docs/fp8-scaling.md), every thread
/// of the CTA taking part:
///  * scale items turn the f32 amaxes at `src` into `bytes` of scales at
///    `dst` (f32, or e8m0 bytes);
///  * amax items read `bytes` of source elements per row and max-combine
///    each block's |x| (NaN ignored) into its entry of the lookup's table
///    (non-negative floats order as their bits: `red.max.u32`);
///  * quantizing items read `bytes` / |fp8| source elements per row and
///    write to_fp8(x / scale), each block's scale computed once from the
///    amax in the lookup's table.
/// An item walks `rows` rows (ItemLookup). The fast path, for blocks at
/// least a vector wide and rows of whole, aligned vectors, keeps a chunk of
/// rows' entries in the item's shared-memory stage (free while a vector
/// item runs: TMA loads only fill the stages of later items): the scales
/// with their reciprocals, or amaxes combined with shared-memory atomics
/// and flushed once per chunk. A warp's lanes take 32 neighbouring
/// 16-byte vectors of a row, the warps splitting the chunk's column groups'
/// rows evenly, and each thread walks its column down the rows with
/// 15 (or 7) rows in flight (cp.async into its ring in the
/// stage). Per element: amaxes with packed maxima, quotients by the
/// block's reciprocal with one FMA correction (quotientByReciprocal), two
/// lanes per fp8 conversion. Anything else walks each row block by block.
void KernelBuilder::quantizingLoop(Value record, Value src, Value dst,
                                   Value bytes, Value thread, Value threads,
                                   Value stage, Value stageBytes,
                                   const ::m2n::QuantizingOp &op) {
  Type f32 = b.getF32Type();
  auto load = [&](Type type, Value address, int64_t alignment) -> Value {
    // Volatile: bytes and tables written by peers during this kernel.
    return LLVM::LoadOp::create(b, type, address, alignment,
                                /*isVolatile=*/true);
  };
  if (op.kind == ::m2n::StepKind::Scale) {
    const int64_t toSize = op.exponentScales ? 1 : 4;
    Value count = arith::DivUIOp::create(b, zext64(bytes), c64(toSize));
    forRange(thread, count, threads, [&](Value i) {
      Value amax = load(f32, byteOffset(src, mul(i, c64(4))), 4);
      Value exponent;
      Value scale = scaleFromAmax(amax, op, &exponent);
      LLVM::StoreOp::create(b, op.exponentScales ? exponent : scale,
                            byteOffset(dst, mul(i, c64(toSize))), toSize);
    });
    return;
  }
  const bool amax = op.kind == ::m2n::StepKind::Amax;
  const int64_t fromSize = ::m2n::elementSize(op.from);
  const int64_t toSize = ::m2n::elementSize(op.to);
  auto lookupField = [&](size_t offset, Type type) {
    return field(record, ::m2n::kItemLookupOffset + offset, type);
  };
  Value table = pointerField(
      record, ::m2n::kItemLookupOffset + offsetof(::m2n::ItemLookup, table),
      global);
  Value entry = lookupField(offsetof(::m2n::ItemLookup, entry), i64);
  Value phase = zext64(lookupField(offsetof(::m2n::ItemLookup, phase), i32));
  Value width = zext64(lookupField(offsetof(::m2n::ItemLookup, width), i32));
  Value rows = arith::MaxUIOp::create(
      b, zext64(lookupField(offsetof(::m2n::ItemLookup, rows), i32)), c64(1));
  Value srcStride =
      zext64(lookupField(offsetof(::m2n::ItemLookup, srcStride), i32));
  Value dstStride =
      zext64(lookupField(offsetof(::m2n::ItemLookup, dstStride), i32));
  Value entryStride =
      zext64(lookupField(offsetof(::m2n::ItemLookup, entryStride), i32));
  Value n = arith::DivUIOp::create(b, zext64(bytes),
                                   c64(amax ? fromSize : toSize));
  // Blocks a row touches: ceil((phase + n) / width) (phase < width).
  Value segments = arith::DivUIOp::create(
      b, add(add(phase, n), sub(width, c64(1))), width);
  Value zero = arith::ConstantFloatOp::create(b, cast<FloatType>(f32),
                                              APFloat(0.0f));
  Type element = elementType(op.from);
  // fmax(acc, x) for an acc that is never NaN (amaxes start at 0): a NaN x
  // leaves it (a compare and a select; arith.maxnumf would call libdevice).
  auto maxIgnoringNaN = [&](Value acc, Value x) -> Value {
    return arith::SelectOp::create(
        b, arith::CmpFOp::create(b, arith::CmpFPredicate::OGT, x, acc), x,
        acc);
  };
  auto magnitude = [&](Value x) -> Value {
    // |x|: the sign bit cleared (NaN stays NaN).
    return arith::BitcastOp::create(
        b, f32,
        arith::AndIOp::create(b, arith::BitcastOp::create(b, i32, x),
                              c32(0x7FFFFFFF)));
  };
  auto flush = [&](Value slot, Value best) {
    ifThen(arith::CmpFOp::create(b, arith::CmpFPredicate::OGT, best, zero),
           [&] {
             ptx("red.relaxed.sys.global.max.u32 [$0], $1;",
                 {slot, arith::BitcastOp::create(b, i32, best)});
           });
  };

  // Fast path: a vector is 16 bytes of source, `lanes` elements. The stage
  // holds the chunk's entries (4-byte amaxes, or 8-byte pairs of a scale
  // and its quantizingReciprocal), then each thread's ring of
  // kDeepRing (or kShallowRing) vectors, filled by cp.async so that many
  // rows' loads are in flight without registers to hold them.
  const int64_t lanes = 16 / fromSize;
  const int64_t entryBytes = amax ? 4 : 8;
  Value deep = cmp(arith::CmpIPredicate::uge, stageBytes,
                   add(mul(threads, c64(16 * kDeepRing)),
                       mul(segments, c64(entryBytes))));
  Value ringBytes = mul(threads, arith::SelectOp::create(
                                     b, deep, c64(16 * kDeepRing),
                                     c64(16 * kShallowRing)));
  Value capacity = arith::SelectOp::create(
      b, cmp(arith::CmpIPredicate::ugt, stageBytes, ringBytes),
      arith::DivUIOp::create(b, sub(stageBytes, ringBytes), c64(entryBytes)),
      c64(0));
  auto divides = [&](Value value, int64_t by) {
    return cmp(arith::CmpIPredicate::eq,
               arith::AndIOp::create(b, value, c64(by - 1)), c64(0));
  };
  Value s = LLVM::PtrToIntOp::create(b, i64, src);
  Value d = LLVM::PtrToIntOp::create(b, i64, dst);
  Value fast = both(
      both(cmp(arith::CmpIPredicate::uge, width, c64(lanes)),
           cmp(arith::CmpIPredicate::ule, segments, capacity)),
      both(divides(n, lanes), both(divides(s, 16), divides(srcStride, 16))));
  fast = both(fast, divides(threads, 32));
  if (!amax)
    fast = both(fast, both(divides(d, lanes), divides(dstStride, lanes)));
  auto fastPath = [&] {
    Value vectors = arith::DivUIOp::create(b, n, c64(lanes));
    // Rows per chunk: their entries, (R - 1) x entryStride + segments,
    // within the stage.
    Value rowsPerChunk = arith::SelectOp::create(
        b, cmp(arith::CmpIPredicate::eq, entryStride, c64(0)), rows,
        arith::MinUIOp::create(
            b, rows,
            add(arith::DivUIOp::create(
                    b, sub(capacity, segments),
                    arith::MaxUIOp::create(b, entryStride, c64(1))),
                c64(1))));
    Value perRow = cmp(arith::CmpIPredicate::ne, entryStride, c64(0));
    Value ring = byteOffset(stage, sub(stageBytes, ringBytes));
    Type words = VectorType::get({4}, i32);
    Type i32Ty = i32;
    Value lane = arith::AndIOp::create(b, thread, c64(31));
    Value warp = arith::ShRUIOp::create(b, thread, c64(5));
    Value warps = arith::ShRUIOp::create(b, threads, c64(5));
    // A warp's lanes take 32 neighbouring vectors of a row (coalesced);
    // the column groups' rows are split evenly between the warps.
    Value groups = arith::DivUIOp::create(b, add(vectors, c64(31)), c64(32));
    // Packed maxima of 16-byte words' lanes, NaN ignored (PTX max returns
    // the operand that is not NaN): two bf16 or f16 lanes a word, or one f32.
    const char *packedMaxCode =
        op.from == ::m2n::ElementType::BF16  ? "max.bf16x2 $0, $1, $2;"
        : op.from == ::m2n::ElementType::F16 ? "max.f16x2 $0, $1, $2;"
                                             : "max.f32 $0, $1, $2;";
    const int64_t absMask = fromSize == 2 ? 0x7FFF7FFF : 0x7FFFFFFF;
    auto packedMax = [&](Value x, Value y) {
      return NVVM::InlinePtxOp::create(b, TypeRange{i32Ty}, ValueRange{x, y},
                                       ValueRange{}, packedMaxCode, Value())
          .getResult(0);
    };
    auto wordOf = [&](Value x, int64_t w) {
      return LLVM::ExtractElementOp::create(b, x, c32(w));
    };
    auto bitsToF32 = [&](Value bits) {
      return arith::BitcastOp::create(b, f32, bits);
    };
    // The lanes of a word, sign cleared, in f32.
    auto magnitudesOf = [&](Value word, SmallVectorImpl<Value> &out) {
      Value bits = arith::AndIOp::create(b, word, c32(absMask));
      if (op.from == ::m2n::ElementType::F32) {
        out.push_back(bitsToF32(bits));
        return;
      }
      if (op.from == ::m2n::ElementType::BF16) {
        out.push_back(bitsToF32(arith::ShLIOp::create(b, bits, c32(16))));
        out.push_back(bitsToF32(arith::AndIOp::create(b, bits, c32(0x7FFF0000))));
        return;
      }
      for (int64_t half = 0; half < 2; ++half) {
        Value h = arith::TruncIOp::create(
            b, b.getI16Type(),
            half ? arith::ShRUIOp::create(b, bits, c32(16)) : bits);
        Value f16Value = LLVM::BitcastOp::create(b, b.getF16Type(), h);
        out.push_back(arith::ExtFOp::create(b, f32, f16Value));
      }
    };
    auto magnitudes = [&](Value x) {
      SmallVector<Value> out;
      for (int64_t w = 0; w < 4; ++w)
        magnitudesOf(wordOf(x, w), out);
      return out;
    };
    auto permute = [&](Value x, Value y, StringRef selector) {
      return NVVM::InlinePtxOp::create(
                 b, TypeRange{i32Ty}, ValueRange{x, y}, ValueRange{},
                 ("prmt.b32 $0, $1, $2, " + selector + ";").str(), Value())
          .getResult(0);
    };
    // The sign bits of lanes 4k..4k+3 in the top bits of a word's bytes.
    auto signBytes = [&](Value x, int64_t k) {
      Value bytes =
          fromSize == 2
              ? permute(wordOf(x, 2 * k), wordOf(x, 2 * k + 1), "0x7531")
              : permute(permute(wordOf(x, 0), wordOf(x, 1), "0x0073"),
                        permute(wordOf(x, 2), wordOf(x, 3), "0x0073"),
                        "0x5410");
      return arith::AndIOp::create(b, bytes, c32(0x80808080));
    };
    const char *pairCode = op.to == ::m2n::ElementType::F8E4M3FN
                               ? "cvt.rn.satfinite.e4m3x2.f32 $0, $1, $2;"
                               : "cvt.rn.satfinite.e5m2x2.f32 $0, $1, $2;";
    // Two quotients into fp8 bytes: `low` in the low byte.
    auto convertPair = [&](Value low, Value high) {
      Value pair = NVVM::InlinePtxOp::create(b, TypeRange{b.getI16Type()},
                                             ValueRange{high, low},
                                             ValueRange{}, pairCode, Value())
                       .getResult(0);
      return arith::ExtUIOp::create(b, i32Ty, pair);
    };

    // Vector v of the rows [r0, r1) of the chunk at row `first`: a ring of
    // `depth` slots with depth - 1 rows in flight; a row's slot is refilled
    // one row later, once its bytes are in registers and used.
    auto walkColumn = [&](Value v, Value r0, Value r1, Value first,
                          int64_t depth) {
      Value i0 = mul(v, c64(lanes));
      Value position = add(phase, i0);
      Value j0 = arith::DivUIOp::create(b, position, width);
      Value rem = arith::RemUIOp::create(b, position, width);
      SmallVector<Value> next; // Lane l lies in block j0 + 1.
      for (int64_t l = 0; l < lanes; ++l)
        next.push_back(
            cmp(arith::CmpIPredicate::uge, add(rem, c64(l)), width));
      Value crosses = next.back();
      Value j1 = add(j0, arith::ExtUIOp::create(b, i64, crosses));
      Value srcColumn = byteOffset(src, mul(i0, c64(fromSize)));
      Value dstColumn = byteOffset(dst, mul(i0, c64(toSize)));
      auto slot = [&](Value k) {
        return byteOffset(ring, mul(add(mul(k, threads), thread), c64(16)));
      };
      auto fetch = [&](Value r, Value k) {
        ifThen(cmp(arith::CmpIPredicate::ult, r, r1), [&] {
          NVVM::CpAsyncOp::create(
              b, slot(k),
              byteOffset(srcColumn, mul(add(first, r), srcStride)), 16,
              NVVM::LoadCacheModifierKind::CG, Value());
        });
        // Every thread commits a group per row, empty or not: the waits
        // below count groups.
        NVVM::CpAsyncCommitGroupOp::create(b);
      };
      for (int64_t k = 0; k + 1 < depth; ++k)
        fetch(add(r0, c64(k)), c64(k));
      auto entryOf = [&](Value r, Value j) {
        return add(mul(r, entryStride), j);
      };
      auto combineShared = [&](Value at, Value best) {
        ifThen(arith::CmpFOp::create(b, arith::CmpFPredicate::OGT, best, zero),
               [&] {
                 LLVM::AtomicRMWOp::create(
                     b, LLVM::AtomicBinOp::umax, elementAt(stage, i32Ty, at),
                     arith::BitcastOp::create(b, i32Ty, best),
                     LLVM::AtomicOrdering::monotonic);
               });
      };
      // A packed maximum's lanes folded into one f32. A half is NaN where
      // all its lanes were (max returns NaN only for two NaNs): the fold
      // starts from 0 so that such a half never hides the other.
      auto fold = [&](Value packed) -> Value {
        if (fromSize == 4)
          return bitsToF32(packed);
        SmallVector<Value> halves;
        magnitudesOf(packed, halves);
        return maxIgnoringNaN(maxIgnoringNaN(zero, halves[0]), halves[1]);
      };
      // Amax of row r: `uniform` rows (no lane in block j0 + 1) combine
      // packed lanes; others keep block j0's and j0 + 1's maxima apart.
      // Rows of their own blocks (entryStride > 0) go to the stage per row.
      auto amaxRow = [&](Value r, Value x, ValueRange acc,
                         bool uniform) -> SmallVector<Value> {
        if (uniform) {
          Value best = arith::AndIOp::create(b, wordOf(x, 0), c32(absMask));
          for (int64_t w = 1; w < 4; ++w)
            best = packedMax(best, arith::AndIOp::create(b, wordOf(x, w),
                                                         c32(absMask)));
          return ifElse(
              perRow,
              [&] {
                combineShared(entryOf(r, j0), fold(best));
                return SmallVector<Value>(acc);
              },
              [&] {
                return SmallVector<Value>{packedMax(acc[0], best), acc[1],
                                          acc[2]};
              });
        }
        Value m0 = acc[1], m1 = acc[2];
        SmallVector<Value> a = magnitudes(x);
        for (int64_t l = 0; l < lanes; ++l) {
          m0 = arith::SelectOp::create(b, next[l], m0, maxIgnoringNaN(m0, a[l]));
          m1 = arith::SelectOp::create(b, next[l], maxIgnoringNaN(m1, a[l]), m1);
        }
        return ifElse(
            perRow,
            [&] {
              combineShared(entryOf(r, j0), m0);
              ifThen(crosses, [&] { combineShared(entryOf(r, j1), m1); });
              return SmallVector<Value>{acc[0], zero, zero};
            },
            [&] { return SmallVector<Value>{acc[0], m0, m1}; });
      };
      // Row r quantized: |x| / scale per lane (quotientByReciprocal), fp8
      // bytes two lanes at a time, x's sign added to each byte.
      auto quantizeRow = [&](Value r, Value x, bool uniform) {
        Type pairType = VectorType::get({2}, f32);
        auto entryPair = [&](Value j) {
          return LLVM::LoadOp::create(
              b, pairType,
              elementAt(stage, f32, mul(entryOf(r, j), c64(2))), 8);
        };
        auto part = [&](Value pair, int64_t i) -> Value {
          return LLVM::ExtractElementOp::create(b, pair, c32(i));
        };
        Value p0 = entryPair(j0);
        Value p1 = uniform ? p0 : entryPair(j1);
        SmallVector<Value> scale, reciprocal;
        for (int64_t l = 0; l < lanes; ++l) {
          scale.push_back(uniform ? part(p0, 0)
                                  : arith::SelectOp::create(
                                        b, next[l], part(p1, 0), part(p0, 0)));
          reciprocal.push_back(
              uniform ? part(p0, 1)
                      : arith::SelectOp::create(b, next[l], part(p1, 1),
                                                part(p0, 1)));
        }
        auto isZero = [&](Value value) {
          return arith::CmpFOp::create(b, arith::CmpFPredicate::OEQ, value,
                                       zero);
        };
        Value divide = either(isZero(part(p0, 1)), isZero(part(p1, 1)));
        SmallVector<Value> a = magnitudes(x);
        SmallVector<Type> types(lanes, f32);
        SmallVector<Value> quotients = ifElse(
            divide,
            [&] {
              SmallVector<Value> q;
              for (int64_t l = 0; l < lanes; ++l)
                q.push_back(arith::DivFOp::create(b, a[l], scale[l]));
              return q;
            },
            [&] {
              SmallVector<Value> q;
              for (int64_t l = 0; l < lanes; ++l) {
                Value first = arith::MulFOp::create(b, a[l], reciprocal[l]);
                Value remainder = LLVM::FMAOp::create(
                    b, arith::NegFOp::create(b, first), scale[l], a[l]);
                q.push_back(
                    LLVM::FMAOp::create(b, remainder, reciprocal[l], first));
              }
              return q;
            });
        SmallVector<Value> out;
        for (int64_t k = 0; k < lanes / 4; ++k) {
          Value low = convertPair(quotients[4 * k],
                                  quotients[4 * k + 1]);
          Value high = convertPair(quotients[4 * k + 2],
                                   quotients[4 * k + 3]);
          Value bytes = arith::OrIOp::create(
              b, arith::OrIOp::create(
                     b, low, arith::ShLIOp::create(b, high, c32(16))),
              signBytes(x, k));
          if (op.to == ::m2n::ElementType::F8E5M2) {
            // cvt writes e5m2 NaNs as 0x7F, the reference 0x7E (0x7F only
            // comes from NaN: satfinite writes no infinity).
            Value t = arith::AndIOp::create(b, bytes, c32(0x7F7F7F7F));
            Value isNaN = arith::ShRUIOp::create(
                b,
                arith::AndIOp::create(b, add(t, c32(0x01010101)),
                                      c32(0x80808080)),
                c32(7));
            bytes = sub(bytes, isNaN);
          }
          out.push_back(bytes);
        }
        Value at = byteOffset(dstColumn, mul(add(first, r), dstStride));
        if (out.size() == 1) {
          LLVM::StoreOp::create(b, out[0], at, 4);
          return;
        }
        Value pairOut = LLVM::UndefOp::create(b, VectorType::get({2}, i32Ty));
        for (int64_t k = 0; k < 2; ++k)
          pairOut = LLVM::InsertElementOp::create(b, pairOut, out[k], c32(k));
        LLVM::StoreOp::create(b, pairOut, at, 8);
      };
      auto walk = [&](bool uniform) {
        SmallVector<Value> init;
        if (amax)
          init = {c32(0), zero, zero};
        auto loop = scf::ForOp::create(
            b, toIndex(r0), toIndex(r1), toIndex(c64(1)), init,
            [&](OpBuilder &, Location, Value iv, ValueRange acc) {
              Value r = toI64(iv);
              Value i = sub(r, r0);
              Value k = arith::RemUIOp::create(b, i, c64(depth));
              // Row r's group done: at most depth - 2 newer ones pending.
              NVVM::CpAsyncWaitGroupOp::create(b, depth - 2);
              Value x = LLVM::LoadOp::create(b, words, slot(k), 16);
              fetch(add(r, c64(depth - 1)),
                    arith::RemUIOp::create(b, add(i, c64(depth - 1)),
                                           c64(depth)));
              SmallVector<Value> carried(acc);
              if (amax)
                carried = amaxRow(r, x, acc, uniform);
              else
                quantizeRow(r, x, uniform);
              scf::YieldOp::create(b, carried);
            });
        if (!amax)
          return SmallVector<Value>{};
        ifThen(negate(perRow), [&] {
          if (uniform) {
            combineShared(j0, fold(loop.getResult(0)));
            return;
          }
          combineShared(j0, loop.getResult(1));
          ifThen(crosses, [&] { combineShared(j1, loop.getResult(2)); });
        });
        return SmallVector<Value>{};
      };
      ifElse(crosses, [&] { return walk(false); },
             [&] { return walk(true); });
    };
    forRange(c64(0), rows, rowsPerChunk, [&](Value first) {
      Value chunkRows = arith::MinUIOp::create(b, rowsPerChunk,
                                               sub(rows, first));
      Value entries = add(mul(sub(chunkRows, c64(1)), entryStride), segments);
      Value base = add(entry, mul(first, entryStride));
      // The chunk's entries: zeroed amaxes, or the blocks' scales and
      // reciprocals.
      forRange(thread, entries, threads, [&](Value e) {
        if (amax) {
          LLVM::StoreOp::create(b, c32(0), elementAt(stage, i32Ty, e), 4);
          return;
        }
        Value blockAmax = load(f32, elementAt(table, f32, add(base, e)), 4);
        Value scale = scaleFromAmax(blockAmax, op);
        Value at = mul(e, c64(2));
        LLVM::StoreOp::create(b, scale, elementAt(stage, f32, at), 8);
        LLVM::StoreOp::create(b, quantizingReciprocal(blockAmax, scale),
                              elementAt(stage, f32, add(at, c64(1))), 4);
      });
      NVVM::Barrier0Op::create(b);
      Value units = mul(groups, chunkRows);
      Value lo = arith::DivUIOp::create(b, mul(warp, units), warps);
      Value hi = arith::DivUIOp::create(b, mul(add(warp, c64(1)), units), warps);
      Value firstGroup = arith::DivUIOp::create(b, lo, chunkRows);
      Value endGroup = arith::DivUIOp::create(
          b, add(hi, sub(chunkRows, c64(1))), chunkRows);
      forRange(firstGroup, endGroup, c64(1), [&](Value g) {
        Value groupStart = mul(g, chunkRows);
        Value r0 = sub(arith::MaxUIOp::create(b, lo, groupStart), groupStart);
        Value r1 = sub(arith::MinUIOp::create(b, hi, add(groupStart, chunkRows)),
                       groupStart);
        Value v = add(mul(g, c64(32)), lane);
        ifThen(both(cmp(arith::CmpIPredicate::ult, v, vectors),
                    cmp(arith::CmpIPredicate::ult, r0, r1)),
               [&] {
                 ifElse(
                     deep,
                     [&] {
                       walkColumn(v, r0, r1, first, kDeepRing);
                       return SmallVector<Value>{};
                     },
                     [&] {
                       walkColumn(v, r0, r1, first, kShallowRing);
                       return SmallVector<Value>{};
                     });
               });
      });
      NVVM::Barrier0Op::create(b);
      if (amax) {
        // The chunk's amaxes into the table, one atomic per block.
        forRange(thread, entries, threads, [&](Value e) {
          flush(elementAt(table, f32, add(base, e)),
                LLVM::LoadOp::create(b, f32, elementAt(stage, f32, e), 4));
        });
        // The next chunk zeroes the entries only after every flush.
        NVVM::Barrier0Op::create(b);
      }
    });
    return SmallVector<Value>{};
  };

  // Any other item: each row, block by block.
  auto slowPath = [&] {
    forRange(c64(0), rows, c64(1), [&](Value row) {
      Value rowSrc = byteOffset(src, mul(row, srcStride));
      Value rowDst = byteOffset(dst, mul(row, dstStride));
      Value rowEntry = add(entry, mul(row, entryStride));
      forRange(c64(0), segments, c64(1), [&](Value j) {
        // Elements [lo, hi) of the row lie in block rowEntry + j.
        Value start = sub(mul(j, width), phase);
        Value lo = arith::SelectOp::create(
            b, cmp(arith::CmpIPredicate::slt, start, c64(0)), c64(0), start);
        Value hi = arith::MinSIOp::create(b, add(start, width), n);
        Value slot = elementAt(table, f32, add(rowEntry, j));
        if (amax) {
          auto loop = scf::ForOp::create(
              b, toIndex(add(lo, thread)), toIndex(hi), toIndex(threads),
              ValueRange{zero},
              [&](OpBuilder &, Location, Value iv, ValueRange acc) {
                Value x = toF32(
                    load(element,
                         byteOffset(rowSrc, mul(toI64(iv), c64(fromSize))),
                         fromSize),
                    op.from);
                scf::YieldOp::create(
                    b, ValueRange{maxIgnoringNaN(acc[0], magnitude(x))});
              });
          Value best = loop.getResult(0);
          // The warp's maximum in every lane, then one atomic per warp.
          for (int64_t offset = 16; offset > 0; offset /= 2) {
            Value other = NVVM::ShflOp::create(
                b, f32, c32(-1), best, c32(offset), c32(31),
                NVVM::ShflKindAttr::get(ctx, NVVM::ShflKind::bfly),
                UnitAttr());
            best = maxIgnoringNaN(best, other);
          }
          Value lane = arith::AndIOp::create(b, thread, c64(31));
          ifThen(cmp(arith::CmpIPredicate::eq, lane, c64(0)),
                 [&] { flush(slot, best); });
          return;
        }
        // Quantize: the block's scale once, then its elements.
        Value scale = scaleFromAmax(load(f32, slot, 4), op);
        forRange(add(lo, thread), hi, threads, [&](Value i) {
          Value x = toF32(
              load(element, byteOffset(rowSrc, mul(i, c64(fromSize))),
                   fromSize),
              op.from);
          Value quotient = arith::DivFOp::create(b, x, scale);
          LLVM::StoreOp::create(b, keepNaN(fromF32(quotient, op.to), x, op.to),
                                byteOffset(rowDst, mul(i, c64(toSize))),
                                toSize);
        });
      });
    });
    return SmallVector<Value>{};
  };
  ifElse(fast, fastPath, slowPath);
}

/// A vector item: every thread of the CTA takes part.
void KernelBuilder::moveVector(Value record, Value src, Value dst, Value bytes,
                               Value op, Value scale, Value thread,
                               Value threads, Value stage, Value stageBytes) {
  SmallVector<int64_t> cases(ops.vector.begin(), ops.vector.end());
  switchOn(op, cases, [&](int64_t code) {
    if (auto quantizing =
            ::m2n::quantizingOpMeaning(static_cast<uint32_t>(code))) {
      quantizingLoop(record, src, dst, bytes, thread, threads, stage,
                     stageBytes, *quantizing);
      return;
    }
    if (auto cast = ::m2n::castOpMeaning(static_cast<uint32_t>(code))) {
      castLoop(src, dst, bytes, scale, thread, threads, cast->first,
               cast->second);
      return;
    }
    if (code == 0) {
      vectorLoop(src, dst, bytes, thread, threads, std::nullopt,
                 ::m2n::ElementType::I8);
      return;
    }
    auto [reduction, type] = ::m2n::vectorOpMeaning(code);
    vectorLoop(src, dst, bytes, thread, threads, reduction, type);
  });
}

void KernelBuilder::buildKernel() {
  auto kernel = gpu::GPUFuncOp::create(
      b, mlir::m2n::kTransferKernelName,
      b.getFunctionType(
          {global, global, global, global, i64, i64, i64, global}, {}));
  kernel->setAttr(gpu::GPUDialect::getKernelFuncAttrName(), b.getUnitAttr());
  OpBuilder::InsertionGuard guard(b);
  Block &entry = kernel.getBody().front();
  b.setInsertionPointToStart(&entry);
  Value templates = entry.getArgument(0), walkerTable = entry.getArgument(1),
        visits = entry.getArgument(2), error = entry.getArgument(3),
        timeout = entry.getArgument(4), stageBytes = entry.getArgument(5),
        stages = entry.getArgument(6), epochWords = entry.getArgument(7);

  Value tid32 = NVVM::ThreadIdXOp::create(b, i32);
  Value elected = cmp(arith::CmpIPredicate::eq, tid32, c32(0));
  Value thread = zext64(tid32);
  Value threads = zext64(NVVM::BlockDimXOp::create(b, i32));
  // Walkers: a CTA of (32, W) threads is W walkers, warp w walking as CTA
  // bid x W + w of a grid W times as large, with stages and barriers of its
  // own (several issuing threads per SM; the runtime launches W > 1 only
  // for tables without vector items, which need the whole CTA).
  Value walker = zext64(NVVM::ThreadIdYOp::create(b, i32));
  Value walkers = zext64(NVVM::BlockDimYOp::create(b, i32));
  Value bid = add(mul(zext64(NVVM::BlockIdXOp::create(b, i32)), walkers),
                  walker);
  Value grid = mul(zext64(NVVM::GridDimXOp::create(b, i32)), walkers);
  Value oneWalker = cmp(arith::CmpIPredicate::eq, walkers, c64(1));
  Value stageBase =
      byteOffset(LLVM::AddressOfOp::create(b, shared, kStagesName),
                 mul(walker, mul(stages, stageBytes)));
  Value barBase = elementAt(LLVM::AddressOfOp::create(b, shared, kBarriersName),
                            i64, mul(walker, stages));
  // This walker's items (b, b + grid, ... of the sequence): how many, and
  // the ring of stages + 1 records it materializes them into.
  Value walkerRecord =
      byteOffset(walkerTable, mul(bid, c64(sizeof(KernelWalker))));
  Value mine = field(walkerRecord, offsetof(KernelWalker, items), i64);
  Value ring = add(stages, c64(1));
  Value recordBase =
      byteOffset(LLVM::AddressOfOp::create(b, shared, kRecordsName),
                 mul(mul(walker, ring), c64(kRecordBytes)));
  Value cursor = elementAt(LLVM::AddressOfOp::create(b, shared, kCursorsName),
                           i64, mul(walker, c64(2)));
  auto recordOf = [&](Value k) {
    return byteOffset(recordBase,
                      mul(arith::RemUIOp::create(b, k, ring), c64(kRecordBytes)));
  };

  // Everything but vector work is thread 0's (of each walker); without
  // vector items the other threads have nothing to do.
  auto body = [&] {
    Value epoch = ifElse(
        elected,
        [&] {
          Value finished =
              LLVM::LoadOp::create(b, i64, epochWords, 0, /*isVolatile=*/true);
          forRange(c64(0), stages, c64(1), [&](Value s) {
            NVVM::MBarrierInitOp::create(b, elementAt(barBase, i64, s), c32(1),
                                         Value());
          });
          NVVM::FenceMbarrierInitOp::create(b);
          LLVM::StoreOp::create(
              b, field(walkerRecord, offsetof(KernelWalker, firstVisit), i64),
              cursor);
          LLVM::StoreOp::create(b, c64(0), elementAt(cursor, i64, c64(1)));
          return SmallVector<Value>{add(finished, c64(1))};
        },
        [&] { return SmallVector<Value>{c64(0)}; })[0];
    // Ahead of time, item k is materialized first: every k is issued early
    // exactly once, in order (the prefetch, then the refills).
    auto callIssue = [&](Value k, bool early, Value met) {
      Value record = recordOf(k);
      if (early)
        func::CallOp::create(
            b, next, ValueRange{templates, visits, grid, cursor, record});
      func::CallOp::create(b, issue,
                           ValueRange{record, k, add(mul(k, grid), bid), stages,
                                      stageBytes, stageBase, barBase, error,
                                      timeout, cBool(early), epoch, met});
    };
    // Prefetch the first `stages` items, then store item k and refill.
    ifThen(elected, [&] {
      forRange(c64(0), arith::MinUIOp::create(b, mine, stages), c64(1),
               [&](Value k) { callIssue(k, true, cBool(false)); });
    });

    auto loop = scf::ForOp::create(
        b, cIdx(0), toIndex(mine), cIdx(1),
        // Held signal (counter, sum), held reads-done (counter, sum), the
        // wait last met (counter, value).
        ValueRange{c64(0), c64(0), c64(0), c64(0), c64(0), c64(0)},
        [&](OpBuilder &, Location, Value iv, ValueRange pending) {
          Value k = toI64(iv);
          Value g = add(mul(k, grid), bid);
          // The CTA's threads read the record thread 0 materialized (an
          // iteration or more ago): after this barrier. Its slot is not
          // written again before the next iteration's. (Only one walker's
          // CTA has them: tables with vector items run one walker.)
          if (hasVectors())
            ifThen(oneWalker, [&] { NVVM::Barrier0Op::create(b); });
          Value record = recordOf(k);
          Value kind = field(record, offsetof(KernelItem, kind), i32);
          Value bytes = field(record, offsetof(KernelItem, bytes), i32);
          Value op = field(record, offsetof(KernelItem, op), i32);
          Value isVector = cmp(
              arith::CmpIPredicate::eq, kind,
              c32(static_cast<int64_t>(::m2n::Mechanism::Vector)));
          Value readDone =
              pointerField(record, offsetof(KernelItem, readDone), global);
          Value readsPeer =
              ne0(LLVM::PtrToIntOp::create(b, i64, readDone));
          Value moves = ne0(bytes);

          // Thread 0: waits, loads left for now, the TMA store.
          SmallVector<Value> held = ifElse(
              elected,
              [&] {
                Value slot = arith::RemUIOp::create(b, k, stages);
                Value parity = arith::TruncIOp::create(
                    b, i32,
                    arith::AndIOp::create(
                        b, arith::DivUIOp::create(b, k, stages), c64(1)));
                Value bar = elementAt(barBase, i64, slot);
                Value stage = byteOffset(stageBase, mul(slot, stageBytes));
                Value wait0 = field(record, offsetof(KernelItem, wait0), i64),
                      wait1 = field(record, offsetof(KernelItem, wait1), i64);
                Value target0 =
                    mul(field(record, offsetof(KernelItem, value0), i64), epoch);
                Value waits = ne0(either(wait0, wait1));
                // Met already: one wait, on the counter last waited for, for
                // no more than was waited for then (counters only grow).
                Value met = both(
                    both(waits, negate(ne0(wait1))),
                    both(cmp(arith::CmpIPredicate::eq, wait0, pending[4]),
                         cmp(arith::CmpIPredicate::ule, target0, pending[5])));
                Value blocks = both(waits, negate(met));
                Value storeWaits = ne0(arith::AndIOp::create(
                    b, field(record, offsetof(KernelItem, flags), i32),
                    c32(::m2n::kStoreWaits)));
                // Release the signals and reads-done held back before a
                // wait that may block: it may need them (a peer's last item
                // waits for its reads-done).
                SmallVector<Value> kept = ifElse(
                    blocks,
                    [&] {
                      callRelease(pending[0], pending[1]);
                      releaseReads(pending[2], pending[3]);
                      return SmallVector<Value>{c64(0), c64(0), c64(0), c64(0)};
                    },
                    [&] { return SmallVector<Value>(pending.take_front(4)); });
                // An item whose load waits was not loaded ahead: load it now
                // (what it depends on is visible through the release of the
                // held signals above and the wait's acquire; a met wait's
                // through the acquire that met it).
                ifThen(both(waits, negate(storeWaits)), [&] {
                  ifThen(negate(met), [&] {
                    NVVM::CpAsyncBulkWaitGroupOp::create(b, 0, b.getUnitAttr());
                  });
                  callIssue(k, false, met);
                });
                // An item whose store waits was loaded ahead: wait now.
                ifThen(both(blocks, storeWaits),
                       [&] { callWait(record, g, error, timeout, epoch); });
                // The wait now met (its first counter, with two).
                kept.push_back(
                    arith::SelectOp::create(b, blocks, wait0, pending[4]));
                kept.push_back(
                    arith::SelectOp::create(b, blocks, target0, pending[5]));
                // Every item completes its stage's phase (see buildIssue).
                NVVM::MBarrierTryWaitParityOp::create(b, bar, parity,
                                                      c32(1000000));
                Value tma = moves;
                if (hasVectors())
                  tma = both(tma, negate(isVector));
                ifThen(tma, [&] {
                  auto bulkStore = [&] {
                    storeBulk(pointerField(record, offsetof(KernelItem, dst),
                                           global),
                              stage, bytes, op);
                    return SmallVector<Value>{};
                  };
                  if (hasTiles())
                    ifElse(cmp(arith::CmpIPredicate::eq, kind,
                               c32(static_cast<int64_t>(
                                   ::m2n::Mechanism::Tile))),
                           [&] {
                             storeTile(record, stage, op);
                             return SmallVector<Value>{};
                           },
                           bulkStore);
                  else
                    bulkStore();
                });
                // One bulk group per item, empty for zero-byte and vector
                // items: the refill below waits for all groups but the
                // newest (this item's) to have read their stages, which
                // holds only if every item counts.
                NVVM::CpAsyncBulkCommitGroupOp::create(b);
                return kept;
              },
              [&] { return SmallVector<Value>(pending); });

          // A quantizing item stands for `rows` instances of its movement
          // (ItemLookup): it signals and reports reads once per instance.
          Value instances = c64(1);
          if (hasQuantizingOps()) {
            Value quantizing = both(
                isVector,
                both(cmp(arith::CmpIPredicate::uge, op,
                         c32(::m2n::kAmaxOpBase)),
                     cmp(arith::CmpIPredicate::ult, op,
                         c32(::m2n::kQuantizingOpEnd))));
            Value rows = zext64(field(
                record,
                ::m2n::kItemLookupOffset + offsetof(::m2n::ItemLookup, rows),
                i32));
            instances = arith::SelectOp::create(
                b,
                both(quantizing, cmp(arith::CmpIPredicate::ugt, rows, c64(1))),
                rows, c64(1));
          }
          // Vector items: the whole CTA, after thread 0's waits. The item's
          // stage is theirs meanwhile (only later items' loads are in
          // flight, into other stages).
          if (hasVectors())
            ifThen(both(isVector, moves), [&] {
              NVVM::Barrier0Op::create(b);
              Value slot = arith::RemUIOp::create(b, k, stages);
              moveVector(
                  record,
                  pointerField(record, offsetof(KernelItem, src), global),
                  pointerField(record, offsetof(KernelItem, dst), global),
                  bytes, op,
                  field(record, offsetof(KernelItem, scale), b.getF32Type()),
                  thread, threads, byteOffset(stageBase, mul(slot, stageBytes)),
                  stageBytes);
              // Later TMA accesses (async proxy) see these stores.
              fenceProxyAsync();
              NVVM::Barrier0Op::create(b);
            });

          // Thread 0: hold the signal back (release the held sum first if
          // it is for another counter), then refill a stage once the store
          // reading it has read it.
          // Adds this item's instances to a held (counter, sum) for
          // `counter`, releasing the sum held for another counter first.
          auto holdFor = [&](Value heldAt, Value heldSum, Value counter,
                             function_ref<void(Value, Value)> releaseHeld) {
            Value other = both(ne0(heldAt),
                               cmp(arith::CmpIPredicate::ne, heldAt, counter));
            Value base = ifElse(
                other,
                [&] {
                  releaseHeld(heldAt, heldSum);
                  return SmallVector<Value>{c64(0)};
                },
                [&] { return SmallVector<Value>{heldSum}; })[0];
            return SmallVector<Value>{counter, add(base, instances)};
          };
          SmallVector<Value> next = ifElse(
              elected,
              [&] {
                Value signal = LLVM::PtrToIntOp::create(
                    b, i64,
                    pointerField(record, offsetof(KernelItem, signal), global));
                SmallVector<Value> result = ifElse(
                    ne0(signal),
                    [&] {
                      return holdFor(held[0], held[1], signal,
                                     [&](Value at, Value sum) {
                                       callRelease(at, sum);
                                     });
                    },
                    [&] {
                      return SmallVector<Value>{held[0], held[1]};
                    });
                // Reads done: the bytes are read (TMA items: the load
                // landed; vector items: the CTA's loads), or the copy-engine
                // copies before this kernel are (zero-byte items). Held back
                // over a run of reads of one peer and released when an item
                // reads another peer or none, and at the end: a release at
                // system scope per item costs the walker its rate, and the
                // peer waits for its reads only at its kernel's end.
                Value readBits = LLVM::PtrToIntOp::create(b, i64, readDone);
                SmallVector<Value> reads = ifElse(
                    readsPeer,
                    [&] {
                      return holdFor(held[2], held[3], readBits,
                                     [&](Value at, Value sum) {
                                       releaseReads(at, sum);
                                     });
                    },
                    [&] {
                      releaseReads(held[2], held[3]);
                      return SmallVector<Value>{c64(0), c64(0)};
                    });
                result.append(reads.begin(), reads.end());
                // With one stage, refill it for the next item once this
                // store has read it; with several, refill the previous
                // item's stage, so that this store may still read its own.
                ifElse(
                    cmp(arith::CmpIPredicate::eq, stages, c64(1)),
                    [&] {
                      Value following = add(k, c64(1));
                      ifThen(cmp(arith::CmpIPredicate::ult, following, mine),
                             [&] {
                               NVVM::CpAsyncBulkWaitGroupOp::create(
                                   b, 0, b.getUnitAttr());
                               callIssue(following, true, cBool(false));
                             });
                      return SmallVector<Value>{};
                    },
                    [&] {
                      Value following = add(sub(k, c64(1)), stages);
                      Value refill = both(
                          cmp(arith::CmpIPredicate::uge, k, c64(1)),
                          cmp(arith::CmpIPredicate::ult, following, mine));
                      ifThen(refill, [&] {
                        NVVM::CpAsyncBulkWaitGroupOp::create(b, 1,
                                                             b.getUnitAttr());
                        callIssue(following, true, cBool(false));
                      });
                      return SmallVector<Value>{};
                    });
                result.append({held[4], held[5]});
                return result;
              },
              [&] { return SmallVector<Value>(held); });
          scf::YieldOp::create(b, next);
        });

    ifThen(elected, [&] {
      callRelease(loop.getResult(0), loop.getResult(1));
      releaseReads(loop.getResult(2), loop.getResult(3));
      NVVM::CpAsyncBulkWaitGroupOp::create(b, 0, UnitAttr());
      // The last CTA to finish advances the epoch.
      Value doneWord = elementAt(epochWords, i64, c64(1));
      Value before = LLVM::AtomicRMWOp::create(
          b, LLVM::AtomicBinOp::add, doneWord, c64(1),
          LLVM::AtomicOrdering::acq_rel);
      Value last = cmp(arith::CmpIPredicate::eq, before,
                       sub(mul(epoch, grid), c64(1)));
      ifThen(last, [&] {
        LLVM::StoreOp::create(b, epoch, epochWords, 0, /*isVolatile=*/true);
      });
    });
  };
  // A launch of several walkers has no vector items (launchShape): only
  // each walker's thread 0 has work, and the others must not read records
  // their walker writes meanwhile.
  if (hasVectors())
    ifThen(either(elected, oneWalker), body);
  else
    ifThen(elected, body);
  gpu::ReturnOp::create(b);
}

void KernelBuilder::build() {
  declareSharedMemory();
  buildRelease();
  buildWait();
  buildIssue();
  buildNext();
  buildKernel();
}

} // namespace

LogicalResult mlir::m2n::buildTransferKernel(ModuleOp module,
                                             const ::m2n::KernelOps &ops) {
  if (SymbolTable::lookupSymbolIn(module, kKernelContainerName) ||
      SymbolTable::lookupSymbolIn(module, kKernelModuleName))
    return success();
  MLIRContext *ctx = module.getContext();
  ctx->loadDialect<gpu::GPUDialect, NVVM::NVVMDialect, LLVM::LLVMDialect,
                   scf::SCFDialect, arith::ArithDialect, func::FuncDialect>();
  // Not marked gpu.container_module: nothing launches the kernel through
  // gpu.launch_func (the runtime does), and that attribute's verifier walks
  // every op of the module (~70k in a lowered refit) on each verification.
  ImplicitLocOpBuilder b(NameLoc::get(StringAttr::get(ctx, "m2n_transfer")),
                         ctx);
  b.setInsertionPointToEnd(module.getBody());
  auto container = ModuleOp::create(b, b.getLoc(), kKernelContainerName);
  b.setInsertionPointToEnd(container.getBody());
  auto kernels = gpu::GPUModuleOp::create(b, kKernelModuleName);
  b.setInsertionPointToStart(kernels.getBody());
  KernelBuilder(b, ops).build();
  return success();
}
