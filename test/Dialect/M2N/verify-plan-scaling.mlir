// --m2n-verify-plan on the amax shares and the exchange of a quantizing
// plan: each problem named on the plan or on the m2n.exchange at fault.
// RUN: m2n-opt %s --m2n-verify-plan -split-input-file -verify-diagnostics
// RUN: not m2n-sim --no-verify %S/Inputs/scaling-missing-exchange.mlir 2>&1 | FileCheck %s --check-prefix=SIM
// SIM: exchange 1 [0:2, 0:1] -> 0 [0:2, 0:1] max reduces onto a table entry no copy wrote

// Rank 1's max-reduction into rank 3's holder table is missing.
func.func @missing_max(%c: !m2n.comm<5>, %w: !m2n.dist<4x6xbf16, #m2n.layout<#m2n.mesh<[3]>, [shard<1>]>>) {
  // expected-error@+1 {{the holder table of rank 3 gets block [0:1, 0:1] from 1 of its 2 shares with 1 copies (expected every share once, one copy)}}
  %q, %s = m2n.plan %w on %c {scaling = #m2n.scaling<block(2, 4)>} : !m2n.comm<5>, !m2n.dist<4x6xbf16, #m2n.layout<#m2n.mesh<[3]>, [shard<1>]>> -> !m2n.dist<4x6xf8E4M3FN, #m2n.layout<#m2n.mesh<[2], base = 3>, [shard<0>]>>, !m2n.dist<2x2xf32, #m2n.layout<#m2n.mesh<[2], base = 3>, [shard<0>]>> {
    m2n.transfer copy from 0 [0:2, 0:2] to 3 [0:2, 0:2]
    m2n.transfer copy from 1 [0:2, 0:2] to 3 [0:2, 2:4]
    m2n.transfer copy from 2 [0:2, 0:2] to 3 [0:2, 4:6]
    m2n.transfer copy from 0 [2:4, 0:2] to 4 [0:2, 0:2]
    m2n.transfer copy from 1 [2:4, 0:2] to 4 [0:2, 2:4]
    m2n.transfer copy from 2 [2:4, 0:2] to 4 [0:2, 4:6]
    m2n.amax on 0 blocks [0:2, 0:1]
    m2n.amax on 1 blocks [0:2, 0:1]
    m2n.amax on 2 blocks [0:2, 1:2]
    m2n.exchange copy from 0 [0:2, 0:1] to 0 quantizer [0:2, 0:1]
    m2n.exchange copy from 1 [0:2, 0:1] to 1 quantizer [0:2, 0:1]
    m2n.exchange copy from 2 [0:2, 0:1] to 2 quantizer [0:2, 0:1]
    m2n.exchange copy from 0 [0:1, 0:1] to 3 holder [0:1, 0:1]
    m2n.exchange copy from 2 [0:1, 0:1] to 3 holder [0:1, 1:2]
    m2n.exchange copy from 0 [1:2, 0:1] to 4 holder [0:1, 0:1]
    m2n.exchange copy from 2 [1:2, 0:1] to 4 holder [0:1, 1:2]
    m2n.exchange max from 1 [0:2, 0:1] to 0 quantizer [0:2, 0:1]
    m2n.exchange max from 0 [0:2, 0:1] to 1 quantizer [0:2, 0:1]
    m2n.exchange max from 1 [1:2, 0:1] to 4 holder [0:1, 0:1]
  }
  return
}

// -----

