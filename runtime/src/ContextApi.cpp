//===- ContextApi.cpp - contexts and groups: the one C API ----------------===//
//
// The m2n_context_* and m2n_group_* entry points (m2n/runtime.h): options
// checked and defaulted, groups' members resolved once, the buffers a group
// was bound to remembered for m2n_group_execute, and the work done by the
// context's backend (Backend.h). No C++ exception crosses the API.
//
//===----------------------------------------------------------------------===//

#include "Backend.h"

#include <algorithm>
#include <cmath>
#include <set>

using m2n::runtime::fail;
using m2n::runtime::guarded;

namespace {

/// Checks `in` and fills in its defaults.
m2n_status readOptions(const m2n_context_options &in,
                       m2n::runtime::ContextOptions &out) {
  if (in.version != M2N_RUNTIME_API_VERSION)
    return fail(M2N_INVALID_ARGUMENT,
                "m2n_context_create: the options are of runtime API version " +
                    std::to_string(in.version) + ", this runtime's is " +
                    std::to_string(M2N_RUNTIME_API_VERSION) +
                    " (set options.version to M2N_RUNTIME_API_VERSION and "
                    "rebuild against this runtime's m2n/runtime.h)");
  if (in.backend != M2N_BACKEND_HOST && in.backend != M2N_BACKEND_CUDA)
    return fail(M2N_INVALID_ARGUMENT,
                "m2n_context_create: unknown backend " +
                    std::to_string(in.backend) +
                    " (M2N_BACKEND_HOST or M2N_BACKEND_CUDA)");
  out.backend = static_cast<m2n_backend>(in.backend);
  if (in.ranks <= 0)
    return fail(M2N_INVALID_ARGUMENT,
                "m2n_context_create: a context needs at least one rank, got " +
                    std::to_string(in.ranks));
  out.ranks = in.ranks;
  if (in.processes < 0 || in.processes > in.ranks)
    return fail(M2N_INVALID_ARGUMENT,
                "m2n_context_create: " + std::to_string(in.processes) +
                    " processes for " + std::to_string(in.ranks) +
                    " ranks (each process runs at least one rank)");
  out.processes = in.processes == 0 ? 1 : in.processes;
  if (in.local_count < 0 || (in.local_count > 0) != (in.local_ranks != nullptr))
    return fail(M2N_INVALID_ARGUMENT,
                "m2n_context_create: local_count and local_ranks go together "
                "(0 and NULL: every rank)");
  if (in.local_count == 0) {
    if (out.processes > 1)
      return fail(M2N_INVALID_ARGUMENT,
                  "m2n_context_create: with " +
                      std::to_string(out.processes) +
                      " processes, name this process's ranks (local_ranks)");
    out.localRanks.resize(in.ranks);
    for (int r = 0; r < in.ranks; ++r)
      out.localRanks[r] = r;
  } else {
    out.localRanks.assign(in.local_ranks, in.local_ranks + in.local_count);
  }
  std::set<int> seen;
  for (int rank : out.localRanks) {
    if (rank < 0 || rank >= in.ranks)
      return fail(M2N_INVALID_ARGUMENT,
                  "m2n_context_create: local rank " + std::to_string(rank) +
                      " is not one of the " + std::to_string(in.ranks) +
                      " ranks");
    if (!seen.insert(rank).second)
      return fail(M2N_INVALID_ARGUMENT, "m2n_context_create: local rank " +
                                            std::to_string(rank) +
                                            " is named twice");
  }
  if (out.processes == 1 &&
      out.localRanks.size() != static_cast<size_t>(in.ranks))
    return fail(M2N_INVALID_ARGUMENT,
                "m2n_context_create: one process runs every rank, but "
                "local_ranks names " +
                    std::to_string(out.localRanks.size()) + " of " +
                    std::to_string(in.ranks));
  const size_t slots = out.localRanks.size();
  out.localDevices = in.devices
                         ? std::vector<int>(in.devices, in.devices + slots)
                         : std::vector<int>(slots, 0);
  for (int device : out.localDevices)
    if (device < 0)
      return fail(M2N_INVALID_ARGUMENT, "m2n_context_create: device " +
                                            std::to_string(device));
  if (out.processes > 1 && !in.allgather)
    return fail(M2N_INVALID_ARGUMENT,
                "m2n_context_create: several processes exchange through the "
                "caller's all-gather, and none was given");
  out.allgather = in.allgather;
  out.allgatherUser = in.allgather_user;
  if (!(in.timeout_ms >= 0) || std::isinf(in.timeout_ms))
    return fail(M2N_INVALID_ARGUMENT,
                "m2n_context_create: the timeout must be finite and positive "
                "(0: the default), got " +
                    std::to_string(in.timeout_ms) + " ms");
  out.timeoutMs = in.timeout_ms == 0 ? M2N_DEFAULT_TIMEOUT_MS : in.timeout_ms;
  return M2N_SUCCESS;
}

/// The group, or a failure naming `entry` for a bad context or number.
m2n_status groupAt(const char *entry, m2n_context context, int group) {
  if (!context)
    return fail(M2N_INVALID_ARGUMENT, std::string(entry) + ": null context");
  if (group < 0 || group >= static_cast<int>(context->groups.size()))
    return fail(M2N_INVALID_ARGUMENT, std::string(entry) + ": no group " +
                                          std::to_string(group));
  return M2N_SUCCESS;
}

/// Whether a group is bound to exactly `buffers`: the same pointers and the
/// same sizes (a size that changed is checked again by a bind).
bool boundTo(const m2n_context_t::Bound &bound, const m2n_buffers &buffers,
             size_t entries) {
  auto same = [&](auto *given, const auto &kept) {
    return std::equal(given, given + entries, kept.begin());
  };
  if (!bound.bound || !buffers.src || !buffers.dst || !buffers.src_bytes ||
      !buffers.dst_bytes || !same(buffers.src, bound.src) ||
      !same(buffers.dst, bound.dst) ||
      !same(buffers.src_bytes, bound.srcBytes) ||
      !same(buffers.dst_bytes, bound.dstBytes))
    return false;
  if (!buffers.scales || !buffers.scale_bytes)
    return bound.scales.empty() && !buffers.scales && !buffers.scale_bytes;
  return bound.scales.size() == entries && same(buffers.scales, bound.scales) &&
         same(buffers.scale_bytes, bound.scaleBytes);
}

} // namespace

