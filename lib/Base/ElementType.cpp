//===- ElementType.cpp - element types of the host simulator ---------------===//

#include "m2n/Base/ElementType.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>

namespace m2n {

const char *toString(ElementType type) {
  switch (type) {
  case ElementType::I8:
    return "i8";
  case ElementType::I16:
    return "i16";
  case ElementType::I32:
    return "i32";
  case ElementType::I64:
    return "i64";
  case ElementType::F16:
    return "f16";
  case ElementType::BF16:
    return "bf16";
  case ElementType::F32:
    return "f32";
  case ElementType::F64:
    return "f64";
  case ElementType::F8E4M3FN:
    return "f8E4M3FN";
  case ElementType::F8E5M2:
    return "f8E5M2";
  case ElementType::U8:
    return "ui8";
  case ElementType::F8E8M0FNU:
    return "f8E8M0FNU";
  }
  return "?";
}

std::optional<ElementType> parseElementType(const std::string &name) {
  for (ElementType type :
       {ElementType::I8, ElementType::I16, ElementType::I32, ElementType::I64,
        ElementType::F16, ElementType::BF16, ElementType::F32,
        ElementType::F64, ElementType::F8E4M3FN, ElementType::F8E5M2,
        ElementType::U8, ElementType::F8E8M0FNU})
    if (name == toString(type))
      return type;
  return std::nullopt;
}

int64_t elementSize(ElementType type) {
  switch (type) {
  case ElementType::I8:
  case ElementType::F8E4M3FN:
  case ElementType::F8E5M2:
  case ElementType::U8:
  case ElementType::F8E8M0FNU:
    return 1;
  case ElementType::I16:
  case ElementType::F16:
  case ElementType::BF16:
    return 2;
  case ElementType::I32:
  case ElementType::F32:
    return 4;
  case ElementType::I64:
  case ElementType::F64:
    return 8;
  }
  return 0;
}

bool isFloat(ElementType type) {
  return type == ElementType::F16 || type == ElementType::BF16 ||
         type == ElementType::F32 || type == ElementType::F64 ||
         type == ElementType::F8E4M3FN || type == ElementType::F8E5M2 ||
         type == ElementType::F8E8M0FNU;
}

bool isReducible(ElementType type) {
  return type != ElementType::F8E4M3FN && type != ElementType::F8E5M2 &&
         type != ElementType::F8E8M0FNU;
}

bool isUnsigned(ElementType type) { return type == ElementType::U8; }

int reducibleTypeIndex(ElementType type) {
  if (!isReducible(type))
    return -1;
  // I8..F64 keep their enum values; U8 follows them.
  return type == ElementType::U8 ? 8 : static_cast<int>(type);
}

ElementType reducibleTypeAt(int index) {
  return index == 8 ? ElementType::U8 : static_cast<ElementType>(index);
}

//===----------------------------------------------------------------------===//
// 8-bit floats (round to nearest even, saturating E4M3 to its NaN-free max)
//===----------------------------------------------------------------------===//

namespace {
/// An 8-bit float format: 1 sign, `exponentBits`, `mantissaBits`.
struct Fp8Format {
  int exponentBits, mantissaBits, bias;
  bool ieee; // E5M2: an all-ones exponent is inf/NaN. E4M3FN: only S.1111.111 is NaN.
};
constexpr Fp8Format kE4M3{4, 3, 7, false};
constexpr Fp8Format kE5M2{5, 2, 15, true};
} // namespace

static double fromFp8(uint8_t bits, const Fp8Format &f) {
  const int sign = bits >> 7;
  const int exponent = (bits >> f.mantissaBits) & ((1 << f.exponentBits) - 1);
  const int mantissa = bits & ((1 << f.mantissaBits) - 1);
  const int allOnes = (1 << f.exponentBits) - 1;
  double value;
  if (f.ieee && exponent == allOnes)
    value = mantissa ? std::nan("") : INFINITY;
  else if (!f.ieee && exponent == allOnes && mantissa == (1 << f.mantissaBits) - 1)
    value = std::nan("");
  else if (exponent == 0)
    value = std::ldexp(mantissa, 1 - f.bias - f.mantissaBits);
  else
    value = std::ldexp((1 << f.mantissaBits) + mantissa,
                       exponent - f.bias - f.mantissaBits);
  return sign ? -value : value;
}

/// The magnitude of every code without its sign bit (NaN where it is one).
static std::array<double, 128> magnitudesOf(const Fp8Format &f) {
  std::array<double, 128> values;
  for (int code = 0; code < 128; ++code)
    values[code] = fromFp8(static_cast<uint8_t>(code), f);
  return values;
}

static uint8_t toFp8(double value, const Fp8Format &f) {
  const uint8_t sign = std::signbit(value) ? 0x80 : 0;
  const uint8_t nan = f.ieee ? (0x7F & ~((1 << (f.mantissaBits - 1)) - 1))
                             : 0x7F; // E5M2 quiet NaN 0x7E; E4M3FN 0x7F.
  if (std::isnan(value))
    return sign | nan;
  if (std::isinf(value)) // E5M2 has infinities, E4M3FN saturates.
    return sign | (f.ieee ? 0x7C : 0x7E);
  // Saturate first: far beyond the largest finite value, its distance to
  // two encodings rounds to the same double (1e30 - 57344 == 1e30 - 49152),
  // and the tie rule would pick the even, smaller one.
  const uint8_t largest = f.ieee ? 0x7B : 0x7E;
  double magnitude = std::fabs(value);
  if (magnitude >= fromFp8(largest, f))
    return sign | largest;
  // Nearest of the encodings: the magnitudes of codes 0..largest increase
  // with the code, so the code below `magnitude` is found by bisection
  // (a scan of all 128 took a minute on a 132M-element test tensor).
  // The 128 magnitudes, decoded once per format.
  static const std::array<double, 128> e4m3 = magnitudesOf(kE4M3);
  static const std::array<double, 128> e5m2 = magnitudesOf(kE5M2);
  const std::array<double, 128> &valueOf = f.ieee ? e5m2 : e4m3;
  uint8_t below = 0, above = largest; // value(below) <= magnitude < value(above)
  while (above - below > 1) {
    const uint8_t middle = static_cast<uint8_t>((below + above) / 2);
    (valueOf[middle] <= magnitude ? below : above) = middle;
  }
  const double under = magnitude - valueOf[below];
  const double over = valueOf[above] - magnitude;
  // Ties go to the even (lower mantissa bit 0) encoding.
  const uint8_t best =
      under < over || (under == over && !(below & 1)) ? below : above;
  return sign | best;
}

//===----------------------------------------------------------------------===//
// 16-bit floats (round to nearest even)
//===----------------------------------------------------------------------===//

static uint32_t bitsOf(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof(bits));
  return bits;
}