// Rank 2 computes no amax: block column 1's elements are in no share.
func.func @uncovered_block(%c: !m2n.comm<5>, %w: !m2n.dist<4x6xbf16, #m2n.layout<#m2n.mesh<[3]>, [shard<1>]>>) {
  // expected-error@+2 {{the amax shares cover 0 of the 4 elements of block [0:1, 1:2]}}
  // expected-error@+1 {{the amax shares cover 0 of the 4 elements of block [1:2, 1:2]}}
  %q, %s = m2n.plan %w on %c {scaling = #m2n.scaling<block(2, 4)>} : !m2n.comm<5>, !m2n.dist<4x6xbf16, #m2n.layout<#m2n.mesh<[3]>, [shard<1>]>> -> !m2n.dist<4x6xf8E4M3FN, #m2n.layout<#m2n.mesh<[2], base = 3>, [shard<0>]>>, !m2n.dist<2x2xf32, #m2n.layout<#m2n.mesh<[2], base = 3>, [shard<0>]>> {
    m2n.transfer copy from 0 [0:2, 0:2] to 3 [0:2, 0:2]
    m2n.transfer copy from 1 [0:2, 0:2] to 3 [0:2, 2:4]
    m2n.transfer copy from 2 [0:2, 0:2] to 3 [0:2, 4:6]
    m2n.transfer copy from 0 [2:4, 0:2] to 4 [0:2, 0:2]
    m2n.transfer copy from 1 [2:4, 0:2] to 4 [0:2, 2:4]
    m2n.transfer copy from 2 [2:4, 0:2] to 4 [0:2, 4:6]
    m2n.amax on 0 blocks [0:2, 0:1]
    m2n.amax on 1 blocks [0:2, 0:1]
  }
  return
}

// -----

// An exchange reading past the slots rank 1 computes (block column 0).
func.func @reads_uncomputed_slots(%c: !m2n.comm<5>, %w: !m2n.dist<4x6xbf16, #m2n.layout<#m2n.mesh<[3]>, [shard<1>]>>) {
  %q, %s = m2n.plan %w on %c {scaling = #m2n.scaling<block(2, 4)>} : !m2n.comm<5>, !m2n.dist<4x6xbf16, #m2n.layout<#m2n.mesh<[3]>, [shard<1>]>> -> !m2n.dist<4x6xf8E4M3FN, #m2n.layout<#m2n.mesh<[2], base = 3>, [shard<0>]>>, !m2n.dist<2x2xf32, #m2n.layout<#m2n.mesh<[2], base = 3>, [shard<0>]>> {
    m2n.transfer copy from 0 [0:2, 0:2] to 3 [0:2, 0:2]
    m2n.transfer copy from 1 [0:2, 0:2] to 3 [0:2, 2:4]
    m2n.transfer copy from 2 [0:2, 0:2] to 3 [0:2, 4:6]
    m2n.transfer copy from 0 [2:4, 0:2] to 4 [0:2, 0:2]
    m2n.transfer copy from 1 [2:4, 0:2] to 4 [0:2, 2:4]
    m2n.transfer copy from 2 [2:4, 0:2] to 4 [0:2, 4:6]
    m2n.amax on 0 blocks [0:2, 0:1]
    m2n.amax on 1 blocks [0:2, 0:1]
    m2n.amax on 2 blocks [0:2, 1:2]
    m2n.exchange copy from 0 [0:2, 0:1] to 0 quantizer [0:2, 0:1]
    m2n.exchange copy from 1 [0:2, 0:1] to 1 quantizer [0:2, 0:1]
    m2n.exchange copy from 2 [0:2, 0:1] to 2 quantizer [0:2, 0:1]
    m2n.exchange copy from 0 [0:1, 0:1] to 3 holder [0:1, 0:1]
    m2n.exchange copy from 2 [0:1, 0:1] to 3 holder [0:1, 1:2]
    m2n.exchange copy from 0 [1:2, 0:1] to 4 holder [0:1, 0:1]
    m2n.exchange copy from 2 [1:2, 0:1] to 4 holder [0:1, 1:2]
    m2n.exchange max from 1 [0:2, 0:1] to 0 quantizer [0:2, 0:1]
    m2n.exchange max from 0 [0:2, 0:1] to 1 quantizer [0:2, 0:1]
    m2n.exchange max from 1 [0:1, 0:1] to 3 holder [0:1, 0:1]
    m2n.exchange max from 1 [1:2, 0:1] to 4 holder [0:1, 0:1]
    // expected-error@+1 {{reads slots [1:3, 0:1] of rank 1, which computes only [0:2, 0:1]}}
    m2n.exchange copy from 1 [1:3, 0:1] to 1 quantizer [1:3, 0:1]
  }
  return
}

