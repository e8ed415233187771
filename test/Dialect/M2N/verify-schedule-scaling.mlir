// m2n-verify-schedule on quantizing schedules written by hand
// (docs/fp8-scaling.md): the amax exchange checked as a scale plan, and
// every step after what it reads. Each case breaks the flat schedule of
// route-topology-scaling.mlir's @straddling_sources in one place.
// RUN: m2n-opt %s --split-input-file --m2n-verify-schedule --verify-diagnostics
// RUN: not m2n-sim --no-verify %S/Inputs/scale-before-max.mlir 2>&1 | FileCheck %s --check-prefix=SIM
// SIM: m2n-sim: FAIL: schedule 0 in @f: step 14 (scale holder(3) [0:1, 0:2] -> scales(3) [0:1, 0:2] via local after [6, 7]) reads the amax of block [0:1, 0:1] before all 2 shares of it arrived

// A quantizing move that does not wait for the max into its source rank's
// quantizer table (block column 0 straddles ranks 0 and 1).
func.func @f(%c: !m2n.comm<5>, %w: !m2n.dist<4x6xbf16, #m2n.layout<#m2n.mesh<[3]>, [shard<1>]>>) {
  %q, %s = m2n.schedule %w on %c strategy = "flat" topology(#m2n.topology<domain_size = 5, nvlink_gbps = 4.500000e+02, network_gbps = 5.000000e+01>) {scaling = #m2n.scaling<block(2, 4)>} : !m2n.comm<5>, !m2n.dist<4x6xbf16, #m2n.layout<#m2n.mesh<[3]>, [shard<1>]>> -> !m2n.dist<4x6xf8E4M3FN, #m2n.layout<#m2n.mesh<[2], base = 3>, [shard<0>]>>, !m2n.dist<2x2xf32, #m2n.layout<#m2n.mesh<[2], base = 3>, [shard<0>]>> {
    m2n.step 0 amax src(0) [0:2, 0:1] -> slots(0) [0:2, 0:1] via local
    m2n.step 1 amax src(1) [0:2, 0:1] -> slots(1) [0:2, 0:1] via local
    m2n.step 2 amax src(2) [0:2, 0:1] -> slots(2) [0:2, 0:1] via local
    m2n.step 3 copy slots(0) [0:2, 0:1] -> quantizer(0) [0:2, 0:1] via local after [0]
    m2n.step 4 copy slots(1) [0:2, 0:1] -> quantizer(1) [0:2, 0:1] via local after [1]
    m2n.step 5 copy slots(2) [0:2, 0:1] -> quantizer(2) [0:2, 0:1] via local after [2]
    m2n.step 6 copy slots(0) [0:1, 0:1] -> holder(3) [0:1, 0:1] via nvlink after [0]
    m2n.step 7 copy slots(2) [0:1, 0:1] -> holder(3) [0:1, 1:2] via nvlink after [2]
    m2n.step 8 copy slots(0) [1:2, 0:1] -> holder(4) [0:1, 0:1] via nvlink after [0]
    m2n.step 9 copy slots(2) [1:2, 0:1] -> holder(4) [0:1, 1:2] via nvlink after [2]
    m2n.step 10 reduce<max> slots(1) [0:2, 0:1] -> quantizer(0) [0:2, 0:1] via nvlink after [1, 3]
    m2n.step 11 reduce<max> slots(0) [0:2, 0:1] -> quantizer(1) [0:2, 0:1] via nvlink after [0, 4]
    m2n.step 12 reduce<max> slots(1) [0:1, 0:1] -> holder(3) [0:1, 0:1] via nvlink after [1, 6]
    m2n.step 13 reduce<max> slots(1) [1:2, 0:1] -> holder(4) [0:1, 0:1] via nvlink after [1, 8]
    m2n.step 14 scale holder(3) [0:1, 0:2] -> scales(3) [0:1, 0:2] via local after [6, 7, 12]
    m2n.step 15 scale holder(4) [0:1, 0:2] -> scales(4) [0:1, 0:2] via local after [8, 9, 13]
    // expected-error@+1 {{quantizes with quantizer(0) [0:1, 0:1] without waiting for step 10, which writes it}}
    m2n.step 16 copy src(0) [0:2, 0:2] -> dst(3) [0:2, 0:2] via nvlink after [3]
    m2n.step 17 copy src(1) [0:2, 0:2] -> dst(3) [0:2, 2:4] via nvlink after [4, 11]
    m2n.step 18 copy src(2) [0:2, 0:2] -> dst(3) [0:2, 4:6] via nvlink after [5]
    m2n.step 19 copy src(0) [2:4, 0:2] -> dst(4) [0:2, 0:2] via nvlink after [3, 10]
    m2n.step 20 copy src(1) [2:4, 0:2] -> dst(4) [0:2, 2:4] via nvlink after [4, 11]
    m2n.step 21 copy src(2) [2:4, 0:2] -> dst(4) [0:2, 4:6] via nvlink after [5]
  }
  return
}

// -----

