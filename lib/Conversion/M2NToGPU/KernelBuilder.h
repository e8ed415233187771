//===- KernelBuilder.h - the transfer kernel's builder, shared by its parts -===//
//
// The transfer kernel (TransferKernel.cpp) is built by one KernelBuilder whose
// parts live in one file each: the walker, its waits, signals and TMA
// (TransferKernel.cpp), the SM path's vector copies, reductions and casts
// (KernelSmPath.cpp) and the quantizing items (KernelQuantizing.cpp). This
// private header holds the class and its small helpers: constants and
// arithmetic, memory, structured control flow and the inline PTX.
//
//===----------------------------------------------------------------------===//

#ifndef M2N_LIB_CONVERSION_M2NTOGPU_KERNELBUILDER_H
#define M2N_LIB_CONVERSION_M2NTOGPU_KERNELBUILDER_H

#include "m2n/Artifact/KernelABI.h"
#include "m2n/Artifact/KernelTable.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"

#include <cstddef>
#include <limits>
#include <optional>
#include <set>

namespace m2n_transfer_kernel {

using namespace mlir;
using ::m2n::KernelItem;
using ::m2n::KernelLevel;
using ::m2n::KernelTemplate;
using ::m2n::KernelVisit;
using ::m2n::KernelWalker;

using Body = llvm::function_ref<void()>;
using ValuesBody = llvm::function_ref<SmallVector<Value>()>;

/// Vector items: chunks a thread loads before it combines and stores, to
/// keep several loads in flight over NVLink (quantizing items: rows).
constexpr int64_t kVectorUnroll = 4;
/// Vector reductions: chunks of each operand a thread loads first. 8 beat
/// 4 at 1, 16 and 66 CTAs a rank by 2-4.5% (16 was no better than 8 at
/// one CTA; bench/results/fused-reductions-2026-12-07.md).
constexpr int64_t kReductionUnroll = 8;
/// Vector reductions whose source is staged (stagedReductionLoop): chunks of
/// the accumulator a thread loads first (the source is in shared memory).
constexpr int64_t kStagedReductionUnroll = 8;
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
  /// Indices [lo, hi) split over the CTA's `threads` (this one `thread`):
  /// rounds of `unroll` indices a thread whose loads are all issued before
  /// any is finished (one load in flight a thread leaves a loop
  /// latency-bound), then the rest one at a time. `load(i)` returns what
  /// `finish(i, loaded)` consumes.
  void forUnrolled(Value lo, Value hi, Value thread, Value threads,
                   int64_t unroll,
                   llvm::function_ref<SmallVector<Value>(Value)> load,
                   llvm::function_ref<void(Value, ArrayRef<Value>)> finish) {
    Value round = mul(threads, c64(unroll));
    Value full = mul(arith::DivUIOp::create(b, sub(hi, lo), round), round);
    forRange(c64(0), full, round, [&](Value base) {
      SmallVector<Value> at;
      SmallVector<SmallVector<Value>> loaded;
      for (int64_t u = 0; u < unroll; ++u) {
        at.push_back(add(lo, add(base, add(thread, mul(threads, c64(u))))));
        loaded.push_back(load(at.back()));
      }
      for (int64_t u = 0; u < unroll; ++u)
        finish(at[u], loaded[u]);
    });
    forRange(add(add(lo, full), thread), hi, threads,
             [&](Value i) { finish(i, load(i)); });
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
                  Value stageBytes, Value bar, Value parity);
  /// Whether vector item `record`'s source is loaded into its stage by TMA
  /// when the item is issued (stagedReductionLoop).
  Value stagesSource(Value record, Value stageBytes);
  void stagedReductionLoop(Value staged, Value dst, Value acc, Value bytes,
                           Value thread, Value threads,
                           ::m2n::Reduction reduction,
                           ::m2n::ElementType type);
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
  void vectorLoop(Value src, Value dst, Value acc, Value bytes, Value thread,
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
  /// Vector reductions (op codes 1 to kVectorOpCount - 1).
  bool hasVectorReductions() const {
    return llvm::any_of(ops.vector, [](uint32_t op) {
      return op >= 1 && op < ::m2n::kVectorOpCount;
    });
  }
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

} // namespace m2n_transfer_kernel

#endif // M2N_LIB_CONVERSION_M2NTOGPU_KERNELBUILDER_H
