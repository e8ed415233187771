//===- TransferKernel.cpp - the transfer kernel, built for an artifact -----===//
//
// The GPU side of every m2n schedule: a launch runs the walkers of one rank
// or of several (each walker's record names its rank's table of work items:
// m2n/Artifact/KernelABI.h, KernelTable.h). It is built here with
// typed ops (gpu, scf, arith, llvm, nvvm) and specialized to the op codes an
// artifact's items use (KernelOps): a copy-only artifact gets no reduction
// code, one without tiles no tensor-map code.
//
// Per walker, one thread walks the items b, b + grid, ... of its rank's
// instance sequence (a CTA of (32, W) threads is W walkers, warp w of CTA c
// walking with record c x W + w of the launch's walkers, which gives its
// place b in its rank's grid, with stages and barriers of its own; one
// thread issues ~1M items/s, so small items want several).
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
// Inline PTX only where MLIR 22 has no op, each in one helper of
// KernelBuilder.h (which says where the kernel's other parts live):
// the non-tensor bulk reduction `cp.reduce.async.bulk`, `ld.acquire.sys`,
// `red.release.sys`, `fence.sc.sys`.
//
//===----------------------------------------------------------------------===//

#include "m2n/Conversion/M2NToGPU/TransferKernel.h"
#include "m2n/Conversion/M2NToGPU/M2NToGPU.h"

#include "KernelBuilder.h"

using namespace mlir;
using namespace m2n_transfer_kernel;

namespace m2n_transfer_kernel {

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
    // Vector items load nothing here but reductions whose source their
    // stage takes (stagesSource).
    if (hasVectors())
      loads = both(loads,
                   either(cmp(arith::CmpIPredicate::ne, kind,
                              c32(static_cast<int64_t>(
                                  ::m2n::Mechanism::Vector))),
                          stagesSource(record, stageBytes)));
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

void KernelBuilder::buildKernel() {
  auto kernel = gpu::GPUFuncOp::create(
      b, mlir::m2n::kTransferKernelName,
      b.getFunctionType({global, global, i64, i64, i64}, {}));
  kernel->setAttr(gpu::GPUDialect::getKernelFuncAttrName(), b.getUnitAttr());
  OpBuilder::InsertionGuard guard(b);
  Block &entry = kernel.getBody().front();
  b.setInsertionPointToStart(&entry);
  Value walkerTable = entry.getArgument(0), error = entry.getArgument(1),
        timeout = entry.getArgument(2), stageBytes = entry.getArgument(3),
        stages = entry.getArgument(4);

  Value tid32 = NVVM::ThreadIdXOp::create(b, i32);
  Value elected = cmp(arith::CmpIPredicate::eq, tid32, c32(0));
  Value thread = zext64(tid32);
  Value threads = zext64(NVVM::BlockDimXOp::create(b, i32));
  // Walkers: a CTA of (32, W) threads is W walkers, warp w walking with
  // record bid x W + w of the launch's walker table, with stages and
  // barriers of its own (several issuing threads per SM; the runtime
  // launches W > 1 only for tables without vector items, which need the
  // whole CTA). The record says which rank's table the walker walks and
  // its place in that rank's grid: a launch may run several ranks.
  Value walker = zext64(NVVM::ThreadIdYOp::create(b, i32));
  Value walkers = zext64(NVVM::BlockDimYOp::create(b, i32));
  Value launchIndex =
      add(mul(zext64(NVVM::BlockIdXOp::create(b, i32)), walkers), walker);
  Value walkerRecord =
      byteOffset(walkerTable, mul(launchIndex, c64(sizeof(KernelWalker))));
  Value templates =
      pointerField(walkerRecord, offsetof(KernelWalker, templates), global);
  Value visits =
      pointerField(walkerRecord, offsetof(KernelWalker, visits), global);
  Value epochWords =
      pointerField(walkerRecord, offsetof(KernelWalker, epochWords), global);
  Value bid = zext64(field(walkerRecord, offsetof(KernelWalker, index), i32));
  Value grid = zext64(field(walkerRecord, offsetof(KernelWalker, grid), i32));
  Value oneWalker = cmp(arith::CmpIPredicate::eq, walkers, c64(1));
  Value stageBase =
      byteOffset(LLVM::AddressOfOp::create(b, shared, kStagesName),
                 mul(walker, mul(stages, stageBytes)));
  Value barBase = elementAt(LLVM::AddressOfOp::create(b, shared, kBarriersName),
                            i64, mul(walker, stages));
  // This walker's items (b, b + grid, ... of the sequence): how many, and
  // the ring of stages + 1 records it materializes them into.
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
              Value parity = arith::TruncIOp::create(
                  b, i32,
                  arith::AndIOp::create(
                      b, arith::DivUIOp::create(b, k, stages), c64(1)));
              moveVector(
                  record,
                  pointerField(record, offsetof(KernelItem, src), global),
                  pointerField(record, offsetof(KernelItem, dst), global),
                  bytes, op,
                  field(record, offsetof(KernelItem, scale), b.getF32Type()),
                  thread, threads, byteOffset(stageBase, mul(slot, stageBytes)),
                  stageBytes, elementAt(barBase, i64, slot), parity);
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
      // The last of the rank's walkers to finish advances its epoch.
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

} // namespace m2n_transfer_kernel

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