// -----

func.func @exchange_without_scaling(%c: !m2n.comm<5>, %w: !m2n.dist<4x6xbf16, #m2n.layout<#m2n.mesh<[3]>, [shard<1>]>>) {
  %q = m2n.plan %w on %c : !m2n.comm<5>, !m2n.dist<4x6xbf16, #m2n.layout<#m2n.mesh<[3]>, [shard<1>]>> -> !m2n.dist<4x6xbf16, #m2n.layout<#m2n.mesh<[2], base = 3>, [shard<0>]>> {
    // expected-error@+1 {{'m2n.exchange' op belongs to the plan of a reshard with a scaling; this plan has none}}
    m2n.exchange copy from 1 [0:2, 0:1] to 1 quantizer [0:2, 0:1]
  }
  return
}

// -----

func.func @bad_table(%c: !m2n.comm<5>, %w: !m2n.dist<4x6xbf16, #m2n.layout<#m2n.mesh<[3]>, [shard<1>]>>) {
  %q, %s = m2n.plan %w on %c {scaling = #m2n.scaling<block(2, 4)>} : !m2n.comm<5>, !m2n.dist<4x6xbf16, #m2n.layout<#m2n.mesh<[3]>, [shard<1>]>> -> !m2n.dist<4x6xf8E4M3FN, #m2n.layout<#m2n.mesh<[2], base = 3>, [shard<0>]>>, !m2n.dist<2x2xf32, #m2n.layout<#m2n.mesh<[2], base = 3>, [shard<0>]>> {
    // expected-error@+1 {{expected 'quantizer' or 'holder', got 'table'}}
    m2n.exchange copy from 1 [0:2, 0:1] to 1 table [0:2, 0:1]
  }
  return
}

// -----

func.func @holder_outside_the_destination(%c: !m2n.comm<5>, %w: !m2n.dist<4x6xbf16, #m2n.layout<#m2n.mesh<[3]>, [shard<1>]>>) {
  %q, %s = m2n.plan %w on %c {scaling = #m2n.scaling<block(2, 4)>} : !m2n.comm<5>, !m2n.dist<4x6xbf16, #m2n.layout<#m2n.mesh<[3]>, [shard<1>]>> -> !m2n.dist<4x6xf8E4M3FN, #m2n.layout<#m2n.mesh<[2], base = 3>, [shard<0>]>>, !m2n.dist<2x2xf32, #m2n.layout<#m2n.mesh<[2], base = 3>, [shard<0>]>> {
    // expected-error@+1 {{'m2n.exchange' op fills the holder table of rank 1, which is not in the destination mesh}}
    m2n.exchange copy from 1 [0:2, 0:1] to 1 holder [0:2, 0:1]
  }
  return
}

// -----

func.func @two_shares(%c: !m2n.comm<5>, %w: !m2n.dist<4x6xbf16, #m2n.layout<#m2n.mesh<[3]>, [shard<1>]>>) {
  %q, %s = m2n.plan %w on %c {scaling = #m2n.scaling<block(2, 4)>} : !m2n.comm<5>, !m2n.dist<4x6xbf16, #m2n.layout<#m2n.mesh<[3]>, [shard<1>]>> -> !m2n.dist<4x6xf8E4M3FN, #m2n.layout<#m2n.mesh<[2], base = 3>, [shard<0>]>>, !m2n.dist<2x2xf32, #m2n.layout<#m2n.mesh<[2], base = 3>, [shard<0>]>> {
    m2n.amax on 0 blocks [0:1, 0:1]
    // expected-error@+1 {{'m2n.amax' op gives rank 0 a second share; one m2n.amax per rank}}
    m2n.amax on 0 blocks [1:2, 0:1]
  }
  return
}