static float floatOf(uint32_t bits) {
  float value;
  std::memcpy(&value, &bits, sizeof(value));
  return value;
}

static uint16_t halfFromFloat(float value) {
  uint32_t bits = bitsOf(value);
  uint16_t sign = (bits >> 16) & 0x8000;
  uint32_t exponent = (bits >> 23) & 0xFF;
  uint32_t mantissa = bits & 0x7FFFFF;
  if (exponent == 0xFF)
    return sign | 0x7C00 | (mantissa ? 0x200 : 0);
  int32_t e = static_cast<int32_t>(exponent) - 127 + 15;
  if (e >= 0x1F)
    return sign | 0x7C00;
  uint32_t half, rest, halfway;
  if (e <= 0) { // Subnormal half (or zero).
    if (e < -10)
      return sign;
    mantissa |= 0x800000;
    uint32_t shift = 14 - e;
    half = mantissa >> shift;
    rest = mantissa & ((1u << shift) - 1);
    halfway = 1u << (shift - 1);
  } else {
    half = (static_cast<uint32_t>(e) << 10) | (mantissa >> 13);
    rest = mantissa & 0x1FFF;
    halfway = 0x1000;
  }
  // A carry out of the mantissa correctly bumps the exponent (up to inf).
  if (rest > halfway || (rest == halfway && (half & 1)))
    ++half;
  return sign | static_cast<uint16_t>(half);
}

static float floatFromHalf(uint16_t half) {
  uint32_t sign = static_cast<uint32_t>(half & 0x8000) << 16;
  uint32_t exponent = (half >> 10) & 0x1F;
  uint32_t mantissa = half & 0x3FF;
  if (exponent == 0) {
    float magnitude = std::ldexp(static_cast<float>(mantissa), -24);
    return sign ? -magnitude : magnitude;
  }
  if (exponent == 0x1F)
    return floatOf(sign | 0x7F800000 | (mantissa << 13));
  return floatOf(sign | ((exponent + 112) << 23) | (mantissa << 13));
}

static uint16_t bfloatFromFloat(float value) {
  uint32_t bits = bitsOf(value);
  if (std::isnan(value))
    return static_cast<uint16_t>((bits >> 16) | 0x40);
  bits += 0x7FFF + ((bits >> 16) & 1);
  return static_cast<uint16_t>(bits >> 16);
}

