//===- HostApi.cpp - the host backend -------------------------------------===//
//
// Reshards and groups run on host memory by the host executor
// (m2n/Artifact/HostExecutor.h), the programs' semantics the GPU kernel
// implements: the reference every backend is checked against.
//
//===----------------------------------------------------------------------===//

#include "Internal.h"

#include "m2n/Artifact/HostExecutor.h"

#include <algorithm>
#include <map>
#include <memory>
#include <tuple>
#include <string>
#include <vector>

#include <unistd.h>

using m2n::runtime::fail;

/// Bytes of rank `rank`'s local part of `layout` (the reshard's source or
/// destination).
static int64_t bufferBytes(const m2n::CompiledReshard &r,
                           const m2n::Layout &layout, int rank) {
  return m2n::runtime::localBytes(r, &layout == &r.src, rank);
}

extern "C" {

m2n_status m2n_host_execute(m2n_artifact artifact, int reshard, int ranks,
                            const void *const *src, const size_t *src_bytes,
                            void *const *dst, const size_t *dst_bytes) {
  return m2n::runtime::guarded("m2n_host_execute", [&]() -> m2n_status {
  return m2n_host_execute_group(artifact, 1, &reshard, ranks, src, src_bytes,
                                dst, dst_bytes);
  });
}

m2n_status m2n_host_execute_group(m2n_artifact artifact, int members,
                                  const int *reshards, int ranks,
                                  const void *const *src,
                                  const size_t *src_bytes, void *const *dst,
                                  const size_t *dst_bytes) {
  return m2n::runtime::guarded("m2n_host_execute_group", [&]() -> m2n_status {
  return m2n_host_execute_scaled(artifact, members, reshards, ranks, src,
                                 src_bytes, dst, dst_bytes, nullptr, nullptr);
  });
}

m2n_status m2n_host_execute_scaled(m2n_artifact artifact, int members,
                                   const int *reshards, int ranks,
                                   const void *const *src,
                                   const size_t *src_bytes, void *const *dst,
                                   const size_t *dst_bytes,
                                   void *const *scales,
                                   const size_t *scale_bytes) {
  return m2n::runtime::guarded("m2n_host_execute_scaled", [&]() -> m2n_status {
  std::vector<const m2n::CompiledReshard *> group;
  M2N_TRY(m2n::runtime::groupMembers("m2n_host_execute", artifact, members,
                                     reshards, group));
  if (ranks <= 0 || !src || !dst || !src_bytes || !dst_bytes ||
      static_cast<bool>(scales) != static_cast<bool>(scale_bytes))
    return fail(M2N_INVALID_ARGUMENT,
                "m2n_host_execute: bad rank count or buffer arrays");
  std::vector<m2n::runtime::CallerBuffer> buffers;
  for (size_t t = 0; t < group.size(); ++t) {
    const m2n::CompiledReshard &r = *group[t];
    if (r.program.scaling && !scales)
      return fail(M2N_INVALID_ARGUMENT,
                  "m2n_host_execute: " + r.name + " quantizes with scaling " +
                      r.program.scaling->str() +
                      " and writes a scale tensor per rank: run it with "
                      "m2n_host_execute_scaled");
    // A quantizing member's scales: the blocks each rank's part touches.
    for (int rank = 0; scales && rank < ranks; ++rank) {
      const int64_t want =
          m2n::runtime::scaleBufferBytes(r, m2n::BufferKind::Scales, rank);
      const size_t at = t * ranks + rank;
      if (want == 0)
        continue;
      if (!scales[at] || scale_bytes[at] < static_cast<size_t>(want))
        return fail(M2N_INVALID_ARGUMENT,
                    "m2n_host_execute: " + r.name + ": rank " +
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
      buffers.push_back(
          {scales[at], static_cast<size_t>(want), true,
           r.name +
               (group.size() > 1 ? " (member " + std::to_string(t) + ")"
                                 : std::string()) +
               ": the " + which});
    }
    int needed = 0;
    M2N_TRY(m2n_artifact_reshard_ranks(artifact, reshards[t], &needed));
    if (ranks < needed)
      return fail(M2N_INVALID_ARGUMENT,
                  "m2n_host_execute: reshard " + r.name + " needs " +
                      std::to_string(needed) + " ranks of buffers, got " +
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
                      "m2n_host_execute: " + r.name + ": rank " +
                          std::to_string(rank) + " needs a " +
                          (source ? "source" : "destination") + " buffer of " +
                          std::to_string(want) + " bytes, got " +
                          (pointer ? std::to_string(have) + " bytes"
                                   : std::string("none")));
        if (want == 0)
          continue;
        M2N_TRY(m2n::runtime::checkAlignment(r, source, pointer, which));
        buffers.push_back(
            {pointer, static_cast<size_t>(want), !source,
             r.name +
                 (group.size() > 1 ? " (member " + std::to_string(t) + ")"
                                   : std::string()) +
                 ": the " + which});
      }
    }
  }
  M2N_TRY(m2n::runtime::checkDisjoint(buffers));
  std::shared_ptr<const m2n::TransferProgram> merged;
  if (group.size() > 1)
    merged = m2n::runtime::groupProgram(
        artifact, std::vector<int>(reshards, reshards + members), group);
  const m2n::TransferProgram &program =
      merged ? *merged : group.front()->program;
  // Scratch larger than the host's memory is refused before anything is
  // allocated: an allocator may abort instead of throwing (sanitizers do).
  uint64_t scratchTotal = 0;
  for (size_t index = 0; index < program.scratches.size(); ++index)
    scratchTotal += program.scratchBytes(index); // Each <= kMaxScratchBytes.
  const long pages = sysconf(_SC_PHYS_PAGES), pageBytes = sysconf(_SC_PAGESIZE);
  if (pages > 0 && pageBytes > 0 &&
      scratchTotal > static_cast<uint64_t>(pages) * pageBytes)
    return fail(M2N_OUT_OF_MEMORY,
                "m2n_host_execute: the programs need " +
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
          ref.tensor >= static_cast<int64_t>(group.size()))
        return std::nullopt;
      const m2n::CompiledReshard &r = *group[ref.tensor];
      const int64_t bytes = m2n::runtime::scaleBufferBytes(
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
        ref.tensor >= static_cast<int64_t>(group.size()))
      return std::nullopt;
    const m2n::CompiledReshard &r = *group[ref.tensor];
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
    return fail(M2N_EXECUTION_FAILED,
                (group.size() == 1 ? group.front()->name
                                   : std::string("a group of ") +
                                         std::to_string(group.size()) +
                                         " reshards") +
                    ": " + *error);
  return M2N_SUCCESS;
  });
}

} // extern "C"
