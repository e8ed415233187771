//===- Scaling.cpp - FP8 quantization with scales taken from the data -----===//

#include "m2n/Base/Scaling.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>

namespace m2n {

std::string Scaling::str() const {
  switch (kind) {
  case Kind::Tensor:
    return "tensor";
  case Kind::Mx:
    return "mx";
  case Kind::Block:
    break;
  }
  return "block(" + std::to_string(blockRows) + ", " +
         std::to_string(blockCols) + ")";
}

std::optional<Scaling> parseScaling(std::string_view text) {
  std::string compact;
  for (char c : text)
    if (!std::isspace(static_cast<unsigned char>(c)))
      compact.push_back(c);
  if (compact == "tensor")
    return Scaling::tensor();
  if (compact == "mx")
    return Scaling::mx();
  std::string_view rest = compact;
  if (rest.substr(0, 6) != "block(" || rest.back() != ')')
    return std::nullopt;
  rest = rest.substr(6, rest.size() - 7);
  size_t comma = rest.find(',');
  if (comma == std::string_view::npos)
    return std::nullopt;
  auto number = [](std::string_view digits) -> std::optional<int64_t> {
    int64_t value = 0;
    auto [end, ec] =
        std::from_chars(digits.data(), digits.data() + digits.size(), value);
    if (ec != std::errc() || end != digits.data() + digits.size() || value < 1)
      return std::nullopt;
    return value;
  };
  std::optional<int64_t> rows = number(rest.substr(0, comma));
  std::optional<int64_t> cols = number(rest.substr(comma + 1));
  if (!rows || !cols)
    return std::nullopt;
  return Scaling::block(*rows, *cols);
}

static bool isFp8(ElementType type) {
  return type == ElementType::F8E4M3FN || type == ElementType::F8E5M2;
}

std::optional<std::string> checkScaling(const Scaling &scaling,
                                        const Dims &shape, ElementType from,
                                        ElementType to) {
  if (!isFp8(to))
    return std::string("scaling ") + scaling.str() +
           " quantizes into f8E4M3FN or f8E5M2, not " + toString(to);
  if (from != ElementType::F32 && from != ElementType::F16 &&
      from != ElementType::BF16)
    return std::string("scaling ") + scaling.str() +
           " quantizes f32, f16 or bf16 elements, not " + toString(from);
  if (shape.empty())
    return std::string("scaling needs a tensor of rank 1 or more");
  switch (scaling.kind) {
  case Scaling::Kind::Tensor:
    return std::nullopt;
  case Scaling::Kind::Block:
    if (scaling.blockRows < 1 || scaling.blockCols < 1)
      return "scaling " + scaling.str() + " has an empty block";
    if (shape.size() < 2)
      return "scaling " + scaling.str() +
             " blocks the last two dimensions; the tensor has rank " +
             std::to_string(shape.size());
    return std::nullopt;
  case Scaling::Kind::Mx:
    if (shape.back() % kMxBlockSize != 0)
      return "scaling mx puts 32 consecutive elements of the last dimension "
             "under one scale; the last dimension has " +
             std::to_string(shape.back()) + " elements, not a multiple of 32";
    return std::nullopt;
  }
  return std::nullopt;
}

Dims blockShape(const Scaling &scaling, const Dims &shape) {
  Dims block(shape.size(), 1);
  switch (scaling.kind) {
  case Scaling::Kind::Tensor:
    for (size_t d = 0; d < shape.size(); ++d)
      block[d] = std::max<int64_t>(shape[d], 1);
    break;
  case Scaling::Kind::Block:
    block[shape.size() - 2] = scaling.blockRows;
    block[shape.size() - 1] = scaling.blockCols;
    break;
  case Scaling::Kind::Mx:
    block[shape.size() - 1] = kMxBlockSize;
    break;
  }
  return block;
}

Dims scaleShape(const Scaling &scaling, const Dims &shape) {
  Dims block = blockShape(scaling, shape);
  Dims blocks(shape.size());
  for (size_t d = 0; d < shape.size(); ++d) // ceil, without overflowing.
    blocks[d] = shape[d] == 0 ? 0 : (shape[d] - 1) / block[d] + 1;
  if (scaling.kind == Scaling::Kind::Tensor)
    std::fill(blocks.begin(), blocks.end(), 1);
  return blocks;
}

Box tableBlocksTouching(const Scaling &scaling, const Dims &shape,
                        const Box &local, const Box &part) {
  Box global = part;
  for (int64_t d = 0; d < global.rank(); ++d)
    global.offsets[d] += local.offsets[d];
  return blocksTouching(scaling, shape, global)
      .relativeTo(blocksTouching(scaling, shape, local).offsets);
}

Box blocksTouching(const Scaling &scaling, const Dims &shape, const Box &box) {
  Dims block = blockShape(scaling, shape);
  Box blocks;
  blocks.offsets.resize(shape.size());
  blocks.sizes.resize(shape.size());
  if (box.empty())
    return blocks;
  for (size_t d = 0; d < shape.size(); ++d) {
    int64_t first = box.offsets[d] / block[d];
    int64_t last = (box.offsets[d] + box.sizes[d] - 1) / block[d];
    blocks.offsets[d] = first;
    blocks.sizes[d] = last - first + 1;
  }
  return blocks;
}

static float largestFinite(ElementType to) {
  return to == ElementType::F8E4M3FN ? 448.0f : 57344.0f;
}

float scaleFromAmax(const Scaling &scaling, ElementType to, float amax) {
  if (!(amax > 0.0f) || !std::isfinite(amax))
    return 1.0f;
  if (scaling.kind == Scaling::Kind::Mx) {
    int exponent = 0;
    std::frexp(amax, &exponent); // amax = m x 2^exponent, m in [0.5, 1).
    int emax = to == ElementType::F8E4M3FN ? 8 : 15;
    int shared = std::clamp(exponent - 1 - emax, -127, 127);
    return std::ldexp(1.0f, shared);
  }
  float scale = amax / largestFinite(to);
  return scale == 0.0f ? 1.0f : scale;
}

uint8_t e8m0FromScale(float scale) {
  int exponent = 0;
  std::frexp(scale, &exponent); // scale = 0.5 x 2^exponent.
  return static_cast<uint8_t>(exponent - 1 + 127);
}

float scaleFromE8m0(uint8_t bits) {
  return std::ldexp(1.0f, static_cast<int>(bits) - 127);
}

void quantizeElement(ElementType from, ElementType to, float scale, void *dst,
                     const void *src) {
  // Every source type is exact in f32; the quotient rounds once in f32.
  float value = static_cast<float>(loadElement(from, src)) / scale;
  if (std::isinf(value)) // satfinite: to the largest finite magnitude.
    value = std::copysign(largestFinite(to), value);
  storeElement(to, dst, static_cast<double>(value));
}

float quantizingReciprocal(float amax, float scale) {
  if (!std::isfinite(amax) || !(scale >= 0x1p-80f && scale <= 0x1p100f))
    return 0.0f;
  return 1.0f / scale;
}

float quotientByReciprocal(float x, float scale, float reciprocal) {
  float magnitude = std::fabs(x);
  if (reciprocal == 0.0f)
    return magnitude / scale;
  float first = magnitude * reciprocal;
  float remainder = std::fma(-first, scale, magnitude); // Exact.
  return std::fma(remainder, reciprocal, first);
}

void quantizeTensor(const Scaling &scaling, ElementType from, ElementType to,
                    const Dims &shape, const uint8_t *src, uint8_t *dst,
                    std::vector<float> &scales) {
  Dims block = blockShape(scaling, shape);
  Dims blocks = scaleShape(scaling, shape);
  int64_t blockCount = 1, elements = 1;
  for (size_t d = 0; d < shape.size(); ++d) {
    blockCount *= blocks[d];
    elements *= shape[d];
  }
  const int64_t fromSize = elementSize(from), toSize = elementSize(to);
  // The block of each element, walking the tensor row-major: per row of
  // the last dimension, the leading dimensions' part of the block's index,
  // then each column's block (a division per element took most of the
  // time of a 132M-element check).
  const size_t last = shape.size() - 1;
  std::vector<int64_t> columnBlock(shape.empty() ? 0 : shape[last]);
  for (int64_t c = 0; c < static_cast<int64_t>(columnBlock.size()); ++c)
    columnBlock[c] = c / block[last];
  auto forEachElement = [&](auto &&visit) {
    if (shape.empty() || elements == 0)
      return;
    const int64_t columns = shape[last];
    Dims index(shape.size(), 0);
    for (int64_t row = 0; row * columns < elements; ++row) {
      int64_t base = 0; // Row-major over the leading dimensions' blocks.
      for (size_t d = 0; d < last; ++d)
        base = base * blocks[d] + index[d] / block[d];
      base *= blocks[last];
      for (int64_t c = 0; c < columns; ++c)
        visit(row * columns + c, base + columnBlock[c]);
      for (size_t d = last; d-- > 0;) {
        if (++index[d] < shape[d])
          break;
        index[d] = 0;
      }
    }
  };
  std::vector<float> amax(blockCount, 0.0f);
  forEachElement([&](int64_t i, int64_t b) {
    float magnitude =
        std::fabs(static_cast<float>(loadElement(from, src + i * fromSize)));
    amax[b] = std::fmax(amax[b], magnitude); // NaN ignored.
  });
  scales.assign(blockCount, 1.0f);
  for (int64_t b = 0; b < blockCount; ++b)
    scales[b] = scaleFromAmax(scaling, to, amax[b]);
  forEachElement([&](int64_t i, int64_t b) {
    quantizeElement(from, to, scales[b], dst + i * toSize, src + i * fromSize);
  });
}

} // namespace m2n
