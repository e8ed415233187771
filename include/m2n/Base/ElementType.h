//===- ElementType.h - element types, their values and moves ----*- C++ -*-===//

#ifndef M2N_BASE_ELEMENTTYPE_H
#define M2N_BASE_ELEMENTTYPE_H

#include "m2n/Base/Layout.h"

#include <cstdint>
#include <optional>
#include <string>

namespace m2n {

/// The types m2n moves. The 8-bit floats (OCP FP8: E4M3 finite-only with one
/// NaN encoding, E5M2 IEEE-like) are moved, never reduced: a reshard that
/// reduces them is refused by the verifier. U8 (unsigned bytes, also what
/// raw bytes move as) reduces with unsigned max/min and wrapping sums.
/// Appended in this order: the artifact stores the enum's value.
enum class ElementType {
  I8, I16, I32, I64, F16, BF16, F32, F64, F8E4M3FN, F8E5M2, U8,
  /// OCP's scale type (MX): a biased exponent, 2^(bits - 127); 0xFF is NaN.
  /// Moved as bytes, never reduced or cast.
  F8E8M0FNU
};
constexpr int kElementTypeCount = 12;

/// MLIR spelling: "i8", ..., "f16", "bf16", "f32", "f64", "f8E4M3FN",
/// "f8E5M2", "ui8", "f8E8M0FNU".
const char *toString(ElementType type);
std::optional<ElementType> parseElementType(const std::string &name);
int64_t elementSize(ElementType type);
bool isFloat(ElementType type);
/// Whether reductions on `type` exist (every type but the 8-bit floats and
/// the MX scale type).
bool isReducible(ElementType type);
/// Whether `type` is an unsigned integer (max/min compare unsigned).
bool isUnsigned(ElementType type);
/// The reducible types, numbered 0..kReducibleTypeCount-1 (the vector op
/// codes of the kernel, KernelABI.h), or -1 for the 8-bit floats.
constexpr int kReducibleTypeCount = 9;
int reducibleTypeIndex(ElementType type);
ElementType reducibleTypeAt(int index);

/// Stores `value` (rounded to nearest even for floats, wrapped modulo 2^bits
/// for integers) at `dst`.
void storeElement(ElementType type, void *dst, double value);
void storeElement(ElementType type, void *dst, int64_t value);
/// Reads the element at `src` as a double.
double loadElement(ElementType type, const void *src);
/// dst = dst (op) src, computed as the hardware does: integers in their own
/// width, f16/bf16 through f32.
void reduceElement(ElementType type, Reduction op, void *dst, const void *src);
/// Whether a reshard may convert `from` elements into `to` elements on the
/// way (an in-flight cast): between the floats f32, f16, bf16, f8E4M3FN and
/// f8E5M2, both directions (and any type to itself).
bool isCastable(ElementType from, ElementType to);
/// dst = to(from(src) x scale), computed as the GPU does: the source value
/// exactly in f32, one f32 multiply, one rounding to nearest even into
/// `to`; the 8-bit floats saturate to their largest finite value (PTX
/// cvt.rn.satfinite: infinities too), NaN stays NaN.
void castElement(ElementType from, ElementType to, float scale, void *dst,
                 const void *src);

/// Whether the elements at `a` and `b` have the same bits.
bool sameBits(ElementType type, const void *a, const void *b);

/// Copies (or reduces) `fromBox` of a row-major buffer of shape `fromShape`
/// into `toBox` of a buffer of shape `toShape`; the boxes have equal sizes
/// and lie inside their buffers.
void moveBox(ElementType type, const uint8_t *from, const Dims &fromShape,
             const Box &fromBox, uint8_t *to, const Dims &toShape,
             const Box &toBox, std::optional<Reduction> reduction);

} // namespace m2n

#endif // M2N_BASE_ELEMENTTYPE_H
