//===- HostSimulator.cpp - reference executor for reshard plans ------------===//

#include "m2n/Sim/HostSimulator.h"

#include <cmath>
#include <cstring>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

namespace m2n {

ReshardSimulator::ReshardSimulator(Layout src, Layout dst,
                                   std::vector<int64_t> shape,
                                   ElementType type)
    : src(std::move(src)), dst(std::move(dst)), shape(std::move(shape)),
      type(type), sourceType(type) {
  for (int64_t i = 0; i < this->src.mesh.size(); ++i)
    srcBoxes.push_back(this->src.localBox(this->shape, i));
  for (int64_t j = 0; j < this->dst.mesh.size(); ++j)
    dstBoxes.push_back(this->dst.localBox(this->shape, j));
  reset();
}

/// Calls fn(localIndex, globalLinearIndex) for every element of `box`, where
/// localIndex is the row-major position inside the box.
template <typename Fn>
static void forEachElement(const Box &box, const std::vector<int64_t> &shape,
                           Fn fn) {
  int64_t volume = box.volume();
  if (volume == 0)
    return;
  int64_t rank = box.rank();
  std::vector<int64_t> index(rank, 0), global(rank);
  for (int64_t local = 0; local < volume; ++local) {
    for (int64_t d = 0; d < rank; ++d)
      global[d] = box.offsets[d] + index[d];
    fn(local, linearize(global, shape));
    for (int64_t d = rank - 1; d >= 0; --d) {
      if (++index[d] < box.sizes[d])
        break;
      index[d] = 0;
    }
  }
}

void ReshardSimulator::setCast(ElementType source, float factor) {
  sourceType = source;
  scale = factor;
  reset();
}

/// Stores the fill rule's value of element `g` for contributor `q`. The MX
/// scale type keeps only a power of two, so that most values would share
/// bits: it takes the value's low byte instead, never 0xFF (its NaN, the
/// destinations' poison).
static void storeFill(ElementType type, uint8_t *dst, int64_t g, int64_t q) {
  int64_t value = ReshardSimulator::fillValue(g, q);
  if (type == ElementType::F8E8M0FNU)
    *dst = static_cast<uint8_t>(value % 255);
  else
    storeElement(type, dst, value);
}

void ReshardSimulator::reset() {
  const int64_t size = elementSize(type);
  const int64_t sourceSize = elementSize(sourceType);
  srcBuffers.assign(srcBoxes.size(), {});
  for (size_t i = 0; i < srcBoxes.size(); ++i) {
    std::vector<uint8_t> &buffer = srcBuffers[i];
    buffer.assign(srcBoxes[i].volume() * sourceSize, 0);
    int64_t contributor = src.contributorIndex(static_cast<int64_t>(i));
    forEachElement(srcBoxes[i], shape, [&](int64_t local, int64_t g) {
      storeFill(sourceType, buffer.data() + local * sourceSize, g,
                contributor);
    });
  }
  dstBuffers.assign(dstBoxes.size(), {});
  for (size_t j = 0; j < dstBoxes.size(); ++j) {
    std::vector<uint8_t> &buffer = dstBuffers[j];
    buffer.assign(dstBoxes[j].volume() * size, 0x5A);
    if (isFloat(type))
      for (int64_t e = 0; e < dstBoxes[j].volume(); ++e)
        storeElement(type, buffer.data() + e * size, std::nan(""));
  }
}

std::optional<std::string>
ReshardSimulator::execute(const ReshardPlan &plan) {
  std::map<int64_t, int64_t> srcIndex, dstIndex;
  for (int64_t i = 0; i < src.mesh.size(); ++i)
    srcIndex[src.mesh.rankAt(i)] = i;
  for (int64_t j = 0; j < dst.mesh.size(); ++j)
    dstIndex[dst.mesh.rankAt(j)] = j;
  const int64_t rank = static_cast<int64_t>(shape.size());

  // Validate everything first, so that a bad plan touches no memory.
  for (size_t t = 0; t < plan.transfers.size(); ++t) {
    const Transfer &transfer = plan.transfers[t];
    auto s = srcIndex.find(transfer.srcRank);
    auto d = dstIndex.find(transfer.dstRank);
    std::string where = "transfer " + std::to_string(t) + " (" +
                        transfer.str() + "): ";
    if (s == srcIndex.end() || d == dstIndex.end())
      return where + "names a rank outside the meshes";
    Box srcBounds{std::vector<int64_t>(rank, 0), srcBoxes[s->second].sizes};
    Box dstBounds{std::vector<int64_t>(rank, 0), dstBoxes[d->second].sizes};
    if (transfer.srcBox.sizes != transfer.dstBox.sizes ||
        !srcBounds.contains(transfer.srcBox) ||
        !dstBounds.contains(transfer.dstBox))
      return where + "leaves a local buffer";
  }

  auto apply = [&](const Transfer &transfer) {
    const int64_t s = srcIndex[transfer.srcRank];
    const int64_t d = dstIndex[transfer.dstRank];
    moveBox(type, srcBuffers[s].data(), srcBoxes[s].sizes, transfer.srcBox,
            dstBuffers[d].data(), dstBoxes[d].sizes, transfer.dstBox,
            transfer.reduction);
  };
  for (const Transfer &transfer : plan.transfers)
    if (!transfer.reduction)
      apply(transfer);
  for (const Transfer &transfer : plan.transfers)
    if (transfer.reduction)
      apply(transfer);
  return std::nullopt;
}

std::optional<std::string> ReshardSimulator::execute(const Schedule &schedule,
                                                    StepOrder order) {
  std::map<int64_t, int64_t> srcIndex, dstIndex;
  for (int64_t i = 0; i < src.mesh.size(); ++i)
    srcIndex[src.mesh.rankAt(i)] = i;
  for (int64_t j = 0; j < dst.mesh.size(); ++j)
    dstIndex[dst.mesh.rankAt(j)] = j;
  const int64_t size = elementSize(type);

  std::vector<std::vector<uint8_t>> scratch(schedule.scratches.size());
  for (size_t k = 0; k < scratch.size(); ++k) {
    int64_t elements = Box{Dims(schedule.scratches[k].shape.size(), 0),
                           schedule.scratches[k].shape}
                           .volume();
    scratch[k].assign(elements * size, 0x5A);
    if (isFloat(type))
      for (int64_t e = 0; e < elements; ++e)
        storeElement(type, scratch[k].data() + e * size, std::nan(""));
  }

  // Resolves a buffer reference to its memory and shape, or an error.
  auto resolve = [&](const BufferRef &ref, uint8_t *&data,
                     Dims &bufferShape) -> std::optional<std::string> {
    switch (ref.kind) {
    case BufferKind::Source: {
      auto it = srcIndex.find(ref.rank);
      if (it == srcIndex.end())
        return ref.str() + " is not a source rank";
      data = srcBuffers[it->second].data();
      bufferShape = srcBoxes[it->second].sizes;
      return std::nullopt;
    }
    case BufferKind::Destination: {
      auto it = dstIndex.find(ref.rank);
      if (it == dstIndex.end())
        return ref.str() + " is not a destination rank";
      data = dstBuffers[it->second].data();
      bufferShape = dstBoxes[it->second].sizes;
      return std::nullopt;
    }
    case BufferKind::Scratch:
      if (ref.scratch < 0 ||
          ref.scratch >= static_cast<int64_t>(scratch.size()) ||
          schedule.scratches[ref.scratch].rank != ref.rank)
        return ref.str() + " is not a scratch buffer of that rank";
      data = scratch[ref.scratch].data();
      bufferShape = schedule.scratches[ref.scratch].shape;
      return std::nullopt;
    case BufferKind::Slots:
    case BufferKind::Holder:
    case BufferKind::Scales:
    case BufferKind::Quantizer:
      return ref.str() + " belongs to a quantizing schedule, which "
                         "simulateQuantizingSchedule runs";
    }
    return std::string("unknown buffer kind");
  };

  // Validate every step before touching memory.
  const int64_t count = static_cast<int64_t>(schedule.steps.size());
  std::vector<int64_t> pending(count, 0);
  std::vector<std::vector<int64_t>> dependents(count);
  for (int64_t i = 0; i < count; ++i) {
    const Step &step = schedule.steps[i];
    std::string where = "step " + std::to_string(i) + " (" + step.str() + "): ";
    uint8_t *data;
    Dims fromShape, toShape;
    if (auto error = resolve(step.from, data, fromShape))
      return where + *error;
    if (auto error = resolve(step.to, data, toShape))
      return where + *error;
    if (step.to.kind == BufferKind::Source)
      return where + "writes a source buffer";
    Box fromBounds{Dims(fromShape.size(), 0), fromShape};
    Box toBounds{Dims(toShape.size(), 0), toShape};
    if (step.fromBox.sizes != step.toBox.sizes ||
        step.fromBox.rank() != static_cast<int64_t>(fromShape.size()) ||
        step.toBox.rank() != static_cast<int64_t>(toShape.size()) ||
        !fromBounds.contains(step.fromBox) || !toBounds.contains(step.toBox))
      return where + "leaves a buffer";
    for (int64_t dep : step.deps) {
      if (dep < 0 || dep >= count || dep == i)
        return where + "depends on a step that does not exist";
      ++pending[i];
      dependents[dep].push_back(i);
    }
  }

  std::set<int64_t> ready;
  for (int64_t i = 0; i < count; ++i)
    if (pending[i] == 0)
      ready.insert(i);
  int64_t done = 0;
  while (!ready.empty()) {
    auto pick = order == StepOrder::ListOrder ? ready.begin()
                                              : std::prev(ready.end());
    int64_t i = *pick;
    ready.erase(pick);
    const Step &step = schedule.steps[i];
    uint8_t *from, *to;
    Dims fromShape, toShape;
    (void)resolve(step.from, from, fromShape);
    (void)resolve(step.to, to, toShape);
    moveBox(type, from, fromShape, step.fromBox, to, toShape, step.toBox,
            step.reduction);
    ++done;
    for (int64_t next : dependents[i])
      if (--pending[next] == 0)
        ready.insert(next);
  }
  if (done != count)
    return "dependency cycle: " + std::to_string(count - done) +
           " steps never became ready";
  return std::nullopt;
}

void ReshardSimulator::allocateScratch(
    const std::vector<ScratchBuffer> &scratches) {
  const int64_t size = elementSize(type);
  scratchBuffers.assign(scratches.size(), {});
  scratchRanks.clear();
  for (size_t k = 0; k < scratches.size(); ++k) {
    int64_t elements =
        Box{Dims(scratches[k].shape.size(), 0), scratches[k].shape}.volume();
    scratchBuffers[k].assign(elements * size, 0x5A);
    if (isFloat(type))
      for (int64_t e = 0; e < elements; ++e)
        storeElement(type, scratchBuffers[k].data() + e * size, std::nan(""));
    scratchRanks.push_back(scratches[k].rank);
  }
}

std::optional<std::pair<uint8_t *, int64_t>>
ReshardSimulator::bytesOf(const BufferRef &ref) {
  std::vector<uint8_t> *buffer = nullptr;
  if (ref.kind == BufferKind::Scratch) {
    if (ref.scratch >= 0 &&
        ref.scratch < static_cast<int64_t>(scratchBuffers.size()) &&
        scratchRanks[ref.scratch] == ref.rank)
      buffer = &scratchBuffers[ref.scratch];
  } else {
    const Layout &layout = ref.kind == BufferKind::Source ? src : dst;
    if (std::optional<int64_t> index = layout.mesh.indexOf(ref.rank))
      buffer = ref.kind == BufferKind::Source ? &srcBuffers[*index]
                                              : &dstBuffers[*index];
  }
  if (!buffer)
    return std::nullopt;
  return std::make_pair(buffer->data(), static_cast<int64_t>(buffer->size()));
}

/// Unit roundoff of a float type, for the reduction tolerance.
static double unitRoundoff(ElementType type) {
  switch (type) {
  case ElementType::F16:
    return std::ldexp(1.0, -11);
  case ElementType::BF16:
    return std::ldexp(1.0, -8);
  case ElementType::F32:
    return std::ldexp(1.0, -24);
  case ElementType::F64:
    return std::ldexp(1.0, -53);
  default:
    return 0;
  }
}

/// Largest finite value of a float type.
static double maxFinite(ElementType type) {
  switch (type) {
  case ElementType::F16:
    return 65504.0;
  case ElementType::BF16:
    return 3.3895313892515355e38;
  case ElementType::F32:
    return 3.4028234663852886e38;
  default:
    return 1.7976931348623157e308;
  }
}

SimulationReport ReshardSimulator::check() const {
  SimulationReport report;
  const int64_t size = elementSize(type);
  const std::optional<Reduction> op = src.reduction();
  std::vector<uint8_t> expected(size), term(size);
  for (size_t j = 0; j < dstBoxes.size(); ++j) {
    const std::vector<uint8_t> &buffer = dstBuffers[j];
    const std::vector<int64_t> contributors =
        contributorsOf(src, dst, static_cast<int64_t>(j));
    bool failed = false;
    forEachElement(dstBoxes[j], shape, [&](int64_t local, int64_t g) {
      if (failed)
        return;
      ++report.checkedElements;
      // The logical value: the left fold, in the element type and in
      // increasing contributor order, of the contributions this rank
      // combines.
      double magnitude = 0;
      if (sourceType != type) { // A cast: one contributor, converted.
        std::vector<uint8_t> source(elementSize(sourceType));
        storeFill(sourceType, source.data(), g, contributors.front());
        castElement(sourceType, type, scale, expected.data(), source.data());
      }
      for (int64_t q : sourceType != type ? std::vector<int64_t>{}
                                          : contributors) {
        bool first = q == contributors.front();
        std::vector<uint8_t> &slot = first ? expected : term;
        storeFill(type, slot.data(), g, q);
        magnitude += std::fabs(loadElement(type, slot.data()));
        if (!first)
          reduceElement(type, *op, expected.data(), term.data());
      }
      const uint8_t *got = buffer.data() + local * size;
      if (sameBits(type, got, expected.data()))
        return;
      double gotValue = loadElement(type, got);
      double want = loadElement(type, expected.data());
      int64_t terms = static_cast<int64_t>(contributors.size());
      if (isFloat(type) && terms > 1 && *op == Reduction::Sum) {
        if (std::fabs(gotValue - want) <=
            2.0 * terms * unitRoundoff(type) * magnitude)
          return;
        // A sum that may overflow the type depends on the order of the
        // additions (inf, or the largest finite value): not checked.
        if (magnitude > maxFinite(type))
          return;
      }
      std::ostringstream os;
      os << "destination rank " << dst.mesh.rankAt(j) << " local element "
         << local << " (global linear index " << g << "): expected " << want
         << ", got " << gotValue;
      report.message = os.str();
      failed = true;
    });
    if (failed)
      return report;
  }
  report.passed = true;
  return report;
}

std::optional<std::string> writeNpy(const std::string &path, ElementType type,
                                    const std::vector<int64_t> &shape,
                                    const std::vector<uint8_t> &data) {
  const char *descr = nullptr;
  switch (type) {
  case ElementType::I8:
    descr = "|i1";
    break;
  case ElementType::U8:
    descr = "|u1";
    break;
  case ElementType::I16:
    descr = "<i2";
    break;
  case ElementType::I32:
    descr = "<i4";
    break;
  case ElementType::I64:
    descr = "<i8";
    break;
  case ElementType::F16:
    descr = "<f2";
    break;
  case ElementType::BF16:
    descr = "<u2";
    break;
  case ElementType::F32:
    descr = "<f4";
    break;
  case ElementType::F64:
    descr = "<f8";
    break;
  case ElementType::F8E4M3FN:
  case ElementType::F8E5M2:
  case ElementType::F8E8M0FNU:
    descr = "|u1"; // numpy has no 8-bit floats: their bits, as bf16's.
    break;
  }
  std::ostringstream header;
  header << "{'descr': '" << descr << "', 'fortran_order': False, 'shape': (";
  for (size_t d = 0; d < shape.size(); ++d)
    header << shape[d] << (shape.size() == 1 || d + 1 < shape.size() ? "," : "")
           << (d + 1 < shape.size() ? " " : "");
  header << "), }";
  std::string text = header.str();
  // Magic (6) + version (2) + length (2) + header + '\n', padded to 64.
  size_t total = 10 + text.size() + 1;
  text.append((64 - total % 64) % 64, ' ');
  text.push_back('\n');
  std::ofstream out(path, std::ios::binary);
  if (!out)
    return "cannot open '" + path + "' for writing";
  out.write("\x93NUMPY\x01\x00", 8);
  uint16_t length = static_cast<uint16_t>(text.size());
  char lengthBytes[2] = {static_cast<char>(length & 0xFF),
                         static_cast<char>(length >> 8)};
  out.write(lengthBytes, 2);
  out.write(text.data(), static_cast<std::streamsize>(text.size()));
  out.write(reinterpret_cast<const char *>(data.data()),
            static_cast<std::streamsize>(data.size()));
  if (!out)
    return "failed writing '" + path + "'";
  return std::nullopt;
}

} // namespace m2n
