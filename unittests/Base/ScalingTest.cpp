//===- ScalingTest.cpp - scaling modes, scale rules, the reference -------===//

#include "m2n/Base/Scaling.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <iostream>
#include <limits>
#include <random>

using namespace m2n;

namespace {

TEST(ScalingTest, NamesRoundTrip) {
  for (Scaling scaling :
       {Scaling::tensor(), Scaling::mx(), Scaling::block(128, 128),
        Scaling::block(1, 7)}) {
    SCOPED_TRACE(scaling.str());
    EXPECT_EQ(parseScaling(scaling.str()), scaling);
  }
  EXPECT_EQ(parseScaling("block(128,128)"), Scaling::block(128, 128));
  EXPECT_EQ(parseScaling(" block ( 2 , 3 ) "), Scaling::block(2, 3));
  for (const char *bad : {"", "block", "block(0, 4)", "block(4)", "block(-1,2)",
                          "block(2,3", "block(2,3)x", "tensors", "mx32"})
    EXPECT_EQ(parseScaling(bad), std::nullopt) << bad;
}

TEST(ScalingTest, ChecksNameTheProblem) {
  auto error = [](Scaling scaling, Dims shape, ElementType from,
                  ElementType to) {
    return checkScaling(scaling, shape, from, to).value_or("");
  };
  EXPECT_EQ(error(Scaling::block(128, 128), {256, 256}, ElementType::BF16,
                  ElementType::F16),
            "scaling block(128, 128) quantizes into f8E4M3FN or f8E5M2, not f16");
  EXPECT_EQ(error(Scaling::tensor(), {8}, ElementType::F8E5M2,
                  ElementType::F8E4M3FN),
            "scaling tensor quantizes f32, f16 or bf16 elements, not f8E5M2");
  EXPECT_EQ(error(Scaling::block(2, 2), {8}, ElementType::F32,
                  ElementType::F8E4M3FN),
            "scaling block(2, 2) blocks the last two dimensions; the tensor "
            "has rank 1");
  EXPECT_EQ(error(Scaling::mx(), {4, 48}, ElementType::BF16,
                  ElementType::F8E4M3FN),
            "scaling mx puts 32 consecutive elements of the last dimension "
            "under one scale; the last dimension has 48 elements, not a "
            "multiple of 32");
  EXPECT_EQ(checkScaling(Scaling::mx(), {4, 64}, ElementType::BF16,
                         ElementType::F8E5M2),
            std::nullopt);
  EXPECT_EQ(checkScaling(Scaling::block(128, 128), {3, 576, 7168},
                         ElementType::F32, ElementType::F8E4M3FN),
            std::nullopt);
}

TEST(ScalingTest, ScaleShapesCountEdgeBlocks) {
  // DeepSeek-V3's kv_a_proj_with_mqa: 576 rows, 4.5 blocks of 128.
  EXPECT_EQ(scaleShape(Scaling::block(128, 128), {576, 7168}), Dims({5, 56}));
  EXPECT_EQ(scaleShape(Scaling::block(128, 128), {4, 576, 7168}),
            Dims({4, 5, 56}));
  EXPECT_EQ(scaleShape(Scaling::mx(), {3, 64}), Dims({3, 2}));
  EXPECT_EQ(scaleShape(Scaling::tensor(), {7, 0, 3}), Dims({1, 1, 1}));
  // Blocks larger than the tensor (no overflow in the ceil), none of an
  // empty dimension.
  EXPECT_EQ(scaleShape(Scaling::block(INT64_MAX, 1), {2, 2}), Dims({1, 2}));
  EXPECT_EQ(scaleShape(Scaling::block(4, 4), {0, 9}), Dims({0, 3}));
}

TEST(ScalingTest, BlocksStraddlingTwoBoxesBelongToBoth) {
  Scaling scaling = Scaling::block(128, 128);
  Dims shape{576, 256};
  // TP4 rows of 144: rank 1 holds rows [144, 288), blocks 1 and 2.
  Box rank1{{144, 0}, {144, 256}};
  Box blocks = blocksTouching(scaling, shape, rank1);
  EXPECT_EQ(blocks.offsets, Dims({1, 0}));
  EXPECT_EQ(blocks.sizes, Dims({2, 2}));
  Box last{{432, 0}, {144, 256}};
  EXPECT_EQ(blocksTouching(scaling, shape, last).sizes, Dims({2, 2}));
  EXPECT_TRUE(blocksTouching(scaling, shape, Box{{576, 0}, {0, 256}}).empty());
}

TEST(ScalingTest, ScalesFromAmax) {
  const ElementType e4m3 = ElementType::F8E4M3FN, e5m2 = ElementType::F8E5M2;
  Scaling block = Scaling::block(128, 128), mx = Scaling::mx();
  EXPECT_EQ(scaleFromAmax(block, e4m3, 448.0f), 1.0f);
  EXPECT_EQ(scaleFromAmax(block, e4m3, 896.0f), 2.0f);
  EXPECT_EQ(scaleFromAmax(block, e5m2, 57344.0f), 1.0f);
  EXPECT_EQ(scaleFromAmax(Scaling::tensor(), e4m3, 1.0f), 1.0f / 448.0f);
  // The documented exceptions: zero, not finite, a quotient that underflows.
  for (float amax : {0.0f, std::numeric_limits<float>::infinity(),
                     std::numeric_limits<float>::quiet_NaN(),
                     std::numeric_limits<float>::denorm_min()})
    EXPECT_EQ(scaleFromAmax(block, e4m3, amax), 1.0f) << amax;
  // MX: 2^(floor(log2 amax) - emax), emax 8 (e4m3) or 15 (e5m2).
  EXPECT_EQ(scaleFromAmax(mx, e4m3, 448.0f), 1.0f);
  EXPECT_EQ(scaleFromAmax(mx, e4m3, 511.0f), 1.0f);
  EXPECT_EQ(scaleFromAmax(mx, e4m3, 512.0f), 2.0f);
  EXPECT_EQ(scaleFromAmax(mx, e4m3, 1.0f), std::ldexp(1.0f, -8));
  EXPECT_EQ(scaleFromAmax(mx, e5m2, 1.0f), std::ldexp(1.0f, -15));
  EXPECT_EQ(scaleFromAmax(mx, e4m3, std::numeric_limits<float>::denorm_min()),
            std::ldexp(1.0f, -127));
  EXPECT_EQ(scaleFromAmax(mx, e4m3, 0.0f), 1.0f);
  EXPECT_EQ(e8m0FromScale(1.0f), 127);
  EXPECT_EQ(e8m0FromScale(std::ldexp(1.0f, -127)), 0);
  EXPECT_EQ(e8m0FromScale(std::ldexp(1.0f, 127)), 254);
  for (int bits = 0; bits < 255; ++bits)
    EXPECT_EQ(e8m0FromScale(scaleFromE8m0(static_cast<uint8_t>(bits))), bits);
}

// A 3 x 5 f32 tensor in 2 x 2 blocks (edge blocks short): the amax of each
// block, its scale, and each element divided by it.
TEST(ScalingTest, QuantizesEachBlockWithItsOwnScale) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  float src[3][5] = {{896, -3, 1, 0.5f, 0},
                     {1, 2, nan, 0.25f, 0},
                     {-4, 8, 0, 0, inf}};
  uint8_t dst[15];
  std::vector<float> scales;
  quantizeTensor(Scaling::block(2, 2), ElementType::F32, ElementType::F8E4M3FN,
                 {3, 5}, reinterpret_cast<const uint8_t *>(src), dst, scales);
  // Blocks (amax): [896 | 1 (NaN ignored) | 0], [8 | 0 | inf].
  EXPECT_EQ(scales, std::vector<float>({2.0f, 1.0f / 448.0f, 1.0f,
                                        8.0f / 448.0f, 1.0f, 1.0f}));
  EXPECT_EQ(dst[0], 0x7E);  // 896 / 2 = 448, the largest e4m3.
  EXPECT_EQ(dst[1], 0xBC);  // -3 / 2 = -1.5.
  EXPECT_EQ(dst[5], 0x30);  // 1 / 2 = 0.5.
  EXPECT_EQ(dst[2], 0x7E);  // 1 / (1/448) = 448.
  EXPECT_EQ(dst[7], 0x7F);  // NaN stays NaN.
  EXPECT_EQ(dst[10], 0xF6); // -4 / (8/448) = -224 = -1.75 x 2^7.
  EXPECT_EQ(dst[14], 0x7E); // inf / 1 saturates to 448.
  EXPECT_EQ(dst[4], 0x00);
}

