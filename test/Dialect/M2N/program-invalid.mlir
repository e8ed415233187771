// The program level's verifier: what the runtime would trust blindly (the
// shared m2n::verifyTransferProgram, also run by the artifact loader) is
// checked on the op, and a problem of one move is reported on that move.
// RUN: m2n-opt %s --split-input-file --verify-diagnostics

!s = !m2n.dist<16xf32, #m2n.layout<#m2n.mesh<[2]>, [partial<max>]>>
!d = !m2n.dist<16xf32, #m2n.layout<#m2n.mesh<[2]>, [replicate]>>
func.func @f(%c: !m2n.comm<2>, %x: !s) {
  %0 = m2n.program %x on %c strategy = "flat" : !m2n.comm<2>, !s -> !d {
    m2n.rank 0 counters = 1 {
      m2n.move bulk copy src(0)+0 -> dst(0)+0 64B signal 0:0
      // expected-error@+1 {{'m2n.move' op waits for 2 but one execution adds 1 to counter 0:0}}
      m2n.move vector reduce<max> src(1)+0 -> dst(0)+0 64B wait 0:0>=2
    }
  }
  return
}

// -----

!s = !m2n.dist<16xf32, #m2n.layout<#m2n.mesh<[2]>, [partial<max>]>>
!d = !m2n.dist<16xf32, #m2n.layout<#m2n.mesh<[2]>, [replicate]>>
func.func @f(%c: !m2n.comm<2>, %x: !s) {
  %0 = m2n.program %x on %c strategy = "flat" : !m2n.comm<2>, !s -> !d {
    m2n.rank 0 counters = 1 {
      // expected-error@+1 {{'m2n.move' op names a counter that does not exist}}
      m2n.move bulk copy src(0)+0 -> dst(0)+0 64B signal 0:3
    }
  }
  return
}

// -----

!s = !m2n.dist<16xf32, #m2n.layout<#m2n.mesh<[2]>, [partial<max>]>>
!d = !m2n.dist<16xf32, #m2n.layout<#m2n.mesh<[2]>, [replicate]>>
func.func @f(%c: !m2n.comm<2>, %x: !s) {
  %0 = m2n.program %x on %c strategy = "flat" : !m2n.comm<2>, !s -> !d {
    m2n.rank 0 counters = 0 {
      // expected-error@+1 {{'m2n.move' op reaches outside its buffers}}
      m2n.move bulk copy src(0)+16 -> dst(0)+0 64B
    }
  }
  return
}

// -----

!s = !m2n.dist<16xf32, #m2n.layout<#m2n.mesh<[2]>, [partial<max>]>>
!d = !m2n.dist<16xf32, #m2n.layout<#m2n.mesh<[2]>, [replicate]>>
func.func @f(%c: !m2n.comm<2>, %x: !s) {
  %0 = m2n.program %x on %c strategy = "flat" : !m2n.comm<2>, !s -> !d {
    m2n.rank 0 counters = 0 {
      // expected-error@+1 {{'m2n.move' op TMA has no such bulk reduction}}
      m2n.move bulk reduce<max> src(1)+0 -> dst(0)+0 64B
    }
  }
  return
}

// -----

!s = !m2n.dist<16xf32, #m2n.layout<#m2n.mesh<[2]>, [partial<max>]>>
!d = !m2n.dist<16xf32, #m2n.layout<#m2n.mesh<[2]>, [replicate]>>
func.func @f(%c: !m2n.comm<2>, %x: !s) {
  %0 = m2n.program %x on %c strategy = "flat" : !m2n.comm<2>, !s -> !d {
    m2n.rank 0 counters = 0 {
      // expected-error@+1 {{'m2n.move' op reduces with 'sum' but the source layout does not}}
      m2n.move vector reduce<sum> src(1)+0 -> dst(0)+0 64B
    }
  }
  return
}

// -----

!s = !m2n.dist<16xf32, #m2n.layout<#m2n.mesh<[2]>, [partial<max>]>>
!d = !m2n.dist<16xf32, #m2n.layout<#m2n.mesh<[2]>, [replicate]>>
func.func @f(%c: !m2n.comm<2>, %x: !s) {
  %0 = m2n.program %x on %c strategy = "flat" : !m2n.comm<2>, !s -> !d {
    m2n.rank 0 counters = 0 {
    }
    // expected-error@+1 {{'m2n.rank' op rank 0 has two programs}}
    m2n.rank 0 counters = 0 {
    }
  }
  return
}

// -----