// An exchange that does not wait for the share it reads.
func.func @f(%c: !m2n.comm<5>, %w: !m2n.dist<4x6xbf16, #m2n.layout<#m2n.mesh<[3]>, [shard<1>]>>) {
  %q, %s = m2n.schedule %w on %c strategy = "flat" topology(#m2n.topology<domain_size = 5, nvlink_gbps = 4.500000e+02, network_gbps = 5.000000e+01>) {scaling = #m2n.scaling<block(2, 4)>} : !m2n.comm<5>, !m2n.dist<4x6xbf16, #m2n.layout<#m2n.mesh<[3]>, [shard<1>]>> -> !m2n.dist<4x6xf8E4M3FN, #m2n.layout<#m2n.mesh<[2], base = 3>, [shard<0>]>>, !m2n.dist<2x2xf32, #m2n.layout<#m2n.mesh<[2], base = 3>, [shard<0>]>> {
    m2n.step 0 amax src(0) [0:2, 0:1] -> slots(0) [0:2, 0:1] via local
    m2n.step 1 amax src(1) [0:2, 0:1] -> slots(1) [0:2, 0:1] via local
    m2n.step 2 amax src(2) [0:2, 0:1] -> slots(2) [0:2, 0:1] via local
    m2n.step 3 copy slots(0) [0:2, 0:1] -> quantizer(0) [0:2, 0:1] via local after [0]
    m2n.step 4 copy slots(1) [0:2, 0:1] -> quantizer(1) [0:2, 0:1] via local after [1]
    m2n.step 5 copy slots(2) [0:2, 0:1] -> quantizer(2) [0:2, 0:1] via local after [2]
    // expected-error@+1 {{reads slots(0) [0:1, 0:1] without waiting for step 0, which computes it}}
    m2n.step 6 copy slots(0) [0:1, 0:1] -> holder(3) [0:1, 0:1] via nvlink
    m2n.step 7 copy slots(2) [0:1, 0:1] -> holder(3) [0:1, 1:2] via nvlink after [2]
    m2n.step 8 copy slots(0) [1:2, 0:1] -> holder(4) [0:1, 0:1] via nvlink after [0]
    m2n.step 9 copy slots(2) [1:2, 0:1] -> holder(4) [0:1, 1:2] via nvlink after [2]
    m2n.step 10 reduce<max> slots(1) [0:2, 0:1] -> quantizer(0) [0:2, 0:1] via nvlink after [1, 3]
    m2n.step 11 reduce<max> slots(0) [0:2, 0:1] -> quantizer(1) [0:2, 0:1] via nvlink after [0, 4]
    m2n.step 12 reduce<max> slots(1) [0:1, 0:1] -> holder(3) [0:1, 0:1] via nvlink after [1, 6]
    m2n.step 13 reduce<max> slots(1) [1:2, 0:1] -> holder(4) [0:1, 0:1] via nvlink after [1, 8]
    m2n.step 14 scale holder(3) [0:1, 0:2] -> scales(3) [0:1, 0:2] via local after [6, 7, 12]
    m2n.step 15 scale holder(4) [0:1, 0:2] -> scales(4) [0:1, 0:2] via local after [8, 9, 13]
    m2n.step 16 copy src(0) [0:2, 0:2] -> dst(3) [0:2, 0:2] via nvlink after [3, 10]
    m2n.step 17 copy src(1) [0:2, 0:2] -> dst(3) [0:2, 2:4] via nvlink after [4, 11]
    m2n.step 18 copy src(2) [0:2, 0:2] -> dst(3) [0:2, 4:6] via nvlink after [5]
    m2n.step 19 copy src(0) [2:4, 0:2] -> dst(4) [0:2, 0:2] via nvlink after [3, 10]
    m2n.step 20 copy src(1) [2:4, 0:2] -> dst(4) [0:2, 2:4] via nvlink after [4, 11]
    m2n.step 21 copy src(2) [2:4, 0:2] -> dst(4) [0:2, 4:6] via nvlink after [5]
  }
  return
}

// -----

// A max-reduction that does not wait for the copy it lands on.
func.func @f(%c: !m2n.comm<5>, %w: !m2n.dist<4x6xbf16, #m2n.layout<#m2n.mesh<[3]>, [shard<1>]>>) {
  %q, %s = m2n.schedule %w on %c strategy = "flat" topology(#m2n.topology<domain_size = 5, nvlink_gbps = 4.500000e+02, network_gbps = 5.000000e+01>) {scaling = #m2n.scaling<block(2, 4)>} : !m2n.comm<5>, !m2n.dist<4x6xbf16, #m2n.layout<#m2n.mesh<[3]>, [shard<1>]>> -> !m2n.dist<4x6xf8E4M3FN, #m2n.layout<#m2n.mesh<[2], base = 3>, [shard<0>]>>, !m2n.dist<2x2xf32, #m2n.layout<#m2n.mesh<[2], base = 3>, [shard<0>]>> {
    m2n.step 0 amax src(0) [0:2, 0:1] -> slots(0) [0:2, 0:1] via local
    m2n.step 1 amax src(1) [0:2, 0:1] -> slots(1) [0:2, 0:1] via local
    m2n.step 2 amax src(2) [0:2, 0:1] -> slots(2) [0:2, 0:1] via local
    m2n.step 3 copy slots(0) [0:2, 0:1] -> quantizer(0) [0:2, 0:1] via local after [0]
    m2n.step 4 copy slots(1) [0:2, 0:1] -> quantizer(1) [0:2, 0:1] via local after [1]
    m2n.step 5 copy slots(2) [0:2, 0:1] -> quantizer(2) [0:2, 0:1] via local after [2]
    m2n.step 6 copy slots(0) [0:1, 0:1] -> holder(3) [0:1, 0:1] via nvlink after [0]
    m2n.step 7 copy slots(2) [0:1, 0:1] -> holder(3) [0:1, 1:2] via nvlink after [2]
    m2n.step 8 copy slots(0) [1:2, 0:1] -> holder(4) [0:1, 0:1] via nvlink after [0]
    m2n.step 9 copy slots(2) [1:2, 0:1] -> holder(4) [0:1, 1:2] via nvlink after [2]
    m2n.step 10 reduce<max> slots(1) [0:2, 0:1] -> quantizer(0) [0:2, 0:1] via nvlink after [1, 3]
    m2n.step 11 reduce<max> slots(0) [0:2, 0:1] -> quantizer(1) [0:2, 0:1] via nvlink after [0, 4]
    // expected-error@+1 {{max-reduces into holder(3) [0:1, 0:1] without waiting for step 6, which copies into it}}
    m2n.step 12 reduce<max> slots(1) [0:1, 0:1] -> holder(3) [0:1, 0:1] via nvlink after [1]
    m2n.step 13 reduce<max> slots(1) [1:2, 0:1] -> holder(4) [0:1, 0:1] via nvlink after [1, 8]
    m2n.step 14 scale holder(3) [0:1, 0:2] -> scales(3) [0:1, 0:2] via local after [6, 7, 12]
    m2n.step 15 scale holder(4) [0:1, 0:2] -> scales(4) [0:1, 0:2] via local after [8, 9, 13]
    m2n.step 16 copy src(0) [0:2, 0:2] -> dst(3) [0:2, 0:2] via nvlink after [3, 10]
    m2n.step 17 copy src(1) [0:2, 0:2] -> dst(3) [0:2, 2:4] via nvlink after [4, 11]
    m2n.step 18 copy src(2) [0:2, 0:2] -> dst(3) [0:2, 4:6] via nvlink after [5]
    m2n.step 19 copy src(0) [2:4, 0:2] -> dst(4) [0:2, 0:2] via nvlink after [3, 10]
    m2n.step 20 copy src(1) [2:4, 0:2] -> dst(4) [0:2, 2:4] via nvlink after [4, 11]
    m2n.step 21 copy src(2) [2:4, 0:2] -> dst(4) [0:2, 4:6] via nvlink after [5]
  }
  return
}

