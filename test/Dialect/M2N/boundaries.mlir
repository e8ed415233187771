// Layouts with explicit split boundaries (#m2n.shard<d, [b0, ..., bK]>):
// printed and parsed, boundaries equal to torch.chunk's written shard<d>,
// planned by interval intersection and checked by m2n-sim and m2n-run.
// RUN: m2n-opt %s --mlir-print-local-scope | FileCheck %s --check-prefix=PRINT
// RUN: m2n-opt %s --mlir-print-local-scope | m2n-opt --mlir-print-local-scope | FileCheck %s --check-prefix=PRINT
// RUN: m2n-opt %s --emit-bytecode | m2n-opt --mlir-print-local-scope | FileCheck %s --check-prefix=PRINT
// RUN: m2n-opt %s --m2n-plan-intersections --m2n-verify-plan | FileCheck %s
// RUN: m2n-sim %s | FileCheck %s --check-prefix=SIM
// RUN: m2n-run %s --seed 7 | FileCheck %s --check-prefix=EXEC

// SIM: m2n-sim: PASS: 7 plans
// EXEC: 7 passed, 0 failed

// Upstream's example: 7 rows over 3 ranks at [0, 2, 5, 7], to torch.chunk's
// [0, 3, 6, 7] spelled out (parsed into shard<0>).
// PRINT-LABEL: func.func @upstream_offsets
// PRINT-SAME: !m2n.dist<7x5xf32, #m2n.layout<#m2n.mesh<[3]>, [shard<0, [0, 2, 5, 7]>]>>
// PRINT-SAME: -> !m2n.dist<7x5xf32, #m2n.layout<#m2n.mesh<[3], base = 3>, [shard<0>]>>
// CHECK-LABEL: func.func @upstream_offsets
// CHECK: m2n.transfer copy from 0 [0:2, 0:5] to 3 [0:2, 0:5]
// CHECK-NEXT: m2n.transfer copy from 1 [0:1, 0:5] to 3 [2:3, 0:5]
// CHECK-NEXT: m2n.transfer copy from 1 [1:3, 0:5] to 4 [0:2, 0:5]
// CHECK-NEXT: m2n.transfer copy from 2 [0:1, 0:5] to 4 [2:3, 0:5]
// CHECK-NEXT: m2n.transfer copy from 2 [1:2, 0:5] to 5 [0:1, 0:5]
// CHECK-NEXT: }
func.func @upstream_offsets(%c: !m2n.comm<6>, %x: !m2n.dist<7x5xf32, #m2n.layout<#m2n.mesh<[3]>, [shard<0, [0, 2, 5, 7]>]>>) -> !m2n.dist<7x5xf32, #m2n.layout<#m2n.mesh<[3], base = 3>, [shard<0, [0, 3, 6, 7]>]>> {
  %0 = m2n.reshard %x on %c : !m2n.comm<6>, !m2n.dist<7x5xf32, #m2n.layout<#m2n.mesh<[3]>, [shard<0, [0, 2, 5, 7]>]>> -> !m2n.dist<7x5xf32, #m2n.layout<#m2n.mesh<[3], base = 3>, [shard<0, [0, 3, 6, 7]>]>>
  return %0 : !m2n.dist<7x5xf32, #m2n.layout<#m2n.mesh<[3], base = 3>, [shard<0>]>>
}

// A vocabulary padded per rank: 10 rows over 4 ranks of 3, 3, 3 and 1
// (torch.chunk's) gathered by an uneven split of 4, 0, 6 (an empty part).
// PRINT-LABEL: func.func @empty_part
// PRINT-SAME: -> !m2n.dist<10x3xbf16, #m2n.layout<#m2n.mesh<[3], base = 4>, [shard<0, [0, 4, 4, 10]>]>>
// CHECK-LABEL: func.func @empty_part
// CHECK-NOT: to 5
// CHECK: }
func.func @empty_part(%c: !m2n.comm<7>, %x: !m2n.dist<10x3xbf16, #m2n.layout<#m2n.mesh<[4]>, [shard<0>]>>) -> !m2n.dist<10x3xbf16, #m2n.layout<#m2n.mesh<[3], base = 4>, [shard<0, [0, 4, 4, 10]>]>> {
  %0 = m2n.reshard %x on %c : !m2n.comm<7>, !m2n.dist<10x3xbf16, #m2n.layout<#m2n.mesh<[4]>, [shard<0>]>> -> !m2n.dist<10x3xbf16, #m2n.layout<#m2n.mesh<[3], base = 4>, [shard<0, [0, 4, 4, 10]>]>>
  return %0 : !m2n.dist<10x3xbf16, #m2n.layout<#m2n.mesh<[3], base = 4>, [shard<0, [0, 4, 4, 10]>]>>
}

