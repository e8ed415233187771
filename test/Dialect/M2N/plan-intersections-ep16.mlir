// The NCCL M2N paper's single-layer benchmark (seeds/001, Section VI): a
// 7168 MiB BF16 expert gate projection, 256 experts x 2048 x 7168, moves from
// a 16-GPU expert-parallel trainer (16 experts per rank, ranks 0-15) to a TP8
// generator (the 2048 intermediate rows split 8 ways) replicated DP = 2, 4, 8
// times on ranks 16 and up. Every generator rank needs 1/8 of every trainer
// rank's experts: 16 transfers per generator rank, 16 * 8 * DP in all, each
// a whole [16, 256, 7168] box.
//
// RUN: m2n-opt %s --m2n-plan-intersections --m2n-verify-plan | FileCheck %s

// CHECK-LABEL: func.func @ep16_to_tp8_dp2
// CHECK: m2n.plan
// Generator rank 16 (DP 0, TP 0) gets rows [0:256) of every trainer's experts.
// CHECK-NEXT: m2n.transfer copy from 0 [0:16, 0:256, 0:7168] to 16 [0:16, 0:256, 0:7168]
// CHECK-NEXT: m2n.transfer copy from 1 [0:16, 0:256, 0:7168] to 16 [16:32, 0:256, 0:7168]
// CHECK-COUNT-13: m2n.transfer copy from {{[0-9]+}} [0:16, 0:256, 0:7168] to 16 [{{[0-9]+}}:{{[0-9]+}}, 0:256, 0:7168]
// CHECK-NEXT: m2n.transfer copy from 15 [0:16, 0:256, 0:7168] to 16 [240:256, 0:256, 0:7168]
// Generator rank 23 (DP 0, TP 7) gets rows [1792:2048).
// CHECK: m2n.transfer copy from 3 [0:16, 1792:2048, 0:7168] to 23 [48:64, 0:256, 0:7168]
// The second replica set starts at rank 24 and receives the same boxes.
// CHECK: m2n.transfer copy from 0 [0:16, 0:256, 0:7168] to 24 [0:16, 0:256, 0:7168]
// CHECK: m2n.transfer copy from 15 [0:16, 1792:2048, 0:7168] to 31 [240:256, 0:256, 0:7168]
// CHECK-NEXT: }
func.func @ep16_to_tp8_dp2(%comm: !m2n.comm<32>, %w: !m2n.dist<256x2048x7168xbf16, #m2n.layout<#m2n.mesh<[16]>, [shard<0>]>>) -> !m2n.dist<256x2048x7168xbf16, #m2n.layout<#m2n.mesh<[2, 8], base = 16>, [replicate, shard<1>]>> {
  %0 = m2n.reshard %w on %comm : !m2n.comm<32>, !m2n.dist<256x2048x7168xbf16, #m2n.layout<#m2n.mesh<[16]>, [shard<0>]>> -> !m2n.dist<256x2048x7168xbf16, #m2n.layout<#m2n.mesh<[2, 8], base = 16>, [replicate, shard<1>]>>
  return %0 : !m2n.dist<256x2048x7168xbf16, #m2n.layout<#m2n.mesh<[2, 8], base = 16>, [replicate, shard<1>]>>
}

// CHECK-LABEL: func.func @ep16_to_tp8_dp4
// CHECK: m2n.transfer copy from 0 [0:16, 0:256, 0:7168] to 16 [0:16, 0:256, 0:7168]
// CHECK: m2n.transfer copy from 15 [0:16, 1792:2048, 0:7168] to 47 [240:256, 0:256, 0:7168]
// CHECK-NEXT: }
func.func @ep16_to_tp8_dp4(%comm: !m2n.comm<48>, %w: !m2n.dist<256x2048x7168xbf16, #m2n.layout<#m2n.mesh<[16]>, [shard<0>]>>) -> !m2n.dist<256x2048x7168xbf16, #m2n.layout<#m2n.mesh<[4, 8], base = 16>, [replicate, shard<1>]>> {
  %0 = m2n.reshard %w on %comm : !m2n.comm<48>, !m2n.dist<256x2048x7168xbf16, #m2n.layout<#m2n.mesh<[16]>, [shard<0>]>> -> !m2n.dist<256x2048x7168xbf16, #m2n.layout<#m2n.mesh<[4, 8], base = 16>, [replicate, shard<1>]>>
  return %0 : !m2n.dist<256x2048x7168xbf16, #m2n.layout<#m2n.mesh<[4, 8], base = 16>, [replicate, shard<1>]>>
}

// CHECK-LABEL: func.func @ep16_to_tp8_dp8
// CHECK: m2n.transfer copy from 0 [0:16, 0:256, 0:7168] to 16 [0:16, 0:256, 0:7168]
// CHECK: m2n.transfer copy from 15 [0:16, 1792:2048, 0:7168] to 79 [240:256, 0:256, 0:7168]
// CHECK-NEXT: }
func.func @ep16_to_tp8_dp8(%comm: !m2n.comm<80>, %w: !m2n.dist<256x2048x7168xbf16, #m2n.layout<#m2n.mesh<[16]>, [shard<0>]>>) -> !m2n.dist<256x2048x7168xbf16, #m2n.layout<#m2n.mesh<[8, 8], base = 16>, [replicate, shard<1>]>> {
  %0 = m2n.reshard %w on %comm : !m2n.comm<80>, !m2n.dist<256x2048x7168xbf16, #m2n.layout<#m2n.mesh<[16]>, [shard<0>]>> -> !m2n.dist<256x2048x7168xbf16, #m2n.layout<#m2n.mesh<[8, 8], base = 16>, [replicate, shard<1>]>>
  return %0 : !m2n.dist<256x2048x7168xbf16, #m2n.layout<#m2n.mesh<[8, 8], base = 16>, [replicate, shard<1>]>>
}

// Transfer counts: 16 * 8 * DP, all copies.
// RUN: m2n-opt %s --m2n-plan-intersections | FileCheck %s --check-prefix=COUNT
// COUNT-LABEL: func.func @ep16_to_tp8_dp2
// COUNT-COUNT-256: m2n.transfer copy
// COUNT-NEXT: }
// COUNT-LABEL: func.func @ep16_to_tp8_dp4
// COUNT-COUNT-512: m2n.transfer copy
// COUNT-NEXT: }
// COUNT-LABEL: func.func @ep16_to_tp8_dp8
// COUNT-COUNT-1024: m2n.transfer copy
// COUNT-NEXT: }
