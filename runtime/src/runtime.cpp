//===- runtime.cpp - the m2n runtime C API: artifacts, host backend ---------===//

#include "Internal.h"

#include "m2n/Artifact/HostExecutor.h"

#include <algorithm>
#include <limits>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <tuple>
#include <sstream>
#include <string>
#include <vector>

#include <unistd.h>

namespace {
thread_local std::string lastError;
} // namespace

namespace m2n::runtime {

m2n_status fail(m2n_status status, std::string message) {
  lastError = std::move(message);
  return status;
}

m2n_status failFromException(const char *entry) noexcept {
  // Called inside a catch handler: what was thrown, as a status. Building
  // the message may itself run out of memory; the status still returns.
  m2n_status status = M2N_INTERNAL_ERROR;
  const char *what = "an unknown C++ exception";
  try {
    throw;
  } catch (const std::bad_alloc &) {
    status = M2N_OUT_OF_MEMORY;
    what = "out of host memory";
  } catch (const std::exception &e) {
    what = e.what();
  } catch (...) {
  }
  try {
    lastError = std::string(entry) + ": " + what;
  } catch (...) {
    lastError.clear();
  }
  return status;
}

const CompiledReshard *reshardAt(m2n_artifact artifact, int reshard) {
  if (!artifact || reshard < 0 ||
      reshard >= static_cast<int>(artifact->artifact.reshards.size()))
    return nullptr;
  return &artifact->artifact.reshards[reshard];
}

ElementType sideType(const CompiledReshard &reshard, bool source) {
  return source ? reshard.program.sourceType.value_or(reshard.type)
                : reshard.type;
}

int64_t localBytes(const CompiledReshard &reshard, bool source, int rank) {
  const Layout &layout = source ? reshard.src : reshard.dst;
  std::optional<int64_t> index = layout.mesh.indexOf(rank);
  if (!index)
    return 0;
  return layout.localBox(reshard.shape, *index).volume() *
         elementSize(sideType(reshard, source));
}

int64_t scaleBufferBytes(const CompiledReshard &reshard, BufferKind kind,
                         int rank) {
  const std::optional<Scaling> &scaling = reshard.program.scaling;
  if (!scaling)
    return 0;
  BufferShapes shapes(reshard.src, reshard.dst, reshard.shape,
                      reshard.program.scratches, scaling);
  std::optional<Dims> blocks = shapes({kind, rank, -1, 0});
  if (!blocks)
    return 0;
  int64_t entries = 1;
  for (int64_t extent : *blocks)
    entries *= extent; // At most the tensor's elements: no overflow.
  return entries * elementSize(reshard.program.typeOf({kind, rank, -1, 0}));
}

m2n_status checkAlignment(const CompiledReshard &reshard, bool source,
                          const void *pointer, const std::string &which) {
  const auto address = reinterpret_cast<uintptr_t>(pointer);
  const ElementType type = sideType(reshard, source);
  const auto elementBytes = static_cast<uintptr_t>(elementSize(type));
  if (address % elementBytes)
    return fail(M2N_INVALID_ARGUMENT,
                reshard.name + ": the " + which + " is not aligned to its " +
                    std::to_string(elementBytes) + "-byte " +
                    toString(type) + " elements");
  const auto promised =
      static_cast<uintptr_t>(reshard.program.bufferAlignment);
  if (address % promised) {
    const uintptr_t has = address & (~address + 1); // Its lowest set bit.
    return fail(M2N_INVALID_ARGUMENT,
                reshard.name + ": the " + which + " is " +
                    std::to_string(has) +
                    "-byte aligned, and the reshard was compiled for buffers "
                    "aligned to " +
                    std::to_string(promised) +
                    " bytes; compile it with buffer-align=" +
                    std::to_string(has) +
                    " (the Python frontend does this by itself)");
  }
  return M2N_SUCCESS;
}

m2n_status groupMembers(const char *what, m2n_artifact artifact, int members,
                        const int *reshards,
                        std::vector<const CompiledReshard *> &group) {
  if (!artifact || members <= 0 || !reshards)
    return fail(M2N_INVALID_ARGUMENT,
                std::string(what) +
                    ": a group needs an artifact and at least one reshard");
  group.clear();
  for (int m = 0; m < members; ++m) {
    const CompiledReshard *r = reshardAt(artifact, reshards[m]);
    if (!r)
      return fail(M2N_INVALID_ARGUMENT,
                  std::string(what) + ": no reshard " +
                      std::to_string(reshards[m]) +
                      (members > 1 ? " (member " + std::to_string(m) +
                                         " of the group)"
                                   : std::string()));
    group.push_back(r);
  }
  return M2N_SUCCESS;
}

std::shared_ptr<const TransferProgram>
groupProgram(m2n_artifact artifact, const std::vector<int> &key,
             const std::vector<const CompiledReshard *> &members) {
  std::lock_guard<std::mutex> lock(artifact->mergedMutex);
  std::shared_ptr<const TransferProgram> &cached = artifact->merged[key];
  if (!cached) {
    std::vector<const TransferProgram *> programs;
    for (const CompiledReshard *r : members)
      programs.push_back(&r->program);
    cached = std::make_shared<const TransferProgram>(mergePrograms(programs));
  }
  return cached;
}

m2n_status checkDisjoint(std::vector<CallerBuffer> buffers) {
  std::sort(buffers.begin(), buffers.end(),
            [](const CallerBuffer &a, const CallerBuffer &b) {
              return std::less<const void *>()(a.pointer, b.pointer);
            });
  // Sweep: the buffer reaching furthest so far against each next one.
  const CallerBuffer *reach = nullptr;
  for (const CallerBuffer &buffer : buffers) {
    auto begin = reinterpret_cast<uintptr_t>(buffer.pointer);
    if (reach && begin < reinterpret_cast<uintptr_t>(reach->pointer) +
                             reach->bytes &&
        (reach->written || buffer.written))
      return fail(M2N_INVALID_ARGUMENT,
                  buffer.name + " overlaps " + reach->name +
                      " (a destination may share no byte with another "
                      "buffer of the launch)");
    if (!reach || begin + buffer.bytes >
                      reinterpret_cast<uintptr_t>(reach->pointer) + reach->bytes)
      reach = &buffer;
  }
  return M2N_SUCCESS;
}

} // namespace m2n::runtime