!s = !m2n.dist<16xf32, #m2n.layout<#m2n.mesh<[2]>, [partial<max>]>>
!d = !m2n.dist<16xf32, #m2n.layout<#m2n.mesh<[2]>, [replicate]>>
func.func @f(%c: !m2n.comm<2>, %x: !s) {
  %0 = m2n.program %x on %c strategy = "flat" : !m2n.comm<2>, !s -> !d {
    m2n.rank 0 counters = 0 {
      // expected-error@+1 {{unknown mechanism 'teleport'; expected bulk, tile, vector, engine or network}}
      m2n.move teleport copy src(1)+0 -> dst(0)+0 64B
    }
  }
  return
}

// -----

!s = !m2n.dist<4x8xf32, #m2n.layout<#m2n.mesh<[2]>, [shard<1>]>>
!d = !m2n.dist<4x8xf32, #m2n.layout<#m2n.mesh<[2]>, [replicate]>>
func.func @f(%c: !m2n.comm<2>, %x: !s) {
  %0 = m2n.program %x on %c strategy = "flat" : !m2n.comm<2>, !s -> !d {
    m2n.tensor_map 0 of src(0) [4, 4] box [4, 4]
    m2n.tensor_map 1 of dst(0) [4, 8] box [4, 4]
    m2n.rank 0 counters = 0 {
      // expected-error@+1 {{'m2n.move' op has a tile outside its buffer}}
      m2n.move tile copy src(0) map 0 (0, 0) -> dst(0) map 1 (0, 6) 64B
    }
  }
  return
}

// -----

!s = !m2n.dist<4x8xf32, #m2n.layout<#m2n.mesh<[2]>, [shard<1>]>>
!d = !m2n.dist<4x8xf32, #m2n.layout<#m2n.mesh<[2]>, [replicate]>>
func.func @f(%c: !m2n.comm<2>, %x: !s) {
  // expected-error@+1 {{'m2n.program' op tensor map 0 does not describe src(0) as it is}}
  %0 = m2n.program %x on %c strategy = "flat" : !m2n.comm<2>, !s -> !d {
    m2n.tensor_map 0 of src(0) [4, 8] box [4, 4]
  }
  return
}

// -----

// Buffers promised 8-byte alignment: TMA cannot address them.
!s = !m2n.dist<16xf32, #m2n.layout<#m2n.mesh<[2]>, [shard<0>]>>
!d = !m2n.dist<16xf32, #m2n.layout<#m2n.mesh<[2]>, [replicate]>>
func.func @f(%c: !m2n.comm<2>, %x: !s) {
  %0 = m2n.program %x on %c strategy = "flat" buffer_alignment = 8 : !m2n.comm<2>, !s -> !d {
    m2n.rank 0 counters = 0 {
      // expected-error@+1 {{'m2n.move' op a TMA bulk item on a caller buffer aligned to only 8 bytes}}
      m2n.move bulk copy src(0)+0 -> dst(0)+0 32B
    }
  }
  return
}

// -----

!s = !m2n.dist<16xf32, #m2n.layout<#m2n.mesh<[2]>, [shard<0>]>>
!d = !m2n.dist<16xf32, #m2n.layout<#m2n.mesh<[2]>, [replicate]>>
func.func @f(%c: !m2n.comm<2>, %x: !s) {
  %0 = m2n.program %x on %c strategy = "flat" : !m2n.comm<2>, !s -> !d {
    m2n.rank 0 counters = 0 {
      // expected-error@+1 {{'m2n.move' op TMA bulk needs 16-byte aligned offsets and sizes}}
      m2n.move bulk copy src(0)+4 -> dst(0)+4 16B
    }
  }
  return
}

// -----

!s = !m2n.dist<16xf32, #m2n.layout<#m2n.mesh<[2]>, [shard<0>]>>
!d = !m2n.dist<16xf32, #m2n.layout<#m2n.mesh<[2]>, [replicate]>>
func.func @f(%c: !m2n.comm<2>, %x: !s) {
  // expected-error@+1 {{'m2n.program' op the buffer alignment 12 is not a power of two}}
  %0 = m2n.program %x on %c strategy = "flat" buffer_alignment = 12 : !m2n.comm<2>, !s -> !d {
  }
  return
}

// -----

!s = !m2n.dist<16xf32, #m2n.layout<#m2n.mesh<[2]>, [partial<sum>]>>
!d = !m2n.dist<16xf32, #m2n.layout<#m2n.mesh<[2]>, [replicate]>>
func.func @f(%c: !m2n.comm<2>, %x: !s) {
  %0 = m2n.program %x on %c strategy = "flat" : !m2n.comm<2>, !s -> !d {
    m2n.rank 0 counters = 0 {
      // expected-error@+1 {{'m2n.move' op a network receive reduces, but NCCL receives only copy (receive into staging, then reduce)}}
      m2n.move network reduce<sum> src(1)+0 -> dst(0)+0 64B
    }
  }
  return
}
