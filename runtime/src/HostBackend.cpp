//===- HostBackend.cpp - the host backend ---------------------------------===//
//
// Groups run on host memory by the host executor (m2n/Artifact/HostExecutor.h),
// the programs' semantics the GPU kernel implements: the reference every
// backend is checked against. Every rank runs in this process; a launch runs
// the group to completion.
//
//===----------------------------------------------------------------------===//

#include "Backend.h"

#include "m2n/Artifact/HostExecutor.h"

#include <algorithm>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include <unistd.h>

namespace m2n::runtime {

namespace {

/// Bytes of rank `rank`'s local part of `layout` (the reshard's source or
/// destination).
int64_t bufferBytes(const m2n::CompiledReshard &r, const m2n::Layout &layout,
                    int rank) {
  return localBytes(r, &layout == &r.src, rank);
}

/// A group and the buffers it is bound to (member-major by rank).
struct HostGroup : GroupMembers {
  std::vector<const void *> src;
  std::vector<void *> dst, scales;
};

class HostBackend final : public Backend {
public:
  HostBackend(m2n_artifact artifact, int ranks)
      : artifact(artifact), ranks(ranks) {}

  m2n_status addGroup(int id, const GroupMembers &members) override {
    static_cast<GroupMembers &>(groups[id]) = members;
    return M2N_SUCCESS;
  }