// Two mesh axes split dimension 0 into 2 x 2 parts numbered row-major (the
// first axis outermost): rank 1 holds part 1 = [1, 4), rank 2 part 2 =
// [4, 5). The destination splits the columns at boundaries too.
// CHECK-LABEL: func.func @two_axes
// CHECK: m2n.transfer copy from 0 [0:1, 0:1] to 4 [0:1, 0:1]
// CHECK: m2n.transfer copy from 1 [0:3, 0:1] to 4 [1:4, 0:1]
// CHECK: m2n.transfer copy from 2 [0:1, 0:1] to 4 [4:5, 0:1]
// CHECK: m2n.transfer copy from 3 [0:3, 0:1] to 4 [5:8, 0:1]
// CHECK: m2n.transfer copy from 0 [0:1, 1:6] to 5 [0:1, 0:5]
func.func @two_axes(%c: !m2n.comm<6>, %x: !m2n.dist<8x6xi32, #m2n.layout<#m2n.mesh<[2, 2]>, [shard<0, [0, 1, 4, 5, 8]>, shard<0>]>>) -> !m2n.dist<8x6xi32, #m2n.layout<#m2n.mesh<[2], base = 4>, [shard<1, [0, 1, 6]>]>> {
  %0 = m2n.reshard %x on %c : !m2n.comm<6>, !m2n.dist<8x6xi32, #m2n.layout<#m2n.mesh<[2, 2]>, [shard<0, [0, 1, 4, 5, 8]>, shard<0>]>> -> !m2n.dist<8x6xi32, #m2n.layout<#m2n.mesh<[2], base = 4>, [shard<1, [0, 1, 6]>]>>
  return %0 : !m2n.dist<8x6xi32, #m2n.layout<#m2n.mesh<[2], base = 4>, [shard<1, [0, 1, 6]>]>>
}

// Boundaries on both sides, with a partial source reduced into them.
// CHECK-LABEL: func.func @partial_both_sides
// CHECK: m2n.transfer
func.func @partial_both_sides(%c: !m2n.comm<4>, %x: !m2n.dist<9xf32, #m2n.layout<#m2n.mesh<[2, 2]>, [partial<sum>, shard<0, [0, 7, 9]>]>>) -> !m2n.dist<9xf32, #m2n.layout<#m2n.mesh<[4]>, [shard<0, [0, 2, 2, 3, 9]>]>> {
  %0 = m2n.reshard %x on %c : !m2n.comm<4>, !m2n.dist<9xf32, #m2n.layout<#m2n.mesh<[2, 2]>, [partial<sum>, shard<0, [0, 7, 9]>]>> -> !m2n.dist<9xf32, #m2n.layout<#m2n.mesh<[4]>, [shard<0, [0, 2, 2, 3, 9]>]>>
  return %0 : !m2n.dist<9xf32, #m2n.layout<#m2n.mesh<[4]>, [shard<0, [0, 2, 2, 3, 9]>]>>
}

// An all_gather of uneven parts: the collective over every axis that
// splits the dimension.
// CHECK-LABEL: func.func @all_gather_uneven
// CHECK: m2n.transfer
func.func @all_gather_uneven(%c: !m2n.comm<3>, %x: !m2n.dist<7x2xf32, #m2n.layout<#m2n.mesh<[3]>, [shard<0, [0, 1, 1, 7]>]>>) -> !m2n.dist<7x2xf32, #m2n.layout<#m2n.mesh<[3]>, [replicate]>> {
  %0 = m2n.all_gather %x on %c mesh_axes = [0] : !m2n.comm<3>, !m2n.dist<7x2xf32, #m2n.layout<#m2n.mesh<[3]>, [shard<0, [0, 1, 1, 7]>]>> -> !m2n.dist<7x2xf32, #m2n.layout<#m2n.mesh<[3]>, [replicate]>>
  return %0 : !m2n.dist<7x2xf32, #m2n.layout<#m2n.mesh<[3]>, [replicate]>>
}

// A reduce_scatter into uneven parts: the result type names the boundaries
// of the dimension it scatters.
// CHECK-LABEL: func.func @reduce_scatter_uneven
// CHECK: m2n.transfer
func.func @reduce_scatter_uneven(%c: !m2n.comm<3>, %x: !m2n.dist<7x2xf32, #m2n.layout<#m2n.mesh<[3]>, [partial<sum>]>>) -> !m2n.dist<7x2xf32, #m2n.layout<#m2n.mesh<[3]>, [shard<0, [0, 6, 6, 7]>]>> {
  %0 = m2n.reduce_scatter %x on %c mesh_axes = [0] scatter_dim = 0 : !m2n.comm<3>, !m2n.dist<7x2xf32, #m2n.layout<#m2n.mesh<[3]>, [partial<sum>]>> -> !m2n.dist<7x2xf32, #m2n.layout<#m2n.mesh<[3]>, [shard<0, [0, 6, 6, 7]>]>>
  return %0 : !m2n.dist<7x2xf32, #m2n.layout<#m2n.mesh<[3]>, [shard<0, [0, 6, 6, 7]>]>>
}

// Quantized into explicit boundaries: rows [0, 3) and [3, 8) of 2 x 2
// blocks, so block row 1 straddles both destinations; the scale tensor
// names the result's placements without the boundaries.
// CHECK-LABEL: func.func @quantized_into_boundaries
// CHECK: m2n.transfer
func.func @quantized_into_boundaries(%c: !m2n.comm<6>, %x: !m2n.dist<8x8xbf16, #m2n.layout<#m2n.mesh<[4]>, [shard<1, [0, 1, 6, 6, 8]>]>>) {
  %q, %s = m2n.reshard %x on %c {scaling = #m2n.scaling<block(2, 2)>} : !m2n.comm<6>, !m2n.dist<8x8xbf16, #m2n.layout<#m2n.mesh<[4]>, [shard<1, [0, 1, 6, 6, 8]>]>> -> !m2n.dist<8x8xf8E4M3FN, #m2n.layout<#m2n.mesh<[2], base = 4>, [shard<0, [0, 3, 8]>]>>, !m2n.dist<4x4xf32, #m2n.layout<#m2n.mesh<[2], base = 4>, [shard<0>]>>
  return
}
