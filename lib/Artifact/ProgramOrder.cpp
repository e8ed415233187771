//===- ProgramOrder.cpp - a program's writes and reads, proven ordered -----===//
//
// What a program's counters must guarantee, checked byte by byte: every
// destination byte written by exactly one copy (or a reduction with an
// accumulator, which writes its bytes whole), every reduction after the
// copy it reduces into (and a non-atomic one ordered against every other
// reduction of its bytes), every read of a destination or scratch byte
// after everything that writes it, and no cycle of waits. "After" is the
// happens-before order of the waits: a move that waits for a counter runs
// after every move that adds to it (a wait's value is all one execution
// adds: checkTransferProgram), and a rank's copy-engine copies run before
// its kernel. The order the runtime happens to run items in (list order,
// one CTA) orders nothing: CTAs and walkers run concurrently.
//
//===----------------------------------------------------------------------===//

#include "m2n/Artifact/Program.h"

#include <algorithm>
#include <map>
#include <numeric>
#include <unordered_map>

namespace m2n {

namespace {

using List = ProgramIssue::List;

/// A movement of the program: its rank, list and index there.
struct Node {
  int64_t rank;
  List list;
  size_t index;
  const Movement *movement;
};

/// Bytes [begin, end) of a buffer that a movement (a node) reads or writes.
struct Run {
  int64_t begin, end;
  uint32_t node;
};

/// How a movement changes the bytes it writes.
enum class WriteKind : uint8_t { Copy, AtomicReduction, VectorReduction };

struct Write {
  int64_t begin, end;
  uint32_t node;
  WriteKind kind;
};

/// The buffer a run lies in, as an ordered key.
using BufferKey = std::tuple<int, int64_t, int64_t, int64_t>;
BufferKey keyOf(const BufferRef &buffer) {
  return {static_cast<int>(buffer.kind), buffer.rank, buffer.scratch,
          buffer.tensor};
}

/// Calls fn(begin, end) for the contiguous byte runs of the box at `corner`
/// of `sizes` in a row-major buffer of `extents` with `elementBytes`
/// elements: trailing dimensions the box spans whole merge into one run.
template <typename Fn>
void forEachRun(const Dims &extents, const Dims &corner, const Dims &sizes,
                int64_t elementBytes, Fn fn) {
  const int64_t rank = extents.size();
  if (rank == 0) {
    fn(0, elementBytes);
    return;
  }
  for (int64_t d = 0; d < rank; ++d)
    if (sizes[d] == 0)
      return;
  // Dimensions from `inner` on form one run per position of the others.
  int64_t inner = rank - 1;
  while (inner > 0 && sizes[inner] == extents[inner] && corner[inner] == 0)
    --inner;
  int64_t runElements = sizes[inner];
  for (int64_t d = inner + 1; d < rank; ++d)
    runElements *= extents[d];
  std::vector<int64_t> stride(rank, 1);
  for (int64_t d = rank - 2; d >= 0; --d)
    stride[d] = stride[d + 1] * extents[d + 1];
  std::vector<int64_t> at(inner, 0);
  while (true) {
    int64_t offset = corner[inner] * stride[inner];
    for (int64_t d = 0; d < inner; ++d)
      offset += (corner[d] + at[d]) * stride[d];
    fn(offset * elementBytes, (offset + runElements) * elementBytes);
    int64_t d = inner - 1;
    while (d >= 0 && ++at[d] == sizes[d])
      at[d--] = 0;
    if (d < 0)
      return;
  }
}

/// Calls fn(begin, end) for the byte runs a (non-tile) movement of `bytes`
/// at `offset` covers in one buffer over its repeats (outermost first, with
/// `strideOf` their strides in that buffer): inner levels whose instances
/// abut merge into one run, levels of stride 0 (reading the same bytes
/// again) add none, and only the rest are expanded.
template <typename Fn>
void forEachRepeatedRun(int64_t offset, int64_t bytes,
                        const Repeats &repeats,
                        int64_t Repeat::*strideOf, Fn fn) {
  std::vector<const Repeat *> levels;
  for (const Repeat &r : repeats)
    if (r.count > 1 && r.*strideOf != 0)
      levels.push_back(&r);
  int64_t length = bytes;
  while (!levels.empty() && levels.back()->*strideOf == length) {
    length *= levels.back()->count;
    levels.pop_back();
  }
  std::vector<int64_t> index(levels.size(), 0);
  while (true) {
    int64_t at = offset;
    for (size_t l = 0; l < levels.size(); ++l)
      at += index[l] * (levels[l]->*strideOf);
    fn(at, at + length);
    size_t l = levels.size();
    while (l > 0 && ++index[l - 1] == levels[l - 1]->count)
      index[--l] = 0;
    if (l == 0)
      return;
  }
}

class OrderCheck {
public:
  OrderCheck(const TransferProgram &program, const Layout &src,
             const Layout &dst, const std::vector<int64_t> &shape)
      : program(program), src(src), dst(dst), shape(shape) {}