// The kernel divides by a block's scale with its reciprocal and one FMA
// correction (quotientByReciprocal with quantizingReciprocal's rule, x's
// sign added to the fp8 bits); quantized, that must be the division's fp8
// value. Every bf16 x within the amax of its block (as a block's elements
// are), for 1,200 amaxes (every binade's edges, subnormals, the largest
// finite, random ones), tensor and mx scales and both fp8 formats; then
// random f32 values.
TEST(ScalingTest, ReciprocalWithOneCorrectionQuantizesLikeDivision) {
  auto fromBits = [](uint32_t bits) {
    float f;
    std::memcpy(&f, &bits, 4);
    return f;
  };
  std::mt19937 random(20261205);
  std::vector<float> amaxes;
  for (uint32_t exponent = 0; exponent < 255; ++exponent)
    for (uint32_t mantissa : {0x00u, 0x01u, 0x7Fu})
      if (exponent || mantissa)
        amaxes.push_back(fromBits((exponent << 23 | mantissa << 16)));
  while (amaxes.size() < 1200)
    amaxes.push_back(fromBits((random() % 0x7F7F + 1) << 16)); // Finite.
  int64_t checked = 0;
  auto check = [&](float x, float amax, float scale, ElementType to) {
    uint8_t divided, corrected;
    float one = 1.0f, quotient = x / scale,
          fast = std::copysign(
              quotientByReciprocal(x, scale, quantizingReciprocal(amax, scale)),
              x);
    ++checked;
    if (std::memcmp(&quotient, &fast, 4) == 0)
      return true; // The same f32: the same fp8 value.
    quantizeElement(ElementType::F32, to, one, &divided, &quotient);
    quantizeElement(ElementType::F32, to, one, &corrected, &fast);
    return divided == corrected;
  };
  amaxes.push_back(0.0f);
  amaxes.push_back(std::numeric_limits<float>::infinity());
  for (float amax : amaxes)
    for (ElementType to : {ElementType::F8E4M3FN, ElementType::F8E5M2})
      for (const Scaling &scaling : {Scaling::tensor(), Scaling::mx()}) {
        float scale = scaleFromAmax(scaling, to, amax);
        for (uint32_t bits = 0; bits < 0x10000; ++bits) {
          float x = fromBits(bits << 16);
          if (!(std::fabs(x) <= amax))
            continue;
          ASSERT_TRUE(check(x, amax, scale, to))
              << "x " << x << " (bf16 " << bits << ") amax " << amax;
        }
      }
  std::uniform_real_distribution<float> unit(0.0f, 1.0f);
  std::uniform_int_distribution<int> binade(-140, 120);
  for (int i = 0; i < 1000000; ++i) {
    // One draw per statement: the same cases whatever the compiler's
    // order of evaluation.
    float mantissa = 0.5f + unit(random);
    float amax = std::ldexp(mantissa, binade(random));
    float sign = random() % 2 ? -1.0f : 1.0f;
    float fraction = random() % 8 ? unit(random) : 1.0f;
    float x = sign * amax * fraction;
    ElementType to = random() % 2 ? ElementType::F8E4M3FN : ElementType::F8E5M2;
    Scaling scaling = random() % 4 ? Scaling::tensor() : Scaling::mx();
    ASSERT_TRUE(check(x, amax, scaleFromAmax(scaling, to, amax), to))
        << "x " << x << " amax " << amax;
  }
  std::cout << "[ scaling ] " << checked
            << " quotients by reciprocal quantize like the division\n";
}

} // namespace
