//===- ElementTypeTest.cpp - element types, their values and op codes ------===//

#include "m2n/Artifact/KernelABI.h"
#include "m2n/Base/ElementType.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <set>

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