// -----

// A scale write before the holder entries it reads.
func.func @f(%c: !m2n.comm<5>, %w: !m2n.dist<4x6xbf16, #m2n.layout<#m2n.mesh<[3]>, [shard<1>]>>) {
  %q, %s = m2n.schedule %w on %c strategy = "flat" topology(#m2n.topology<domain_size = 5, nvlink_gbps = 4.500000e+02, network_gbps = 5.000000e+01>) {scaling = #m2n.scaling<block(2, 4)>} : !m2n.comm<5>, !m2n.dist<4x6xbf16, #m2n.layout<#m2n.mesh<[3]>, [shard<1>]>> -> !m2n.dist<4x6xf8E4M3FN, #m2n.layout<#m2n.mesh<[2], base = 3>, [shard<0>]>>, !m2n.dist<2x2xf32, #m2n.layout<#m2n.mesh<[2], base = 3>, [shard<0>]>> {
    m2n.step 0 amax src(0) [0:2, 0:1] -> slots(0) [0:2, 0:1] via local
    m2n.step 1 amax src(1) [0:2, 0:1] -> slots(1) [0:2, 0:1] via local
    m2n.step 2 amax src(2) [0:2, 0:1] -> slots(2) [0:2, 0:1] via local
    m2n.step 3 copy slots(0) [0:2, 0:1] -> quantizer(0) [0:2, 0:1] via local after [0]
    m2n.step 4 copy slots(1) [0:2, 0:1] -> quantizer(1) [0:2, 0:1] via local after [1]
    m2n.step 5 copy slots(2) [0:2, 0:1] -> quantizer(2) [0:2, 0:1] via local after [2]
    m2n.step 6 copy slots(0) [0:1, 0:1] -> holder(3) [0:1, 0:1] via nvlink after [0]
    m2n.step 7 copy slots(2) [0:1, 0:1] -> holder(3) [0:1, 1:2] via nvlink after [2]
    m2n.step 8 copy slots(0) [1:2, 0:1] -> holder(4) [0:1, 0:1] via nvlink after [0]
    m2n.step 9 copy slots(2) [1:2, 0:1] -> holder(4) [0:1, 1:2] via nvlink after [2]
    m2n.step 10 reduce<max> slots(1) [0:2, 0:1] -> quantizer(0) [0:2, 0:1] via nvlink after [1, 3]
    m2n.step 11 reduce<max> slots(0) [0:2, 0:1] -> quantizer(1) [0:2, 0:1] via nvlink after [0, 4]
    m2n.step 12 reduce<max> slots(1) [0:1, 0:1] -> holder(3) [0:1, 0:1] via nvlink after [1, 6]
    m2n.step 13 reduce<max> slots(1) [1:2, 0:1] -> holder(4) [0:1, 0:1] via nvlink after [1, 8]
    // expected-error@+1 {{reads holder(3) [0:1, 0:1] without waiting for step 12, which writes it}}
    m2n.step 14 scale holder(3) [0:1, 0:2] -> scales(3) [0:1, 0:2] via local after [6, 7]
    m2n.step 15 scale holder(4) [0:1, 0:2] -> scales(4) [0:1, 0:2] via local after [8, 9, 13]
    m2n.step 16 copy src(0) [0:2, 0:2] -> dst(3) [0:2, 0:2] via nvlink after [3, 10]
    m2n.step 17 copy src(1) [0:2, 0:2] -> dst(3) [0:2, 2:4] via nvlink after [4, 11]
    m2n.step 18 copy src(2) [0:2, 0:2] -> dst(3) [0:2, 4:6] via nvlink after [5]
    m2n.step 19 copy src(0) [2:4, 0:2] -> dst(4) [0:2, 0:2] via nvlink after [3, 10]
    m2n.step 20 copy src(1) [2:4, 0:2] -> dst(4) [0:2, 2:4] via nvlink after [4, 11]
    m2n.step 21 copy src(2) [2:4, 0:2] -> dst(4) [0:2, 4:6] via nvlink after [5]
  }
  return
}

// -----

