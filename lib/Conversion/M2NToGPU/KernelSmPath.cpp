//===- KernelSmPath.cpp - the transfer kernel's SM path ---------------------===//
//
// Vector items (the SM path): every thread of the CTA loads, combines in
// registers and stores, with the widest vectors both addresses allow;
// copies, reductions (f32 accumulation for 16-bit floats) and casts, and the
// dispatch of a vector item to them or to the quantizing loop.
//
//===----------------------------------------------------------------------===//

#include "KernelBuilder.h"

namespace m2n_transfer_kernel {

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
/// `type`, dst = acc (op) src, `acc` being dst itself or an accumulator at
/// the same offsets): with vectors of `width` bytes where the addresses
/// agree modulo `width`, the elements before the first and after the last
/// full vector one by one.
void KernelBuilder::vectorLoop(Value src, Value dst, Value acc, Value bytes,
                               Value thread, Value threads,
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
  Value misalignment = sub(s, d);
  if (reduction)
    misalignment = arith::OrIOp::create(
        b, misalignment, sub(s, LLVM::PtrToIntOp::create(b, i64, acc)));
  misalignment = arith::AndIOp::create(b, misalignment, c64(15));

  auto moveScalars = [&](Value from, Value count) {
    // Elements [from, from + count) of the run, one per thread.
    Value units = arith::DivUIOp::create(b, count, c64(unit));
    forRange(thread, units, threads, [&](Value i) {
      Value at = add(from, mul(i, c64(unit)));
      Value in = load(scalar, byteOffset(src, at), unit);
      Value result = in;
      if (reduction)
        result = combine(*reduction, type,
                         load(scalar, byteOffset(acc, at), unit), in);
      LLVM::StoreOp::create(b, result, byteOffset(dst, at), unit);
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
          // Both operands of a reduction are loaded before any is
          // combined: one accumulator load at a time per thread left vector
          // reductions latency-bound.
          auto loadAcc = [&](Value at) -> Value {
            return reduction ? load(lanes, byteOffset(acc, at), width)
                             : Value();
          };
          auto finish = [&](Value at, Value in, Value accIn) {
            Value result = in;
            if (reduction)
              result = combine(*reduction, type, accIn, in);
            LLVM::StoreOp::create(b, result, byteOffset(dst, at), width);
          };
          moveScalars(c64(0), head);
          // Rounds of `unroll` chunks per thread, loads first.
          forUnrolled(
              c64(0), chunks, thread, threads,
              reduction ? kReductionUnroll : kVectorUnroll,
              [&](Value c) -> SmallVector<Value> {
                Value at = chunkAt(c);
                return {load(lanes, byteOffset(src, at), width), loadAcc(at)};
              },
              [&](Value c, ArrayRef<Value> in) {
                finish(chunkAt(c), in[0], in[1]);
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
    forUnrolled(
        lo, hi, thread, threads, kCastUnroll,
        [&](Value i) -> SmallVector<Value> { return {load(i)}; },
        [&](Value i, ArrayRef<Value> in) { convertAndStore(i, in[0]); });
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
        forUnrolled(
            c64(0), vectors, thread, threads, kVectorUnroll,
            [&](Value v) -> SmallVector<Value> { return {loadVector(v)}; },
            [&](Value v, ArrayRef<Value> in) { finish(v, in[0]); });
        scalars(at(vectors), count);
        return SmallVector<Value>{};
      },
      [&] {
        scalars(c64(0), count);
        return SmallVector<Value>{};
      });
}


/// Whether vector item `record` is a reduction whose source the issuing
/// thread loads into the item's stage by TMA when it issues the item (ahead
/// of time where nothing it depends on is pending, as a bulk item's load):
/// whole 16-byte vectors, at most a stage, with the source, the destination
/// and the accumulator 16-byte aligned. Its threads then read the source
/// from shared memory and only the accumulator from global memory, so that
/// the stages' loads keep the bytes in flight that a thread's registers
/// cannot. The issue and the vector item compute it alike.
Value KernelBuilder::stagesSource(Value record, Value stageBytes) {
  if (!hasVectorReductions())
    return cBool(false);
  Value kind = field(record, offsetof(::m2n::KernelItem, kind), i32);
  Value op = field(record, offsetof(::m2n::KernelItem, op), i32);
  Value bytes = zext64(field(record, offsetof(::m2n::KernelItem, bytes), i32));
  Value src = LLVM::PtrToIntOp::create(
      b, i64, pointerField(record, offsetof(::m2n::KernelItem, src), global));
  Value dst = LLVM::PtrToIntOp::create(
      b, i64, pointerField(record, offsetof(::m2n::KernelItem, dst), global));
  Value accumulates = ne0(arith::AndIOp::create(
      b, field(record, offsetof(::m2n::KernelItem, flags), i32),
      c32(::m2n::kAccumulates)));
  Value acc = arith::SelectOp::create(
      b, accumulates,
      add(src, field(record, ::m2n::kItemAccumulatorOffset, i64)), dst);
  Value unaligned = arith::AndIOp::create(
      b,
      arith::OrIOp::create(
          b, arith::OrIOp::create(b, src, dst),
          arith::OrIOp::create(b, acc, bytes)),
      c64(15));
  Value reduces = both(
      cmp(arith::CmpIPredicate::uge, op, c32(1)),
      cmp(arith::CmpIPredicate::ult, op, c32(::m2n::kVectorOpCount)));
  return both(
      both(cmp(arith::CmpIPredicate::eq, kind,
               c32(static_cast<int64_t>(::m2n::Mechanism::Vector))),
           reduces),
      both(both(ne0(bytes), cmp(arith::CmpIPredicate::ule, bytes, stageBytes)),
           cmp(arith::CmpIPredicate::eq, unaligned, c64(0))));
}

/// dst = acc (op) src for a reduction whose source bytes are in the stage
/// at `staged` (stagesSource: whole, aligned 16-byte vectors): each thread
/// loads kStagedReductionUnroll vectors of the accumulator before it
/// combines them with the stage's and stores, as vectorLoop combines.
void KernelBuilder::stagedReductionLoop(Value staged, Value dst, Value acc,
                                        Value bytes, Value thread,
                                        Value threads,
                                        ::m2n::Reduction reduction,
                                        ::m2n::ElementType type) {
  Type lanes =
      VectorType::get({16 / ::m2n::elementSize(type)}, elementType(type));
  Value vectors = arith::DivUIOp::create(b, zext64(bytes), c64(16));
  auto at = [&](Value v) { return mul(v, c64(16)); };
  auto accumulator = [&](Value v) {
    // Volatile, as vectorLoop's loads: bytes written during this kernel.
    return LLVM::LoadOp::create(b, lanes, byteOffset(acc, at(v)), 16,
                                /*isVolatile=*/true)
        .getResult();
  };
  auto finish = [&](Value v, Value accIn) {
    Value in = LLVM::LoadOp::create(b, lanes, byteOffset(staged, at(v)), 16);
    LLVM::StoreOp::create(b, combine(reduction, type, accIn, in),
                          byteOffset(dst, at(v)), 16);
  };
  forUnrolled(
      c64(0), vectors, thread, threads, kStagedReductionUnroll,
      [&](Value v) -> SmallVector<Value> { return {accumulator(v)}; },
      [&](Value v, ArrayRef<Value> in) { finish(v, in[0]); });
}

/// A vector item: every thread of the CTA takes part.
void KernelBuilder::moveVector(Value record, Value src, Value dst, Value bytes,
                               Value op, Value scale, Value thread,
                               Value threads, Value stage, Value stageBytes,
                               Value bar, Value parity) {
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
      vectorLoop(src, dst, dst, bytes, thread, threads, std::nullopt,
                 ::m2n::ElementType::I8);
      return;
    }
    // The first operand: the destination, or an accumulator (kAccumulates)
    // at the item's delta from the source.
    Value accumulates = ne0(arith::AndIOp::create(
        b, field(record, offsetof(::m2n::KernelItem, flags), i32),
        c32(::m2n::kAccumulates)));
    Value acc = arith::SelectOp::create(
        b, accumulates,
        byteOffset(src, field(record, ::m2n::kItemAccumulatorOffset, i64)),
        dst);
    auto [reduction, type] = ::m2n::vectorOpMeaning(code);
    ifElse(
        stagesSource(record, stageBytes),
        [&] {
          // Every thread sees the stage's bytes land (thread 0 waited for
          // the phase too: this one returns at once).
          NVVM::MBarrierTryWaitParityOp::create(b, bar, parity,
                                                c32(1000000));
          stagedReductionLoop(stage, dst, acc, bytes, thread, threads,
                              reduction, type);
          return SmallVector<Value>{};
        },
        [&] {
          vectorLoop(src, dst, acc, bytes, thread, threads, reduction, type);
          return SmallVector<Value>{};
        });
  });
}

} // namespace m2n_transfer_kernel
