//===- CheckedMath.h - sizes and offsets that never wrap ---------*- C++ -*-===//
//
// Sums and products of values that come from users or files (extents,
// element counts, byte offsets, repeat counts, ranks): std::nullopt where
// the exact result does not fit in int64_t, instead of a wrapped value or
// signed-overflow undefined behaviour. Header-only: the runtime, the
// artifact loader and the compiler share it without a link dependency.
//
//===----------------------------------------------------------------------===//

#ifndef M2N_BASE_CHECKEDMATH_H
#define M2N_BASE_CHECKEDMATH_H

#include <cstdint>
#include <optional>

namespace m2n {

inline std::optional<int64_t> checkedAdd(int64_t a, int64_t b) {
  int64_t sum;
  if (__builtin_add_overflow(a, b, &sum))
    return std::nullopt;
  return sum;
}

inline std::optional<int64_t> checkedMul(int64_t a, int64_t b) {
  int64_t product;
  if (__builtin_mul_overflow(a, b, &product))
    return std::nullopt;
  return product;
}

/// `initial` times every element of `values` (extents: a volume, or bytes
/// with the element size as `initial`); std::nullopt on overflow or on a
/// negative factor.
template <typename Range>
std::optional<int64_t> checkedProduct(const Range &values,
                                      int64_t initial = 1) {
  int64_t product = initial;
  if (product < 0)
    return std::nullopt;
  for (int64_t value : values)
    if (value < 0 || __builtin_mul_overflow(product, value, &product))
      return std::nullopt;
  return product;
}

/// Whether [offset, offset + size) lies inside [0, limit), decided without
/// forming the sum.
inline bool rangeWithin(int64_t offset, int64_t size, int64_t limit) {
  return offset >= 0 && size >= 0 && limit >= 0 && offset <= limit &&
         size <= limit - offset;
}

} // namespace m2n

#endif // M2N_BASE_CHECKEDMATH_H
