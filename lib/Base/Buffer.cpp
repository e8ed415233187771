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

std::optional<Dims> bufferShape(const BufferRef &buffer, const Layout &src,
                                const Layout &dst,
                                const std::vector<int64_t> &shape,
                                const std::vector<ScratchBuffer> &scratches) {
  if (buffer.kind == BufferKind::Scratch) {
    if (buffer.scratch < 0 ||
        buffer.scratch >= static_cast<int64_t>(scratches.size()) ||
        scratches[buffer.scratch].rank != buffer.rank)
      return std::nullopt;
    return scratches[buffer.scratch].shape;
  }
  const Layout &layout = buffer.kind == BufferKind::Source ? src : dst;
  std::optional<int64_t> index = layout.mesh.indexOf(buffer.rank);
  if (!index)
    return std::nullopt;
  return layout.localBox(shape, *index).sizes;
}

} // namespace m2n
