//===- QuantizingSimulator.cpp - a quantizing plan run on the host --------===//

#include "m2n/Sim/QuantizingSimulator.h"

#include <cmath>
#include <cstring>
#include <map>
#include <random>

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
  int64_t elements = 1;
  for (int64_t extent : shape)
    elements *= extent;

  // The global tensor: magnitudes over 30 binades, zeros (a sixth, whole
  // blocks of them where a block is small), now and then NaN.
  std::mt19937_64 rng(seed);
  std::vector<uint8_t> global(elements * fromSize);
  for (int64_t i = 0; i < elements; ++i) {
    uint64_t draw = rng();
    double value = draw % 6 == 0 ? 0.0
                   : draw % 97 == 0
                       ? NAN
                       : std::ldexp(static_cast<double>(draw >> 40 & 0x3FF) - 512.0,
                                    static_cast<int>(draw >> 20 & 31) - 20);
    storeElement(from, global.data() + i * fromSize, value);
  }
  std::vector<uint8_t> expected(elements * toSize);
  std::vector<float> expectedScales;
  quantizeTensor(scaling, from, to, dims, global.data(), expected.data(),
                 expectedScales);

  // Source buffers: each rank's box of the global tensor.
  std::map<int64_t, Box> srcBoxes;
  std::map<int64_t, std::vector<uint8_t>> srcBuffers;
  Box whole{Dims(dims.size(), 0), dims};
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
      float amax = 0.0f;
      Box mine = box->second.intersect(blockElements(scaling, dims, coords));
      forEachIndex(mine, [&](const Dims &index) {
        int64_t at = linearize(minus(index, box->second.offsets),
                               box->second.sizes);
        amax = std::fmax(amax, std::fabs(static_cast<float>(
                                   loadElement(from, &buffer[at * fromSize]))));
      });
      slots[rank][linearize(minus(coords, slotBox->second.offsets),
                            slotBox->second.sizes)] = amax;
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

  // The check: every destination element and every scale it holds.
  for (const auto &[rank, box] : dstBoxes) {
    const std::vector<uint8_t> &buffer = dstBuffers[rank];
    std::string problem;
    forEachIndex(box, [&](const Dims &index) {
      int64_t local = linearize(minus(index, box.offsets), box.sizes);
      int64_t at = linearize(index, dims);
      if (problem.empty() &&
          std::memcmp(&buffer[local * toSize], &expected[at * toSize], toSize))
        problem = "rank " + std::to_string(rank) + " element " +
                  blockName(index) + " differs from the reference quantizer";
      ++report.checkedElements;
    });
    if (!problem.empty())
      return fail(problem);
    Box held = scales.tableBox(rank, ScaleTable::Holder);
    auto values = tables.find({rank, ScaleTable::Holder});
    std::vector<uint8_t> stored;
    forEachIndex(held, [&](const Dims &coords) {
      float amax = values == tables.end()
                       ? NAN
                       : values->second[linearize(minus(coords, held.offsets),
                                                  held.sizes)];
      float scale = std::isnan(amax) ? NAN : scaleFromAmax(scaling, to, amax);
      if (hasExponentScales(scaling)) {
        stored.push_back(std::isnan(scale) ? 0xFF : e8m0FromScale(scale));
      } else {
        const uint8_t *bytes = reinterpret_cast<const uint8_t *>(&scale);
        stored.insert(stored.end(), bytes, bytes + sizeof(float));
      }
      float reference = expectedScales[linearize(coords, grid)];
      // Compared as stored: f32 bits, or e8m0 bytes for mx.
      bool same = hasExponentScales(scaling)
                      ? !std::isnan(scale) &&
                            e8m0FromScale(scale) == e8m0FromScale(reference)
                      : std::memcmp(&scale, &reference, sizeof(float)) == 0;
      if (problem.empty() && !same)
        problem = "rank " + std::to_string(rank) + " holds scale " +
                  std::to_string(scale) + " for block " + blockName(coords) +
                  ", the reference quantizer " + std::to_string(reference);
      ++report.checkedElements;
    });
    if (!problem.empty())
      return fail(problem);
    if (keep) {
      keep->destinations[rank] = buffer;
      keep->scales[rank] = std::move(stored);
    }
  }
  if (keep)
    keep->source = std::move(global);
  report.passed = true;
  return report;
}

} // namespace m2n
