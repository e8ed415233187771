//===- HostExecutor.cpp - run transfer programs on host memory --------------===//

#include "HostExecutor.h"

#include "m2n/Base/CheckedMath.h"

#include <cstring>
#include <deque>
#include <map>
#include <new>

namespace m2n {

std::optional<std::string> executeProgram(const TransferProgram &program,
                                          const BufferResolver &resolve,
                                          int64_t ctasPerRank) {
  if (ctasPerRank < 1)
    return std::string("a rank needs at least one CTA");
  // Repeated movements run as their instances, dealt to CTAs one by one
  // as the kernel's items are.
  for (const auto &[rank, rankProgram] : program.ranks)
    for (const auto *movements : {&rankProgram.items, &rankProgram.receives})
      for (const Movement &m : *movements)
        if (!m.repeats.empty()) {
          TransferProgram expanded;
          try {
            expanded = program;
            expandRepeats(expanded);
          } catch (const std::bad_alloc &) {
            return "not enough host memory to expand the program's " +
                   std::to_string(program.itemCount()) + " items";
          }
          return executeProgram(expanded, resolve, ctasPerRank);
        }
  std::map<std::pair<int64_t, int64_t>, uint64_t> counters;
  // Queues: per rank, ctasPerRank item queues; one queue of every network
  // receive in the order the runtime posts them, as on one GPU (one
  // stream).
  std::vector<std::deque<const Movement *>> queues;
  for (const auto &[rank, rankProgram] : program.ranks) {
    size_t first = queues.size();
    queues.resize(first + ctasPerRank);
    for (size_t i = 0; i < rankProgram.items.size(); ++i)
      queues[first + i % ctasPerRank].push_back(&rankProgram.items[i]);
  }
  queues.emplace_back();
  for (const auto &[rank, receive] : networkOrder(program))
    queues.back().push_back(receive);

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
      if (program.casts(m)) {
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
        for (int64_t at = 0; at < m.bytes; at += size)
          reduceElement(type, *m.reduction, dst + at, src + at);
      }
    }
    if (m.signal)
      ++counters[{m.signal->rank, m.signal->index}];
    if (m.readDone)
      ++counters[{m.readDone->rank, m.readDone->index}];
    return std::nullopt;
  };

  // Copy-engine copies run before each rank's kernel: before everything.
  for (const auto &[rank, rankProgram] : program.ranks)
    for (const Movement &copy : rankProgram.engineCopies)
      if (std::optional<std::string> error = run(copy))
        return error;

  bool progress = true;
  while (progress) {
    progress = false;
    for (auto &queue : queues) {
      while (!queue.empty()) {
        const Movement &m = *queue.front();
        bool ready = true;
        for (const CounterWait &wait : m.waits)
          ready &= counters[{wait.counter.rank, wait.counter.index}] >=
                   wait.value;
        if (!ready)
          break;
        if (auto error = run(m))
          return error;
        queue.pop_front();
        progress = true;
      }
    }
  }
  for (const auto &queue : queues)
    if (!queue.empty())
      return "deadlock: " +
             queue.front()->str(program.typeOf(queue.front()->dst)) +
             " never became ready";
  return std::nullopt;
}

} // namespace m2n