  m2n_status bind(int id, const m2n_buffers &buffers) override;
  m2n_status launch(int id, void *const *streams) override;
  m2n_status synchronize() override { return M2N_SUCCESS; }

private:
  m2n_artifact artifact;
  int ranks;
  std::map<int, HostGroup> groups;
};

m2n_status HostBackend::bind(int id, const m2n_buffers &buffers) {
  HostGroup &group = groups.at(id);
  group.src.clear();
  group.dst.clear();
  group.scales.clear();
  const std::vector<const m2n::CompiledReshard *> &members = group.members;
  if (!buffers.src || !buffers.src_bytes || !buffers.dst ||
      !buffers.dst_bytes ||
      static_cast<bool>(buffers.scales) !=
          static_cast<bool>(buffers.scale_bytes))
    return fail(M2N_INVALID_ARGUMENT,
                "binding " + group.name +
                    ": null buffer arrays, or scales without their sizes");
  const void *const *src = buffers.src;
  void *const *dst = buffers.dst, *const *scales = buffers.scales;
  const size_t *src_bytes = buffers.src_bytes, *dst_bytes = buffers.dst_bytes,
               *scale_bytes = buffers.scale_bytes;
  std::vector<CallerBuffer> checked;
  for (size_t t = 0; t < members.size(); ++t) {
    const m2n::CompiledReshard &r = *members[t];
    if (r.program.scaling && !scales)
      return fail(M2N_INVALID_ARGUMENT,
                  "binding " + r.name + " quantizes with scaling " +
                      r.program.scaling->str() +
                      " and writes a scale tensor per rank: bind it with "
                      "its scale buffers (m2n_buffers.scales)");
    // A quantizing member's scales: the blocks each rank's part touches.
    for (int rank = 0; scales && rank < ranks; ++rank) {
      const int64_t want =
          scaleBufferBytes(r, m2n::BufferKind::Scales, rank);
      const size_t at = t * ranks + rank;
      if (want == 0)
        continue;
      if (!scales[at] || scale_bytes[at] < static_cast<size_t>(want))
        return fail(M2N_INVALID_ARGUMENT,
                    "binding " + r.name + ": rank " +
                        std::to_string(rank) + " needs a scale buffer of " +
                        std::to_string(want) + " bytes, got " +
                        (scales[at] ? std::to_string(scale_bytes[at]) +
                                          " bytes"
                                    : std::string("none")));
      const std::string which = "scale buffer of rank " + std::to_string(rank);
      const auto elementBytes = static_cast<uintptr_t>(m2n::elementSize(
          r.program.typeOf({m2n::BufferKind::Scales, rank, -1, 0})));
      if (reinterpret_cast<uintptr_t>(scales[at]) % elementBytes)
        return fail(M2N_INVALID_ARGUMENT,
                    r.name + ": the " + which + " is not aligned to its " +
                        std::to_string(elementBytes) + "-byte elements");
      checked.push_back(
          {scales[at], static_cast<size_t>(want), true,
           r.name +
               (members.size() > 1 ? " (member " + std::to_string(t) + ")"
                                 : std::string()) +
               ": the " + which});
    }
    int needed = 0;
    M2N_TRY(m2n_artifact_reshard_ranks(artifact, group.reshards[t], &needed));
    if (ranks < needed)
      return fail(M2N_INVALID_ARGUMENT,
                  "binding " + r.name + ": it needs " +
                      std::to_string(needed) + " ranks, the context has " +
                      std::to_string(ranks));
    // Every rank of each mesh must bring a large enough buffer.
    for (int rank = 0; rank < ranks; ++rank) {
      for (bool source : {true, false}) {
        int64_t want = bufferBytes(r, source ? r.src : r.dst, rank);
        const size_t at = t * ranks + rank;
        const void *pointer = source ? src[at] : dst[at];
        size_t have = source ? src_bytes[at] : dst_bytes[at];
        std::string which = std::string(source ? "source" : "destination") +
                            " buffer of rank " + std::to_string(rank);
        if (want > 0 && (!pointer || have < static_cast<size_t>(want)))
          return fail(M2N_INVALID_ARGUMENT,
                      "binding " + r.name + ": rank " +
                          std::to_string(rank) + " needs a " +
                          (source ? "source" : "destination") + " buffer of " +
                          std::to_string(want) + " bytes, got " +
                          (pointer ? std::to_string(have) + " bytes"
                                   : std::string("none")));
        if (want == 0)
          continue;
        M2N_TRY(checkAlignment(r, source, pointer, which));
        checked.push_back(
            {pointer, static_cast<size_t>(want), !source,
             r.name +
                 (members.size() > 1 ? " (member " + std::to_string(t) + ")"
                                   : std::string()) +
                 ": the " + which});
      }
    }
  }
  M2N_TRY(checkDisjoint(checked));
  const size_t entries = members.size() * ranks;
  group.src.assign(src, src + entries);
  group.dst.assign(dst, dst + entries);
  if (scales)
    group.scales.assign(scales, scales + entries);
  return M2N_SUCCESS;
}

m2n_status HostBackend::launch(int id, void *const *) {
  HostGroup &group = groups.at(id);
  const std::vector<const m2n::CompiledReshard *> &members = group.members;
  const std::vector<const void *> &src = group.src;
  const std::vector<void *> &dst = group.dst, &scales = group.scales;
  const m2n::TransferProgram &program = group.program();
  // Scratch larger than the host's memory is refused before anything is
  // allocated: an allocator may abort instead of throwing (sanitizers do).
  uint64_t scratchTotal = 0;
  for (size_t index = 0; index < program.scratches.size(); ++index)
    scratchTotal += program.scratchBytes(index); // Each <= kMaxScratchBytes.
  const long pages = sysconf(_SC_PHYS_PAGES), pageBytes = sysconf(_SC_PAGESIZE);
  if (pages > 0 && pageBytes > 0 &&
      scratchTotal > static_cast<uint64_t>(pages) * pageBytes)
    return fail(M2N_OUT_OF_MEMORY,
                "running " + group.name + ": the programs need " +
                    std::to_string(scratchTotal) +
                    " bytes of scratch memory, more than the host's " +
                    std::to_string(static_cast<uint64_t>(pages) * pageBytes));
  std::vector<std::vector<uint8_t>> scratch;
  for (size_t index = 0; index < program.scratches.size(); ++index)
    scratch.emplace_back(program.scratchBytes(index));
  // A quantizing member's tables of amaxes (slots, quantizer, holder): the
  // runtime's, by (kind, member, rank), each at most 4 bytes an element of
  // the tensor.
  std::map<std::tuple<m2n::BufferKind, int64_t, int64_t>, std::vector<uint8_t>>
      tables;
  auto resolve = [&](const m2n::BufferRef &ref)
      -> std::optional<std::pair<uint8_t *, int64_t>> {
    if (m2n::isScaleBuffer(ref.kind)) {
      if (ref.rank < 0 || ref.rank >= ranks || ref.tensor < 0 ||
          ref.tensor >= static_cast<int64_t>(members.size()))
        return std::nullopt;
      const m2n::CompiledReshard &r = *members[ref.tensor];
      const int64_t bytes = scaleBufferBytes(
          r, ref.kind, static_cast<int>(ref.rank));
      if (bytes == 0)
        return std::nullopt;
      if (ref.kind == m2n::BufferKind::Scales) {
        void *pointer = scales[ref.tensor * ranks + ref.rank];
        return std::make_pair(static_cast<uint8_t *>(pointer), bytes);
      }
      std::vector<uint8_t> &table = tables[{ref.kind, ref.tensor, ref.rank}];
      table.resize(static_cast<size_t>(bytes));
      return std::make_pair(table.data(), bytes);
    }
    if (ref.kind == m2n::BufferKind::Scratch) {
      if (ref.scratch < 0 || ref.scratch >= static_cast<int64_t>(scratch.size()))
        return std::nullopt;
      return std::make_pair(scratch[ref.scratch].data(),
                            static_cast<int64_t>(scratch[ref.scratch].size()));
    }
    if (ref.rank < 0 || ref.rank >= ranks || ref.tensor < 0 ||
        ref.tensor >= static_cast<int64_t>(members.size()))
      return std::nullopt;
    const m2n::CompiledReshard &r = *members[ref.tensor];
    bool source = ref.kind == m2n::BufferKind::Source;
    int64_t bytes = bufferBytes(r, source ? r.src : r.dst, ref.rank);
    const size_t at = ref.tensor * ranks + ref.rank;
    // The executor never writes a source buffer.
    uint8_t *pointer =
        source ? static_cast<uint8_t *>(const_cast<void *>(src[at]))
               : static_cast<uint8_t *>(dst[at]);
    if (!pointer)
      return std::nullopt;
    return std::make_pair(pointer, bytes);
  };
  if (std::optional<std::string> error =
          m2n::executeProgram(program, resolve, /*ctasPerRank=*/2))
    return fail(M2N_EXECUTION_FAILED, group.name + ": " + *error);
  return M2N_SUCCESS;
}

} // namespace

m2n_status createHostBackend(m2n_artifact artifact,
                             const ContextOptions &options,
                             std::unique_ptr<Backend> &backend) {
  if (options.processes != 1)
    return fail(M2N_UNSUPPORTED, "the host backend runs every rank in one "
                                 "process, not over " +
                                     std::to_string(options.processes) +
                                     " processes");
  // Its buffer arrays are indexed by rank: slots in rank order.
  for (size_t slot = 0; slot < options.localRanks.size(); ++slot)
    if (options.localRanks[slot] != static_cast<int>(slot))
      return fail(M2N_UNSUPPORTED,
                  "the host backend takes its ranks in order (local_ranks "
                  "NULL or 0, 1, ...): slot " +
                      std::to_string(slot) + " is rank " +
                      std::to_string(options.localRanks[slot]));
  backend = std::make_unique<HostBackend>(artifact, options.ranks);
  return M2N_SUCCESS;
}

} // namespace m2n::runtime
