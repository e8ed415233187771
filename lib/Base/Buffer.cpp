//===- Buffer.cpp - the buffers a reshard reads and writes ------------------===//

#include "m2n/Base/Buffer.h"

namespace m2n {

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
  }
  return "?";
}

BufferShapes::BufferShapes(const Layout &src, const Layout &dst,
                           const std::vector<int64_t> &shape,
                           const std::vector<ScratchBuffer> &scratches)
    : src(src), dst(dst), shape(shape), scratches(scratches),
      srcIndex(src.mesh), dstIndex(dst.mesh) {}

std::optional<Dims> BufferShapes::operator()(const BufferRef &buffer) const {
  if (buffer.kind == BufferKind::Scratch) {
    if (buffer.scratch < 0 ||
        buffer.scratch >= static_cast<int64_t>(scratches.size()) ||
        scratches[buffer.scratch].rank != buffer.rank)
      return std::nullopt;
    return scratches[buffer.scratch].shape;
  }
  const bool source = buffer.kind == BufferKind::Source;
  std::optional<int64_t> index =
      (source ? srcIndex : dstIndex).indexOf(buffer.rank);
  if (!index)
    return std::nullopt;
  return (source ? src : dst).localBox(shape, *index).sizes;
}

} // namespace m2n
