//===- Buffer.cpp - the buffers a reshard reads and writes ------------------===//

#include "m2n/Base/Buffer.h"

namespace m2n {

const char *toString(StepKind kind) {
  switch (kind) {
  case StepKind::Move:
    return "move";
  case StepKind::Amax:
    return "amax";
  case StepKind::Scale:
    return "scale";
  }
  return "?";
}


std::string BufferRef::str() const {
  std::string group = tensor ? "t" + std::to_string(tensor) + "." : "";
  switch (kind) {
  case BufferKind::Source:
    return group + "src(" + std::to_string(rank) + ")";
  case BufferKind::Destination:
    return group + "dst(" + std::to_string(rank) + ")";
  case BufferKind::Scratch:
    return group + "scratch" + std::to_string(scratch) + "(" +
           std::to_string(rank) + ")";
  case BufferKind::Slots:
    return group + "slots(" + std::to_string(rank) + ")";
  case BufferKind::Holder:
    return group + "holder(" + std::to_string(rank) + ")";
  case BufferKind::Scales:
    return group + "scales(" + std::to_string(rank) + ")";
  case BufferKind::Quantizer:
    return group + "quantizer(" + std::to_string(rank) + ")";
  }
  return "?";
}

BufferShapes::BufferShapes(const Layout &src, const Layout &dst,
                           const std::vector<int64_t> &shape,
                           const std::vector<ScratchBuffer> &scratches,
                           const std::optional<Scaling> &scaling)
    : src(src), dst(dst), shape(shape), scratches(scratches),
      scaling(scaling), srcIndex(src.mesh), dstIndex(dst.mesh) {}

std::optional<Box> BufferShapes::blocksOf(const BufferRef &buffer) const {
  if (!isScaleBuffer(buffer.kind) || !scaling)
    return std::nullopt;
  const bool source = buffer.kind == BufferKind::Slots ||
                      buffer.kind == BufferKind::Quantizer;
  std::optional<int64_t> index =
      (source ? srcIndex : dstIndex).indexOf(buffer.rank);
  if (!index)
    return std::nullopt;
  return blocksTouching(*scaling, shape,
                        (source ? src : dst).localBox(shape, *index));
}

std::optional<Dims> BufferShapes::operator()(const BufferRef &buffer) const {
  if (buffer.kind == BufferKind::Scratch) {
    if (buffer.scratch < 0 ||
        buffer.scratch >= static_cast<int64_t>(scratches.size()) ||
        scratches[buffer.scratch].rank != buffer.rank)
      return std::nullopt;
    return scratches[buffer.scratch].shape;
  }
  if (isScaleBuffer(buffer.kind)) {
    std::optional<Box> blocks = blocksOf(buffer);
    if (!blocks)
      return std::nullopt;
    return blocks->sizes;
  }
  const bool source = buffer.kind == BufferKind::Source;
  std::optional<int64_t> index =
      (source ? srcIndex : dstIndex).indexOf(buffer.rank);
  if (!index)
    return std::nullopt;
  return (source ? src : dst).localBox(shape, *index).sizes;
}

} // namespace m2n
