//===- KernelTable.h - what a rank's transfer kernel walks -------*- C++ -*-===//
//
// A rank's kernel items as the runtime uploads them: one template per
// repeated movement (its first instance's KernelItem and up to two repeat
// levels) and, per walker, the visits that say which instances of which
// template it runs. The kernel materializes each instance's item from its
// template (lib/Conversion/M2NToGPU/TransferKernel.cpp); instanceItem is the
// same arithmetic on the host, which the tests hold against the expansion
// (encodeItems). The table is proportional to the movements, not to the
// bytes: a DeepSeek-V3 rank's millions of instances take a few MB.
//
// Walker w of a grid of G runs items w, w + G, w + 2G, ... of the rank's
// instance sequence (every template's instances in order, the templates in
// table order), exactly as when every instance was its own item: the order
// the compiler proved deadlock-free (ProgramOrder) is the order walked.
//
// Header-only, plain C++: the GPU test drivers build tables without
// linking m2n's libraries.
//
//===----------------------------------------------------------------------===//

#ifndef M2N_ARTIFACT_KERNELTABLE_H
#define M2N_ARTIFACT_KERNELTABLE_H

#include "m2n/Artifact/KernelABI.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

namespace m2n {

/// One repeat level of a template: `count` instances, each `srcStride` and
/// `dstStride` further than the one before (bytes; for tiles, coordinate
/// `coord` of both corners, innermost first) and, with a block lookup,
/// `entryStride` table entries further.
struct KernelLevel {
  int64_t srcStride = 0, dstStride = 0, entryStride = 0;
  uint32_t count = 1;
  int32_t coord = 0;
};
static_assert(sizeof(KernelLevel) == 32, "the kernel reads 32-byte levels");

/// A movement as the kernel reads it: its first instance's item and two
/// levels, instance i being (i / inner.count, i % inner.count). A movement
/// of one level has it as `outer` (inner.count 1: no division).
struct KernelTemplate {
  KernelItem item;
  KernelLevel outer, inner;
  uint64_t instances() const { return uint64_t{outer.count} * inner.count; }
};
static_assert(sizeof(KernelTemplate) == 192,
              "the kernel reads 192-byte templates");
static_assert(offsetof(KernelTemplate, outer) == 128 &&
                  offsetof(KernelTemplate, inner) == 160,
              "the kernel reads the levels after the item");

/// `count` instances of template `templateIndex` that one walker runs:
/// `first`, first + G, ... for a grid of G walkers.
struct KernelVisit {
  uint32_t templateIndex = 0, count = 0;
  uint64_t first = 0;
};
static_assert(sizeof(KernelVisit) == 16, "the kernel reads 16-byte visits");

/// A walker's share: its visits from `firstVisit` on, `items` instances in
/// all; and where its rank's table and epoch words are on the device, and
/// its place `index` in its rank's grid of `grid` walkers. A launch's CTA
/// finds everything through its walkers' records (the kernel's only table
/// argument), so one launch can run the walkers of several ranks: the
/// runtime merges the ranks sharing a device, a stream and a launch shape
/// into one (runtime/README.md), their walker arrays laid end to end.
struct KernelWalker {
  uint64_t firstVisit = 0, items = 0;
  uint64_t templates = 0, visits = 0, epochWords = 0; // Device addresses.
  uint32_t index = 0, grid = 0;
};
static_assert(sizeof(KernelWalker) == 48, "the kernel reads 48-byte walkers");

/// A rank's table for a grid of walkers (walkTemplates).
struct KernelTable {
  std::vector<KernelTemplate> templates;
  std::vector<KernelWalker> walkers;
  std::vector<KernelVisit> visits;
  uint64_t items = 0; // Instances of every template.

