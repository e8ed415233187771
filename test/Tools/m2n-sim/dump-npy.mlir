// m2n-sim's .npy dumps agree with an independent NumPy model of DTensor's
// local shards (Inputs/check_shards.py).
//
// RUN: rm -rf %t && m2n-sim %s --dump-dst %t | FileCheck %s
// RUN: %python %S/Inputs/check_shards.py %t/plan0 --shape 4,8 --dtype bf16 --mesh 2,2 --ranks 4,5,6,7 --placements R,S0 | FileCheck %s --check-prefix=A
// RUN: %python %S/Inputs/check_shards.py %t/plan1 --shape 5,7,3 --dtype i32 --mesh 2,3 --ranks 7,2,5,0,1,3 --placements S1,S1 | FileCheck %s --check-prefix=NESTED
// RUN: %python %S/Inputs/check_shards.py %t/plan2 --shape 6,4 --dtype f32 --mesh 4 --ranks 0,1,2,3 --placements S0 --contributors 4 --reduction sum | FileCheck %s --check-prefix=RS
// RUN: %python %S/Inputs/check_shards.py %t/plan3 --shape 9 --dtype f16 --mesh 3 --ranks 3,4,5 --placements R --contributors 3 --reduction max | FileCheck %s --check-prefix=MAX
// RUN: %python %S/Inputs/check_shards.py %t/plan4 --shape 3,2 --dtype i64 --mesh 2 --ranks 0,1 --placements S1 --contributors 2 --reduction min | FileCheck %s --check-prefix=MIN
// The 8-bit floats have no NumPy type: their bits are written as uint8.
// RUN: rm -rf %t.fp8 && m2n-sim %S/../m2n-run/Inputs/fp8.mlir --dump-dst %t.fp8 | FileCheck %s --check-prefix=FP8
// RUN: %python -c "import numpy as np; a = np.load('%t.fp8/plan0/rank0.npy'); print('fp8 dump', a.dtype, a.shape)" | FileCheck %s --check-prefix=FP8-NPY

// CHECK: m2n-sim: PASS: 5 plans, {{[0-9]+}} transfers, 226 destination elements checked
// A: check_shards: OK, 4 ranks, 64 elements
// NESTED: check_shards: OK, 6 ranks, 105 elements
// RS: check_shards: OK, 4 ranks, 24 elements
// MAX: check_shards: OK, 3 ranks, 27 elements
// MIN: check_shards: OK, 2 ranks, 6 elements
// FP8: m2n-sim: PASS: 3 plans
// FP8-NPY: fp8 dump uint8 (4096,)

// The paper's Example A.
func.func @example_a(%c: !m2n.comm<8>, %w: !m2n.dist<4x8xbf16, #m2n.layout<#m2n.mesh<[1, 4]>, [replicate, shard<0>]>>) {
  %0 = m2n.reshard %w on %c : !m2n.comm<8>, !m2n.dist<4x8xbf16, #m2n.layout<#m2n.mesh<[1, 4]>, [replicate, shard<0>]>> -> !m2n.dist<4x8xbf16, #m2n.layout<#m2n.mesh<[2, 2], base = 4>, [replicate, shard<0>]>>
  return
}

// Uneven, nested (two mesh axes on one dimension) and an explicit rank list.
func.func @nested(%c: !m2n.comm<8>, %x: !m2n.dist<5x7x3xi32, #m2n.layout<#m2n.mesh<[2, 2]>, [shard<0>, shard<2>]>>) {
  %0 = m2n.reshard %x on %c : !m2n.comm<8>, !m2n.dist<5x7x3xi32, #m2n.layout<#m2n.mesh<[2, 2]>, [shard<0>, shard<2>]>> -> !m2n.dist<5x7x3xi32, #m2n.layout<#m2n.mesh<[2, 3], ranks = [7, 2, 5, 0, 1, 3]>, [shard<1>, shard<1>]>>
  return
}

// Reduce-scatter over four contributors.
func.func @reduce_scatter(%c: !m2n.comm<4>, %x: !m2n.dist<6x4xf32, #m2n.layout<#m2n.mesh<[4]>, [partial<sum>]>>) {
  %0 = m2n.reduce_scatter %x on %c mesh_axes = [0] scatter_dim = 0 : !m2n.comm<4>, !m2n.dist<6x4xf32, #m2n.layout<#m2n.mesh<[4]>, [partial<sum>]>> -> !m2n.dist<6x4xf32, #m2n.layout<#m2n.mesh<[4]>, [shard<0>]>>
  return
}

// Partial max, sharded sources, onto a disjoint replicated mesh.
func.func @max_to_other_mesh(%c: !m2n.comm<6>, %x: !m2n.dist<9xf16, #m2n.layout<#m2n.mesh<[3, 1]>, [partial<max>, shard<0>]>>) {
  %0 = m2n.reshard %x on %c : !m2n.comm<6>, !m2n.dist<9xf16, #m2n.layout<#m2n.mesh<[3, 1]>, [partial<max>, shard<0>]>> -> !m2n.dist<9xf16, #m2n.layout<#m2n.mesh<[3], base = 3>, [replicate]>>
  return
}

// Partial min (all-reduce followed by a column split, in one reshard).
func.func @min(%c: !m2n.comm<2>, %x: !m2n.dist<3x2xi64, #m2n.layout<#m2n.mesh<[2]>, [partial<min>]>>) {
  %0 = m2n.reshard %x on %c : !m2n.comm<2>, !m2n.dist<3x2xi64, #m2n.layout<#m2n.mesh<[2]>, [partial<min>]>> -> !m2n.dist<3x2xi64, #m2n.layout<#m2n.mesh<[2]>, [shard<1>]>>
  return
}