static float floatFromBfloat(uint16_t value) {
  return floatOf(static_cast<uint32_t>(value) << 16);
}

//===----------------------------------------------------------------------===//
// Loads, stores, reductions
//===----------------------------------------------------------------------===//

template <typename T> static T load(const void *src) {
  T value;
  std::memcpy(&value, src, sizeof(T));
  return value;
}

template <typename T> static void store(void *dst, T value) {
  std::memcpy(dst, &value, sizeof(T));
}

void storeElement(ElementType type, void *dst, double value) {
  switch (type) {
  case ElementType::I8:
    return store(dst, static_cast<int8_t>(static_cast<int64_t>(value)));
  case ElementType::I16:
    return store(dst, static_cast<int16_t>(static_cast<int64_t>(value)));
  case ElementType::I32:
    return store(dst, static_cast<int32_t>(static_cast<int64_t>(value)));
  case ElementType::I64:
    return store(dst, static_cast<int64_t>(value));
  case ElementType::F16:
    return store(dst, halfFromFloat(static_cast<float>(value)));
  case ElementType::BF16:
    return store(dst, bfloatFromFloat(static_cast<float>(value)));
  case ElementType::F32:
    return store(dst, static_cast<float>(value));
  case ElementType::F64:
    return store(dst, value);
  case ElementType::F8E4M3FN:
    return store(dst, toFp8(value, kE4M3));
  case ElementType::F8E5M2:
    return store(dst, toFp8(value, kE5M2));
  case ElementType::U8:
    return store(dst, static_cast<uint8_t>(static_cast<int64_t>(value)));
  case ElementType::F8E8M0FNU: {
    // Powers of two exactly; other values round down to one; NaN, zero,
    // negatives and infinities have no encoding but NaN.
    if (!(value > 0.0) || std::isinf(value))
      return store(dst, static_cast<uint8_t>(0xFF));
    int exponent = 0;
    std::frexp(value, &exponent);
    return store(dst, static_cast<uint8_t>(
                          std::clamp(exponent - 1, -127, 127) + 127));
  }
  }
}

void storeElement(ElementType type, void *dst, int64_t value) {
  // Integers wrap modulo 2^bits (two's complement), as the hardware does.
  switch (type) {
  case ElementType::I8:
    return store(dst, static_cast<int8_t>(static_cast<uint8_t>(value)));
  case ElementType::I16:
    return store(dst, static_cast<int16_t>(static_cast<uint16_t>(value)));
  case ElementType::I32:
    return store(dst, static_cast<int32_t>(static_cast<uint32_t>(value)));
  case ElementType::I64:
    return store(dst, value);
  case ElementType::U8:
    return store(dst, static_cast<uint8_t>(value));
  default:
    return storeElement(type, dst, static_cast<double>(value));
  }
}

double loadElement(ElementType type, const void *src) {
  switch (type) {
  case ElementType::I8:
    return load<int8_t>(src);
  case ElementType::I16:
    return load<int16_t>(src);
  case ElementType::I32:
    return load<int32_t>(src);
  case ElementType::I64:
    return static_cast<double>(load<int64_t>(src));
  case ElementType::F16:
    return floatFromHalf(load<uint16_t>(src));
  case ElementType::BF16:
    return floatFromBfloat(load<uint16_t>(src));
  case ElementType::F32:
    return load<float>(src);
  case ElementType::F64:
    return load<double>(src);
  case ElementType::F8E4M3FN:
    return fromFp8(load<uint8_t>(src), kE4M3);
  case ElementType::F8E5M2:
    return fromFp8(load<uint8_t>(src), kE5M2);
  case ElementType::U8:
    return load<uint8_t>(src);
  case ElementType::F8E8M0FNU: {
    uint8_t bits = load<uint8_t>(src);
    return bits == 0xFF ? std::nan("") : std::ldexp(1.0, bits - 127);
  }
  }
  return 0;
}

template <typename T> static T combine(Reduction op, T a, T b) {
  switch (op) {
  case Reduction::Sum:
    return a + b;
  case Reduction::Max:
    return std::max(a, b);
  case Reduction::Min:
    return std::min(a, b);
  }
  return a;
}

