//===- HostExecutor.cpp - run transfer programs on host memory --------------===//

#include "m2n/Artifact/HostExecutor.h"

#include "m2n/Artifact/KernelABI.h"

#include "m2n/Base/CheckedMath.h"
#include "m2n/Base/Scaling.h"

#include <cmath>
#include <cstring>
#include <map>
#include <set>
#include <vector>

namespace m2n {

namespace {

/// Every `stride`-th item of a list of movements, from item `first` on, in
/// the order the kernel walks them (the last repeat level fastest), without
/// expanding them: a queue of a CTA (the kernel deals its items
/// round-robin) or of the network receives (stride 1). An item is one
/// instance, or for a kernel queue a movement's whole innermost level
/// where the kernel walks it in one item (foldsInnermostLevel: a band of a
/// block's rows).
class ItemQueue {
public:
  ItemQueue(std::vector<const Movement *> movements, int64_t first,
            int64_t stride, bool kernel)
      : movements(std::move(movements)), item(first), stride(stride),
        kernel(kernel) {
    settle();
  }

  bool empty() const { return at == movements.size(); }
  /// How many instances the item at the head stands for.
  int64_t size() const { return fold(*movements[at]); }
  /// Instance `j` of the item at the head (repeats resolved; a movement
  /// without repeats is its own instance, not copied).
  const Movement &instance(int64_t j) {
    const Movement &m = *movements[at];
    if (m.repeats.empty())
      return m;
    if (!current || currentIndex != j) {
      current = instanceAt(m, item * fold(m) + j);
      currentIndex = j;
    }
    return *current;
  }
  void pop() {
    item += stride;
    settle();
  }

private:
  int64_t fold(const Movement &m) const {
    return kernel && foldsInnermostLevel(m) ? m.repeats.back().count : 1;
  }
  /// Moves `at` to the movement that holds `item`.
  void settle() {
    current.reset();
    while (at < movements.size() &&
           item >= movements[at]->instances() / fold(*movements[at])) {
      item -= movements[at]->instances() / fold(*movements[at]);
      ++at;
    }
  }
  static Movement instanceAt(const Movement &m, int64_t linear) {
    std::vector<int64_t> index(m.repeats.size());
    for (size_t level = m.repeats.size(); level-- > 0;) {
      index[level] = linear % m.repeats[level].count;
      linear /= m.repeats[level].count;
    }
    return m.instance(index);
  }