  std::optional<ProgramIssue> run();

private:
  const TransferProgram &program;
  const Layout &src, &dst;
  const std::vector<int64_t> &shape;

  std::vector<Node> nodes;
  /// Counters, numbered: (rank, index) -> id; per counter the nodes that
  /// add to it; per node the counters it waits for. Each rank's kernel
  /// also waits for a counter its copy-engine copies add to.
  std::map<std::pair<int64_t, int64_t>, uint32_t> counterIds;
  std::vector<std::vector<uint32_t>> addersOf;
  std::vector<std::vector<uint32_t>> waitsOf;
  std::map<BufferKey, std::vector<Write>> writes;
  std::map<BufferKey, std::vector<Run>> reads;
  std::map<BufferKey, BufferRef> buffers;
  /// The search of happensBefore that last reached each node and counter.
  std::vector<uint32_t> nodeStamp, counterStamp;
  uint32_t stamp = 0;

  uint32_t counterId(int64_t rank, int64_t index) {
    auto [it, inserted] = counterIds.try_emplace(
        {rank, index}, static_cast<uint32_t>(addersOf.size()));
    if (inserted)
      addersOf.emplace_back();
    return it->second;
  }

  void collect();
  std::optional<ProgramIssue> checkCycles();
  std::optional<ProgramIssue> checkPeerAccessesEnd();
  bool happensBefore(uint32_t earlier, uint32_t later);
  template <typename Fn>
  bool searchAncestors(std::vector<uint32_t> stack, Fn reached);
  ProgramIssue issue(uint32_t node, const std::string &detail) const;
  std::string name(uint32_t node) const;
};

std::string OrderCheck::name(uint32_t node) const {
  const Node &n = nodes[node];
  return "rank " + std::to_string(n.rank) + ": " +
         (n.list == List::EngineCopies ? "copy-engine copy " : "") +
         n.movement->str(program.type);
}

ProgramIssue OrderCheck::issue(uint32_t node, const std::string &detail) const {
  ProgramIssue issue;
  const Node &n = nodes[node];
  issue.rank = n.rank;
  issue.list = n.list;
  issue.index = n.index;
  issue.detail = detail;
  issue.message = name(node) + " " + detail;
  return issue;
}

void OrderCheck::collect() {
  std::map<int64_t, uint32_t> engineDone;
  for (const auto &[rank, rankProgram] : program.ranks)
    if (!rankProgram.engineCopies.empty())
      engineDone[rank] = counterId(rank, -1);
  for (const auto &[rank, rankProgram] : program.ranks) {
    const std::pair<List, const std::vector<Movement> *> lists[] = {
        {List::Items, &rankProgram.items},
        {List::Receives, &rankProgram.receives},
        {List::EngineCopies, &rankProgram.engineCopies}};
    for (auto [list, movements] : lists)
      for (size_t index = 0; index < movements->size(); ++index) {
        const Movement &repeated = (*movements)[index];
        const auto node = static_cast<uint32_t>(nodes.size());
        nodes.push_back({rank, list, index, &repeated});
        waitsOf.emplace_back();
        for (const CounterWait &wait : repeated.waits)
          waitsOf.back().push_back(
              counterId(wait.counter.rank, wait.counter.index));
        if (list == List::Items) {
          auto engine = engineDone.find(rank);
          if (engine != engineDone.end())
            waitsOf.back().push_back(engine->second);
        }
        if (repeated.signal)
          addersOf[counterId(repeated.signal->rank, repeated.signal->index)]
              .push_back(node);
        if (repeated.readDone)
          addersOf[counterId(repeated.readDone->rank,
                             repeated.readDone->index)]
              .push_back(node);
        if (list == List::EngineCopies)
          addersOf[engineDone.at(rank)].push_back(node);
        if (repeated.bytes <= 0 && !repeated.isTile())
          continue; // A join moves nothing.
        // A reduction with an accumulator writes its bytes whole (from its
        // two operands): it is their copy, which other reductions follow.
        const WriteKind kind =
            !repeated.reduction || repeated.accumulator ? WriteKind::Copy
            : repeated.mechanism == Mechanism::Vector
                ? WriteKind::VectorReduction
                : WriteKind::AtomicReduction;
        buffers.try_emplace(keyOf(repeated.dst), repeated.dst);
        buffers.try_emplace(keyOf(repeated.src), repeated.src);
        std::vector<Write> &writesTo = writes[keyOf(repeated.dst)];
        // Sources are never written (checkTransferProgram): reads of them
        // need no order.
        std::vector<Run> *readsOf = repeated.src.kind == BufferKind::Source
                                        ? nullptr
                                        : &reads[keyOf(repeated.src)];
        // A quantizing reshard's lookups: an amax move max-combines into
        // the slots its lookup names, a quantizing move reads its source
        // rank's quantizer table there; per instance, the entries of its
        // run.
        if (repeated.lookup) {
          const bool amax = repeated.kind == StepKind::Amax;
          const BufferRef table =
              amax ? repeated.dst
                   : BufferRef{BufferKind::Quantizer, repeated.src.rank, -1,
                               repeated.src.tensor};
          buffers.try_emplace(keyOf(table), table);
          const int64_t elements =
              repeated.bytes /
              elementSize(program.typeOf(amax ? repeated.src : repeated.dst));
          std::vector<Write> *into = amax ? &writes[keyOf(table)] : nullptr;
          std::vector<Run> *from = amax ? nullptr : &reads[keyOf(table)];
          repeated.forEachInstance([&](const Movement &one) {
            const int64_t begin = one.lookup->entryOf(0) * 4;
            const int64_t end = (one.lookup->entryOf(elements - 1) + 1) * 4;
            if (into)
              into->push_back({begin, end, node, WriteKind::AtomicReduction});
            else
              from->push_back({begin, end, node});
          });
          if (amax)
            continue;
        }
        if (!repeated.isTile()) {
          forEachRepeatedRun(repeated.dstOffset, repeated.bytes,
                             repeated.repeats, &Repeat::dstStride,
                             [&](int64_t begin, int64_t end) {
                               writesTo.push_back({begin, end, node, kind});
                             });
          if (readsOf)
            forEachRepeatedRun(repeated.srcOffset,
                               program.sourceBytes(repeated), repeated.repeats,
                               &Repeat::srcStride,
                               [&](int64_t begin, int64_t end) {
                                 readsOf->push_back({begin, end, node});
                               });
          continue;
        }
        // Tiles: every instance's box, its coordinates moved along the
        // repeats' dimensions; inner levels whose boxes abut merge into one
        // larger box (fewer, longer runs).
        auto tileRuns = [&](const TensorMapSpec &map, const Dims &corner,
                            int64_t Repeat::*strideOf, int64_t bytes,
                            auto fn) {
          Dims box = map.box;
          std::vector<const Repeat *> levels;
          for (const Repeat &r : repeated.repeats)
            if (r.count > 1 && r.*strideOf != 0)
              levels.push_back(&r);
          while (!levels.empty() &&
                 levels.back()->*strideOf == box[levels.back()->dim]) {
            box[levels.back()->dim] *= levels.back()->count;
            levels.pop_back();
          }
          std::vector<int64_t> at(levels.size(), 0);
          Dims from = corner;
          while (true) {
            for (size_t d = 0; d < from.size(); ++d)
              from[d] = corner[d];
            for (size_t l = 0; l < levels.size(); ++l)
              from[levels[l]->dim] += at[l] * (levels[l]->*strideOf);
            forEachRun(map.extents, from, box, bytes, fn);
            size_t l = levels.size();
            while (l > 0 && ++at[l - 1] == levels[l - 1]->count)
              at[--l] = 0;
            if (l == 0)
              return;
          }
        };
        tileRuns(program.maps[repeated.dstMap], repeated.dstCoords,
                 &Repeat::dstStride,
                 elementSize(program.typeOf(repeated.dst)),
                 [&](int64_t begin, int64_t end) {
                   writesTo.push_back({begin, end, node, kind});
                 });
        if (readsOf)
          tileRuns(program.maps[repeated.srcMap], repeated.srcCoords,
                   &Repeat::srcStride,
                   elementSize(program.typeOf(repeated.src)),
                   [&](int64_t begin, int64_t end) {
                     readsOf->push_back({begin, end, node});
                   });
      }
  }
}

std::optional<ProgramIssue> OrderCheck::checkCycles() {
  // Kahn's algorithm over movements and counters: a counter is reached
  // once every movement adding to it ran, a movement once every counter it
  // waits for is reached.
  const size_t counters = addersOf.size();
  std::vector<uint32_t> pendingCounter(counters), pendingNode(nodes.size());
  std::vector<std::vector<uint32_t>> waitersOf(counters);
  for (size_t c = 0; c < counters; ++c)
    pendingCounter[c] = addersOf[c].size();
  std::vector<uint32_t> ready;
  for (uint32_t n = 0; n < nodes.size(); ++n) {
    pendingNode[n] = waitsOf[n].size();
    for (uint32_t c : waitsOf[n])
      waitersOf[c].push_back(n);
    if (!pendingNode[n])
      ready.push_back(n);
  }
  std::vector<uint32_t> readyCounters;
  for (uint32_t c = 0; c < counters; ++c)
    if (!pendingCounter[c])
      readyCounters.push_back(c);
  size_t ran = 0;
  while (!ready.empty() || !readyCounters.empty()) {
    while (!readyCounters.empty()) {
      uint32_t c = readyCounters.back();
      readyCounters.pop_back();
      for (uint32_t n : waitersOf[c])
        if (--pendingNode[n] == 0)
          ready.push_back(n);
    }
    while (!ready.empty()) {
      uint32_t n = ready.back();
      ready.pop_back();
      ++ran;
      const Movement &m = *nodes[n].movement;
      auto added = [&](const std::optional<CounterRef> &counter) {
        if (!counter)
          return;
        uint32_t c = counterIds.at({counter->rank, counter->index});
        if (--pendingCounter[c] == 0)
          readyCounters.push_back(c);
      };
      added(m.signal);
      added(m.readDone);
      if (nodes[n].list == List::EngineCopies) {
        uint32_t c = counterIds.at({nodes[n].rank, -1});
        if (--pendingCounter[c] == 0)
          readyCounters.push_back(c);
      }
    }
  }
  if (ran == nodes.size())
    return std::nullopt;
  for (uint32_t n = 0; n < nodes.size(); ++n)
    if (pendingNode[n])
      return issue(n, "never runs: its waits depend on each other in a "
                      "cycle (or on a move that never runs)");
  return std::nullopt;
}

/// Between executions: a rank's stream passes its execution once its
/// kernel ends, and then its next execution, or the caller, may overwrite
/// its buffers. So every kernel item or copy-engine copy that reads or
/// writes another rank's buffer must happen before one of that rank's
/// kernel items (its read-done counter, which the owner's last item waits
/// for). Network receives are exempt: NCCL orders the send on the sender's
/// stream.
std::optional<ProgramIssue> OrderCheck::checkPeerAccessesEnd() {
  // The peer accesses, by the rank whose buffer they touch.
  std::map<int64_t, std::vector<uint32_t>> accessesOf;
  for (uint32_t n = 0; n < nodes.size(); ++n) {
    const Node &node = nodes[n];
    const Movement &m = *node.movement;
    if (node.list == List::Receives || (m.bytes <= 0 && !m.isTile()))
      continue;
    if (m.src.rank != node.rank)
      accessesOf[m.src.rank].push_back(n);
    if (m.dst.rank != node.rank && m.dst.rank != m.src.rank)
      accessesOf[m.dst.rank].push_back(n);
  }
  if (accessesOf.empty())
    return std::nullopt;
  for (const auto &[owner, accesses] : accessesOf) {
    // The ancestors of the owner's kernel items: one search from all.
    std::vector<uint32_t> ownerItems;
    for (uint32_t n = 0; n < nodes.size(); ++n)
      if (nodes[n].rank == owner && nodes[n].list == List::Items)
        ownerItems.push_back(n);
    searchAncestors(std::move(ownerItems), [](uint32_t) { return false; });
    for (uint32_t n : accesses)
      if (nodeStamp[n] != stamp) {
        const Movement &m = *nodes[n].movement;
        const BufferRef &buffer = m.src.rank == owner ? m.src : m.dst;
        return issue(n, std::string(m.src.rank == owner ? "reads " : "writes ") +
                            buffer.str() + ", but no kernel item of rank " +
                            std::to_string(owner) +
                            " waits for it (a read-done counter of rank " +
                            std::to_string(owner) +
                            "): once rank " + std::to_string(owner) +
                            "'s execution ends, its next one or its caller "
                            "may overwrite the bytes while this move still "
                            "uses them");
      }
  }
  return std::nullopt;
}

bool OrderCheck::happensBefore(uint32_t earlier, uint32_t later) {
  if (earlier == later)
    return false;
  // Directly: `later` waits for a counter `earlier` adds to.
  for (uint32_t c : waitsOf[later])
    for (uint32_t adder : addersOf[c])
      if (adder == earlier)
        return true;
  // Through other moves: a search of `later`'s ancestors.
  return searchAncestors({later},
                         [&](uint32_t node) { return node == earlier; });
}

/// Marks (nodeStamp == stamp) the nodes in `stack` and every node that
/// happens before one of them, calling reached(node) for each node found
/// beyond the start; stops and answers true once reached() does.
template <typename Fn>
bool OrderCheck::searchAncestors(std::vector<uint32_t> stack, Fn reached) {
  if (nodeStamp.empty()) {
    nodeStamp.assign(nodes.size(), 0);
    counterStamp.assign(addersOf.size(), 0);
  }
  ++stamp;
  for (uint32_t n : stack)
    nodeStamp[n] = stamp;
  while (!stack.empty()) {
    uint32_t n = stack.back();
    stack.pop_back();
    for (uint32_t c : waitsOf[n]) {
      if (counterStamp[c] == stamp)
        continue;
      counterStamp[c] = stamp;
      for (uint32_t adder : addersOf[c]) {
        if (nodeStamp[adder] == stamp)
          continue;
        if (reached(adder))
          return true;
        nodeStamp[adder] = stamp;
        stack.push_back(adder);
      }
    }
  }
  return false;
}

std::string bytesOf(const BufferRef &buffer, int64_t begin, int64_t end) {
  return "bytes [" + std::to_string(begin) + ", " + std::to_string(end) +
         ") of " + buffer.str();
}

std::optional<ProgramIssue> OrderCheck::run() {
  // A repeated move that writes the same bytes again at every instance (a
  // zero stride) is refused without expanding it; the rest is expanded,
  // up to a bound far beyond what a reshard lowers to.
  int64_t instances = 0;
  for (const auto &[rank, rankProgram] : program.ranks)
    for (const auto *movements : {&rankProgram.items, &rankProgram.receives})
      for (size_t index = 0; index < movements->size(); ++index) {
        const Movement &m = (*movements)[index];
        instances += m.instances();
        // (An amax move maxes into the same slot again: it is atomic.)
        if ((m.bytes <= 0 && !m.isTile()) || m.kind == StepKind::Amax)
          continue;
        for (const Repeat &r : m.repeats)
          if (r.count > 1 && r.dstStride == 0) {
            ProgramIssue again;
            again.rank = rank;
            again.list = movements == &rankProgram.items ? List::Items
                                                         : List::Receives;
            again.index = index;
            again.detail = "writes the same bytes " + std::to_string(r.count) +
                           " times (a repeat of destination stride 0): "
                           "every byte is written once";
            again.message = "rank " + std::to_string(rank) + ": " +
                            m.str(program.type) + " " + again.detail;
            return again;
          }
      }
  if (instances > kMaxOrderedInstances) {
    ProgramIssue large;
    large.message = "the program has " + std::to_string(instances) +
                    " move instances, more than the " +
                    std::to_string(kMaxOrderedInstances) +
                    " whose order m2n proves";
    return large;
  }
  collect();
  if (std::optional<ProgramIssue> cycle = checkCycles())
    return cycle;

  const int64_t typeBytes = elementSize(program.type);
  // Every destination buffer is checked, written or not, and so is every
  // scale buffer of a quantizing reshard.
  const BufferShapes shapeOf(src, dst, shape, program.scratches,
                             program.scaling);
  for (int64_t i = 0; i < dst.mesh.size(); ++i)
    for (BufferKind kind : {BufferKind::Destination, BufferKind::Scales}) {
      if (kind == BufferKind::Scales && !program.scaling)
        continue;
      BufferRef buffer{kind, dst.mesh.rankAt(i)};
      buffers.try_emplace(keyOf(buffer), buffer);
      writes[keyOf(buffer)];
    }
  // A memo of proven orders, by (earlier, later).
  std::unordered_map<uint64_t, bool> ordered;
  auto before = [&](uint32_t earlier, uint32_t later) {
    if (earlier == later)
      return false;
    for (uint32_t c : waitsOf[later]) // The common case, without the memo.
      for (uint32_t adder : addersOf[c])
        if (adder == earlier)
          return true;
    auto [it, inserted] = ordered.try_emplace(
        (uint64_t{earlier} << 32) | later, false);
    if (inserted)
      it->second = happensBefore(earlier, later);
    return it->second;
  };
  for (auto &[key, list] : writes) {
    const BufferRef &buffer = buffers.at(key);
    std::vector<Write> copies, reductions;
    for (const Write &w : list)
      if (w.end > w.begin)
        (w.kind == WriteKind::Copy ? copies : reductions).push_back(w);
    auto byBegin = [](const auto &a, const auto &b) {
      return std::tie(a.begin, a.end) < std::tie(b.begin, b.end);
    };
    std::sort(copies.begin(), copies.end(), byBegin);
    std::sort(reductions.begin(), reductions.end(), byBegin);
    for (size_t i = 1; i < copies.size(); ++i)
      if (copies[i].begin < copies[i - 1].end)
        return issue(copies[i].node,
                     "copies onto " +
                         bytesOf(buffer, copies[i].begin,
                                 std::min(copies[i].end, copies[i - 1].end)) +
                         ", which " + name(copies[i - 1].node) +
                         " copies onto too: every byte is written once");
    if (buffer.kind == BufferKind::Destination ||
        buffer.kind == BufferKind::Scales) {
      // Which destination bytes exist: the rank's part of the output (or
      // the scales of its blocks).
      std::optional<int64_t> index = dst.mesh.indexOf(buffer.rank);
      int64_t bytes = 0;
      if (index && buffer.kind == BufferKind::Destination)
        bytes = dst.localBox(shape, *index).volume() * typeBytes;
      else if (index)
        bytes = shapeOf.blocksOf(buffer)->volume() *
                elementSize(program.typeOf(buffer));
      int64_t covered = 0;
      for (const Write &copy : copies) {
        if (copy.begin > covered)
          break;
        covered = std::max(covered, copy.end);
      }
      if (covered < bytes) {
        int64_t next = bytes;
        for (const Write &copy : copies)
          if (copy.begin >= covered) {
            next = std::min(next, copy.begin);
            break;
          }
        ProgramIssue missing;
        missing.message = "no move copies " + bytesOf(buffer, covered, next) +
                          (buffer.kind == BufferKind::Scales
                               ? ": every scale is written once"
                               : ": every destination byte is written once");
        return missing;
      }
    }
    // The first copy that ends after `begin` (copies are disjoint: sorted
    // by begin, their ends ascend too).
    auto copiesFrom = [&](int64_t begin) {
      return std::partition_point(
          copies.begin(), copies.end(),
          [&](const Write &w) { return w.end <= begin; });
    };
    // Over the copies of [begin, end): the first that `node` does not come
    // after, else where they stop covering the range (`end`: all of it).
    struct Cover {
      const Write *unordered;
      int64_t covered;
    };
    auto coverOf = [&](int64_t begin, int64_t end, uint32_t node) -> Cover {
      int64_t at = begin;
      for (auto copy = copiesFrom(begin);
           copy != copies.end() && copy->begin < end; ++copy) {
        if (copy->begin > at)
          break;
        if (!before(copy->node, node))
          return {&*copy, at};
        at = copy->end;
      }
      return {nullptr, at};
    };
    // Reductions: after the copies of their bytes, all of them there; a
    // vector reduction (load, combine, store) ordered against every other
    // reduction of its bytes.
    std::vector<int64_t> reach(reductions.size());
    for (size_t i = 0; i < reductions.size(); ++i)
      reach[i] = std::max(i ? reach[i - 1] : 0, reductions[i].end);
    // Slots start at zero every execution (the runtime clears them): amax
    // moves max into them with no copy first, and their readers need only
    // wait for those.
    const bool zeroed = buffer.kind == BufferKind::Slots;
    for (size_t i = 0; i < reductions.size(); ++i) {
      const Write &r = reductions[i];
      const Cover cover =
          zeroed ? Cover{nullptr, r.end} : coverOf(r.begin, r.end, r.node);
      if (const Write *copy = cover.unordered)
        return issue(r.node, "reduces onto " +
                                 bytesOf(buffer, std::max(r.begin, copy->begin),
                                         std::min(r.end, copy->end)) +
                                 " without waiting for " + name(copy->node) +
                                 ", which copies them first");
      if (cover.covered < r.end)
        return issue(r.node, "reduces onto " +
                                 bytesOf(buffer, cover.covered, r.end) +
                                 ", which no move copies first");
      for (size_t j = i + 1; j < reductions.size() &&
                             reductions[j].begin < r.end;
           ++j) {
        const Write &other = reductions[j];
        if (r.kind != WriteKind::VectorReduction &&
            other.kind != WriteKind::VectorReduction)
          continue;
        if (other.node == r.node || before(r.node, other.node) ||
            before(other.node, r.node))
          continue;
        const bool laterVector = other.kind == WriteKind::VectorReduction;
        return issue(laterVector ? other.node : r.node,
                     "reduces on the SM path (load, combine, store) onto " +
                         bytesOf(buffer, other.begin,
                                 std::min(r.end, other.end)) +
                         ", which " + name(laterVector ? r.node : other.node) +
                         " reduces onto too, and neither waits for the other");
      }
    }
    // Reads of these bytes: after every write of them.
    auto readsIt = reads.find(key);
    if (readsIt == reads.end())
      continue;
    for (const Run &read : readsIt->second) {
      if (read.end <= read.begin)
        continue;
      const Cover cover = zeroed ? Cover{nullptr, read.end}
                                 : coverOf(read.begin, read.end, read.node);
      if (const Write *copy = cover.unordered)
        return issue(read.node,
                     "reads " +
                         bytesOf(buffer, std::max(read.begin, copy->begin),
                                 std::min(read.end, copy->end)) +
                         " without waiting for " + name(copy->node) +
                         ", which writes them");
      if (cover.covered < read.end)
        return issue(read.node, "reads " +
                                    bytesOf(buffer, cover.covered, read.end) +
                                    ", which no move writes");
      auto first = std::partition_point(
          reach.begin(), reach.end(),
          [&](int64_t end) { return end <= read.begin; });
      for (size_t j = first - reach.begin();
           j < reductions.size() && reductions[j].begin < read.end; ++j) {
        const Write &r = reductions[j];
        if (r.end <= read.begin || before(r.node, read.node))
          continue;
        return issue(read.node,
                     "reads " +
                         bytesOf(buffer, std::max(read.begin, r.begin),
                                 std::min(read.end, r.end)) +
                         " without waiting for " + name(r.node) +
                         ", which reduces onto them");
      }
    }
  }
  // Reads of buffers nothing writes.
  for (const auto &[key, list] : reads) {
    if (writes.count(key))
      continue;
    for (const Run &read : list)
      if (read.end > read.begin)
        return issue(read.node,
                     "reads " + bytesOf(buffers.at(key), read.begin, read.end) +
                         ", which no move writes");
  }
  // Last: within one execution everything is ordered; now between them.
  return checkPeerAccessesEnd();
}

} // namespace

std::optional<ProgramIssue>
checkProgramOrder(const TransferProgram &program, const Layout &src,
                  const Layout &dst, const std::vector<int64_t> &shape) {
  return OrderCheck(program, src, dst, shape).run();
}

} // namespace m2n