// A straddling block copied from both shares.
func.func @f(%c: !m2n.comm<5>, %w: !m2n.dist<4x6xbf16, #m2n.layout<#m2n.mesh<[3]>, [shard<1>]>>) {
  // expected-error@+1 {{the holder table of rank 3 gets block [0:1, 0:1] from 2 of its 2 shares with 2 copies (expected every share once, one copy)}}
  %q, %s = m2n.schedule %w on %c strategy = "flat" topology(#m2n.topology<domain_size = 5, nvlink_gbps = 4.500000e+02, network_gbps = 5.000000e+01>) {scaling = #m2n.scaling<block(2, 4)>} : !m2n.comm<5>, !m2n.dist<4x6xbf16, #m2n.layout<#m2n.mesh<[3]>, [shard<1>]>> -> !m2n.dist<4x6xf8E4M3FN, #m2n.layout<#m2n.mesh<[2], base = 3>, [shard<0>]>>, !m2n.dist<2x2xf32, #m2n.layout<#m2n.mesh<[2], base = 3>, [shard<0>]>> {
    m2n.step 0 amax src(0) [0:2, 0:1] -> slots(0) [0:2, 0:1] via local
    m2n.step 1 amax src(1) [0:2, 0:1] -> slots(1) [0:2, 0:1] via local
    m2n.step 2 amax src(2) [0:2, 0:1] -> slots(2) [0:2, 0:1] via local
    m2n.step 3 copy slots(0) [0:2, 0:1] -> quantizer(0) [0:2, 0:1] via local after [0]
    m2n.step 4 copy slots(1) [0:2, 0:1] -> quantizer(1) [0:2, 0:1] via local after [1]
    m2n.step 5 copy slots(2) [0:2, 0:1] -> quantizer(2) [0:2, 0:1] via local after [2]
    m2n.step 6 copy slots(0) [0:1, 0:1] -> holder(3) [0:1, 0:1] via nvlink after [0]
    m2n.step 7 copy slots(2) [0:1, 0:1] -> holder(3) [0:1, 1:2] via nvlink after [2]
    m2n.step 8 copy slots(0) [1:2, 0:1] -> holder(4) [0:1, 0:1] via nvlink after [0]
    m2n.step 9 copy slots(2) [1:2, 0:1] -> holder(4) [0:1, 1:2] via nvlink after [2]
    m2n.step 10 reduce<max> slots(1) [0:2, 0:1] -> quantizer(0) [0:2, 0:1] via nvlink after [1, 3]
    m2n.step 11 reduce<max> slots(0) [0:2, 0:1] -> quantizer(1) [0:2, 0:1] via nvlink after [0, 4]
    m2n.step 12 copy slots(1) [0:1, 0:1] -> holder(3) [0:1, 0:1] via nvlink after [1]
    m2n.step 13 reduce<max> slots(1) [1:2, 0:1] -> holder(4) [0:1, 0:1] via nvlink after [1, 8]
    m2n.step 14 scale holder(3) [0:1, 0:2] -> scales(3) [0:1, 0:2] via local after [6, 7, 12]
    m2n.step 15 scale holder(4) [0:1, 0:2] -> scales(4) [0:1, 0:2] via local after [8, 9, 13]
    m2n.step 16 copy src(0) [0:2, 0:2] -> dst(3) [0:2, 0:2] via nvlink after [3, 10]
    m2n.step 17 copy src(1) [0:2, 0:2] -> dst(3) [0:2, 2:4] via nvlink after [4, 11]
    m2n.step 18 copy src(2) [0:2, 0:2] -> dst(3) [0:2, 4:6] via nvlink after [5]
    m2n.step 19 copy src(0) [2:4, 0:2] -> dst(4) [0:2, 0:2] via nvlink after [3, 10]
    m2n.step 20 copy src(1) [2:4, 0:2] -> dst(4) [0:2, 2:4] via nvlink after [4, 11]
    m2n.step 21 copy src(2) [2:4, 0:2] -> dst(4) [0:2, 4:6] via nvlink after [5]
  }
  return
}

// -----

// A quantizer table without the max from its block's second share.
func.func @f(%c: !m2n.comm<5>, %w: !m2n.dist<4x6xbf16, #m2n.layout<#m2n.mesh<[3]>, [shard<1>]>>) {
  // expected-error@+1 {{the quantizer table of rank 0 gets block [1:2, 0:1] from 1 of its 2 shares with 1 copies (expected every share once, one copy)}}
  %q, %s = m2n.schedule %w on %c strategy = "flat" topology(#m2n.topology<domain_size = 5, nvlink_gbps = 4.500000e+02, network_gbps = 5.000000e+01>) {scaling = #m2n.scaling<block(2, 4)>} : !m2n.comm<5>, !m2n.dist<4x6xbf16, #m2n.layout<#m2n.mesh<[3]>, [shard<1>]>> -> !m2n.dist<4x6xf8E4M3FN, #m2n.layout<#m2n.mesh<[2], base = 3>, [shard<0>]>>, !m2n.dist<2x2xf32, #m2n.layout<#m2n.mesh<[2], base = 3>, [shard<0>]>> {
    m2n.step 0 amax src(0) [0:2, 0:1] -> slots(0) [0:2, 0:1] via local
    m2n.step 1 amax src(1) [0:2, 0:1] -> slots(1) [0:2, 0:1] via local
    m2n.step 2 amax src(2) [0:2, 0:1] -> slots(2) [0:2, 0:1] via local
    m2n.step 3 copy slots(0) [0:2, 0:1] -> quantizer(0) [0:2, 0:1] via local after [0]
    m2n.step 4 copy slots(1) [0:2, 0:1] -> quantizer(1) [0:2, 0:1] via local after [1]
    m2n.step 5 copy slots(2) [0:2, 0:1] -> quantizer(2) [0:2, 0:1] via local after [2]
    m2n.step 6 copy slots(0) [0:1, 0:1] -> holder(3) [0:1, 0:1] via nvlink after [0]
    m2n.step 7 copy slots(2) [0:1, 0:1] -> holder(3) [0:1, 1:2] via nvlink after [2]
    m2n.step 8 copy slots(0) [1:2, 0:1] -> holder(4) [0:1, 0:1] via nvlink after [0]
    m2n.step 9 copy slots(2) [1:2, 0:1] -> holder(4) [0:1, 1:2] via nvlink after [2]
    m2n.step 10 reduce<max> slots(1) [0:1, 0:1] -> quantizer(0) [0:1, 0:1] via nvlink after [1, 3]
    m2n.step 11 reduce<max> slots(0) [0:2, 0:1] -> quantizer(1) [0:2, 0:1] via nvlink after [0, 4]
    m2n.step 12 reduce<max> slots(1) [0:1, 0:1] -> holder(3) [0:1, 0:1] via nvlink after [1, 6]
    m2n.step 13 reduce<max> slots(1) [1:2, 0:1] -> holder(4) [0:1, 0:1] via nvlink after [1, 8]
    m2n.step 14 scale holder(3) [0:1, 0:2] -> scales(3) [0:1, 0:2] via local after [6, 7, 12]
    m2n.step 15 scale holder(4) [0:1, 0:2] -> scales(4) [0:1, 0:2] via local after [8, 9, 13]
    m2n.step 16 copy src(0) [0:2, 0:2] -> dst(3) [0:2, 0:2] via nvlink after [3, 10]
    m2n.step 17 copy src(1) [0:2, 0:2] -> dst(3) [0:2, 2:4] via nvlink after [4, 11]
    m2n.step 18 copy src(2) [0:2, 0:2] -> dst(3) [0:2, 4:6] via nvlink after [5]
    m2n.step 19 copy src(0) [2:4, 0:2] -> dst(4) [0:2, 0:2] via nvlink after [3, 10]
    m2n.step 20 copy src(1) [2:4, 0:2] -> dst(4) [0:2, 2:4] via nvlink after [4, 11]
    m2n.step 21 copy src(2) [2:4, 0:2] -> dst(4) [0:2, 4:6] via nvlink after [5]
  }
  return
}

