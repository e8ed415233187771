// The program level of a quantizing reshard (docs/fp8-scaling.md):
// m2n-verify-program names every amax, scale or quantizing move that breaks
// the rules (kinds and buffers, lookups that find the tensor's blocks, the
// order of table reads and scale writes). The base program is what
// m2n-lower-schedule makes of an MX reshard of a 2 x 32 bf16 tensor from
// rank 0 to rank 1 (test/Conversion/lower-schedule-scaling.mlir).
// RUN: m2n-opt %s --split-input-file --m2n-verify-program --verify-diagnostics

!w = !m2n.dist<2x32xbf16, #m2n.layout<#m2n.mesh<[1]>, [replicate]>>
!q = !m2n.dist<2x32xf8E4M3FN, #m2n.layout<#m2n.mesh<[1], ranks = [1]>, [replicate]>>
!e = !m2n.dist<2x1xf8E8M0FNU, #m2n.layout<#m2n.mesh<[1], ranks = [1]>, [replicate]>>
func.func @f(%c: !m2n.comm<2>, %x: !w) {
  %0, %1 = m2n.program %x on %c strategy = "flat" {scaling = #m2n.scaling<mx>} : !m2n.comm<2>, !w -> !q, !e {
    m2n.rank 0 counters = 3 {
      // expected-error@+1 {{finds its first element's block at entry 1, which is entry 0}}
      m2n.move vector amax src(0)+0 -> slots(0)+0 64B times 2 by (+64,+0,+1) blocks 1+0/32 signal 0:0
      m2n.move vector copy slots(0)+0 -> quantizer(0)+0 8B signal 0:1 wait 0:0>=2
      m2n.move bulk copy slots(0)+0 -> slots(0)+0 0B wait 0:2>=3
    }
    m2n.rank 1 counters = 1 {
      m2n.move vector copy slots(0)+0 -> holder(1)+0 8B signal 1:0 wait 0:0>=2 read_done 0:2
      m2n.move vector copy src(0)+0 -> dst(1)+0 32B times 2 by (+64,+32,+1) blocks 0+0/32 wait 0:1>=1 read_done 0:2
      m2n.move vector scale holder(1)+0 -> scales(1)+0 2B wait 1:0>=1
    }
  }
  return
}

// -----

!w = !m2n.dist<2x32xbf16, #m2n.layout<#m2n.mesh<[1]>, [replicate]>>
!q = !m2n.dist<2x32xf8E4M3FN, #m2n.layout<#m2n.mesh<[1], ranks = [1]>, [replicate]>>
!e = !m2n.dist<2x1xf8E8M0FNU, #m2n.layout<#m2n.mesh<[1], ranks = [1]>, [replicate]>>
func.func @f(%c: !m2n.comm<2>, %x: !w) {
  %0, %1 = m2n.program %x on %c strategy = "flat" {scaling = #m2n.scaling<mx>} : !m2n.comm<2>, !w -> !q, !e {
    m2n.rank 0 counters = 3 {
      // expected-error@+1 {{reads past a row of its source, but finds blocks along one row}}
      m2n.move vector amax src(0)+0 -> slots(0)+0 128B blocks 0+0/32 signal 0:0
      m2n.move vector copy src(0)+0 -> src(0)+0 0B signal 0:0
      m2n.move vector copy slots(0)+0 -> quantizer(0)+0 8B signal 0:1 wait 0:0>=2
      m2n.move bulk copy slots(0)+0 -> slots(0)+0 0B wait 0:2>=3
    }
    m2n.rank 1 counters = 1 {
      m2n.move vector copy slots(0)+0 -> holder(1)+0 8B signal 1:0 wait 0:0>=2 read_done 0:2
      m2n.move vector copy src(0)+0 -> dst(1)+0 32B times 2 by (+64,+32,+1) blocks 0+0/32 wait 0:1>=1 read_done 0:2
      m2n.move vector scale holder(1)+0 -> scales(1)+0 2B wait 1:0>=1
    }
  }
  return
}

// -----