extern "C" {

m2n_status m2n_context_create(m2n_artifact artifact,
                              const m2n_context_options *options,
                              m2n_context *context) {
  return guarded("m2n_context_create", [&]() -> m2n_status {
    if (!artifact || !options || !context)
      return fail(M2N_INVALID_ARGUMENT,
                  "m2n_context_create: null artifact, options or context");
    *context = nullptr;
    auto created = std::make_unique<m2n_context_t>();
    created->artifact = artifact;
    M2N_TRY(readOptions(*options, created->options));
    if (created->options.backend == M2N_BACKEND_HOST)
      M2N_TRY(m2n::runtime::createHostBackend(artifact, created->options,
                                              created->backend));
    else
      M2N_TRY(m2n::runtime::createCudaBackend(artifact, created->options,
                                              created->backend));
    *context = created.release();
    return M2N_SUCCESS;
  });
}

void m2n_context_destroy(m2n_context context) { delete context; }

m2n_status m2n_group_create(m2n_context context, int members,
                            const int *reshards, int *group) {
  return guarded("m2n_group_create", [&]() -> m2n_status {
    if (!context || !group)
      return fail(M2N_INVALID_ARGUMENT,
                  "m2n_group_create: null context or group");
    m2n::runtime::GroupMembers created;
    M2N_TRY(m2n::runtime::groupMembers("m2n_group_create", context->artifact,
                                       members, reshards, created.members));
    created.reshards.assign(reshards, reshards + members);
    created.name = members == 1 ? created.members.front()->name
                                : "a group of " + std::to_string(members) +
                                      " reshards";
    if (members > 1)
      created.merged = m2n::runtime::groupProgram(
          context->artifact, created.reshards, created.members);
    const int id = static_cast<int>(context->groups.size());
    M2N_TRY(context->backend->addGroup(id, created));
    context->groups.push_back(std::move(created));
    context->bound.emplace_back();
    *group = id;
    return M2N_SUCCESS;
  });
}

m2n_status m2n_group_bind(m2n_context context, int group,
                          const m2n_buffers *buffers) {
  return guarded("m2n_group_bind", [&]() -> m2n_status {
    M2N_TRY(groupAt("m2n_group_bind", context, group));
    const m2n::runtime::GroupMembers &members = context->groups[group];
    // (What one process may find wrong alone, the backend checks: the CUDA
    // backend feeds it into the collective exchange.)
    if (!buffers)
      return fail(M2N_INVALID_ARGUMENT,
                  "binding " + members.name + ": null buffers");
    m2n_context_t::Bound &bound = context->bound[group];
    bound = {};
    M2N_TRY(context->backend->bind(group, *buffers));
    const size_t entries =
        context->options.localRanks.size() * members.members.size();
    bound.src.assign(buffers->src, buffers->src + entries);
    bound.dst.assign(buffers->dst, buffers->dst + entries);
    bound.srcBytes.assign(buffers->src_bytes, buffers->src_bytes + entries);
    bound.dstBytes.assign(buffers->dst_bytes, buffers->dst_bytes + entries);
    if (buffers->scales && buffers->scale_bytes) {
      bound.scales.assign(buffers->scales, buffers->scales + entries);
      bound.scaleBytes.assign(buffers->scale_bytes,
                              buffers->scale_bytes + entries);
    }
    bound.bound = true;
    return M2N_SUCCESS;
  });
}

m2n_status m2n_group_launch(m2n_context context, int group,
                            void *const *streams) {
  return guarded("m2n_group_launch", [&]() -> m2n_status {
    M2N_TRY(groupAt("m2n_group_launch", context, group));
    if (!context->bound[group].bound)
      return fail(M2N_INVALID_ARGUMENT,
                  "m2n_group_launch: " + context->groups[group].name +
                      " (group " + std::to_string(group) +
                      ") is not bound to buffers");
    return context->backend->launch(group, streams);
  });
}

m2n_status m2n_group_execute(m2n_context context, int group,
                             const m2n_buffers *buffers,
                             void *const *streams) {
  return guarded("m2n_group_execute", [&]() -> m2n_status {
    M2N_TRY(groupAt("m2n_group_execute", context, group));
    if (!buffers)
      return fail(M2N_INVALID_ARGUMENT, "m2n_group_execute: null buffers");
    const size_t entries = context->options.localRanks.size() *
                           context->groups[group].members.size();
    if (!boundTo(context->bound[group], *buffers, entries)) {
      if (context->options.processes > 1)
        return fail(M2N_INVALID_ARGUMENT,
                    "m2n_group_execute: these buffers are not the bound ones; "
                    "bind them with m2n_group_bind on every process first");
      M2N_TRY(m2n_group_bind(context, group, buffers));
    }
    return m2n_group_launch(context, group, streams);
  });
}

m2n_status m2n_context_synchronize(m2n_context context) {
  return guarded("m2n_context_synchronize", [&]() -> m2n_status {
    if (!context)
      return fail(M2N_INVALID_ARGUMENT,
                  "m2n_context_synchronize: null context");
    return context->backend->synchronize();
  });
}

} // extern "C"
