//===- ElementTypeTest.cpp - element types, their values and op codes ------===//

#include "m2n/Artifact/KernelABI.h"
#include "m2n/Base/ElementType.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <set>
#include <vector>

using namespace m2n;

namespace {

std::vector<ElementType> allTypes() {
  std::vector<ElementType> types;
  for (int i = 0; i < kElementTypeCount; ++i)
    types.push_back(static_cast<ElementType>(i));
  return types;
}

template <typename T>
T reduced(ElementType type, Reduction op, T a, T b) {
  reduceElement(type, op, &a, &b);
  return a;
}

TEST(ElementTypeTest, NamesRoundTrip) {
  for (ElementType type : allTypes()) {
    SCOPED_TRACE(toString(type));
    EXPECT_EQ(parseElementType(toString(type)), type);
  }
  EXPECT_EQ(parseElementType("ui8"), ElementType::U8);
  EXPECT_EQ(parseElementType("ui16"), std::nullopt);
}

// Unsigned bytes compare unsigned and sum modulo 256; signed bytes compare
// signed: 200 is -56 as an i8.
TEST(ElementTypeTest, UnsignedBytesReduceUnsigned) {
  EXPECT_EQ(reduced<uint8_t>(ElementType::U8, Reduction::Max, 200, 100), 200);
  EXPECT_EQ(reduced<uint8_t>(ElementType::U8, Reduction::Min, 200, 100), 100);
  EXPECT_EQ(reduced<uint8_t>(ElementType::U8, Reduction::Sum, 200, 100), 44);
  EXPECT_EQ(reduced<int8_t>(ElementType::I8, Reduction::Max, -56, 100), 100);
  EXPECT_EQ(reduced<int8_t>(ElementType::I8, Reduction::Min, -56, 100), -56);
  uint8_t byte = 0;
  storeElement(ElementType::U8, &byte, int64_t{-1});
  EXPECT_EQ(byte, 255);
  EXPECT_EQ(loadElement(ElementType::U8, &byte), 255.0);
  EXPECT_TRUE(isUnsigned(ElementType::U8));
  EXPECT_FALSE(isUnsigned(ElementType::I8));
  EXPECT_EQ(elementSize(ElementType::U8), 1);
}

// The vector op codes cover every (reduction, reducible type) once, and
// decode to what they encode.
TEST(ElementTypeTest, VectorOpCodesAreABijection) {
  std::set<uint32_t> codes;
  for (ElementType type : allTypes()) {
    if (!isReducible(type)) {
      EXPECT_EQ(reducibleTypeIndex(type), -1);
      continue;
    }
    EXPECT_EQ(reducibleTypeAt(reducibleTypeIndex(type)), type);
    for (Reduction op : {Reduction::Sum, Reduction::Max, Reduction::Min}) {
      uint32_t code = vectorOp(op, type);
      EXPECT_GT(code, 0u);
      EXPECT_LT(code, kVectorOpCount);
      EXPECT_TRUE(codes.insert(code).second);
      auto [decodedOp, decodedType] = vectorOpMeaning(code);
      EXPECT_EQ(decodedOp, op);
      EXPECT_EQ(decodedType, type);
    }
  }
  EXPECT_EQ(codes.size(), kVectorOpCount - 1);
}

} // namespace

/// The nearest 8-bit float by a scan of every encoding (ties to the even
/// code), saturating at the largest finite value: what storeElement's
/// bisection must give.
static uint8_t nearestByScan(double value, m2n::ElementType type) {
  const bool e5m2 = type == m2n::ElementType::F8E5M2;
  const uint8_t largest = e5m2 ? 0x7B : 0x7E;
  const double magnitude = std::fabs(value);
  auto valueOf = [&](uint8_t code) {
    return m2n::loadElement(type, &code);
  };
  uint8_t best = largest;
  if (magnitude < valueOf(largest)) {
    double bestError = INFINITY;
    for (int code = 0; code <= largest; ++code) {
      const double error = std::fabs(valueOf(static_cast<uint8_t>(code)) - magnitude);
      if (error < bestError || (error == bestError && !(code & 1))) {
        best = static_cast<uint8_t>(code);
        bestError = error;
      }
    }
  }
  return static_cast<uint8_t>((std::signbit(value) ? 0x80 : 0) | best);
}

TEST(ElementTypeTest, Fp8RoundingEqualsAScanOfEveryEncoding) {
  // Every f16 value (all magnitudes the fp8 types round between, subnormals
  // and ties included) and the midpoints of neighbouring fp8 values.
  for (m2n::ElementType type :
       {m2n::ElementType::F8E4M3FN, m2n::ElementType::F8E5M2}) {
    std::vector<double> values;
    for (uint32_t bits = 0; bits < 0x10000; ++bits) {
      const uint16_t half = static_cast<uint16_t>(bits);
      const double value = m2n::loadElement(m2n::ElementType::F16, &half);
      if (std::isfinite(value))
        values.push_back(value);
    }
    for (int code = 0; code < 0x7F; ++code) {
      uint8_t a = static_cast<uint8_t>(code), b = static_cast<uint8_t>(code + 1);
      const double low = m2n::loadElement(type, &a);
      const double high = m2n::loadElement(type, &b);
      if (std::isfinite(low) && std::isfinite(high))
        values.push_back((low + high) / 2);
    }
    for (double value : values) {
      uint8_t stored = 0;
      m2n::storeElement(type, &stored, value);
      ASSERT_EQ(stored, nearestByScan(value, type))
          << m2n::toString(type) << " of " << value;
    }
  }
}
