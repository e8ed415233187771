//===- KernelQuantizing.cpp - the transfer kernel's quantizing items --------===//
//
// Quantizing reshards' vector items (docs/fp8-scaling.md): the scale of a
// block from its amax, the reciprocal the quotients use, and the loop that
// computes amaxes or quantizes a band of rows.
//
//===----------------------------------------------------------------------===//

#include "KernelBuilder.h"

namespace m2n_transfer_kernel {

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

} // namespace m2n_transfer_kernel