using m2n::runtime::fail;
using m2n::runtime::reshardAt;
static int64_t bufferBytes(const m2n::CompiledReshard &r,
                           const m2n::Layout &layout, int rank) {
  return m2n::runtime::localBytes(r, &layout == &r.src, rank);
}

extern "C" {

const char *m2n_status_name(m2n_status status) {
  switch (status) {
  case M2N_SUCCESS:
    return "M2N_SUCCESS";
  case M2N_INVALID_ARGUMENT:
    return "M2N_INVALID_ARGUMENT";
  case M2N_INVALID_ARTIFACT:
    return "M2N_INVALID_ARTIFACT";
  case M2N_UNSUPPORTED:
    return "M2N_UNSUPPORTED";
  case M2N_EXECUTION_FAILED:
    return "M2N_EXECUTION_FAILED";
  case M2N_IO_ERROR:
    return "M2N_IO_ERROR";
  case M2N_TIMEOUT:
    return "M2N_TIMEOUT";
  case M2N_CUDA_ERROR:
    return "M2N_CUDA_ERROR";
  case M2N_OUT_OF_MEMORY:
    return "M2N_OUT_OF_MEMORY";
  case M2N_INTERNAL_ERROR:
    return "M2N_INTERNAL_ERROR";
  }
  return "M2N_UNKNOWN_STATUS";
}

const char *m2n_last_error(void) { return lastError.c_str(); }

m2n_status m2n_artifact_load(const void *bytes, size_t size,
                             m2n_artifact *artifact) {
  return m2n::runtime::guarded("m2n_artifact_load", [&]() -> m2n_status {
  if (!bytes || !artifact)
    return fail(M2N_INVALID_ARGUMENT, "m2n_artifact_load: null argument");
  auto loaded = std::make_unique<m2n_artifact_t>();
  if (std::optional<std::string> error = m2n::deserializeArtifact(
          std::string(static_cast<const char *>(bytes), size),
          loaded->artifact))
    return fail(M2N_INVALID_ARTIFACT, *error);
  for (const m2n::CompiledReshard &r : loaded->artifact.reshards)
    loaded->scalingNames.push_back(r.program.scaling ? r.program.scaling->str()
                                                     : std::string());
  // A compiled group runs the program the loader built for it.
  for (const m2n::CompiledGroup &group : loaded->artifact.groups)
    if (group.members.size() > 1)
      loaded->merged[std::vector<int>(group.members.begin(),
                                      group.members.end())] = group.program;
  *artifact = loaded.release();
  return M2N_SUCCESS;
  });
}

m2n_status m2n_artifact_load_file(const char *path, m2n_artifact *artifact) {
  return m2n::runtime::guarded("m2n_artifact_load_file", [&]() -> m2n_status {
  if (!path || !artifact)
    return fail(M2N_INVALID_ARGUMENT, "m2n_artifact_load_file: null argument");
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return fail(M2N_IO_ERROR, std::string("cannot open '") + path + "'");
  std::stringstream bytes;
  bytes << in.rdbuf();
  std::string text = bytes.str();
  m2n_status status = m2n_artifact_load(text.data(), text.size(), artifact);
  if (status != M2N_SUCCESS)
    lastError = std::string(path) + ": " + lastError;
  return status;
  });
}

void m2n_artifact_destroy(m2n_artifact artifact) { delete artifact; }

int m2n_artifact_group_count(m2n_artifact artifact) {
  return artifact ? static_cast<int>(artifact->artifact.groups.size()) : 0;
}

const char *m2n_artifact_group_name(m2n_artifact artifact, int group) {
  if (!artifact || group < 0 ||
      group >= static_cast<int>(artifact->artifact.groups.size()))
    return nullptr;
  return artifact->artifact.groups[group].name.c_str();
}

m2n_status m2n_artifact_group_members(m2n_artifact artifact, int group,
                                      int capacity, int *reshards,
                                      int *count) {
  return m2n::runtime::guarded("m2n_artifact_group_members", [&]() -> m2n_status {
  if (!artifact || !count || group < 0 ||
      group >= static_cast<int>(artifact->artifact.groups.size()))
    return fail(M2N_INVALID_ARGUMENT,
                "m2n_artifact_group_members: no group " +
                    std::to_string(group));
  const std::vector<uint32_t> &members =
      artifact->artifact.groups[group].members;
  *count = static_cast<int>(members.size());
  if (!reshards)
    return M2N_SUCCESS;
  if (capacity < *count)
    return fail(M2N_INVALID_ARGUMENT,
                "m2n_artifact_group_members: group " +
                    artifact->artifact.groups[group].name + " has " +
                    std::to_string(*count) + " members, room for " +
                    std::to_string(capacity));
  std::copy(members.begin(), members.end(), reshards);
  return M2N_SUCCESS;
  });
}

int m2n_artifact_reshard_count(m2n_artifact artifact) {
  return artifact ? static_cast<int>(artifact->artifact.reshards.size()) : 0;
}

const char *m2n_artifact_reshard_name(m2n_artifact artifact, int reshard) {
  const m2n::CompiledReshard *r = reshardAt(artifact, reshard);
  return r ? r->name.c_str() : nullptr;
}

m2n_status m2n_artifact_reshard_ranks(m2n_artifact artifact, int reshard,
                                      int *ranks) {
  return m2n::runtime::guarded("m2n_artifact_reshard_ranks", [&]() -> m2n_status {
  const m2n::CompiledReshard *r = reshardAt(artifact, reshard);
  if (!r || !ranks)
    return fail(M2N_INVALID_ARGUMENT,
                "m2n_artifact_reshard_ranks: no reshard " +
                    std::to_string(reshard));
  int64_t largest = std::max(r->src.mesh.maxRank(), r->dst.mesh.maxRank());
  for (const auto &[rank, program] : r->program.ranks)
    largest = std::max(largest, rank);
  // The loader bounds ranks below 2^31; the last of them needs one more.
  if (largest + 1 > std::numeric_limits<int>::max())
    return fail(M2N_UNSUPPORTED, "m2n_artifact_reshard_ranks: " + r->name +
                                     " needs 2^31 ranks, more than an int "
                                     "counts");
  *ranks = static_cast<int>(largest + 1);
  return M2N_SUCCESS;
  });
}

m2n_status m2n_artifact_buffer_bytes(m2n_artifact artifact, int reshard,
                                     int rank, size_t *src_bytes,
                                     size_t *dst_bytes) {
  return m2n::runtime::guarded("m2n_artifact_buffer_bytes", [&]() -> m2n_status {
  const m2n::CompiledReshard *r = reshardAt(artifact, reshard);
  if (!r || !src_bytes || !dst_bytes || rank < 0)
    return fail(M2N_INVALID_ARGUMENT,
                "m2n_artifact_buffer_bytes: bad reshard or rank");
  *src_bytes = static_cast<size_t>(bufferBytes(*r, r->src, rank));
  *dst_bytes = static_cast<size_t>(bufferBytes(*r, r->dst, rank));
  return M2N_SUCCESS;
  });
}

m2n_status m2n_artifact_local_shape(m2n_artifact artifact, int reshard,
                                    int rank, int source, int *present,
                                    int *dims, int64_t *shape) {
  return m2n::runtime::guarded("m2n_artifact_local_shape", [&]() -> m2n_status {
  const m2n::CompiledReshard *r = reshardAt(artifact, reshard);
  if (!r || !present || !dims || !shape || rank < 0)
    return fail(M2N_INVALID_ARGUMENT,
                "m2n_artifact_local_shape: bad reshard, rank or output");
  const m2n::Layout &layout = source ? r->src : r->dst;
  std::optional<int64_t> index = layout.mesh.indexOf(rank);
  *present = index.has_value();
  *dims = static_cast<int>(r->shape.size());
  if (r->shape.size() > 8)
    return fail(M2N_UNSUPPORTED, "tensors of more than 8 dimensions");
  for (size_t d = 0; d < r->shape.size(); ++d)
    shape[d] = index ? layout.localBox(r->shape, *index).sizes[d] : 0;
  return M2N_SUCCESS;
  });
}

m2n_status m2n_layout_local_box(const int64_t *mesh_shape, int mesh_axes,
                                const int64_t *ranks, int64_t base,
                                const m2n_placement *placements,
                                const int64_t *shape, int tensor_rank,
                                int64_t rank, int *present, int64_t *offsets,
                                int64_t *sizes) {
  return m2n::runtime::guarded("m2n_layout_local_box", [&]() -> m2n_status {
  if (!mesh_shape || mesh_axes < 1 || mesh_axes > 64 || !placements ||
      tensor_rank < 0 || tensor_rank > 64 || (tensor_rank && !shape) ||
      !present || (tensor_rank && (!offsets || !sizes)))
    return fail(M2N_INVALID_ARGUMENT,
                "m2n_layout_local_box: a null or out-of-range argument");
  // The layout without its rank list: a mesh of 2^31 positions is checked
  // and answered without listing them.
  m2n::Layout layout;
  layout.mesh.shape.assign(mesh_shape, mesh_shape + mesh_axes);
  if (std::optional<std::string> wrong =
          m2n::checkMeshShape(layout.mesh.shape))
    return fail(M2N_INVALID_ARGUMENT, *wrong);
  for (int axis = 0; axis < mesh_axes; ++axis) {
    const m2n_placement &p = placements[axis];
    if (p.kind < 0 || p.kind > 2 || p.reduction < 0 || p.reduction > 2 ||
        p.boundary_count < 0 || (p.boundary_count && !p.boundaries))
      return fail(M2N_INVALID_ARGUMENT,
                  "m2n_layout_local_box: placement " + std::to_string(axis) +
                      " has an unknown kind or reduction, or no boundaries");
    m2n::Placement placement;
    placement.kind = static_cast<m2n::Placement::Kind>(p.kind);
    placement.dim = p.kind == 0 ? p.dim : -1;
    placement.reduction = static_cast<m2n::Reduction>(p.reduction);
    placement.boundaries.assign(p.boundaries, p.boundaries + p.boundary_count);
    layout.placements.push_back(std::move(placement));
  }
  std::vector<int64_t> extents(shape, shape + tensor_rank);
  if (std::optional<std::string> wrong =
          m2n::validatePlacements(layout, extents))
    return fail(M2N_INVALID_ARGUMENT, *wrong);
  int64_t positions = 1;
  for (int64_t extent : layout.mesh.shape)
    positions *= extent;
  std::optional<int64_t> position;
  if (ranks) {
    for (int64_t i = 0; i < positions && !position; ++i)
      if (ranks[i] == rank)
        position = i;
  } else if (rank >= base && rank - base < positions) {
    position = rank - base;
  }
  *present = position.has_value();
  if (!position)
    return M2N_SUCCESS;
  m2n::Box box = layout.localBox(extents, *position);
  for (int d = 0; d < tensor_rank; ++d) {
    offsets[d] = box.offsets[d];
    sizes[d] = box.sizes[d];
  }
  return M2N_SUCCESS;
  });
}

m2n_status m2n_host_execute(m2n_artifact artifact, int reshard, int ranks,
                            const void *const *src, const size_t *src_bytes,
                            void *const *dst, const size_t *dst_bytes) {
  return m2n::runtime::guarded("m2n_host_execute", [&]() -> m2n_status {
  return m2n_host_execute_group(artifact, 1, &reshard, ranks, src, src_bytes,
                                dst, dst_bytes);
  });
}

const char *m2n_artifact_reshard_scaling(m2n_artifact artifact, int reshard) {
  const m2n::CompiledReshard *r = reshardAt(artifact, reshard);
  if (!r)
    return nullptr;
  return artifact->scalingNames[reshard].c_str();
}

m2n_status m2n_artifact_scale_shape(m2n_artifact artifact, int reshard,
                                    int rank, int *present, int *dims,
                                    int64_t *shape, int *element_bytes) {
  return m2n::runtime::guarded("m2n_artifact_scale_shape", [&]() -> m2n_status {
  const m2n::CompiledReshard *r = reshardAt(artifact, reshard);
  if (!r || !present || !dims || !shape || !element_bytes || rank < 0)
    return fail(M2N_INVALID_ARGUMENT,
                "m2n_artifact_scale_shape: bad reshard, rank or output");
  *present = 0;
  *dims = static_cast<int>(r->shape.size());
  *element_bytes = 0;
  if (r->shape.size() > 8)
    return fail(M2N_UNSUPPORTED, "tensors of more than 8 dimensions");
  std::fill(shape, shape + r->shape.size(), 0);
  const std::optional<m2n::Scaling> &scaling = r->program.scaling;
  if (!scaling)
    return M2N_SUCCESS;
  m2n::BufferShapes shapes(r->src, r->dst, r->shape, r->program.scratches,
                           scaling);
  const m2n::BufferRef scales{m2n::BufferKind::Scales, rank, -1, 0};
  std::optional<m2n::Dims> blocks = shapes(scales);
  if (!blocks)
    return M2N_SUCCESS;
  *present = 1;
  *element_bytes =
      static_cast<int>(m2n::elementSize(r->program.typeOf(scales)));
  std::copy(blocks->begin(), blocks->end(), shape);
  return M2N_SUCCESS;
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