!w = !m2n.dist<2x32xbf16, #m2n.layout<#m2n.mesh<[1]>, [replicate]>>
!q = !m2n.dist<2x32xf8E4M3FN, #m2n.layout<#m2n.mesh<[1], ranks = [1]>, [replicate]>>
!e = !m2n.dist<2x1xf8E8M0FNU, #m2n.layout<#m2n.mesh<[1], ranks = [1]>, [replicate]>>
func.func @f(%c: !m2n.comm<2>, %x: !w) {
  %0, %1 = m2n.program %x on %c strategy = "flat" {scaling = #m2n.scaling<mx>} : !m2n.comm<2>, !w -> !q, !e {
    m2n.rank 0 counters = 3 {
      m2n.move vector amax src(0)+0 -> slots(0)+0 64B times 2 by (+64,+0,+1) blocks 0+0/32 signal 0:0
      m2n.move vector copy slots(0)+0 -> quantizer(0)+0 8B signal 0:1 wait 0:0>=2
      m2n.move bulk copy slots(0)+0 -> slots(0)+0 0B wait 0:2>=3
    }
    m2n.rank 1 counters = 1 {
      m2n.move vector copy slots(0)+0 -> holder(1)+0 8B signal 1:0 wait 0:0>=2 read_done 0:2
      // expected-error@+1 {{moves out of a source without quantizing (no block lookup)}}
      m2n.move vector copy src(0)+0 -> dst(1)+0 32B times 2 by (+64,+32) wait 0:1>=1 read_done 0:2
      m2n.move vector scale holder(1)+0 -> scales(1)+0 2B wait 1:0>=1
    }
  }
  return
}

// -----

!w = !m2n.dist<2x32xbf16, #m2n.layout<#m2n.mesh<[1]>, [replicate]>>
!q = !m2n.dist<2x32xf8E4M3FN, #m2n.layout<#m2n.mesh<[1], ranks = [1]>, [replicate]>>
!e = !m2n.dist<2x1xf8E8M0FNU, #m2n.layout<#m2n.mesh<[1], ranks = [1]>, [replicate]>>
func.func @f(%c: !m2n.comm<2>, %x: !w) {
  %0, %1 = m2n.program %x on %c strategy = "flat" {scaling = #m2n.scaling<mx>} : !m2n.comm<2>, !w -> !q, !e {
    m2n.rank 0 counters = 3 {
      m2n.move vector amax src(0)+0 -> slots(0)+0 64B times 2 by (+64,+0,+1) blocks 0+0/32 signal 0:0
      m2n.move vector copy slots(0)+0 -> quantizer(0)+0 8B signal 0:1 wait 0:0>=2
      m2n.move bulk copy slots(0)+0 -> slots(0)+0 0B wait 0:2>=3
    }
    m2n.rank 1 counters = 1 {
      m2n.move vector copy slots(0)+0 -> holder(1)+0 8B signal 1:0 wait 0:0>=2 read_done 0:2
      // expected-error@+1 {{computes amaxes, scales or quantized elements, which only a vector item that copies does}}
      m2n.move bulk copy src(0)+0 -> dst(1)+0 32B times 2 by (+64,+32,+1) blocks 0+0/32 wait 0:1>=1 read_done 0:2
      m2n.move vector scale holder(1)+0 -> scales(1)+0 2B wait 1:0>=1
    }
  }
  return
}

// -----

!w = !m2n.dist<2x32xbf16, #m2n.layout<#m2n.mesh<[1]>, [replicate]>>
!q = !m2n.dist<2x32xf8E4M3FN, #m2n.layout<#m2n.mesh<[1], ranks = [1]>, [replicate]>>
!e = !m2n.dist<2x1xf8E8M0FNU, #m2n.layout<#m2n.mesh<[1], ranks = [1]>, [replicate]>>
func.func @f(%c: !m2n.comm<2>, %x: !w) {
  %0, %1 = m2n.program %x on %c strategy = "flat" {scaling = #m2n.scaling<mx>} : !m2n.comm<2>, !w -> !q, !e {
    m2n.rank 0 counters = 3 {
      m2n.move vector amax src(0)+0 -> slots(0)+0 64B times 2 by (+64,+0,+1) blocks 0+0/32 signal 0:0
      m2n.move vector copy slots(0)+0 -> quantizer(0)+0 8B signal 0:1 wait 0:0>=2
      m2n.move bulk copy slots(0)+0 -> slots(0)+0 0B wait 0:2>=3
    }
    m2n.rank 1 counters = 1 {
      m2n.move vector copy slots(0)+0 -> holder(1)+0 8B signal 1:0 wait 0:0>=2 read_done 0:2
      // expected-error@+1 {{crosses its blocks elsewhere than the tensor's blocks of 32 elements end}}
      m2n.move vector copy src(0)+0 -> dst(1)+0 32B times 2 by (+64,+32,+1) blocks 0+16/32 wait 0:1>=1 read_done 0:2
      m2n.move vector scale holder(1)+0 -> scales(1)+0 2B wait 1:0>=1
    }
  }
  return
}

