//===- Buffer.cpp - the buffers a reshard reads and writes ------------------===//

#include "m2n/Base/Buffer.h"

namespace m2n {

std::string BufferRef::str() const {
  switch (kind) {
  case BufferKind::Source:
    return "src(" + std::to_string(rank) + ")";
  case BufferKind::Destination:
    return "dst(" + std::to_string(rank) + ")";
  case BufferKind::Scratch:
    return "scratch" + std::to_string(scratch) + "(" + std::to_string(rank) + ")";
  }
  return "?";
}

} // namespace m2n