// -----

// Two amax steps of one rank computing the same block.
func.func @f(%c: !m2n.comm<5>, %w: !m2n.dist<4x6xbf16, #m2n.layout<#m2n.mesh<[3]>, [shard<1>]>>) {
  %q, %s = m2n.schedule %w on %c strategy = "flat" topology(#m2n.topology<domain_size = 5, nvlink_gbps = 4.500000e+02, network_gbps = 5.000000e+01>) {scaling = #m2n.scaling<block(2, 4)>} : !m2n.comm<5>, !m2n.dist<4x6xbf16, #m2n.layout<#m2n.mesh<[3]>, [shard<1>]>> -> !m2n.dist<4x6xf8E4M3FN, #m2n.layout<#m2n.mesh<[2], base = 3>, [shard<0>]>>, !m2n.dist<2x2xf32, #m2n.layout<#m2n.mesh<[2], base = 3>, [shard<0>]>> {
    m2n.step 0 amax src(0) [0:2, 0:1] -> slots(0) [0:2, 0:1] via local
    // expected-error@+1 {{computes the amaxes of blocks [1:2, 0:1] of rank 0, which step 0 computes too}}
    m2n.step 1 amax src(0) [1:2, 0:1] -> slots(0) [1:2, 0:1] via local
    m2n.step 2 amax src(2) [0:2, 0:1] -> slots(2) [0:2, 0:1] via local
    m2n.step 3 copy slots(0) [0:2, 0:1] -> quantizer(0) [0:2, 0:1] via local after [0]
    m2n.step 4 copy slots(1) [0:2, 0:1] -> quantizer(1) [0:2, 0:1] via local after [1]
    m2n.step 5 copy slots(2) [0:2, 0:1] -> quantizer(2) [0:2, 0:1] via local after [2]
    m2n.step 6 copy slots(0) [0:1, 0:1] -> holder(3) [0:1, 0:1] via nvlink after [0]
    m2n.step 7 copy slots(2) [0:1, 0:1] -> holder(3) [0:1, 1:2] via nvlink after [2]
    m2n.step 8 copy slots(0) [1:2, 0:1] -> holder(4) [0:1, 0:1] via nvlink after [0]
    m2n.step 9 copy slots(2) [1:2, 0:1] -> holder(4) [0:1, 1:2] via nvlink after [2]
    m2n.step 10 reduce<max> slots(1) [0:2, 0:1] -> quantizer(0) [0:2, 0:1] via nvlink after [1, 3]
    m2n.step 11 reduce<max> slots(0) [0:2, 0:1] -> quantizer(1) [0:2, 0:1] via nvlink after [0, 4]
    m2n.step 12 reduce<max> slots(1) [0:1, 0:1] -> holder(3) [0:1, 0:1] via nvlink after [1, 6]
    m2n.step 13 reduce<max> slots(1) [1:2, 0:1] -> holder(4) [0:1, 0:1] via nvlink after [1, 8]
    m2n.step 14 scale holder(3) [0:1, 0:2] -> scales(3) [0:1, 0:2] via local after [6, 7, 12]
    m2n.step 15 scale holder(4) [0:1, 0:2] -> scales(4) [0:1, 0:2] via local after [8, 9, 13]
    m2n.step 16 copy src(0) [0:2, 0:2] -> dst(3) [0:2, 0:2] via nvlink after [3, 10]
    m2n.step 17 copy src(1) [0:2, 0:2] -> dst(3) [0:2, 2:4] via nvlink after [4, 11]
    m2n.step 18 copy src(2) [0:2, 0:2] -> dst(3) [0:2, 4:6] via nvlink after [5]
    m2n.step 19 copy src(0) [2:4, 0:2] -> dst(4) [0:2, 0:2] via nvlink after [3, 10]
    m2n.step 20 copy src(1) [2:4, 0:2] -> dst(4) [0:2, 2:4] via nvlink after [4, 11]
    m2n.step 21 copy src(2) [2:4, 0:2] -> dst(4) [0:2, 4:6] via nvlink after [5]
  }
  return
}

