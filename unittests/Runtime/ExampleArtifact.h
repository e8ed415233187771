//===- ExampleArtifact.h - a small artifact the runtime tests share -*- C++ -*-===//

#ifndef M2N_UNITTESTS_RUNTIME_EXAMPLEARTIFACT_H
#define M2N_UNITTESTS_RUNTIME_EXAMPLEARTIFACT_H

#include "m2n/Artifact/Artifact.h"
#include "m2n/Codegen/TransferProgram.h"
#include "m2n/Route/Router.h"

#include <gtest/gtest.h>

#include <string>

/// One reshard: rows of a 4 x `columns` f32 tensor on ranks 0-1 to columns
/// on ranks 1-2 (built with the compiler's plain C++ stages), lowered with
/// `options`.
inline m2n::CompiledReshard
exampleReshard(const m2n::LoweringOptions &options = {}, int64_t columns = 8) {
  m2n::CompiledReshard reshard;
  reshard.name = "@test#0";
  reshard.type = m2n::ElementType::F32;
  reshard.shape = {4, columns};
  reshard.src = {m2n::Mesh::contiguous({2}, 0), {m2n::Placement::shard(0)}};
  reshard.dst = {m2n::Mesh::contiguous({2}, 1), {m2n::Placement::shard(1)}};
  reshard.strategy = "hierarchical";
  m2n::Topology topology = m2n::Topology::singleDomain(3);
  m2n::ReshardPlan plan =
      m2n::IntersectionPlanner(reshard.src, reshard.dst, reshard.shape).plan();
  m2n::Schedule schedule =
      m2n::TopologyRouter(reshard.src, reshard.dst, reshard.shape, topology)
          .route(plan, m2n::Strategy::Hierarchical);
  m2n::addDataDependencies(schedule);
  EXPECT_EQ(m2n::lowerSchedule(schedule, reshard.src, reshard.dst,
                               reshard.shape, reshard.type, options,
                               reshard.program),
            std::nullopt);
  return reshard;
}

/// An artifact holding `reshard` (by default exampleReshard()).
inline std::string
exampleArtifact(const m2n::CompiledReshard &reshard = exampleReshard()) {
  m2n::Artifact artifact;
  artifact.ptx = "// no kernel needed on the host";
  artifact.chip = "sm_90a";
  // A kernel with the SM path (kernel-ops=all): the reshard may hold
  // vector items, whose launch takes 128 threads.
  artifact.kernel.threads = 128;
  artifact.reshards.push_back(reshard);
  return m2n::serializeArtifact(artifact);
}

#endif // M2N_UNITTESTS_RUNTIME_EXAMPLEARTIFACT_H