// -----

!w = !m2n.dist<2x32xbf16, #m2n.layout<#m2n.mesh<[1]>, [replicate]>>
!q = !m2n.dist<2x32xf8E4M3FN, #m2n.layout<#m2n.mesh<[1], ranks = [1]>, [replicate]>>
!e = !m2n.dist<2x1xf8E8M0FNU, #m2n.layout<#m2n.mesh<[1], ranks = [1]>, [replicate]>>
func.func @f(%c: !m2n.comm<2>, %x: !w) {
  %0, %1 = m2n.program %x on %c strategy = "flat" {scaling = #m2n.scaling<mx>} : !m2n.comm<2>, !w -> !q, !e {
    m2n.rank 0 counters = 3 {
      m2n.move vector amax src(0)+0 -> slots(0)+0 64B times 2 by (+64,+0,+1) blocks 0+0/32 signal 0:0
      m2n.move vector copy slots(0)+0 -> quantizer(0)+0 8B signal 0:1 wait 0:0>=2
      m2n.move bulk copy slots(0)+0 -> slots(0)+0 0B wait 0:2>=3
    }
    m2n.rank 1 counters = 1 {
      m2n.move vector copy slots(0)+0 -> holder(1)+0 8B signal 1:0 wait 0:0>=2 read_done 0:2
      // A phase near 2^63 (a crafted artifact): phase + i would overflow.
      // expected-error@+1 {{has a block lookup whose phase overflows over its elements}}
      m2n.move vector copy src(0)+0 -> dst(1)+0 32B times 2 by (+64,+32,+1) blocks 0+9223372036854775791/9223372036854775807 wait 0:1>=1 read_done 0:2
      m2n.move vector scale holder(1)+0 -> scales(1)+0 2B wait 1:0>=1
    }
  }
  return
}

// -----

!w = !m2n.dist<2x32xbf16, #m2n.layout<#m2n.mesh<[1]>, [replicate]>>
!q = !m2n.dist<2x32xf8E4M3FN, #m2n.layout<#m2n.mesh<[1], ranks = [1]>, [replicate]>>
!e = !m2n.dist<2x1xf8E8M0FNU, #m2n.layout<#m2n.mesh<[1], ranks = [1]>, [replicate]>>
func.func @f(%c: !m2n.comm<2>, %x: !w) {
  %0, %1 = m2n.program %x on %c strategy = "flat" {scaling = #m2n.scaling<mx>} : !m2n.comm<2>, !w -> !q, !e {
    m2n.rank 0 counters = 3 {
      m2n.move vector amax src(0)+0 -> slots(0)+0 64B times 2 by (+64,+0,+1) blocks 0+0/32 signal 0:0
      m2n.move vector copy slots(0)+0 -> quantizer(0)+0 8B signal 0:1 wait 0:0>=2
      m2n.move bulk copy slots(0)+0 -> slots(0)+0 0B wait 0:2>=3
    }
    m2n.rank 1 counters = 1 {
      m2n.move vector copy slots(0)+0 -> holder(1)+0 8B signal 1:0 wait 0:0>=2 read_done 0:2
      // expected-error@+1 {{reads bytes [0, 4) of quantizer(0) without waiting for rank 0: copy vector slots(0)+0 -> quantizer(0)+0 8B}}
      m2n.move vector copy src(0)+0 -> dst(1)+0 32B times 2 by (+64,+32,+1) blocks 0+0/32 read_done 0:2
      m2n.move vector copy src(0)+0 -> src(0)+0 0B wait 0:1>=1
      m2n.move vector scale holder(1)+0 -> scales(1)+0 2B wait 1:0>=1
    }
  }
  return
}

