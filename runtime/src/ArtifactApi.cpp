//===- ArtifactApi.cpp - artifacts: loading and queries -------------------===//
//
// An artifact loaded and verified (its programs' checks, as the compiler
// runs them), its reshards and groups, each rank's buffer sizes and local
// shapes, the split rule for a layout alone (m2n_layout_local_box), and what
// the backends share: buffer sizes, alignment and overlap checks, and the
// merged programs of groups.
//
//===----------------------------------------------------------------------===//

#include "Internal.h"

#include "m2n/Base/PlacementCode.h"

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

namespace m2n::runtime {

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

extern "C" {

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
    return fail(status, std::string(path) + ": " + m2n_last_error());
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
  *src_bytes = static_cast<size_t>(m2n::runtime::localBytes(*r, true, rank));
  *dst_bytes = static_cast<size_t>(m2n::runtime::localBytes(*r, false, rank));
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
    m2n::Placement placement;
    if (std::optional<std::string> wrong =
            m2n::decodePlacement(p.kind, p.dim, p.reduction, p.boundaries,
                                 p.boundary_count, placement))
      return fail(M2N_INVALID_ARGUMENT, "m2n_layout_local_box: placement " +
                                            std::to_string(axis) + " " +
                                            *wrong);
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

} // extern "C"
