// m2n-sim reports bad plans and unsupported inputs with one FAIL line and
// exit code 1, without touching memory out of bounds.
//
// RUN: split-file %s %t
// RUN: not m2n-sim --no-verify %t/wrong-values.mlir | FileCheck %s --check-prefix=VALUES
// RUN: not m2n-sim %t/wrong-values.mlir 2>&1 | FileCheck %s --check-prefix=VERIFIED
// RUN: not m2n-sim --no-verify %t/out-of-bounds.mlir | FileCheck %s --check-prefix=BOUNDS
// RUN: m2n-sim %t/f8.mlir | FileCheck %s --check-prefix=F8
// RUN: not m2n-sim --no-verify %t/missing.mlir | FileCheck %s --check-prefix=POISON
// RUN: not m2n-sim %t/missing-dependency.mlir | FileCheck %s --check-prefix=DEPS
// RUN: not m2n-sim %t/empty.mlir | FileCheck %s --check-prefix=EMPTY
// RUN: not m2n-sim %t/does-not-exist.mlir | FileCheck %s --check-prefix=MISSING

// The second transfer lands one element too early: element 1 holds 2.
// VALUES: m2n-sim: FAIL: plan 0 in @f: destination rank 2 local element 1 (global linear index 1): expected 1, got 2
// VERIFIED: error: moves global elements [2:4] into global elements [1:3]
// VERIFIED: m2n-sim: FAIL: planning or plan verification failed (diagnostics above)

//--- wrong-values.mlir
func.func @f(%c: !m2n.comm<3>, %x: !m2n.dist<4xf32, #m2n.layout<#m2n.mesh<[2]>, [shard<0>]>>) {
  %0 = m2n.plan %x on %c : !m2n.comm<3>, !m2n.dist<4xf32, #m2n.layout<#m2n.mesh<[2]>, [shard<0>]>> -> !m2n.dist<4xf32, #m2n.layout<#m2n.mesh<[1], base = 2>, [replicate]>> {
    m2n.transfer copy from 0 [0:2] to 2 [0:2]
    m2n.transfer copy from 1 [0:2] to 2 [1:3]
  }
  return
}

// BOUNDS: m2n-sim: FAIL: plan 0 in @f: transfer 1 (1 [0:2] -> 2 [3:5] copy): leaves a local buffer

//--- out-of-bounds.mlir
func.func @f(%c: !m2n.comm<3>, %x: !m2n.dist<4xf32, #m2n.layout<#m2n.mesh<[2]>, [shard<0>]>>) {
  %0 = m2n.plan %x on %c : !m2n.comm<3>, !m2n.dist<4xf32, #m2n.layout<#m2n.mesh<[2]>, [shard<0>]>> -> !m2n.dist<4xf32, #m2n.layout<#m2n.mesh<[1], base = 2>, [replicate]>> {
    m2n.transfer copy from 0 [0:2] to 2 [0:2]
    m2n.transfer copy from 1 [0:2] to 2 [3:5]
  }
  return
}

// fp8 is simulated (copies; reductions are refused by the verifier).
// F8: PASS

//--- f8.mlir
func.func @f(%c: !m2n.comm<2>, %x: !m2n.dist<4xf8E4M3FN, #m2n.layout<#m2n.mesh<[2]>, [shard<0>]>>) {
  %0 = m2n.reshard %x on %c : !m2n.comm<2>, !m2n.dist<4xf8E4M3FN, #m2n.layout<#m2n.mesh<[2]>, [shard<0>]>> -> !m2n.dist<4xf8E4M3FN, #m2n.layout<#m2n.mesh<[2]>, [replicate]>>
  return
}

// EMPTY: m2n-sim: FAIL: no m2n.reshard, collective, m2n.plan, m2n.schedule or m2n.program in the input

// A missing element keeps the poison (NaN).
// POISON: m2n-sim: FAIL: plan 0 in @f: destination rank 2 local element 2 (global linear index 2): expected 2, got nan

//--- missing.mlir
func.func @f(%c: !m2n.comm<3>, %x: !m2n.dist<4xf32, #m2n.layout<#m2n.mesh<[2]>, [shard<0>]>>) {
  %0 = m2n.plan %x on %c : !m2n.comm<3>, !m2n.dist<4xf32, #m2n.layout<#m2n.mesh<[2]>, [shard<0>]>> -> !m2n.dist<4xf32, #m2n.layout<#m2n.mesh<[1], base = 2>, [replicate]>> {
    m2n.transfer copy from 0 [0:2] to 2 [0:2]
  }
  return
}

// Rank 6 forwards the row before it has arrived (no `after [0]`): running
// the last ready step first reads the poison.
// DEPS: m2n-sim: FAIL: schedule 0 in @f: destination rank 6 local element 0 (global linear index 0): expected 0, got nan

//--- missing-dependency.mlir
func.func @f(%c: !m2n.comm<8>, %w: !m2n.dist<2x2xf32, #m2n.layout<#m2n.mesh<[2]>, [shard<0>]>>) {
  %0 = m2n.schedule %w on %c strategy = "hierarchical" topology(#m2n.topology<domains = [[0, 1, 2, 3], [4, 5, 6, 7]], nvlink_gbps = 450.0, network_gbps = 50.0>) : !m2n.comm<8>, !m2n.dist<2x2xf32, #m2n.layout<#m2n.mesh<[2]>, [shard<0>]>> -> !m2n.dist<2x2xf32, #m2n.layout<#m2n.mesh<[2, 1], ranks = [4, 6]>, [replicate, replicate]>> {
    m2n.step 0 copy src(0) [0:1, 0:2] -> dst(4) [0:1, 0:2] via network
    m2n.step 1 copy dst(4) [0:1, 0:2] -> dst(6) [0:1, 0:2] via nvlink
    m2n.step 2 copy src(1) [0:1, 0:2] -> dst(6) [1:2, 0:2] via network
    m2n.step 3 copy dst(6) [1:2, 0:2] -> dst(4) [1:2, 0:2] via nvlink after [2]
  }
  return
}

//--- empty.mlir
func.func @f() {
  return
}

// MISSING: m2n-sim: FAIL: cannot open input file