// -----

!w = !m2n.dist<2x32xbf16, #m2n.layout<#m2n.mesh<[1]>, [replicate]>>
!q = !m2n.dist<2x32xf8E4M3FN, #m2n.layout<#m2n.mesh<[1], ranks = [1]>, [replicate]>>
!e = !m2n.dist<2x1xf8E8M0FNU, #m2n.layout<#m2n.mesh<[1], ranks = [1]>, [replicate]>>
func.func @f(%c: !m2n.comm<2>, %x: !w) {
  %0, %1 = m2n.program %x on %c strategy = "flat" {scaling = #m2n.scaling<mx>} : !m2n.comm<2>, !w -> !q, !e {
    m2n.rank 0 counters = 3 {
      m2n.move vector amax src(0)+0 -> slots(0)+0 64B times 2 by (+64,+0,+1) blocks 0+0/32 signal 0:0
      m2n.move vector copy slots(0)+0 -> quantizer(0)+0 8B signal 0:1 wait 0:0>=2
      m2n.move bulk copy slots(0)+0 -> slots(0)+0 0B wait 0:2>=3
    }
    m2n.rank 1 counters = 1 {
      m2n.move vector copy slots(0)+0 -> holder(1)+0 8B signal 1:0 wait 0:0>=2 read_done 0:2
      m2n.move vector copy src(0)+0 -> dst(1)+0 32B times 2 by (+64,+32,+1) blocks 0+0/32 wait 0:1>=1 read_done 0:2
      // expected-error@+1 {{writes scales, but not from a holder table into its rank's scales}}
      m2n.move vector scale holder(1)+0 -> dst(1)+0 2B wait 1:0>=1
    }
  }
  return
}

// -----

!w = !m2n.dist<2x32xbf16, #m2n.layout<#m2n.mesh<[1]>, [replicate]>>
!q = !m2n.dist<2x32xf8E4M3FN, #m2n.layout<#m2n.mesh<[1], ranks = [1]>, [replicate]>>
!e = !m2n.dist<2x1xf8E8M0FNU, #m2n.layout<#m2n.mesh<[1], ranks = [1]>, [replicate]>>
func.func @f(%c: !m2n.comm<2>, %x: !w) {
  // expected-error@+1 {{no move copies bytes [0, 2) of scales(1): every scale is written once}}
  %0, %1 = m2n.program %x on %c strategy = "flat" {scaling = #m2n.scaling<mx>} : !m2n.comm<2>, !w -> !q, !e {
    m2n.rank 0 counters = 3 {
      m2n.move vector amax src(0)+0 -> slots(0)+0 64B times 2 by (+64,+0,+1) blocks 0+0/32 signal 0:0
      m2n.move vector copy slots(0)+0 -> quantizer(0)+0 8B signal 0:1 wait 0:0>=2
      m2n.move bulk copy slots(0)+0 -> slots(0)+0 0B wait 0:2>=3
    }
    m2n.rank 1 counters = 1 {
      m2n.move vector copy slots(0)+0 -> holder(1)+0 8B signal 1:0 wait 0:0>=2 read_done 0:2
      m2n.move vector copy src(0)+0 -> dst(1)+0 32B times 2 by (+64,+32,+1) blocks 0+0/32 wait 0:1>=1 read_done 0:2
      m2n.move vector copy holder(1)+0 -> holder(1)+0 0B wait 1:0>=1
    }
  }
  return
}

// -----

!w = !m2n.dist<2x32xbf16, #m2n.layout<#m2n.mesh<[1]>, [replicate]>>
!q = !m2n.dist<2x32xf8E4M3FN, #m2n.layout<#m2n.mesh<[1], ranks = [1]>, [replicate]>>
!e = !m2n.dist<2x1xf8E8M0FNU, #m2n.layout<#m2n.mesh<[1], ranks = [1]>, [replicate]>>
func.func @f(%c: !m2n.comm<2>, %x: !w) {
  %0, %1 = m2n.program %x on %c strategy = "flat" {scaling = #m2n.scaling<mx>} : !m2n.comm<2>, !w -> !q, !e {
    m2n.rank 0 counters = 0 {
      // expected-error@+1 {{expected a block lookup [entry, phase, width] as array<i64: 3 values>}}
      "m2n.move"() <{bytes = 64 : i64, dst_coords = [], dst_kind = 3 : i32, dst_map = -1 : i64, dst_offset = 0 : i64, dst_rank = 0 : i64, dst_scratch = -1 : i64, kind = [1 : i32], lookup = [array<i64: 0, 0>], mechanism = "vector", read_done = [], reduction = [], repeats = [], signal = [], src_coords = [], src_kind = 0 : i32, src_map = -1 : i64, src_offset = 0 : i64, src_rank = 0 : i64, src_scratch = -1 : i64, step = 0 : i64, waits = []}> : () -> ()
    }
  }
  return
}