  /// The bytes uploaded: templates, walkers and visits, each part 16-byte
  /// aligned (their sizes are multiples of 16).
  uint64_t bytes() const {
    return templates.size() * sizeof(KernelTemplate) +
           walkers.size() * sizeof(KernelWalker) +
           visits.size() * sizeof(KernelVisit);
  }
};

/// Appends the templates of kernel item `movement` of `program` to
/// `templates`: one, its first instance's item (encodeItem) with its repeat
/// levels, where a block lookup folds the innermost level into the item
/// (ItemLookup::rows, as encodeItems does) and at most two levels are left;
/// with more, one template per instance of the outer ones. Refuses (a
/// message) what encodeItems refuses and levels beyond the table's fields
/// (over 2^32 - 1 instances, tile strides beyond 32 bits). Defined in
/// KernelABI.cpp (the library: drivers that only build plainTable need not
/// link it).
std::optional<std::string>
encodeTemplates(const Movement &movement, const TransferProgram &program,
                const ItemAddresses &addresses,
                std::vector<KernelTemplate> &templates);

/// The item of instance `i` of `t`, as the kernel materializes it: the
/// levels' strides added to the addresses (tiles: to the coordinates) and
/// to the block lookup's entry.
inline KernelItem instanceItem(const KernelTemplate &t, uint64_t i) {
  KernelItem item = t.item;
  const uint64_t index[2] = {t.inner.count == 1 ? i : i / t.inner.count,
                             t.inner.count == 1 ? 0 : i % t.inner.count};
  const KernelLevel *levels[2] = {&t.outer, &t.inner};
  int64_t entryDelta = 0;
  for (int l = 0; l < 2; ++l) {
    const KernelLevel &level = *levels[l];
    if (item.kind == static_cast<uint32_t>(Mechanism::Tile)) {
      item.srcCoords[level.coord] += static_cast<int32_t>(
          static_cast<int64_t>(index[l]) * level.srcStride);
      item.dstCoords[level.coord] += static_cast<int32_t>(
          static_cast<int64_t>(index[l]) * level.dstStride);
    } else {
      item.src += index[l] * static_cast<uint64_t>(level.srcStride);
      item.dst += index[l] * static_cast<uint64_t>(level.dstStride);
      entryDelta += static_cast<int64_t>(index[l]) * level.entryStride;
    }
  }
  if (item.kind != static_cast<uint32_t>(Mechanism::Tile)) {
    // The entry field of ItemLookup (unused bytes, zero, elsewhere: adding
    // zero leaves them).
    constexpr size_t at = kItemLookupOffset + offsetof(ItemLookup, entry);
    int64_t entry;
    std::memcpy(&entry, reinterpret_cast<const char *>(&item) + at, 8);
    entry += entryDelta;
    std::memcpy(reinterpret_cast<char *>(&item) + at, &entry, 8);
  }
  return item;
}

/// Fills table.walkers and table.visits for a grid of `grid` walkers from
/// table.templates: walker w visits, in template order, the instances of
/// each template that are items w, w + grid, ... of the whole sequence.
/// O(sum over templates of min(instances, grid)).
inline void walkTemplates(KernelTable &table, uint64_t grid) {
  table.walkers.assign(grid, KernelWalker{});
  table.visits.clear();
  // Visits per walker first (they are laid out walker by walker), then
  // filled in template order.
  std::vector<uint64_t> visits(grid, 0);
  auto eachVisit = [&](auto fn) {
    uint64_t start = 0; // The template's first instance in the sequence.
    for (size_t t = 0; t < table.templates.size(); ++t) {
      const uint64_t n = table.templates[t].instances();
      const uint64_t walkersIn = n < grid ? n : grid;
      for (uint64_t f = 0; f < walkersIn; ++f) {
        // Instance f is item start + f: its walker's.
        const uint64_t walker = (start + f) % grid;
        uint64_t count = (n - f + grid - 1) / grid;
        uint64_t first = f;
        while (count > 0) { // Visits of at most 2^32 - 1 instances.
          const uint64_t part = count < UINT32_MAX ? count : UINT32_MAX;
          fn(walker, static_cast<uint32_t>(t), part, first);
          first += part * grid;
          count -= part;
        }
      }
      start += n;
    }
    table.items = start;
  };
  eachVisit([&](uint64_t walker, uint32_t, uint64_t, uint64_t) {
    ++visits[walker];
  });
  uint64_t next = 0;
  for (uint64_t w = 0; w < grid; ++w) {
    table.walkers[w].firstVisit = next;
    next += visits[w];
  }
  table.visits.resize(next);
  for (uint64_t w = 0; w < grid; ++w) {
    table.walkers[w].index = static_cast<uint32_t>(w);
    table.walkers[w].grid = static_cast<uint32_t>(grid);
  }
  std::vector<uint64_t> filled(grid, 0);
  eachVisit([&](uint64_t walker, uint32_t t, uint64_t count, uint64_t first) {
    KernelVisit &visit =
        table.visits[table.walkers[walker].firstVisit + filled[walker]++];
    visit.templateIndex = t;
    visit.count = static_cast<uint32_t>(count);
    visit.first = first;
    table.walkers[walker].items += count;
  });
}

/// Points `table`'s walkers at the table uploaded to `device` (templates,
/// then walkers, then visits, as KernelTable::bytes() counts them) and at
/// the rank's two epoch words.
inline void placeWalkers(KernelTable &table, uint64_t device,
                         uint64_t epochWords) {
  const uint64_t visits = device +
                          table.templates.size() * sizeof(KernelTemplate) +
                          table.walkers.size() * sizeof(KernelWalker);
  for (KernelWalker &walker : table.walkers) {
    walker.templates = device;
    walker.visits = visits;
    walker.epochWords = epochWords;
  }
}

/// The CTAs a rank launches for `items` kernel items on a grid of `ctas`
/// CTAs of `walkersPerCta` walkers: all of them, or fewer where the rank
/// has fewer items than walkers (the first items' walkers get one item
/// each, as in the whole grid; CTAs with no item are not launched, so a
/// rank with one item, say the owner's wait for reads-done, launches one).
inline uint32_t launchedCtas(uint64_t items, uint32_t ctas,
                             uint32_t walkersPerCta) {
  const uint64_t needed = (items + walkersPerCta - 1) / walkersPerCta;
  return needed < ctas ? static_cast<uint32_t>(needed > 0 ? needed : 1) : ctas;
}

/// The kernel items of a rank's program, as its table counts them without
/// encoding it: each movement's instances, a lookup's band of rows one item
/// (foldsInnermostLevel).
inline uint64_t kernelItemCount(const RankProgram &program) {
  uint64_t items = 0;
  for (const Movement &m : program.items)
    items += static_cast<uint64_t>(m.instances()) /
             (foldsInnermostLevel(m)
                  ? static_cast<uint64_t>(m.repeats.back().count)
                  : 1);
  return items;
}

/// The reads-done counters of `ranks` that only count reads by `ranks`
/// (Movement::readDone of their items and copy-engine reports, never a
/// signal), in a program without network steps: where those ranks run as
/// one kernel launch, the kernel's end orders every such read before what
/// the stream runs next, so the waits for them are met by the launch
/// itself. Empty where the program has network steps (reads outside any
/// kernel).
inline std::vector<CounterRef>
readsDoneWithin(const TransferProgram &program,
                const std::vector<int64_t> &ranks) {
  auto inRanks = [&](int64_t rank) {
    return std::find(ranks.begin(), ranks.end(), rank) != ranks.end();
  };
  for (const auto &[rank, rankProgram] : program.ranks)
    if (!rankProgram.receives.empty())
      return {};
  // Counter -> whether only `ranks` read through it; counters signalled.
  std::vector<std::pair<CounterRef, bool>> readers;
  std::vector<CounterRef> signalled;
  for (const auto &[rank, rankProgram] : program.ranks)
    for (const std::vector<Movement> *movements :
         {&rankProgram.items, &rankProgram.engineCopies}) {
      for (const Movement &m : *movements) {
        if (m.signal)
          signalled.push_back(*m.signal);
        if (!m.readDone)
          continue;
        auto it = std::find_if(readers.begin(), readers.end(),
                               [&](auto &r) { return r.first == *m.readDone; });
        if (it == readers.end())
          it = readers.insert(readers.end(), {*m.readDone, true});
        it->second = it->second && inRanks(rank);
      }
    }
  std::vector<CounterRef> within;
  for (const auto &[counter, onlyRanks] : readers)
    if (onlyRanks && inRanks(counter.rank) &&
        std::find(signalled.begin(), signalled.end(), counter) ==
            signalled.end())
      within.push_back(counter);
  return within;
}

/// `templates` with every wait on a counter at an address of `met`
/// removed (the other wait, if any, moved first): what a launch runs whose
/// end meets those waits (readsDoneWithin).
inline std::vector<KernelTemplate>
withoutWaitsOn(std::vector<KernelTemplate> templates,
               const std::vector<uint64_t> &met) {
  auto isMet = [&](uint64_t counter) {
    return counter && std::find(met.begin(), met.end(), counter) != met.end();
  };
  for (KernelTemplate &t : templates) {
    KernelItem &item = t.item;
    if (isMet(item.wait1))
      item.wait1 = item.value1 = 0;
    if (isMet(item.wait0)) {
      item.wait0 = item.wait1;
      item.value0 = item.value1;
      item.wait1 = item.value1 = 0;
    }
  }
  return templates;
}

/// Walks `table` for a rank's launch of `ctas` CTAs of `walkersPerCta`
/// walkers and returns the CTAs to launch (launchedCtas). A rank launches
/// the same CTAs every time: the kernel's last CTA advances the epoch by
/// counting them.
inline uint32_t walkRankTable(KernelTable &table, uint32_t ctas,
                              uint32_t walkersPerCta) {
  uint64_t items = 0;
  for (const KernelTemplate &t : table.templates)
    items += t.instances();
  const uint32_t launched = launchedCtas(items, ctas, walkersPerCta);
  walkTemplates(table, uint64_t{launched} * walkersPerCta);
  return launched;
}

/// The items walker `walker` of `table` runs, in order, materialized
/// (what the kernel does, on the host: tests).
inline std::vector<KernelItem> walkerItems(const KernelTable &table,
                                           uint64_t walker) {
  std::vector<KernelItem> items;
  const KernelWalker &w = table.walkers[walker];
  const uint64_t grid = w.grid; // The kernel's stride, from the record.
  for (uint64_t v = w.firstVisit; items.size() < w.items; ++v) {
    const KernelVisit &visit = table.visits[v];
    for (uint32_t j = 0; j < visit.count; ++j)
      items.push_back(instanceItem(table.templates[visit.templateIndex],
                                   visit.first + uint64_t{j} * grid));
  }
  return items;
}

/// A table of plain items (no repeats) for a grid of `grid` walkers: what
/// hand-built tables (the GPU test drivers) launch.
inline KernelTable plainTable(const std::vector<KernelItem> &items,
                              uint64_t grid) {
  KernelTable table;
  table.templates.resize(items.size());
  for (size_t i = 0; i < items.size(); ++i)
    table.templates[i].item = items[i];
  walkTemplates(table, grid);
  return table;
}

} // namespace m2n

#endif // M2N_ARTIFACT_KERNELTABLE_H
