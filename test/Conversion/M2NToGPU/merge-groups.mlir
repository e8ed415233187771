// A group of reshards (m2n.group) through the pipeline: the members share
// programs where they can (two tensors of one layout call @reshard_0), and
// --m2n-merge-groups writes one merged program per rank: the members each
// rank runs, in the group's order, and where their counters begin. The
// artifact holds the group, m2n-artifact-dump and a reader written from
// docs/artifact.md show it, and m2n-run launches it as one program and
// checks every member.
//
// RUN: rm -rf %t && mkdir -p %t
// RUN: m2n-opt %s --m2n-pipeline=artifact=%t/g.m2n -o %t/lowered.mlir
// RUN: FileCheck %s < %t/lowered.mlir
// The merged form parses and verifies (the bases are checked again):
// RUN: m2n-opt %t/lowered.mlir -o /dev/null
// RUN: m2n-artifact-dump %t/g.m2n | FileCheck %s --check-prefix=DUMP
// RUN: %python %S/../../Tools/m2n-artifact-dump/read_artifact.py %t/g.m2n | FileCheck %s --check-prefix=DOC
// RUN: m2n-run %t/g.m2n --seed 7 | FileCheck %s --check-prefix=EXEC
// A group is merged once its members are programs:
// RUN: not m2n-opt %s --m2n-merge-groups 2>&1 | FileCheck %s --check-prefix=NOTLOWERED
// and the artifact writer takes only merged groups:
// RUN: not m2n-opt %s "--pass-pipeline=builtin.module(m2n-expand-collectives,m2n-plan-intersections,m2n-route-topology,m2n-lower-schedule,m2n-convert-to-gpu,m2n-choose-launch,builtin.module(nvvm-attach-target{module=m2n_kernels chip=sm_90a features=+ptx86},gpu.module(convert-scf-to-cf,convert-gpu-to-nvvm,convert-nvvm-to-llvm,reconcile-unrealized-casts),gpu-module-to-binary{format=isa}),m2n-write-artifact{path=%t/unmerged.m2n})" 2>&1 | FileCheck %s --check-prefix=UNMERGED

#lo = #m2n.layout<#m2n.mesh<[2]>, [shard<0>]>
#lo_r = #m2n.layout<#m2n.mesh<[2]>, [replicate]>
#hi = #m2n.layout<#m2n.mesh<[2], base = 2>, [shard<0>]>
#all = #m2n.layout<#m2n.mesh<[4]>, [shard<0>]>
#all_r = #m2n.layout<#m2n.mesh<[4]>, [replicate]>
func.func @refit(%c: !m2n.comm<4>, %a: !m2n.dist<8xf32, #lo>, %b: !m2n.dist<8xf32, #lo>,
                 %h: !m2n.dist<8xbf16, #hi>, %w: !m2n.dist<16xf32, #all>) {
  %0 = m2n.reshard %a on %c : !m2n.comm<4>, !m2n.dist<8xf32, #lo> -> !m2n.dist<8xf32, #lo_r>
  %1 = m2n.reshard %h on %c : !m2n.comm<4>, !m2n.dist<8xbf16, #hi> -> !m2n.dist<8xbf16, #lo>
  %2 = m2n.reshard %b on %c : !m2n.comm<4>, !m2n.dist<8xf32, #lo> -> !m2n.dist<8xf32, #lo_r>
  %3 = m2n.all_gather %w on %c mesh_axes = [0] : !m2n.comm<4>, !m2n.dist<16xf32, #all> -> !m2n.dist<16xf32, #all_r>
  m2n.group "refit"(%0, %1, %2, %3) : !m2n.dist<8xf32, #lo_r>, !m2n.dist<8xbf16, #lo>, !m2n.dist<8xf32, #lo_r>, !m2n.dist<16xf32, #all_r>
  return
}

// CHECK:      %[[A:.*]] = m2n.call @reshard_0(
// CHECK-NEXT: %[[H:.*]] = m2n.call @reshard_1(
// CHECK-NEXT: %[[B:.*]] = m2n.call @reshard_0(
// CHECK-NEXT: %[[W:.*]] = m2n.call @reshard_2(
// CHECK-NEXT: m2n.group "refit"(%[[A]], %[[H]], %[[B]], %[[W]]) : {{.*}} merged {
// Ranks 0 and 1 run every member: one counter each of @reshard_0 (twice)
// and @reshard_2, none of @reshard_1 there.
// Their launch combines the members' (m2n-choose-launch): the bf16
// tensor's 16-byte rows land on ranks 0 and 1 by the SM path (one walker of
// 128 threads), the f32 tables run 8 walkers of 128-byte stages.
// CHECK-NEXT:   m2n.group_rank 0 counters = 3 members = [0, 1, 2, 3] counter_bases = [0, 1, 1, 2] launch <threads = 128, walkers = 1, stage_bytes = 65536>
// CHECK-NEXT:   m2n.group_rank 1 counters = 3 members = [0, 1, 2, 3] counter_bases = [0, 1, 1, 2] launch <threads = 128, walkers = 1, stage_bytes = 65536>
// Ranks 2 and 3 hold only the bf16 tensor's source and the all-gather.
// CHECK-NEXT:   m2n.group_rank 2 counters = 2 members = [1, 3] counter_bases = [0, 1] launch <threads = 32, walkers = 8, stage_bytes = 128>
// CHECK-NEXT:   m2n.group_rank 3 counters = 2 members = [1, 3] counter_bases = [0, 1] launch <threads = 32, walkers = 8, stage_bytes = 128>
// CHECK-NEXT: }
// CHECK:      m2n.reshard_fn @reshard_0
// CHECK:        m2n.rank 0 counters = 1 launch <threads = 32, walkers = 8, stage_bytes = 128>
// CHECK:      m2n.reshard_fn @reshard_1
// CHECK:        m2n.rank 0 counters = 0 launch <threads = 128, walkers = 1, stage_bytes = 65536>
// CHECK:        m2n.rank 2 counters = 1 launch <threads = 32, walkers = 8, stage_bytes = 128>
// CHECK:      m2n.reshard_fn @reshard_2
// CHECK-NOT:  m2n.reshard_fn

// DUMP:      group refit: 4 members (@refit#0, @refit#1, @refit#2, @refit#3)
// DUMP-NEXT:   rank 0: {{[0-9]+}} item movements, 0 receive movements, 3 counters; launch 1 walker x 128 threads
// DUMP-NEXT:   rank 1: {{.*}} 3 counters; launch 1 walker x 128 threads
// DUMP-NEXT:   rank 2: {{.*}} 2 counters; launch 8 walkers x 32 threads
// DUMP-NEXT:   rank 3: {{.*}} 2 counters; launch 8 walkers x 32 threads

// DOC: group refit: @refit#0, @refit#1, @refit#2, @refit#3

// EXEC: @refit#3                         PASS
// EXEC-NEXT: group refit                 PASS  4 members, 4 ranks
// EXEC-NEXT: 5 passed, 0 failed

// NOTLOWERED: error: m2n-merge-groups: member 0 of group "refit" is not lowered to a program: run m2n-lower-schedule first

// UNMERGED: error: group "refit" is not merged: run m2n-merge-groups first
