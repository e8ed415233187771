//===- Buffer.h - the buffers a reshard reads and writes ---------*- C++ -*-===//
//
// Every byte a schedule or a program moves lives in one rank's buffer: its
// source (its local part of the input, read only), its destination (its
// local part of the output) or a scratch buffer that routing introduces (a
// leader's landing zone for raw partial contributions, the root's full
// tensor in gather-bcast). Shared by the compiler, the artifact and the
// runtime.
//
//===----------------------------------------------------------------------===//

#ifndef M2N_BASE_BUFFER_H
#define M2N_BASE_BUFFER_H

#include "m2n/Base/Layout.h"

#include <cstdint>
#include <string>

namespace m2n {

enum class BufferKind { Source, Destination, Scratch };

struct BufferRef {
  BufferKind kind = BufferKind::Source;
  int64_t rank = 0;
  int64_t scratch = -1; // Index into the scratch buffers for Scratch.

  bool operator==(const BufferRef &other) const {
    return kind == other.kind && rank == other.rank &&
           scratch == other.scratch;
  }
  /// "src(0)", "dst(4)", "scratch3(6)".
  std::string str() const;
};

struct ScratchBuffer {
  int64_t rank = 0;
  Dims shape;
};

} // namespace m2n

#endif // M2N_BASE_BUFFER_H
