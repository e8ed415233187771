//===- HostSimulator.h - reference executor for reshard plans ----*- C++ -*-===//
//
// Runs a plan on host memory for every rank and checks the result against
// the logical tensor. Fill rule, so that results can be checked by anyone:
// the element whose row-major global linear index is g holds g; under a
// partial source the rank whose contributor index is q holds g * (q + 1).
// A sum over k contributors therefore gives g*k*(k+1)/2, max gives g*k and
// min gives g. Values are converted to the element type as C++ does for
// integers (wrapping modulo 2^bits) and by round-to-nearest-even for floats
// (f8E8M0FNU, which holds powers of two only, takes the value modulo 255 as
// its bits);
// tensors whose indices exceed a float type's exact range still check
// correctly (copies compare bits, float reductions compare with a tolerance
// of a few units in the last place per contributor; a float sum whose terms
// could overflow the type is order-dependent and not checked).
//
//===----------------------------------------------------------------------===//

#ifndef M2N_SIM_HOSTSIMULATOR_H
#define M2N_SIM_HOSTSIMULATOR_H

#include "m2n/Plan/Planner.h"
#include "m2n/Route/Schedule.h"
#include "m2n/Base/ElementType.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace m2n {

struct SimulationReport {
  bool passed = false;
  int64_t checkedElements = 0;
  /// The first mismatch (or execution error), empty when passed.
  std::string message;
};

class ReshardSimulator {
public:
  /// The layouts must pass validateReshard.
  ReshardSimulator(Layout src, Layout dst, std::vector<int64_t> shape,
                   ElementType type);

  /// An in-flight cast: the sources hold `source` elements (the fill rule's
  /// values rounded into it) and every destination element is expected to
  /// be castElement(source, type, scale) of its source element. Resets.
  void setCast(ElementType source, float scale);

  /// Fills every source rank's buffer by the fill rule and poisons every
  /// destination buffer (NaN for floats, 0x5A bytes for integers).
  void reset();
  /// Applies the copies, then the reductions, of `plan`. Returns an error
  /// for a transfer that names an unknown rank or leaves a buffer, without
  /// touching memory out of bounds.
  std::optional<std::string> execute(const ReshardPlan &plan);
  /// The order in which ready steps of a schedule run. Both respect the
  /// dependencies; running a schedule in both orders exposes a missing
  /// dependency as a wrong (typically poisoned) value.
  enum class StepOrder { ListOrder, LastReadyFirst };
  /// Runs `schedule`: scratch buffers are allocated poisoned, then each step
  /// runs once all its dependencies have. Returns an error for a step that
  /// names an unknown buffer or leaves one, or for a dependency cycle.
  std::optional<std::string> execute(const Schedule &schedule,
                                     StepOrder order = StepOrder::ListOrder);
  /// Compares every destination element with the logical tensor.
  SimulationReport check() const;

  /// Allocates (poisoned) scratch buffers for the executors of lowered
  /// programs.
  void allocateScratch(const std::vector<ScratchBuffer> &scratches);
  /// The memory of a buffer and its size in bytes, or std::nullopt when the
  /// buffer does not exist.
  std::optional<std::pair<uint8_t *, int64_t>> bytesOf(const BufferRef &ref);

  /// Fill value of global element `g` for contributor `q`.
  static int64_t fillValue(int64_t g, int64_t q) { return g * (q + 1); }

  /// The local buffer of the destination at grid position `index`.
  const std::vector<uint8_t> &dstBuffer(int64_t index) const {
    return dstBuffers[index];
  }
  std::vector<int64_t> dstLocalShape(int64_t index) const {
    return dstBoxes[index].sizes.vec();
  }
  const Layout &dstLayout() const { return dst; }
  ElementType elementType() const { return type; }

private:
  Layout src, dst;
  std::vector<int64_t> shape;
  ElementType type;
  ElementType sourceType; // `type` without a cast.
  float scale = 1.0f;
  std::vector<Box> srcBoxes, dstBoxes;
  std::vector<std::vector<uint8_t>> srcBuffers, dstBuffers, scratchBuffers;
  std::vector<int64_t> scratchRanks;
};

/// Writes a row-major array as a NumPy .npy file (format 1.0). bf16 has no
/// NumPy type and is written as its uint16 bit patterns ('<u2').
std::optional<std::string> writeNpy(const std::string &path, ElementType type,
                                    const std::vector<int64_t> &shape,
                                    const std::vector<uint8_t> &data);

} // namespace m2n

#endif // M2N_SIM_HOSTSIMULATOR_H