// -----

// An exchange from a scratch staging amaxes that no step stages into.
func.func @f(%c: !m2n.comm<5>, %w: !m2n.dist<4x6xbf16, #m2n.layout<#m2n.mesh<[3]>, [shard<1>]>>) {
  %q, %s = m2n.schedule %w on %c strategy = "flat" topology(#m2n.topology<domain_size = 5, nvlink_gbps = 4.500000e+02, network_gbps = 5.000000e+01>) {scaling = #m2n.scaling<block(2, 4)>} : !m2n.comm<5>, !m2n.dist<4x6xbf16, #m2n.layout<#m2n.mesh<[3]>, [shard<1>]>> -> !m2n.dist<4x6xf8E4M3FN, #m2n.layout<#m2n.mesh<[2], base = 3>, [shard<0>]>>, !m2n.dist<2x2xf32, #m2n.layout<#m2n.mesh<[2], base = 3>, [shard<0>]>> {
    m2n.scratch 0 on 3 [1, 1] amaxes
    m2n.step 0 amax src(0) [0:2, 0:1] -> slots(0) [0:2, 0:1] via local
    m2n.step 1 amax src(1) [0:2, 0:1] -> slots(1) [0:2, 0:1] via local
    m2n.step 2 amax src(2) [0:2, 0:1] -> slots(2) [0:2, 0:1] via local
    m2n.step 3 copy slots(0) [0:2, 0:1] -> quantizer(0) [0:2, 0:1] via local after [0]
    m2n.step 4 copy slots(1) [0:2, 0:1] -> quantizer(1) [0:2, 0:1] via local after [1]
    m2n.step 5 copy slots(2) [0:2, 0:1] -> quantizer(2) [0:2, 0:1] via local after [2]
    // expected-error@+1 {{reads scratch0(3), which no step stages amaxes into}}
    m2n.step 6 copy scratch0(3) [0:1, 0:1] -> holder(3) [0:1, 0:1] via local after [0]
    m2n.step 7 copy slots(2) [0:1, 0:1] -> holder(3) [0:1, 1:2] via nvlink after [2]
    m2n.step 8 copy slots(0) [1:2, 0:1] -> holder(4) [0:1, 0:1] via nvlink after [0]
    m2n.step 9 copy slots(2) [1:2, 0:1] -> holder(4) [0:1, 1:2] via nvlink after [2]
    m2n.step 10 reduce<max> slots(1) [0:2, 0:1] -> quantizer(0) [0:2, 0:1] via nvlink after [1, 3]
    m2n.step 11 reduce<max> slots(0) [0:2, 0:1] -> quantizer(1) [0:2, 0:1] via nvlink after [0, 4]
    m2n.step 12 reduce<max> slots(1) [0:1, 0:1] -> holder(3) [0:1, 0:1] via nvlink after [1, 6]
    m2n.step 13 reduce<max> slots(1) [1:2, 0:1] -> holder(4) [0:1, 0:1] via nvlink after [1, 8]
    m2n.step 14 scale holder(3) [0:1, 0:2] -> scales(3) [0:1, 0:2] via local after [6, 7, 12]
    m2n.step 15 scale holder(4) [0:1, 0:2] -> scales(4) [0:1, 0:2] via local after [8, 9, 13]
    m2n.step 16 copy src(0) [0:2, 0:2] -> dst(3) [0:2, 0:2] via nvlink after [3, 10]
    m2n.step 17 copy src(1) [0:2, 0:2] -> dst(3) [0:2, 2:4] via nvlink after [4, 11]
    m2n.step 18 copy src(2) [0:2, 0:2] -> dst(3) [0:2, 4:6] via nvlink after [5]
    m2n.step 19 copy src(0) [2:4, 0:2] -> dst(4) [0:2, 0:2] via nvlink after [3, 10]
    m2n.step 20 copy src(1) [2:4, 0:2] -> dst(4) [0:2, 2:4] via nvlink after [4, 11]
    m2n.step 21 copy src(2) [2:4, 0:2] -> dst(4) [0:2, 4:6] via nvlink after [5]
  }
  return
}

// -----

