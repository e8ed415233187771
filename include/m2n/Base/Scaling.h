//===- Scaling.h - FP8 quantization with scales taken from the data -*- C++ -*-===//
//
// The semantics of a reshard that quantizes into an 8-bit float with scales
// computed from the values it moves (docs/fp8-scaling.md). Plain C++, one
// definition for the verifier, the planner, the host executor and the tests:
//
//  * the tensor is cut into blocks: `tensor` one block (the whole tensor),
//    `block(R, C)` R x C blocks of the last two dimensions (DeepSeek-V3's
//    128 x 128 weight blocks; leading dimensions, stacked experts, one
//    element deep), `mx` 32 consecutive elements of the last dimension (OCP
//    MXFP8); blocks are numbered over the global tensor, edge blocks short;
//  * amax(b) = max |x| over the block's elements, NaN ignored (fmax);
//  * the scale: `tensor`, `block`: amax / largest finite value of the fp8
//    type (f32, rounded to nearest even; DeepSeek's `weight_scale_inv`);
//    `mx`: 2^(floor(log2 amax) - emax) with emax 8 (e4m3) or 15 (e5m2),
//    clamped to [2^-127, 2^127], stored as e8m0 (its biased exponent);
//    a block whose amax is 0 or not finite, or whose quotient underflows to
//    0, has scale 1;
//  * every element becomes to_fp8(x / scale): one f32 division rounded to
//    nearest even, then to nearest even in the fp8 type, saturating to its
//    largest finite value (infinities too), NaN staying NaN.
//
//===----------------------------------------------------------------------===//

#ifndef M2N_BASE_SCALING_H
#define M2N_BASE_SCALING_H

#include "m2n/Base/ElementType.h"
#include "m2n/Base/Layout.h"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace m2n {

/// How a quantizing reshard groups elements under one scale.
struct Scaling {
  enum class Kind : uint8_t { Tensor, Block, Mx };
  Kind kind = Kind::Tensor;
  int64_t blockRows = 0, blockCols = 0; // Block only.

  static Scaling tensor() { return {Kind::Tensor, 0, 0}; }
  static Scaling block(int64_t rows, int64_t cols) {
    return {Kind::Block, rows, cols};
  }
  static Scaling mx() { return {Kind::Mx, 0, 0}; }
  bool operator==(const Scaling &other) const {
    return kind == other.kind && blockRows == other.blockRows &&
           blockCols == other.blockCols;
  }
  /// "tensor", "block(128, 128)", "mx".
  std::string str() const;
};

/// The elements of the last dimension under one MX scale.
constexpr int64_t kMxBlockSize = 32;

/// Parses what Scaling::str prints (spaces optional); std::nullopt when it
/// is not a scaling mode (block sizes must be positive).
std::optional<Scaling> parseScaling(std::string_view text);

/// Why `scaling` cannot quantize a tensor of `shape` from `from` into `to`
/// (a message naming the problem), or std::nullopt: `to` must be f8E4M3FN
/// or f8E5M2, `from` f32, f16 or bf16; `block` needs rank >= 2, `mx` a last
/// dimension that is a multiple of 32.
std::optional<std::string> checkScaling(const Scaling &scaling,
                                        const Dims &shape, ElementType from,
                                        ElementType to);

/// Whether the scale tensor holds e8m0 bytes (mx) rather than f32.
inline bool hasExponentScales(const Scaling &scaling) {
  return scaling.kind == Scaling::Kind::Mx;
}

/// The extents of one block of a tensor of `shape` (edge blocks are cut by
/// the tensor's end).
Dims blockShape(const Scaling &scaling, const Dims &shape);

/// The shape of the scale tensor: the number of blocks along each
/// dimension (ceil(shape / blockShape)); all ones for `tensor`, whose one
/// scale exists even for a tensor without elements.
Dims scaleShape(const Scaling &scaling, const Dims &shape);

/// The blocks (a box of the scale tensor) that the elements `box` of the
/// tensor touch: where a block straddles two ranks' boxes, both hold its
/// scale. Empty for an empty box.
Box blocksTouching(const Scaling &scaling, const Dims &shape, const Box &box);

/// The blocks that `part` (in the local coordinates of a rank whose box of
/// the tensor is `local`) touches, in that rank's table: relative to the
/// blocks `local` touches (its slots and quantizer table).
Box tableBlocksTouching(const Scaling &scaling, const Dims &shape,
                        const Box &local, const Box &part);

/// The scale of a block whose amax is `amax` (the rules above), as the
/// f32 divisor the elements are divided by.
float scaleFromAmax(const Scaling &scaling, ElementType to, float amax);

/// The e8m0 encoding of an mx scale (a power of two in [2^-127, 2^127]).
uint8_t e8m0FromScale(float scale);
/// The power of two an e8m0 byte encodes (0xFF, NaN, is not produced).
float scaleFromE8m0(uint8_t bits);

/// to_fp8(from(src) / scale) into `dst` (the rules above).
void quantizeElement(ElementType from, ElementType to, float scale, void *dst,
                     const void *src);

/// The reciprocal the transfer kernel quantizes a block with (see
/// quotientByReciprocal), or 0 where it divides instead: an amax that is
/// not finite (its scale is 1 and the block may hold infinities, whose
/// remainder below would be NaN) or a scale outside [2^-80, 2^100].
/// Within that range every remainder the kernel needs is exact: a
/// quotient that can round to a nonzero fp8 value (>= 2^-19) times a scale
/// >= 2^-80 is a normal f32 whose remainder is a multiple of 2^-146.
float quantizingReciprocal(float amax, float scale);

/// |x| / scale as the transfer kernel computes it for the elements of a
/// block, without a division per element (a division costs the kernel
/// more than the bytes it moves): where `reciprocal` (quantizingReciprocal)
/// is 0, the f32 division; otherwise the product with the reciprocal,
/// corrected once by the exact remainder (q0 = |x| r, then
/// q0 + (|x| - q0 scale) r with FMAs: Markstein), with no test per element.
/// The kernel adds x's sign to the fp8 bits. Quantized, it is the
/// division's fp8 value for every x of a block the scale belongs to
/// (|x| <= amax; ScalingTest checks every bf16 value against thousands of
/// scales, then a million random f32 values).
float quotientByReciprocal(float x, float scale, float reciprocal);

/// The whole computation on a global row-major tensor: the block amaxes,
/// their scales (f32 values in `scales`, row-major over scaleShape; for mx
/// the powers of two whose e8m0 bytes are stored) and every quantized
/// element into `dst`. The reference every test compares with.
void quantizeTensor(const Scaling &scaling, ElementType from, ElementType to,
                    const Dims &shape, const uint8_t *src, uint8_t *dst,
                    std::vector<float> &scales);

} // namespace m2n

#endif // M2N_BASE_SCALING_H
