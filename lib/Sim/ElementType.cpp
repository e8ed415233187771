//===- ElementType.cpp - element types of the host simulator ---------------===//

#include "m2n/Sim/ElementType.h"

#include <algorithm>
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
  }
  return "?";
}

std::optional<ElementType> parseElementType(const std::string &name) {
  for (ElementType type :
       {ElementType::I8, ElementType::I16, ElementType::I32, ElementType::I64,
        ElementType::F16, ElementType::BF16, ElementType::F32,
        ElementType::F64})
    if (name == toString(type))
      return type;
  return std::nullopt;
}

int64_t elementSize(ElementType type) {
  switch (type) {
  case ElementType::I8:
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
         type == ElementType::F32 || type == ElementType::F64;
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
  }
}

bool sameBits(ElementType type, const void *a, const void *b) {
  return std::memcmp(a, b, elementSize(type)) == 0;
}

} // namespace m2n