/// Integer sums wrap; do them in the unsigned type of the same width.
template <typename T, typename U>
static void reduceInteger(Reduction op, void *dst, const void *src) {
  T a = load<T>(dst), b = load<T>(src);
  if (op == Reduction::Sum)
    store(dst, static_cast<T>(static_cast<U>(static_cast<U>(a) +
                                             static_cast<U>(b))));
  else
    store(dst, combine(op, a, b));
}

void reduceElement(ElementType type, Reduction op, void *dst,
                   const void *src) {
  switch (type) {
  case ElementType::I8:
    return reduceInteger<int8_t, uint8_t>(op, dst, src);
  case ElementType::I16:
    return reduceInteger<int16_t, uint16_t>(op, dst, src);
  case ElementType::I32:
    return reduceInteger<int32_t, uint32_t>(op, dst, src);
  case ElementType::I64:
    return reduceInteger<int64_t, uint64_t>(op, dst, src);
  case ElementType::U8:
    return reduceInteger<uint8_t, uint8_t>(op, dst, src);
  case ElementType::F16:
    return store(dst, halfFromFloat(combine(
                          op, floatFromHalf(load<uint16_t>(dst)),
                          floatFromHalf(load<uint16_t>(src)))));
  case ElementType::BF16:
    return store(dst, bfloatFromFloat(combine(
                          op, floatFromBfloat(load<uint16_t>(dst)),
                          floatFromBfloat(load<uint16_t>(src)))));
  case ElementType::F32:
    return store(dst, combine(op, load<float>(dst), load<float>(src)));
  case ElementType::F64:
    return store(dst, combine(op, load<double>(dst), load<double>(src)));
  case ElementType::F8E4M3FN:
  case ElementType::F8E5M2:
  case ElementType::F8E8M0FNU:
    // Refused by the verifier (isReducible); computed through double for a
    // reference all the same.
    return storeElement(type, dst,
                        combine(op, loadElement(type, dst),
                                loadElement(type, src)));
  }
}

bool isCastable(ElementType from, ElementType to) {
  auto castable = [](ElementType type) {
    return type == ElementType::F32 || type == ElementType::F16 ||
           type == ElementType::BF16 || type == ElementType::F8E4M3FN ||
           type == ElementType::F8E5M2;
  };
  return from == to || (castable(from) && castable(to));
}

void castElement(ElementType from, ElementType to, float scale, void *dst,
                 const void *src) {
  // Every castable type is exact in f32; the product rounds once in f32.
  float value = static_cast<float>(loadElement(from, src)) * scale;
  if ((to == ElementType::F8E4M3FN || to == ElementType::F8E5M2) &&
      std::isinf(value)) // satfinite: to the largest finite magnitude.
    value = std::copysign(to == ElementType::F8E4M3FN ? 448.0f : 57344.0f,
                          value);
  storeElement(to, dst, static_cast<double>(value));
}

bool sameBits(ElementType type, const void *a, const void *b) {
  return std::memcmp(a, b, elementSize(type)) == 0;
}

/// Byte offset of box element `index` in a row-major buffer of `shape`.
static int64_t offsetOf(const Dims &index, const Dims &shape, int64_t size) {
  return linearize(index, shape) * size;
}

void moveBox(ElementType type, const uint8_t *from, const Dims &fromShape,
             const Box &fromBox, uint8_t *to, const Dims &toShape,
             const Box &toBox, std::optional<Reduction> reduction) {
  const int64_t size = elementSize(type);
  const int64_t rank = fromBox.rank();
  // Rows of the innermost dimension are contiguous in both buffers.
  int64_t rowLength = rank ? fromBox.sizes[rank - 1] : 1;
  Box rows = fromBox;
  if (rank)
    rows.sizes[rank - 1] = 1;
  Dims index(rank, 0), fromAt(rank), toAt(rank);
  for (int64_t row = 0, e = rows.volume(); row < e; ++row) {
    for (int64_t k = 0; k < rank; ++k) {
      fromAt[k] = fromBox.offsets[k] + index[k];
      toAt[k] = toBox.offsets[k] + index[k];
    }
    const uint8_t *rowFrom = from + offsetOf(fromAt, fromShape, size);
    uint8_t *rowTo = to + offsetOf(toAt, toShape, size);
    if (!reduction)
      std::memmove(rowTo, rowFrom, rowLength * size);
    else
      for (int64_t x = 0; x < rowLength; ++x)
        reduceElement(type, *reduction, rowTo + x * size, rowFrom + x * size);
    for (int64_t k = rank - 2; k >= 0; --k) {
      if (++index[k] < rows.sizes[k])
        break;
      index[k] = 0;
    }
  }
}

} // namespace m2n