// Bands (route-topology-scaling.mlir's @bands): each quantizing move waits
// only for the band of its source rank's quantizer table it reads. Valid.
!src = !m2n.dist<4x8xbf16, #m2n.layout<#m2n.mesh<[2]>, [shard<1>]>>
!q = !m2n.dist<4x8xf8E4M3FN, #m2n.layout<#m2n.mesh<[2], base = 2>, [shard<0>]>>
!s = !m2n.dist<2x4xf32, #m2n.layout<#m2n.mesh<[2], base = 2>, [shard<0>]>>
#topology = #m2n.topology<domain_size = 4, nvlink_gbps = 4.500000e+02, network_gbps = 5.000000e+01>
func.func @f(%c: !m2n.comm<4>, %w: !src) {
  %q, %s = m2n.schedule %w on %c strategy = "hierarchical" topology(#topology) {scaling = #m2n.scaling<block(2, 2)>} : !m2n.comm<4>, !src -> !q, !s {
    m2n.step 0 amax src(0) [0:1, 0:2] -> slots(0) [0:1, 0:2] via local
    m2n.step 1 amax src(1) [0:1, 0:2] -> slots(1) [0:1, 0:2] via local
    m2n.step 2 copy slots(0) [0:1, 0:2] -> quantizer(0) [0:1, 0:2] via local after [0]
    m2n.step 3 copy slots(1) [0:1, 0:2] -> quantizer(1) [0:1, 0:2] via local after [1]
    m2n.step 4 amax src(0) [1:2, 0:2] -> slots(0) [1:2, 0:2] via local
    m2n.step 5 amax src(1) [1:2, 0:2] -> slots(1) [1:2, 0:2] via local
    m2n.step 6 copy slots(0) [1:2, 0:2] -> quantizer(0) [1:2, 0:2] via local after [4]
    m2n.step 7 copy slots(1) [1:2, 0:2] -> quantizer(1) [1:2, 0:2] via local after [5]
    m2n.step 8 copy src(0) [0:2, 0:4] -> dst(2) [0:2, 0:4] via nvlink after [2]
    m2n.step 9 copy src(1) [0:2, 0:4] -> dst(2) [0:2, 4:8] via nvlink after [3]
    m2n.step 10 copy src(0) [2:4, 0:4] -> dst(3) [0:2, 0:4] via nvlink after [6]
    m2n.step 11 copy src(1) [2:4, 0:4] -> dst(3) [0:2, 4:8] via nvlink after [7]
    m2n.step 12 copy slots(0) [0:1, 0:2] -> holder(2) [0:1, 0:2] via nvlink after [0]
    m2n.step 13 copy slots(1) [0:1, 0:2] -> holder(2) [0:1, 2:4] via nvlink after [1]
    m2n.step 14 copy slots(0) [1:2, 0:2] -> holder(3) [0:1, 0:2] via nvlink after [4]
    m2n.step 15 copy slots(1) [1:2, 0:2] -> holder(3) [0:1, 2:4] via nvlink after [5]
    m2n.step 16 scale holder(2) [0:1, 0:4] -> scales(2) [0:1, 0:4] via local after [12, 13]
    m2n.step 17 scale holder(3) [0:1, 0:4] -> scales(3) [0:1, 0:4] via local after [14, 15]
  }
  return
}

// -----

// A quantizing move that waits for the other band of its quantizer table.
!src = !m2n.dist<4x8xbf16, #m2n.layout<#m2n.mesh<[2]>, [shard<1>]>>
!q = !m2n.dist<4x8xf8E4M3FN, #m2n.layout<#m2n.mesh<[2], base = 2>, [shard<0>]>>
!s = !m2n.dist<2x4xf32, #m2n.layout<#m2n.mesh<[2], base = 2>, [shard<0>]>>
#topology = #m2n.topology<domain_size = 4, nvlink_gbps = 4.500000e+02, network_gbps = 5.000000e+01>
func.func @f(%c: !m2n.comm<4>, %w: !src) {
  %q, %s = m2n.schedule %w on %c strategy = "hierarchical" topology(#topology) {scaling = #m2n.scaling<block(2, 2)>} : !m2n.comm<4>, !src -> !q, !s {
    m2n.step 0 amax src(0) [0:1, 0:2] -> slots(0) [0:1, 0:2] via local
    m2n.step 1 amax src(1) [0:1, 0:2] -> slots(1) [0:1, 0:2] via local
    m2n.step 2 copy slots(0) [0:1, 0:2] -> quantizer(0) [0:1, 0:2] via local after [0]
    m2n.step 3 copy slots(1) [0:1, 0:2] -> quantizer(1) [0:1, 0:2] via local after [1]
    m2n.step 4 amax src(0) [1:2, 0:2] -> slots(0) [1:2, 0:2] via local
    m2n.step 5 amax src(1) [1:2, 0:2] -> slots(1) [1:2, 0:2] via local
    m2n.step 6 copy slots(0) [1:2, 0:2] -> quantizer(0) [1:2, 0:2] via local after [4]
    m2n.step 7 copy slots(1) [1:2, 0:2] -> quantizer(1) [1:2, 0:2] via local after [5]
    m2n.step 8 copy src(0) [0:2, 0:4] -> dst(2) [0:2, 0:4] via nvlink after [2]
    m2n.step 9 copy src(1) [0:2, 0:4] -> dst(2) [0:2, 4:8] via nvlink after [3]
    // expected-error@+1 {{quantizes with quantizer(0) [1:2, 0:2] without waiting for step 6, which writes it}}
    m2n.step 10 copy src(0) [2:4, 0:4] -> dst(3) [0:2, 0:4] via nvlink after [2]
    m2n.step 11 copy src(1) [2:4, 0:4] -> dst(3) [0:2, 4:8] via nvlink after [7]
    m2n.step 12 copy slots(0) [0:1, 0:2] -> holder(2) [0:1, 0:2] via nvlink after [0]
    m2n.step 13 copy slots(1) [0:1, 0:2] -> holder(2) [0:1, 2:4] via nvlink after [1]
    m2n.step 14 copy slots(0) [1:2, 0:2] -> holder(3) [0:1, 0:2] via nvlink after [4]
    m2n.step 15 copy slots(1) [1:2, 0:2] -> holder(3) [0:1, 2:4] via nvlink after [5]
    m2n.step 16 scale holder(2) [0:1, 0:4] -> scales(2) [0:1, 0:4] via local after [12, 13]
    m2n.step 17 scale holder(3) [0:1, 0:4] -> scales(3) [0:1, 0:4] via local after [14, 15]
  }
  return
}

// -----

