//===- QuantizingSimulator.cpp - a quantizing plan run on the host --------===//

#include "m2n/Sim/QuantizingSimulator.h"

#include <cmath>
#include <cstring>
#include <map>
#include <random>
#include <set>
#include <tuple>

namespace m2n {

namespace {

Dims minus(Dims index, const Dims &origin) {
  for (size_t d = 0; d < index.size(); ++d)
    index[d] -= origin[d];
  return index;
}

Dims plus(Dims index, const Dims &origin) {
  for (size_t d = 0; d < index.size(); ++d)
    index[d] += origin[d];
  return index;
}

std::string blockName(const Dims &block) {
  return Box{block, Dims(block.size(), 1)}.str();
}

/// What both simulations start from: a global tensor of varied values,
/// its reference quantization, and every source rank's box of it.
struct Fixture {
  std::vector<uint8_t> global, expected;
  std::vector<float> expectedScales;
  std::map<int64_t, Box> srcBoxes;
  std::map<int64_t, std::vector<uint8_t>> srcBuffers;

  Fixture(const Scaling &scaling, const Layout &src,
          const std::vector<int64_t> &shape, ElementType from, ElementType to,
          uint64_t seed) {
    Dims dims(shape.begin(), shape.end());
    const int64_t fromSize = elementSize(from), toSize = elementSize(to);
    int64_t elements = 1;
    for (int64_t extent : shape)
      elements *= extent;
    // Magnitudes over 30 binades, zeros (a sixth, whole blocks of them
    // where a block is small), now and then NaN; with every third seed also
    // runs of 32 elements whose even ones are all NaN (the GPU's packed
    // maxima hold them in one half).
    std::mt19937_64 rng(seed);
    global.resize(elements * fromSize);
    for (int64_t i = 0; i < elements; ++i) {
      uint64_t draw = rng();
      double value =
          draw % 6 == 0    ? 0.0
          : draw % 97 == 0 ? NAN
                           : std::ldexp(
                                 static_cast<double>(draw >> 40 & 0x3FF) - 512.0,
                                 static_cast<int>(draw >> 20 & 31) - 20);
      if (seed % 3 == 0 && i / 32 % 4 == 1 && i % 2 == 0)
        value = NAN;
      storeElement(from, global.data() + i * fromSize, value);
    }
    expected.resize(elements * toSize);
    quantizeTensor(scaling, from, to, dims, global.data(), expected.data(),
                   expectedScales);
    for (int64_t position = 0; position < src.mesh.size(); ++position) {
      int64_t rank = src.mesh.rankAt(position);
      Box box = src.localBox(shape, position);
      srcBoxes[rank] = box;
      std::vector<uint8_t> &buffer = srcBuffers[rank];
      buffer.resize(box.volume() * fromSize);
      if (!box.empty()) // An empty vector's data() may be null.
        moveBox(from, global.data(), dims, box, buffer.data(), box.sizes,
                Box{Dims(dims.size(), 0), box.sizes}, std::nullopt);
    }
  }
};

/// The amax of rank `box`'s elements (`buffer`, its local part) of block
/// `coords`: NaN ignored, 0 for none.
float partialAmax(const Scaling &scaling, const Dims &dims, ElementType from,
                  const Box &box, const std::vector<uint8_t> &buffer,
                  const Dims &coords) {
  const int64_t fromSize = elementSize(from);
  float amax = 0.0f;
  Box mine = box.intersect(blockElements(scaling, dims, coords));
  forEachIndex(mine, [&](const Dims &index) {
    int64_t at = linearize(minus(index, box.offsets), box.sizes);
    amax = std::fmax(amax, std::fabs(static_cast<float>(
                               loadElement(from, &buffer[at * fromSize]))));
  });
  return amax;
}

/// Appends `scale` as a scale tensor stores it: f32 bits, or for mx its
/// e8m0 byte (0xFF for NaN, the poison of a scale never written).
void storeScale(const Scaling &scaling, float scale,
                std::vector<uint8_t> &bytes) {
  if (hasExponentScales(scaling)) {
    bytes.push_back(std::isnan(scale) ? 0xFF : e8m0FromScale(scale));
    return;
  }
  const uint8_t *raw = reinterpret_cast<const uint8_t *>(&scale);
  bytes.insert(bytes.end(), raw, raw + sizeof(float));
}

/// Every destination element and every scale a destination holds (`stored`,
/// over the blocks `heldBy(rank)`) against the reference, bit for bit.
template <typename HeldBy>
SimulationReport
checkQuantized(const Scaling &scaling, ElementType to, const Dims &dims,
               Fixture &fx, const std::map<int64_t, Box> &dstBoxes,
               const std::map<int64_t, std::vector<uint8_t>> &dstBuffers,
               std::map<int64_t, std::vector<uint8_t>> &stored, HeldBy heldBy,
               QuantizedBuffers *keep) {
  SimulationReport report;
  const int64_t toSize = elementSize(to);
  const Dims grid = scaleShape(scaling, dims);
  const bool exponents = hasExponentScales(scaling);
  for (const auto &[rank, box] : dstBoxes) {
    const std::vector<uint8_t> &buffer = dstBuffers.at(rank);
    std::string problem;
    forEachIndex(box, [&](const Dims &index) {
      int64_t local = linearize(minus(index, box.offsets), box.sizes);
      int64_t at = linearize(index, dims);
      if (problem.empty() && std::memcmp(&buffer[local * toSize],
                                         &fx.expected[at * toSize], toSize))
        problem = "rank " + std::to_string(rank) + " element " +
                  blockName(index) + " differs from the reference quantizer";
      ++report.checkedElements;
    });
    const Box held = heldBy(rank);
    const std::vector<uint8_t> &bytes = stored[rank];
    int64_t entry = 0;
    forEachIndex(held, [&](const Dims &coords) {
      float reference = fx.expectedScales[linearize(coords, grid)];
      std::vector<uint8_t> want;
      storeScale(scaling, reference, want);
      const uint8_t *got = &bytes[entry++ * want.size()];
      if (problem.empty() && std::memcmp(got, want.data(), want.size())) {
        float scale;
        if (exponents)
          scale = *got == 0xFF ? NAN : scaleFromE8m0(*got);
        else
          std::memcpy(&scale, got, 4);
        problem = "rank " + std::to_string(rank) + " holds scale " +
                  std::to_string(scale) + " for block " + blockName(coords) +
                  ", the reference quantizer " + std::to_string(reference);
      }
      ++report.checkedElements;
    });
    if (!problem.empty()) {
      report.message = std::move(problem);
      return report;
    }
    if (keep) {
      keep->destinations[rank] = buffer;
      keep->scales[rank] = bytes;
    }
  }
  if (keep)
    keep->source = std::move(fx.global);
  report.passed = true;
  return report;
}

} // namespace

SimulationReport simulateQuantizingPlan(const Scaling &scaling,
                                        const Layout &src, const Layout &dst,
                                        const std::vector<int64_t> &shape,
                                        ElementType from, ElementType to,
                                        const ReshardPlan &plan,
                                        const ScalePlan &scales,
                                        uint64_t seed,
                                        QuantizedBuffers *keep) {
  SimulationReport report;
  auto fail = [&](std::string message) {
    report.passed = false;
    report.message = std::move(message);
    return report;
  };
  Dims dims(shape.begin(), shape.end());
  const Dims &grid = scales.scaleShape;
  Dims block = blockShape(scaling, dims);
  const int64_t fromSize = elementSize(from), toSize = elementSize(to);

  Fixture fx(scaling, src, shape, from, to, seed);
  std::map<int64_t, Box> &srcBoxes = fx.srcBoxes;
  std::map<int64_t, std::vector<uint8_t>> &srcBuffers = fx.srcBuffers;

  // Phase 1: each rank's share of the amaxes into its slots.
  std::map<int64_t, std::vector<float>> slots;
  for (const auto &[rank, slotBox] : scales.slotBoxes)
    slots[rank].assign(slotBox.volume(), NAN);
  for (const auto &[rank, share] : scales.amaxBoxes) {
    auto box = srcBoxes.find(rank);
    auto slotBox = scales.slotBoxes.find(rank);
    if (box == srcBoxes.end() || slotBox == scales.slotBoxes.end())
      return fail("rank " + std::to_string(rank) +
                  " computes amaxes but holds no source");
    // Run unverified (m2n-sim --no-verify): never past a rank's slots.
    if (!share.empty() && (share.rank() != slotBox->second.rank() ||
                           !slotBox->second.contains(share)))
      return fail("rank " + std::to_string(rank) + " computes the amaxes of "
                  "blocks " + share.str() + " outside its slots " +
                  slotBox->second.str());
    const std::vector<uint8_t> &buffer = srcBuffers[rank];
    forEachIndex(share, [&](const Dims &coords) {
      slots[rank][linearize(minus(coords, slotBox->second.offsets),
                            slotBox->second.sizes)] =
          partialAmax(scaling, dims, from, box->second, buffer, coords);
    });
  }

  // Phase 2: the exchange, copies before max-reductions.
  std::map<std::pair<int64_t, ScaleTable>, std::vector<float>> tables;
  for (bool reductions : {false, true})
    for (const AmaxTransfer &exchange : scales.exchange) {
      const Transfer &t = exchange.transfer;
      if (t.reduction.has_value() != reductions)
        continue;
      Box table = scales.tableBox(t.dstRank, exchange.table);
      auto slotBox = scales.slotBoxes.find(t.srcRank);
      Box zero{Dims(grid.size(), 0), Dims()};
      if (slotBox == scales.slotBoxes.end() ||
          table.rank() != static_cast<int64_t>(grid.size()) ||
          t.srcBox.rank() != table.rank() ||
          !(t.srcBox.sizes == t.dstBox.sizes) ||
          !Box{zero.offsets, slotBox->second.sizes}.contains(t.srcBox) ||
          !Box{zero.offsets, table.sizes}.contains(t.dstBox))
        return fail("exchange " + t.str() + " leaves its slots or table");
      std::vector<float> &into = tables[{t.dstRank, exchange.table}];
      into.resize(table.volume(), NAN);
      std::string problem;
      forEachIndex(t.srcBox, [&](const Dims &index) {
        float value = slots[t.srcRank][linearize(index, slotBox->second.sizes)];
        float &entry = into[linearize(
            plus(minus(index, t.srcBox.offsets), t.dstBox.offsets),
            table.sizes)];
        // Poison is NaN, which fmax would pass over: name it instead.
        if (problem.empty() && (std::isnan(value) ||
                                (reductions && std::isnan(entry))))
          problem = "exchange " + t.str() +
                    (std::isnan(value) ? " reads a slot its rank never computed"
                                       : " reduces onto a table entry no copy "
                                         "wrote");
        entry = reductions ? std::fmax(entry, value) : value;
      });
      if (!problem.empty())
        return fail(problem);
    }

  // Phase 3: every transfer quantized with its sender's table.
  std::map<int64_t, Box> dstBoxes;
  std::map<int64_t, std::vector<uint8_t>> dstBuffers;
  for (int64_t position = 0; position < dst.mesh.size(); ++position) {
    int64_t rank = dst.mesh.rankAt(position);
    dstBoxes[rank] = dst.localBox(shape, position);
    dstBuffers[rank].assign(dstBoxes[rank].volume() * toSize, 0x5A);
  }
  for (const Transfer &t : plan.transfers) {
    auto srcBox = srcBoxes.find(t.srcRank);
    auto dstBox = dstBoxes.find(t.dstRank);
    if (srcBox == srcBoxes.end() || dstBox == dstBoxes.end())
      return fail("transfer " + t.str() + " names an unknown rank");
    Box srcLocal{Dims(dims.size(), 0), srcBox->second.sizes};
    Box dstLocal{Dims(dims.size(), 0), dstBox->second.sizes};
    if (t.srcBox.rank() != srcLocal.rank() || t.dstBox.rank() != dstLocal.rank() ||
        !(t.srcBox.sizes == t.dstBox.sizes) || !srcLocal.contains(t.srcBox) ||
        !dstLocal.contains(t.dstBox))
      return fail("transfer " + t.str() + " leaves a rank's buffer");
    Box table = scales.tableBox(t.srcRank, ScaleTable::Quantizer);
    auto values = tables.find({t.srcRank, ScaleTable::Quantizer});
    std::string problem;
    forEachIndex(t.srcBox, [&](const Dims &index) {
      if (!problem.empty())
        return;
      Dims globalIndex = plus(index, srcBox->second.offsets);
      Dims coords(dims.size());
      for (size_t d = 0; d < dims.size(); ++d)
        coords[d] = globalIndex[d] / block[d];
      float amax = NAN;
      if (values != tables.end() && table.contains(Box{coords, Dims(dims.size(), 1)}))
        amax = values->second[linearize(minus(coords, table.offsets), table.sizes)];
      if (std::isnan(amax)) {
        problem = "rank " + std::to_string(t.srcRank) + " quantizes block " +
                  blockName(coords) + " without its amax (transfer " +
                  t.str() + ")";
        return;
      }
      Dims target = plus(minus(index, t.srcBox.offsets), t.dstBox.offsets);
      quantizeElement(
          from, to, scaleFromAmax(scaling, to, amax),
          &dstBuffers[t.dstRank][linearize(target, dstBox->second.sizes) * toSize],
          &srcBuffers[t.srcRank][linearize(index, srcBox->second.sizes) * fromSize]);
    });
    if (!problem.empty())
      return fail(problem);
  }

  // The scales each destination holds, as stored (NaN where its table
  // lacks an amax), then the check.
  std::map<int64_t, std::vector<uint8_t>> stored;
  for (const auto &[rank, box] : dstBoxes) {
    Box held = scales.tableBox(rank, ScaleTable::Holder);
    auto values = tables.find({rank, ScaleTable::Holder});
    std::vector<uint8_t> &bytes = stored[rank];
    forEachIndex(held, [&](const Dims &coords) {
      float amax = values == tables.end()
                       ? NAN
                       : values->second[linearize(minus(coords, held.offsets),
                                                  held.sizes)];
      storeScale(scaling, std::isnan(amax) ? NAN
                                           : scaleFromAmax(scaling, to, amax),
                 bytes);
    });
  }
  return checkQuantized(scaling, to, dims, fx, dstBoxes, dstBuffers, stored,
                        [&](int64_t rank) {
                          return scales.tableBox(rank, ScaleTable::Holder);
                        },
                        keep);
}

SimulationReport simulateQuantizingSchedule(
    const Scaling &scaling, const Layout &src, const Layout &dst,
    const std::vector<int64_t> &shape, ElementType from, ElementType to,
    const Schedule &schedule, ReshardSimulator::StepOrder order,
    uint64_t seed, QuantizedBuffers *keep) {
  SimulationReport report;
  auto fail = [&](std::string message) {
    report.passed = false;
    report.message = std::move(message);
    return report;
  };
  const Dims dims(shape.begin(), shape.end());
  const Dims block = blockShape(scaling, dims);
  const int64_t fromSize = elementSize(from), toSize = elementSize(to);
  const bool exponents = hasExponentScales(scaling);
  Fixture fx(scaling, src, shape, from, to, seed);
  const BufferShapes shapeOf(src, dst, shape, schedule.scratches, scaling);

  // Every buffer a step names, poisoned: NaN amaxes, NaN (f32) or 0xFF
  // (e8m0) scales, 0x5A bytes elsewhere. Sources keep their values.
  std::map<int64_t, Box> dstBoxes;
  std::map<int64_t, std::vector<uint8_t>> dstBuffers;
  for (int64_t position = 0; position < dst.mesh.size(); ++position) {
    int64_t rank = dst.mesh.rankAt(position);
    dstBoxes[rank] = dst.localBox(shape, position);
    dstBuffers[rank].assign(dstBoxes[rank].volume() * toSize, 0x5A);
  }
  // Amaxes by buffer: (kind, rank, scratch), staging scratches included.
  std::map<std::tuple<BufferKind, int64_t, int64_t>, std::vector<float>>
      amaxes;
  std::map<int64_t, std::vector<uint8_t>> scaleBytes, scratches;
  auto bytesOf = [&](const BufferRef &ref, const Dims &extents)
      -> std::vector<uint8_t> * {
    int64_t volume = Box{Dims(extents.size(), 0), extents}.volume();
    switch (ref.kind) {
    case BufferKind::Source:
      return &fx.srcBuffers[ref.rank];
    case BufferKind::Destination:
      return &dstBuffers[ref.rank];
    case BufferKind::Scratch: {
      if (holdsAmaxes(ref, schedule.scratches))
        return nullptr; // Amaxes: amaxOf.
      auto [it, fresh] = scratches.try_emplace(ref.scratch);
      if (fresh)
        it->second.assign(volume * toSize, 0x5A);
      return &it->second;
    }
    case BufferKind::Scales: {
      auto [it, fresh] = scaleBytes.try_emplace(ref.rank);
      if (fresh)
        for (int64_t i = 0; i < volume; ++i)
          storeScale(scaling, NAN, it->second);
      return &it->second;
    }
    case BufferKind::Slots:
    case BufferKind::Holder:
    case BufferKind::Quantizer:
      return nullptr;
    }
    return nullptr;
  };
  auto amaxOf = [&](const BufferRef &ref,
                    const Dims &extents) -> std::vector<float> & {
    auto [it, fresh] = amaxes.try_emplace({ref.kind, ref.rank, ref.scratch});
    if (fresh)
      it->second.assign(Box{Dims(extents.size(), 0), extents}.volume(), NAN);
    return it->second;
  };

  // Every step checked before memory is touched (an unverified schedule,
  // m2n-sim --no-verify, never reads or writes past a buffer).
  const int64_t count = static_cast<int64_t>(schedule.steps.size());
  std::vector<int64_t> pending(count, 0);
  std::vector<std::vector<int64_t>> dependents(count);
  for (int64_t i = 0; i < count; ++i) {
    const Step &step = schedule.steps[i];
    std::string where = "step " + std::to_string(i) + " (" + step.str() + "): ";
    std::optional<Dims> fromShape = shapeOf(step.from);
    std::optional<Dims> toShape = shapeOf(step.to);
    if (!fromShape || !toShape)
      return fail(where + "names a buffer that does not exist");
    Box fromBounds{Dims(fromShape->size(), 0), *fromShape};
    Box toBounds{Dims(toShape->size(), 0), *toShape};
    if (step.to.kind == BufferKind::Source ||
        step.fromBox.sizes != step.toBox.sizes ||
        step.fromBox.rank() != fromBounds.rank() ||
        step.toBox.rank() != toBounds.rank() ||
        !fromBounds.contains(step.fromBox) || !toBounds.contains(step.toBox))
      return fail(where + "leaves a buffer or writes a source");
    if (std::optional<std::string> wrong =
            checkStepKind(step, schedule.scratches))
      return fail(where + *wrong);
    for (int64_t dep : step.deps) {
      if (dep < 0 || dep >= count || dep == i)
        return fail(where + "depends on a step that does not exist");
      ++pending[i];
      dependents[dep].push_back(i);
    }
  }

  // How many shares each block has (the amax steps that compute it), and
  // how many a holder entry has heard from: a scale written before all of
  // them arrived is named, though the first copy left no poison.
  const Dims grid = scaleShape(scaling, dims);
  std::vector<int32_t> sharesOf(
      Box{Dims(grid.size(), 0), grid}.volume(), 0);
  for (const Step &step : schedule.steps)
    if (step.kind == StepKind::Amax)
      forEachIndex(step.toBox, [&](const Dims &index) {
                     ++sharesOf[linearize(
                         plus(index, shapeOf.blocksOf(step.to)->offsets),
                         grid)];
                   });
  std::map<std::pair<BufferKind, int64_t>, std::vector<int32_t>> heard;

  std::set<int64_t> ready;
  for (int64_t i = 0; i < count; ++i)
    if (pending[i] == 0)
      ready.insert(i);
  int64_t done = 0;
  while (!ready.empty()) {
    auto pick = order == ReshardSimulator::StepOrder::ListOrder
                    ? ready.begin()
                    : std::prev(ready.end());
    const int64_t i = *pick;
    ready.erase(pick);
    const Step &step = schedule.steps[i];
    const std::string where =
        "step " + std::to_string(i) + " (" + step.str() + ") ";
    const Dims fromShape = *shapeOf(step.from), toShape = *shapeOf(step.to);
    std::string problem;
    if (step.kind == StepKind::Amax) {
      const Box slots = *shapeOf.blocksOf(step.to);
      std::vector<float> &into = amaxOf(step.to, toShape);
      forEachIndex(step.toBox, [&](const Dims &index) {
        into[linearize(index, toShape)] =
            partialAmax(scaling, dims, from, fx.srcBoxes[step.from.rank],
                        fx.srcBuffers[step.from.rank],
                        plus(index, slots.offsets));
      });
    } else if (step.kind == StepKind::Scale) {
      const std::vector<float> &amax = amaxOf(step.from, fromShape);
      std::vector<uint8_t> &out = *bytesOf(step.to, toShape);
      const int64_t size = exponents ? 1 : 4;
      const Box held = *shapeOf.blocksOf(step.from);
      std::vector<int32_t> &entries = heard[{step.from.kind, step.from.rank}];
      entries.resize(held.volume(), 0);
      forEachIndex(step.fromBox, [&](const Dims &index) {
        float value = amax[linearize(index, fromShape)];
        if (std::isnan(value) && problem.empty())
          problem = where + "reads a holder entry no step wrote";
        if (problem.empty() &&
            entries[linearize(index, fromShape)] !=
                sharesOf[linearize(plus(index, held.offsets), grid)])
          problem = where + "reads the amax of block " +
                    blockName(plus(index, held.offsets)) + " before all " +
                    std::to_string(
                        sharesOf[linearize(plus(index, held.offsets), grid)]) +
                    " shares of it arrived";
        std::vector<uint8_t> bytes;
        storeScale(scaling,
                   std::isnan(value) ? NAN : scaleFromAmax(scaling, to, value),
                   bytes);
        std::memcpy(&out[linearize(index, toShape) * size], bytes.data(), size);
      });
    } else if (holdsAmaxes(step.from, schedule.scratches)) {
      const std::vector<float> &in = amaxOf(step.from, fromShape);
      std::vector<float> &into = amaxOf(step.to, toShape);
      // Staging passes amaxes on; the table they land in hears them.
      std::vector<int32_t> staged;
      std::vector<int32_t> &entries =
          step.to.kind == BufferKind::Scratch
              ? staged
              : heard[{step.to.kind, step.to.rank}];
      entries.resize(Box{Dims(toShape.size(), 0), toShape}.volume(), 0);
      forEachIndex(step.fromBox, [&](const Dims &index) {
        float value = in[linearize(index, fromShape)];
        const int64_t at = linearize(
            plus(minus(index, step.fromBox.offsets), step.toBox.offsets),
            toShape);
        ++entries[at];
        float &entry = into[at];
        // Poison is NaN, which fmax would pass over: name it instead.
        if (problem.empty() &&
            (std::isnan(value) || (step.reduction && std::isnan(entry))))
          problem = where + (std::isnan(value)
                                 ? "reads an amax no step computed"
                                 : "reduces onto a table entry no copy wrote");
        entry = step.reduction ? std::fmax(entry, value) : value;
      });
    } else if (step.from.kind == BufferKind::Source) {
      // Quantized with the source rank's quantizer table, whoever runs it.
      const BufferRef tableRef{BufferKind::Quantizer, step.from.rank};
      const Box table = *shapeOf.blocksOf(tableRef);
      const std::vector<float> &amaxes = amaxOf(tableRef, table.sizes);
      std::vector<int32_t> &entries = heard[{tableRef.kind, tableRef.rank}];
      entries.resize(table.volume(), 0);
      const Box &srcBox = fx.srcBoxes[step.from.rank];
      std::vector<uint8_t> &out = *bytesOf(step.to, toShape);
      const std::vector<uint8_t> &in = fx.srcBuffers[step.from.rank];
      forEachIndex(step.fromBox, [&](const Dims &index) {
        if (!problem.empty())
          return;
        Dims coords = plus(index, srcBox.offsets);
        for (size_t d = 0; d < dims.size(); ++d)
          coords[d] /= block[d];
        const int64_t at = linearize(minus(coords, table.offsets), table.sizes);
        float amax = amaxes[at];
        if (std::isnan(amax) ||
            entries[at] != sharesOf[linearize(coords, grid)]) {
          problem = where + "quantizes block " + blockName(coords) +
                    " before its amax arrived in " + tableRef.str();
          return;
        }
        Dims target =
            plus(minus(index, step.fromBox.offsets), step.toBox.offsets);
        quantizeElement(from, to, scaleFromAmax(scaling, to, amax),
                        &out[linearize(target, toShape) * toSize],
                        &in[linearize(index, fromShape) * fromSize]);
      });
    } else {
      // Quantized elements forwarded (a leader's fan-out): bytes.
      moveBox(to, bytesOf(step.from, fromShape)->data(), fromShape,
              step.fromBox, bytesOf(step.to, toShape)->data(), toShape,
              step.toBox, step.reduction);
    }
    if (!problem.empty())
      return fail(problem);
    ++done;
    for (int64_t next : dependents[i])
      if (--pending[next] == 0)
        ready.insert(next);
  }
  if (done != count)
    return fail("dependency cycle: " + std::to_string(count - done) +
                " steps never became ready");
  std::map<int64_t, std::vector<uint8_t>> stored;
  for (const auto &[rank, box] : dstBoxes) {
    Box held = *shapeOf.blocksOf({BufferKind::Scales, rank});
    stored[rank] = *bytesOf({BufferKind::Scales, rank}, held.sizes);
  }
  return checkQuantized(
      scaling, to, dims, fx, dstBoxes, dstBuffers, stored,
      [&](int64_t rank) {
        return *shapeOf.blocksOf({BufferKind::Scales, rank});
      },
      keep);
}

SimulationReport simulateQuantizingBuffers(
    const Scaling &scaling, const Layout &src, const Layout &dst,
    const std::vector<int64_t> &shape, ElementType from, ElementType to,
    const std::vector<ScratchBuffer> &scratches, uint64_t seed,
    const std::function<std::optional<std::string>(
        const QuantizedBufferResolver &)> &execute,
    QuantizedBuffers *keep) {
  SimulationReport report;
  const Dims dims(shape.begin(), shape.end());
  const int64_t toSize = elementSize(to);
  Fixture fx(scaling, src, shape, from, to, seed);
  const BufferShapes shapeOf(src, dst, shape, scratches, scaling);
  std::map<int64_t, Box> dstBoxes;
  std::map<int64_t, std::vector<uint8_t>> dstBuffers, scaleBytes;
  for (int64_t position = 0; position < dst.mesh.size(); ++position) {
    const int64_t rank = dst.mesh.rankAt(position);
    dstBoxes[rank] = dst.localBox(shape, position);
    dstBuffers[rank].assign(dstBoxes[rank].volume() * toSize, 0x5A);
    const Box held = *shapeOf.blocksOf({BufferKind::Scales, rank});
    for (int64_t i = 0; i < held.volume(); ++i)
      storeScale(scaling, NAN, scaleBytes[rank]);
  }
  // Scratch of the tensor's elements (0x5A) or of staged amaxes (NaN).
  std::vector<std::vector<uint8_t>> scratchBuffers;
  for (const ScratchBuffer &scratch : scratches) {
    const int64_t volume = Box{Dims(scratch.shape.size(), 0), scratch.shape}.volume();
    std::vector<uint8_t> &bytes =
        scratchBuffers.emplace_back(volume * (scratch.amaxes ? 4 : toSize), 0x5A);
    const float poison = NAN;
    for (int64_t i = 0; scratch.amaxes && i < volume; ++i)
      std::memcpy(&bytes[i * 4], &poison, 4);
  }
  // Slots and tables of f32 amaxes, poisoned with NaN.
  std::map<std::pair<BufferKind, int64_t>, std::vector<uint8_t>> tables;
  auto tableOf = [&](const BufferRef &ref) -> std::vector<uint8_t> * {
    std::optional<Box> blocks = shapeOf.blocksOf(ref);
    if (!blocks)
      return nullptr;
    auto [it, fresh] = tables.try_emplace({ref.kind, ref.rank});
    if (fresh) {
      const float poison = NAN;
      it->second.resize(blocks->volume() * 4);
      for (int64_t i = 0; i < blocks->volume(); ++i)
        std::memcpy(&it->second[i * 4], &poison, 4);
    }
    return &it->second;
  };
  auto resolve = [&](const BufferRef &ref)
      -> std::optional<std::pair<uint8_t *, int64_t>> {
    std::vector<uint8_t> *bytes = nullptr;
    switch (ref.kind) {
    case BufferKind::Source: {
      auto it = fx.srcBuffers.find(ref.rank);
      bytes = it == fx.srcBuffers.end() ? nullptr : &it->second;
      break;
    }
    case BufferKind::Destination: {
      auto it = dstBuffers.find(ref.rank);
      bytes = it == dstBuffers.end() ? nullptr : &it->second;
      break;
    }
    case BufferKind::Scales: {
      auto it = scaleBytes.find(ref.rank);
      bytes = it == scaleBytes.end() ? nullptr : &it->second;
      break;
    }
    case BufferKind::Scratch:
      if (ref.scratch >= 0 &&
          ref.scratch < static_cast<int64_t>(scratchBuffers.size()) &&
          scratches[ref.scratch].rank == ref.rank)
        bytes = &scratchBuffers[ref.scratch];
      break;
    case BufferKind::Slots:
    case BufferKind::Holder:
    case BufferKind::Quantizer:
      bytes = tableOf(ref);
      break;
    }
    if (!bytes)
      return std::nullopt;
    // A buffer of no bytes still has an address (an empty vector's may be
    // null).
    static uint8_t nothing;
    return std::make_pair(bytes->empty() ? &nothing : bytes->data(),
                          static_cast<int64_t>(bytes->size()));
  };
  if (std::optional<std::string> error = execute(resolve)) {
    report.message = *error;
    return report;
  }
  return checkQuantized(
      scaling, to, dims, fx, dstBoxes, dstBuffers, scaleBytes,
      [&](int64_t rank) {
        return *shapeOf.blocksOf({BufferKind::Scales, rank});
      },
      keep);
}

} // namespace m2n