// -----

!w = !m2n.dist<2x32xbf16, #m2n.layout<#m2n.mesh<[1]>, [replicate]>>
!q = !m2n.dist<2x32xf8E4M3FN, #m2n.layout<#m2n.mesh<[1], ranks = [1]>, [replicate]>>
!e = !m2n.dist<2x1xf8E8M0FNU, #m2n.layout<#m2n.mesh<[1], ranks = [1]>, [replicate]>>
func.func @f(%c: !m2n.comm<2>, %x: !w) {
  %0, %1 = m2n.program %x on %c strategy = "flat" {scaling = #m2n.scaling<mx>} : !m2n.comm<2>, !w -> !q, !e {
    m2n.rank 0 counters = 3 {
      m2n.move vector amax src(0)+0 -> slots(0)+0 64B times 2 by (+64,+0,+1) blocks 0+0/32 signal 0:0
      m2n.move vector copy slots(0)+0 -> quantizer(0)+0 8B signal 0:1 wait 0:0>=2
      m2n.move bulk copy slots(0)+0 -> slots(0)+0 0B wait 0:2>=3
    }
    m2n.rank 1 counters = 1 {
      m2n.move vector copy slots(0)+0 -> holder(1)+0 8B signal 1:0 wait 0:0>=2 read_done 0:2
      m2n.move vector copy src(0)+0 -> dst(1)+0 32B times 2 by (+64,+32,+1) blocks 0+0/32 wait 0:1>=1 read_done 0:2
      // expected-error@+1 {{writes the scale of a block from another block's amax, or a partial one}}
      m2n.move vector scale holder(1)+4 -> scales(1)+0 1B wait 1:0>=1
      m2n.move vector scale holder(1)+0 -> scales(1)+1 1B wait 1:0>=1
    }
  }
  return
}

// -----

!w = !m2n.dist<2x32xbf16, #m2n.layout<#m2n.mesh<[1]>, [replicate]>>
!q = !m2n.dist<2x32xf8E4M3FN, #m2n.layout<#m2n.mesh<[1], ranks = [1]>, [replicate]>>
!e = !m2n.dist<2x1xf8E8M0FNU, #m2n.layout<#m2n.mesh<[1], ranks = [1]>, [replicate]>>
func.func @f(%c: !m2n.comm<2>, %x: !w) {
  %0, %1 = m2n.program %x on %c strategy = "flat" {scaling = #m2n.scaling<mx>} : !m2n.comm<2>, !w -> !q, !e {
    m2n.rank 0 counters = 3 {
      m2n.move vector amax src(0)+0 -> slots(0)+0 64B times 2 by (+64,+0,+1) blocks 0+0/32 signal 0:0
      m2n.move vector copy slots(0)+0 -> quantizer(0)+0 8B signal 0:1 wait 0:0>=2
      m2n.move bulk copy slots(0)+0 -> slots(0)+0 0B wait 0:2>=3
    }
    m2n.rank 1 counters = 1 {
      m2n.move vector copy slots(0)+0 -> holder(1)+0 8B signal 1:0 wait 0:0>=2 read_done 0:2
      m2n.move vector copy src(0)+0 -> dst(1)+0 32B times 2 by (+64,+32,+1) blocks 0+0/32 wait 0:1>=1 read_done 0:2
      // expected-error@+1 {{computes amaxes, scales or quantized elements, which only a vector item that copies does}}
      m2n.move bulk scale holder(1)+0 -> scales(1)+0 2B wait 1:0>=1
    }
  }
  return
}

