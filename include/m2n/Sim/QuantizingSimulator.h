//===- QuantizingSimulator.h - a quantizing plan run on the host -*- C++ -*-===//
//
// The reference execution of a quantizing reshard's plan or schedule
// (docs/fp8-scaling.md): every source rank's buffer filled from one global
// tensor of varied values (magnitudes over many binades, zeros, zero blocks,
// NaN), then the plan's three phases rank by rank as the plan states them:
// the amax shares into each rank's slots, the exchange (copies, then
// max-reductions) into the quantizer and holder tables, every transfer
// quantized with its sender's table, every destination's scale tensor from
// its holder table. Slots, tables and destinations start poisoned, so a
// share, exchange or transfer the plan lacks shows as a wrong value. The
// result is compared bit for bit with quantizeTensor of the global tensor.
//
//===----------------------------------------------------------------------===//

#ifndef M2N_SIM_QUANTIZINGSIMULATOR_H
#define M2N_SIM_QUANTIZINGSIMULATOR_H

#include "m2n/Plan/ScalePlan.h"
#include "m2n/Route/Schedule.h"
#include "m2n/Sim/HostSimulator.h"

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <map>
#include <vector>

namespace m2n {

/// What a run leaves, for a caller that dumps it (m2n-sim --dump-dir): the
/// global source tensor, and per destination rank its local buffer and the
/// scales it holds as stored (f32, or e8m0 bytes for mx), row-major over
/// its blocks.
struct QuantizedBuffers {
  std::vector<uint8_t> source;
  std::map<int64_t, std::vector<uint8_t>> destinations, scales;
};

/// Runs `plan` and `scales` (a plan of src -> dst for `shape`, quantizing
/// `from` elements into `to` with `scaling`) and checks every destination
/// element and every scale each destination holds.
SimulationReport simulateQuantizingPlan(const Scaling &scaling,
                                        const Layout &src, const Layout &dst,
                                        const std::vector<int64_t> &shape,
                                        ElementType from, ElementType to,
                                        const ReshardPlan &plan,
                                        const ScalePlan &scales,
                                        uint64_t seed = 1,
                                        QuantizedBuffers *keep = nullptr);

/// Runs a quantizing `schedule` (routed, with its amax exchange steps) from
/// the same source values: every step once its dependencies have run, in
/// `order`, moves out of a source quantized by their executor with its
/// scales, and checks as simulateQuantizingPlan does. A step that runs
/// before what it reads is named: an amax slot, holder entry or scale no
/// step wrote (poison), or a holder entry read before every share of its
/// block arrived (counted).
SimulationReport simulateQuantizingSchedule(
    const Scaling &scaling, const Layout &src, const Layout &dst,
    const std::vector<int64_t> &shape, ElementType from, ElementType to,
    const Schedule &schedule, ReshardSimulator::StepOrder order,
    uint64_t seed = 1, QuantizedBuffers *keep = nullptr);

/// Where a program's executor finds a buffer: its bytes and their count,
/// or std::nullopt (the runtime's BufferResolver, HostExecutor.h).
using QuantizedBufferResolver =
    std::function<std::optional<std::pair<uint8_t *, int64_t>>(
        const BufferRef &)>;

/// A quantizing reshard run by `execute` over buffers this function makes:
/// every source rank's part of a tensor of varied values (zeros, NaNs,
/// magnitudes over 30 binades), and poisoned destinations, `scratches`,
/// slots, quantizer and holder tables (NaN) and scales (NaN, or 0xFF for
/// e8m0), which `execute` reaches through the resolver it is given; then
/// every destination element and scale compared bit for bit with
/// quantizeTensor. What the host executor and m2n-sim run lowered
/// quantizing programs with (ProgramExecutor.h).
SimulationReport simulateQuantizingBuffers(
    const Scaling &scaling, const Layout &src, const Layout &dst,
    const std::vector<int64_t> &shape, ElementType from, ElementType to,
    const std::vector<ScratchBuffer> &scratches, uint64_t seed,
    const std::function<std::optional<std::string>(
        const QuantizedBufferResolver &)> &execute,
    QuantizedBuffers *keep = nullptr);

} // namespace m2n

#endif // M2N_SIM_QUANTIZINGSIMULATOR_H