// An exchange that waits for the other band of the share it reads.
!src = !m2n.dist<4x8xbf16, #m2n.layout<#m2n.mesh<[2]>, [shard<1>]>>
!q = !m2n.dist<4x8xf8E4M3FN, #m2n.layout<#m2n.mesh<[2], base = 2>, [shard<0>]>>
!s = !m2n.dist<2x4xf32, #m2n.layout<#m2n.mesh<[2], base = 2>, [shard<0>]>>
#topology = #m2n.topology<domain_size = 4, nvlink_gbps = 4.500000e+02, network_gbps = 5.000000e+01>
func.func @f(%c: !m2n.comm<4>, %w: !src) {
  %q, %s = m2n.schedule %w on %c strategy = "hierarchical" topology(#topology) {scaling = #m2n.scaling<block(2, 2)>} : !m2n.comm<4>, !src -> !q, !s {
    m2n.step 0 amax src(0) [0:1, 0:2] -> slots(0) [0:1, 0:2] via local
    m2n.step 1 amax src(1) [0:1, 0:2] -> slots(1) [0:1, 0:2] via local
    m2n.step 2 copy slots(0) [0:1, 0:2] -> quantizer(0) [0:1, 0:2] via local after [0]
    m2n.step 3 copy slots(1) [0:1, 0:2] -> quantizer(1) [0:1, 0:2] via local after [1]
    m2n.step 4 amax src(0) [1:2, 0:2] -> slots(0) [1:2, 0:2] via local
    m2n.step 5 amax src(1) [1:2, 0:2] -> slots(1) [1:2, 0:2] via local
    // expected-error@+1 {{reads slots(0) [1:2, 0:2] without waiting for step 4, which computes it}}
    m2n.step 6 copy slots(0) [1:2, 0:2] -> quantizer(0) [1:2, 0:2] via local after [0]
    m2n.step 7 copy slots(1) [1:2, 0:2] -> quantizer(1) [1:2, 0:2] via local after [5]
    m2n.step 8 copy src(0) [0:2, 0:4] -> dst(2) [0:2, 0:4] via nvlink after [2]
    m2n.step 9 copy src(1) [0:2, 0:4] -> dst(2) [0:2, 4:8] via nvlink after [3]
    m2n.step 10 copy src(0) [2:4, 0:4] -> dst(3) [0:2, 0:4] via nvlink after [6]
    m2n.step 11 copy src(1) [2:4, 0:4] -> dst(3) [0:2, 4:8] via nvlink after [7]
    m2n.step 12 copy slots(0) [0:1, 0:2] -> holder(2) [0:1, 0:2] via nvlink after [0]
    m2n.step 13 copy slots(1) [0:1, 0:2] -> holder(2) [0:1, 2:4] via nvlink after [1]
    m2n.step 14 copy slots(0) [1:2, 0:2] -> holder(3) [0:1, 0:2] via nvlink after [4]
    m2n.step 15 copy slots(1) [1:2, 0:2] -> holder(3) [0:1, 2:4] via nvlink after [5]
    m2n.step 16 scale holder(2) [0:1, 0:4] -> scales(2) [0:1, 0:4] via local after [12, 13]
    m2n.step 17 scale holder(3) [0:1, 0:4] -> scales(3) [0:1, 0:4] via local after [14, 15]
  }
  return
}

// -----

// A rank's amax steps that do not make one box.
!src = !m2n.dist<4x8xbf16, #m2n.layout<#m2n.mesh<[2]>, [shard<1>]>>
!q = !m2n.dist<4x8xf8E4M3FN, #m2n.layout<#m2n.mesh<[2], base = 2>, [shard<0>]>>
!s = !m2n.dist<2x4xf32, #m2n.layout<#m2n.mesh<[2], base = 2>, [shard<0>]>>
#topology = #m2n.topology<domain_size = 4, nvlink_gbps = 4.500000e+02, network_gbps = 5.000000e+01>
func.func @f(%c: !m2n.comm<4>, %w: !src) {
  %q, %s = m2n.schedule %w on %c strategy = "hierarchical" topology(#topology) {scaling = #m2n.scaling<block(2, 2)>} : !m2n.comm<4>, !src -> !q, !s {
    // expected-error@+1 {{the amax steps of rank 0 compute 3 of the 4 blocks of [0:2, 0:2]: a share is one box}}
    m2n.step 0 amax src(0) [0:1, 0:2] -> slots(0) [0:1, 0:2] via local
    m2n.step 1 amax src(1) [0:1, 0:2] -> slots(1) [0:1, 0:2] via local
    m2n.step 2 copy slots(0) [0:1, 0:2] -> quantizer(0) [0:1, 0:2] via local after [0]
    m2n.step 3 copy slots(1) [0:1, 0:2] -> quantizer(1) [0:1, 0:2] via local after [1]
    m2n.step 4 amax src(0) [1:2, 0:1] -> slots(0) [1:2, 0:1] via local
    m2n.step 5 amax src(1) [1:2, 0:2] -> slots(1) [1:2, 0:2] via local
    m2n.step 6 copy slots(0) [1:2, 0:2] -> quantizer(0) [1:2, 0:2] via local after [4]
    m2n.step 7 copy slots(1) [1:2, 0:2] -> quantizer(1) [1:2, 0:2] via local after [5]
    m2n.step 8 copy src(0) [0:2, 0:4] -> dst(2) [0:2, 0:4] via nvlink after [2]
    m2n.step 9 copy src(1) [0:2, 0:4] -> dst(2) [0:2, 4:8] via nvlink after [3]
    m2n.step 10 copy src(0) [2:4, 0:4] -> dst(3) [0:2, 0:4] via nvlink after [6]
    m2n.step 11 copy src(1) [2:4, 0:4] -> dst(3) [0:2, 4:8] via nvlink after [7]
    m2n.step 12 copy slots(0) [0:1, 0:2] -> holder(2) [0:1, 0:2] via nvlink after [0]
    m2n.step 13 copy slots(1) [0:1, 0:2] -> holder(2) [0:1, 2:4] via nvlink after [1]
    m2n.step 14 copy slots(0) [1:2, 0:2] -> holder(3) [0:1, 0:2] via nvlink after [4]
    m2n.step 15 copy slots(1) [1:2, 0:2] -> holder(3) [0:1, 2:4] via nvlink after [5]
    m2n.step 16 scale holder(2) [0:1, 0:4] -> scales(2) [0:1, 0:4] via local after [12, 13]
    m2n.step 17 scale holder(3) [0:1, 0:4] -> scales(3) [0:1, 0:4] via local after [14, 15]
  }
  return
}
