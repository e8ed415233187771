//===- Buffer.h - the buffers a reshard reads and writes ---------*- C++ -*-===//
//
// Every byte a schedule or a program moves lives in one rank's buffer: its
// source (its local part of the input, read only), its destination (its
// local part of the output) or a scratch buffer that routing introduces (a
// leader's landing zone for raw partial contributions, the root's full
// tensor in gather-bcast). A quantizing reshard (docs/fp8-scaling.md) adds
// four, in blocks (the scale tensor's coordinates): a source rank's amax
// slots and quantizer table and a destination rank's holder table (f32
// amaxes of the blocks the rank's box touches, the runtime's), and its
// scales (the caller's scale tensor, f32 or e8m0, over the holder table's
// blocks). Shared by the compiler, the
// artifact and the runtime.
//
//===----------------------------------------------------------------------===//

#ifndef M2N_BASE_BUFFER_H
#define M2N_BASE_BUFFER_H

#include "m2n/Base/Layout.h"
#include "m2n/Base/Scaling.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace m2n {

enum class BufferKind {
  Source,
  Destination,
  Scratch,
  Slots,
  Holder,
  Scales,
  Quantizer,
};

/// Whether `kind` holds blocks of a quantizing reshard (slots, quantizer,
/// holder, scales) rather than elements of the tensor.
constexpr bool isScaleBuffer(BufferKind kind) {
  return kind == BufferKind::Slots || kind == BufferKind::Holder ||
         kind == BufferKind::Scales || kind == BufferKind::Quantizer;
}

/// What a schedule step does with its boxes (the same sizes on both sides),
/// and what a program's movement lowered from it does with its bytes.
enum class StepKind : uint8_t {
  /// Copy or reduce a box of one buffer into a box of another.
  Move,
  /// From a source buffer into the same rank's slots: the amax of the
  /// rank's elements of each block of the box (block coordinates relative
  /// to its slots on both sides) into the block's slot.
  Amax,
  /// From a holder table into the same rank's scales: each block's scale
  /// from its amax (scaleFromAmax; e8m0 for mx).
  Scale,
};
/// "move", "amax", "scale".
const char *toString(StepKind kind);

struct BufferRef {
  BufferKind kind = BufferKind::Source;
  int64_t rank = 0;
  int64_t scratch = -1; // Index into the scratch buffers for Scratch.
  /// The tensor of a group the buffer belongs to (mergePrograms: one
  /// launch for many reshards); 0 in the program of one reshard.
  int64_t tensor = 0;

  bool operator==(const BufferRef &other) const {
    return kind == other.kind && rank == other.rank &&
           scratch == other.scratch && tensor == other.tensor;
  }
  /// "src(0)", "dst(4)", "scratch3(6)", "slots(0)", "quantizer(0)",
  /// "holder(4)", "scales(4)"; in a group "t2.src(0)" for a tensor other
  /// than the first.
  std::string str() const;
};

struct ScratchBuffer {
  int64_t rank = 0;
  Dims shape;
  int64_t tensor = 0; // As BufferRef::tensor: whose elements it holds.
  /// It holds f32 amaxes, in blocks, rather than the tensor's elements: a
  /// quantizing reshard's exchange staged for the network
  /// (stageNetworkSteps).
  bool amaxes = false;
};

/// Whether `buffer` holds f32 amaxes of a quantizing reshard: slots, a
/// quantizer or holder table, or a scratch of `scratches` staging them.
inline bool holdsAmaxes(const BufferRef &buffer,
                        const std::vector<ScratchBuffer> &scratches) {
  if (buffer.kind == BufferKind::Scratch)
    return buffer.scratch >= 0 &&
           buffer.scratch < static_cast<int64_t>(scratches.size()) &&
           scratches[buffer.scratch].amaxes;
  return isScaleBuffer(buffer.kind) && buffer.kind != BufferKind::Scales;
}

/// The buffers of a reshard of `shape` from `src` to `dst` with
/// `scratches` (all kept by reference) and, for a quantizing reshard,
/// `scaling`: their shapes, asked once per step or movement, with ranks
/// looked up in constant time.
class BufferShapes {
public:
  BufferShapes(const Layout &src, const Layout &dst,
               const std::vector<int64_t> &shape,
               const std::vector<ScratchBuffer> &scratches,
               const std::optional<Scaling> &scaling = std::nullopt);
  /// A rank's local part, the scratch's shape, or the blocks of a scale
  /// buffer (blocksTouching the rank's local box); std::nullopt when there
  /// is no such buffer (a rank outside the mesh, a scratch index out of
  /// range or on another rank, a scale buffer without a scaling).
  std::optional<Dims> operator()(const BufferRef &buffer) const;
  /// The blocks of the scale tensor a scale buffer holds, in the scale
  /// tensor's coordinates (its offsets place the buffer's box), or
  /// std::nullopt as above.
  std::optional<Box> blocksOf(const BufferRef &buffer) const;

private:
  const Layout &src, &dst;
  const std::vector<int64_t> &shape;
  const std::vector<ScratchBuffer> &scratches;
  std::optional<Scaling> scaling;
  MeshIndex srcIndex, dstIndex;
};

} // namespace m2n

#endif // M2N_BASE_BUFFER_H