  std::vector<const Movement *> movements;
  size_t at = 0;
  int64_t item, stride;
  bool kernel;
  std::optional<Movement> current;
  int64_t currentIndex = 0;
};

} // namespace

std::optional<std::string> executeProgram(const TransferProgram &program,
                                          const BufferResolver &resolve,
                                          int64_t ctasPerRank) {
  if (ctasPerRank < 1)
    return std::string("a rank needs at least one CTA");
  std::map<std::pair<int64_t, int64_t>, uint64_t> counters;
  // Queues: per rank, ctasPerRank queues of kernel item instances, dealt
  // one by one as the kernel's items are; one queue of every network
  // receive in the order the runtime posts them, as on one GPU (one
  // stream). Repeated movements are walked, not expanded: a program of
  // millions of instances needs no more memory than its movements.
  std::vector<ItemQueue> queues;
  for (const auto &[rank, rankProgram] : program.ranks) {
    std::vector<const Movement *> items;
    for (const Movement &m : rankProgram.items)
      items.push_back(&m);
    for (int64_t cta = 0; cta < ctasPerRank; ++cta)
      queues.emplace_back(items, cta, ctasPerRank, /*kernel=*/true);
  }
  std::vector<const Movement *> receives;
  for (const auto &[rank, receive] : networkOrder(program))
    receives.push_back(receive);
  queues.emplace_back(std::move(receives), 0, 1, /*kernel=*/false);

  // A quantizing reshard's source reads (BlockLookup): amax moves max
  // |x| into slots, quantizing moves divide by their blocks' scales.
  auto runLookup = [&](const Movement &m) -> std::optional<std::string> {
    const ElementType type = program.typeOf(m.dst);
    const bool amax = m.kind == StepKind::Amax;
    const BufferRef tableRef =
        amax ? m.dst
             : BufferRef{BufferKind::Quantizer, m.src.rank, -1, m.src.tensor};
    auto from = resolve(m.src);
    auto to = resolve(m.dst);
    auto table = resolve(tableRef);
    const ElementType source = program.typeOf(m.src);
    const int64_t fromSize = elementSize(source);
    const int64_t elements = amax ? m.bytes / fromSize
                                  : m.bytes / elementSize(type);
    const std::optional<Scaling> &scaling = program.scalingOf(m.src.tensor);
    if (!scaling || !m.lookup || m.reduction ||
        m.src.kind != BufferKind::Source ||
        (amax ? m.dst.kind != BufferKind::Slots || m.bytes % fromSize
              : m.bytes % elementSize(type)))
      return "movement " + m.str(type) +
             " reads blocks outside a quantizing reshard's source";
    const BlockLookup &lookup = *m.lookup;
    if (!from || !to || !table || elements < 1 || lookup.width < 1 ||
        lookup.entry < 0 || lookup.phase < 0 || lookup.phase >= lookup.width ||
        lookup.entry >= table->second / 4 ||
        !rangeWithin(m.srcOffset, elements * fromSize, from->second) ||
        (!amax && !rangeWithin(m.dstOffset, m.bytes, to->second)) ||
        !rangeWithin(lookup.entryOf(0) * 4,
                     (lookup.entryOf(elements - 1) - lookup.entryOf(0) + 1) * 4,
                     table->second))
      return "movement " + m.str(type) + " leaves a buffer";
    const uint8_t *src = from->first + m.srcOffset;
    auto entryAt = [&](int64_t i) { return table->first + lookup.entryOf(i) * 4; };
    float entry;
    if (amax) {
      for (int64_t i = 0; i < elements; ++i) {
        std::memcpy(&entry, entryAt(i), 4);
        entry = std::fmax(entry, std::fabs(static_cast<float>(
                                     loadElement(source, src + i * fromSize))));
        std::memcpy(entryAt(i), &entry, 4);
      }
      return std::nullopt;
    }
    uint8_t *dst = to->first + m.dstOffset;
    const int64_t toSize = elementSize(type);
    for (int64_t i = 0; i < elements; ++i) {
      std::memcpy(&entry, entryAt(i), 4);
      quantizeElement(source, type, scaleFromAmax(*scaling, type, entry),
                      dst + i * toSize, src + i * fromSize);
    }
    return std::nullopt;
  };

  auto run = [&](const Movement &m) -> std::optional<std::string> {
    const ElementType type = program.typeOf(m.dst);
    if (m.isTile()) {
      auto from = resolve(m.src);
      auto to = resolve(m.dst);
      if (!from || !to || m.srcMap < 0 || m.dstMap < 0 ||
          m.srcMap >= static_cast<int64_t>(program.maps.size()) ||
          m.dstMap >= static_cast<int64_t>(program.maps.size()))
        return "tile " + m.str(type) + " names a missing buffer or map";
      const TensorMapSpec &srcMap = program.maps[m.srcMap];
      const TensorMapSpec &dstMap = program.maps[m.dstMap];
      Box fromBox{m.srcCoords, srcMap.box}, toBox{m.dstCoords, dstMap.box};
      Box fromAll{Dims(srcMap.extents.size(), 0), srcMap.extents};
      Box toAll{Dims(dstMap.extents.size(), 0), dstMap.extents};
      const int64_t size = elementSize(type);
      const std::optional<int64_t> fromBytes =
          checkedProduct(srcMap.extents, size);
      const std::optional<int64_t> toBytes =
          checkedProduct(dstMap.extents, size);
      if (!(srcMap.buffer == m.src) || !(dstMap.buffer == m.dst) ||
          srcMap.box != dstMap.box || !fromAll.contains(fromBox) ||
          !toAll.contains(toBox) || !fromBytes || !toBytes ||
          *fromBytes > from->second || *toBytes > to->second)
        return "tile " + m.str(type) + " leaves a buffer";
      moveBox(type, from->first, srcMap.extents, fromBox, to->first,
              dstMap.extents, toBox, m.reduction);
    } else if (m.bytes > 0 && (m.kind == StepKind::Amax || m.lookup)) {
      if (auto error = runLookup(m))
        return error;
    } else if (m.bytes > 0) {
      auto from = resolve(m.src);
      auto to = resolve(m.dst);
      const int64_t sourceBytes = program.sourceBytes(m);
      if (!from || !to ||
          !rangeWithin(m.srcOffset, sourceBytes, from->second) ||
          !rangeWithin(m.dstOffset, m.bytes, to->second))
        return "movement " + m.str(type) + " leaves a buffer";
      const uint8_t *src = from->first + m.srcOffset;
      uint8_t *dst = to->first + m.dstOffset;
      // Bulk and vector items compute the same: the mechanism is the
      // kernel's business.
      if (m.kind == StepKind::Scale) {
        // Amaxes into scales: f32, or e8m0 for mx.
        const int64_t toSize = elementSize(type);
        const std::optional<Scaling> &scaling = program.scalingOf(m.dst.tensor);
        // The fp8 type the tensor's scales divide into.
        const ElementType quantized = program.typeOf(
            {BufferKind::Destination, m.dst.rank, -1, m.dst.tensor});
        if (!scaling || m.reduction || m.bytes % toSize)
          return "scale move " + m.str(type) +
                 " outside a quantizing reshard, or of a partial scale";
        for (int64_t i = 0; i < m.bytes / toSize; ++i) {
          float amax;
          std::memcpy(&amax, src + i * 4, 4);
          const float scale = scaleFromAmax(*scaling, quantized, amax);
          if (toSize == 1)
            dst[i] = e8m0FromScale(scale);
          else
            std::memcpy(dst + i * 4, &scale, 4);
        }
      } else if (program.casts(m)) {
        const ElementType source = program.typeOf(m.src);
        const int64_t fromSize = elementSize(source), toSize = elementSize(type);
        if (m.reduction || m.bytes % toSize)
          return "cast " + m.str(type) + " reduces or splits an element";
        for (int64_t i = 0; i < m.bytes / toSize; ++i)
          castElement(source, type, program.scaleOf(m), dst + i * toSize,
                      src + i * fromSize);
      } else if (m.isCopy()) {
        std::memmove(dst, src, m.bytes);
      } else {
        const int64_t size = elementSize(type);
        if (m.bytes % size)
          return "reduction " + m.str(type) +
                 " is not a whole number of elements";
        if (m.accumulator) {
          // dst = accumulator ⊕ src: the accumulator's bytes at the
          // source's offset are the first operand, as the kernel combines.
          auto acc = resolve(*m.accumulator);
          if (!acc || !rangeWithin(m.srcOffset, m.bytes, acc->second))
            return "reduction " + m.str(type) + " leaves its accumulator";
          std::memmove(dst, acc->first + m.srcOffset, m.bytes);
        }
        for (int64_t at = 0; at < m.bytes; at += size)
          reduceElement(type, *m.reduction, dst + at, src + at);
      }
    }
    return std::nullopt;
  };
  // Copy-engine copies and network receives count at once.
  auto count = [&](const Movement &m) {
    if (m.signal)
      ++counters[{m.signal->rank, m.signal->index}];
    if (m.readDone)
      ++counters[{m.readDone->rank, m.readDone->index}];
  };

  // A quantizing reshard's slots start at zero (the amax of nothing):
  // amax moves only max into them.
  // (Once per slots buffer, not once per amax move.)
  std::set<std::pair<int64_t, int64_t>> cleared; // (rank, tensor).
  for (const auto &[rank, rankProgram] : program.ranks)
    for (const Movement &m : rankProgram.items)
      if (m.kind == StepKind::Amax &&
          cleared.insert({m.dst.rank, m.dst.tensor}).second)
        if (auto slots = resolve(m.dst))
          std::memset(slots->first, 0, slots->second);

  // Copy-engine copies run before each rank's kernel: before everything.
  for (const auto &[rank, rankProgram] : program.ranks)
    for (const Movement &copy : rankProgram.engineCopies) {
      if (std::optional<std::string> error = run(copy))
        return error;
      count(copy);
    }

  // A CTA's counts as its kernel makes them visible (TransferKernel.cpp):
  // signals add up while items signal one counter, reads-done while items
  // read one peer; the sums are released when the next item signals another
  // counter (reads another peer or none), before any item whose wait may
  // block, and at the CTA's end. A wait may not block when the CTA met it
  // already: one wait, on the counter the CTA last waited for, for no more
  // than it waited for then. Holding more than the kernel does would be a
  // deadlock here before it is one on the GPU.
  struct Held {
    std::optional<CounterRef> signal, read;
    uint64_t signals = 0, reads = 0;
    std::optional<CounterWait> met; // The wait last met (its first counter).
  };
  std::vector<Held> held(queues.size() - 1);
  auto releaseSignals = [&](Held &h) {
    if (h.signals)
      counters[{h.signal->rank, h.signal->index}] += h.signals;
    h.signal.reset();
    h.signals = 0;
  };
  auto releaseReads = [&](Held &h) {
    if (h.reads)
      counters[{h.read->rank, h.read->index}] += h.reads;
    h.read.reset();
    h.reads = 0;
  };
  auto hold = [&](Held &h, const Movement &m) {
    if (m.signal) {
      if (h.signal && !(*h.signal == *m.signal))
        releaseSignals(h);
      h.signal = m.signal;
      ++h.signals;
    }
    if (!m.readDone) {
      releaseReads(h);
      return;
    }
    if (h.read && !(*h.read == *m.readDone))
      releaseReads(h);
    h.read = m.readDone;
    ++h.reads;
  };

  bool progress = true;
  while (progress) {
    progress = false;
    for (size_t q = 0; q < queues.size(); ++q) {
      ItemQueue &queue = queues[q];
      const bool kernel = q < held.size();
      while (!queue.empty()) {
        // An item's instances share its waits.
        const Movement &m = queue.instance(0);
        const bool met = kernel && m.waits.size() == 1 && held[q].met &&
                         held[q].met->counter == m.waits[0].counter &&
                         m.waits[0].value <= held[q].met->value;
        if (kernel && !m.waits.empty() && !met) {
          releaseSignals(held[q]);
          releaseReads(held[q]);
        }
        bool ready = true;
        for (const CounterWait &wait : m.waits)
          ready &= counters[{wait.counter.rank, wait.counter.index}] >=
                   wait.value;
        if (!ready)
          break;
        if (kernel && !m.waits.empty() && !met)
          held[q].met = m.waits[0];
        for (int64_t j = 0; j < queue.size(); ++j) {
          const Movement &one = queue.instance(j);
          if (auto error = run(one))
            return error;
          if (kernel)
            hold(held[q], one);
          else
            count(one);
        }
        queue.pop();
        progress = true;
      }
      if (kernel && queue.empty() && (held[q].signals || held[q].reads)) {
        releaseSignals(held[q]);
        releaseReads(held[q]);
        progress = true;
      }
    }
  }
  for (auto &queue : queues)
    if (!queue.empty())
      return "deadlock: " +
             queue.instance(0).str(program.typeOf(queue.instance(0).dst)) +
             " never became ready";
  return std::nullopt;
}

} // namespace m2n
