// The program level's checks: the structure of each op (its verifier) and
// what the runtime would trust blindly (m2n-verify-program: the shared
// m2n::verifyTransferProgram, also run by the artifact loader); a problem of
// one move is reported on that move.
// RUN: m2n-opt %s --split-input-file --m2n-verify-program --verify-diagnostics

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

// What the TMA unit cannot take (m2n/Artifact/TensorMap.h): box rows of 8
// bytes, a box wider than the buffer.
!s = !m2n.dist<4x8xf32, #m2n.layout<#m2n.mesh<[2]>, [shard<1>]>>
!d = !m2n.dist<4x8xf32, #m2n.layout<#m2n.mesh<[2]>, [replicate]>>
func.func @f(%c: !m2n.comm<2>, %x: !s) {
  // expected-error@+1 {{'m2n.program' op tensor map 0 of src(0) has box rows of 8 bytes (a multiple of 16)}}
  %0 = m2n.program %x on %c strategy = "flat" : !m2n.comm<2>, !s -> !d {
    m2n.tensor_map 0 of src(0) [4, 4] box [4, 2]
  }
  return
}

// -----

!s = !m2n.dist<4x8xf32, #m2n.layout<#m2n.mesh<[2]>, [shard<1>]>>
!d = !m2n.dist<4x8xf32, #m2n.layout<#m2n.mesh<[2]>, [replicate]>>
func.func @f(%c: !m2n.comm<2>, %x: !s) {
  // expected-error@+1 {{'m2n.program' op tensor map 0 of src(0) dimension 1 has a box of 8 elements (1 to 256, within 4)}}
  %0 = m2n.program %x on %c strategy = "flat" : !m2n.comm<2>, !s -> !d {
    m2n.tensor_map 0 of src(0) [4, 4] box [4, 8]
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
  // expected-error@+1 {{'m2n.program' op the buffer alignment 12 is not a power of two of at most 4096 bytes}}
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

// -----

// Repeated moves (`times N by (+S,+D)`): every instance is checked. The last
// of five 16-byte instances 16 bytes apart starts at byte 64 of a 64-byte
// buffer.
!s = !m2n.dist<16xf32, #m2n.layout<#m2n.mesh<[2]>, [partial<max>]>>
!d = !m2n.dist<16xf32, #m2n.layout<#m2n.mesh<[2]>, [replicate]>>
func.func @f(%c: !m2n.comm<2>, %x: !s) {
  %0 = m2n.program %x on %c strategy = "flat" : !m2n.comm<2>, !s -> !d {
    m2n.rank 0 counters = 0 {
      // expected-error@+1 {{'m2n.move' op reaches outside its buffers}}
      m2n.move bulk copy src(0)+0 -> dst(0)+0 16B times 5 by (+16,+16)
    }
  }
  return
}

// -----

// A stride keeps every instance as aligned as TMA needs, or the move is
// refused.
!s = !m2n.dist<16xf32, #m2n.layout<#m2n.mesh<[2]>, [partial<max>]>>
!d = !m2n.dist<16xf32, #m2n.layout<#m2n.mesh<[2]>, [replicate]>>
func.func @f(%c: !m2n.comm<2>, %x: !s) {
  %0 = m2n.program %x on %c strategy = "flat" : !m2n.comm<2>, !s -> !d {
    m2n.rank 0 counters = 0 {
      // expected-error@+1 {{'m2n.move' op TMA bulk needs 16-byte aligned offsets and sizes}}
      m2n.move bulk copy src(0)+0 -> dst(0)+0 16B times 2 by (+8,+16)
    }
  }
  return
}

// -----

// Each instance signals once: a dependent waits for all four.
!s = !m2n.dist<16xf32, #m2n.layout<#m2n.mesh<[2]>, [partial<max>]>>
!d = !m2n.dist<16xf32, #m2n.layout<#m2n.mesh<[2]>, [replicate]>>
func.func @f(%c: !m2n.comm<2>, %x: !s) {
  %0 = m2n.program %x on %c strategy = "flat" : !m2n.comm<2>, !s -> !d {
    m2n.rank 0 counters = 1 {
      m2n.move bulk copy src(0)+0 -> dst(0)+0 16B times 4 by (+16,+16) signal 0:0
      // expected-error@+1 {{'m2n.move' op waits for 1 but one execution adds 4 to counter 0:0}}
      m2n.move vector reduce<max> src(1)+0 -> dst(0)+0 64B wait 0:0>=1
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
      // expected-error@+1 {{'m2n.move' op repeats with a count below 1 or a negative stride}}
      m2n.move bulk copy src(0)+16 -> dst(0)+16 16B times 2 by (+-16,+16)
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
      // expected-error@+1 {{'m2n.move' op repeats with a count below 1 or a negative stride}}
      m2n.move bulk copy src(0)+0 -> dst(0)+0 16B times 0 by (+16,+16)
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
      // expected-error@+1 {{'m2n.move' op repeats more than 4294967296 instances or beyond 64-bit offsets}}
      m2n.move bulk copy src(0)+0 -> dst(0)+0 16B times 65536 by (+0,+0) times 65536 by (+0,+0) times 2 by (+0,+0)
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
      // expected-error@+1 {{'m2n.move' op repeats along a dimension, but only tiles have dimensions}}
      m2n.move bulk copy src(0)+0 -> dst(0)+0 16B times 2 along 0 by (+16,+16)
    }
  }
  return
}

// -----

// Tiles repeat along one of their dimensions, and every tile stays inside.
!s = !m2n.dist<4x8xf32, #m2n.layout<#m2n.mesh<[2]>, [shard<1>]>>
!d = !m2n.dist<4x8xf32, #m2n.layout<#m2n.mesh<[2]>, [replicate]>>
func.func @f(%c: !m2n.comm<2>, %x: !s) {
  %0 = m2n.program %x on %c strategy = "flat" : !m2n.comm<2>, !s -> !d {
    m2n.tensor_map 0 of src(0) [4, 4] box [2, 4]
    m2n.tensor_map 1 of dst(0) [4, 8] box [2, 4]
    m2n.rank 0 counters = 0 {
      // expected-error@+1 {{'m2n.move' op repeats a tile along a dimension it does not have}}
      m2n.move tile copy src(0) map 0 (0, 0) -> dst(0) map 1 (0, 0) 32B times 2 along 2 by (+2,+2)
    }
  }
  return
}

// -----

!s = !m2n.dist<4x8xf32, #m2n.layout<#m2n.mesh<[2]>, [shard<1>]>>
!d = !m2n.dist<4x8xf32, #m2n.layout<#m2n.mesh<[2]>, [replicate]>>
func.func @f(%c: !m2n.comm<2>, %x: !s) {
  %0 = m2n.program %x on %c strategy = "flat" : !m2n.comm<2>, !s -> !d {
    m2n.tensor_map 0 of src(0) [4, 4] box [2, 4]
    m2n.tensor_map 1 of dst(0) [4, 8] box [2, 4]
    m2n.rank 0 counters = 0 {
      // expected-error@+1 {{'m2n.move' op has a tile outside its buffer}}
      m2n.move tile copy src(0) map 0 (0, 0) -> dst(0) map 1 (0, 0) 32B times 3 along 0 by (+2,+2)
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
      // expected-error@+1 {{expected 'by'}}
      m2n.move bulk copy src(0)+0 -> dst(0)+0 16B times 2 (+16,+16)
    }
  }
  return
}

// -----

// A copy-engine copy is one cudaMemcpyAsync: it does not repeat.
!s = !m2n.dist<16xf32, #m2n.layout<#m2n.mesh<[2]>, [shard<0>]>>
!d = !m2n.dist<16xf32, #m2n.layout<#m2n.mesh<[2]>, [replicate]>>
func.func @f(%c: !m2n.comm<2>, %x: !s) {
  %0 = m2n.program %x on %c strategy = "flat" : !m2n.comm<2>, !s -> !d {
    m2n.rank 0 counters = 0 {
      // expected-error@+1 {{'m2n.move' op repeats}}
      m2n.move engine copy src(0)+0 -> dst(0)+0 16B times 2 by (+16,+16)
    }
  }
  return
}

// -----

// The caller's source may be read-only (and shared): no move writes it, by
// any mechanism (the host backend once wrote it); a 0-byte join may name it.
!s = !m2n.dist<16xf32, #m2n.layout<#m2n.mesh<[2]>, [shard<0>]>>
!d = !m2n.dist<16xf32, #m2n.layout<#m2n.mesh<[2]>, [replicate]>>
func.func @f(%c: !m2n.comm<2>, %x: !s) {
  %0 = m2n.program %x on %c strategy = "flat" : !m2n.comm<2>, !s -> !d {
    m2n.rank 0 counters = 0 {
      m2n.move bulk copy src(0)+0 -> src(0)+0 0B
      // expected-error@+1 {{'m2n.move' op writes into a source buffer, which a reshard only reads}}
      m2n.move vector copy dst(0)+0 -> src(0)+0 16B
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
      // expected-error@+1 {{'m2n.move' op writes into a source buffer, which a reshard only reads}}
      m2n.move engine copy dst(0)+0 -> src(0)+0 16B
    }
  }
  return
}

// -----

// A kernel item holds two waits.
!s = !m2n.dist<16xf32, #m2n.layout<#m2n.mesh<[2]>, [shard<0>]>>
!d = !m2n.dist<16xf32, #m2n.layout<#m2n.mesh<[2]>, [replicate]>>
func.func @f(%c: !m2n.comm<2>, %x: !s) {
  %0 = m2n.program %x on %c strategy = "flat" : !m2n.comm<2>, !s -> !d {
    m2n.rank 0 counters = 3 {
      m2n.move bulk copy src(0)+0 -> dst(0)+0 16B signal 0:0
      m2n.move bulk copy src(0)+16 -> dst(0)+16 16B signal 0:1
      m2n.move bulk copy src(0)+0 -> dst(0)+32 16B signal 0:2
      // expected-error@+1 {{'m2n.move' op waits for 3 counters; a move waits for at most two}}
      m2n.move bulk copy src(0)+0 -> src(0)+0 0B wait 0:0>=1 wait 0:1>=1 wait 0:2>=1
    }
  }
  return
}

// -----

// Counters are device memory the runtime allocates: bounded.
!s = !m2n.dist<16xf32, #m2n.layout<#m2n.mesh<[2]>, [shard<0>]>>
!d = !m2n.dist<16xf32, #m2n.layout<#m2n.mesh<[2]>, [replicate]>>
func.func @f(%c: !m2n.comm<2>, %x: !s) {
  // expected-error@+1 {{'m2n.program' op rank 0 has 4611686018427387904 counters (at most 268435456)}}
  %0 = m2n.program %x on %c strategy = "flat" : !m2n.comm<2>, !s -> !d {
    m2n.rank 0 counters = 4611686018427387904 {
      m2n.move bulk copy src(0)+0 -> dst(0)+0 16B
    }
  }
  return
}

// -----

!s = !m2n.dist<16xf32, #m2n.layout<#m2n.mesh<[2]>, [shard<0>]>>
!d = !m2n.dist<16xf32, #m2n.layout<#m2n.mesh<[2]>, [replicate]>>
func.func @f(%c: !m2n.comm<2>, %x: !s) {
  // expected-error@+1 {{'m2n.program' op the buffer alignment 1099511627776 is not a power of two of at most 4096 bytes}}
  %0 = m2n.program %x on %c strategy = "flat" buffer_alignment = 1099511627776 : !m2n.comm<2>, !s -> !d {
    m2n.rank 0 counters = 0 {
      m2n.move bulk copy src(0)+0 -> dst(0)+0 16B
    }
  }
  return
}

// -----

// The order the waits prove (m2n::checkProgramOrder). A read of a
// destination another move writes, without waiting for it (the repro of
// 2026-12-03: m2n-run FAILed on it):
!s = !m2n.dist<16xf32, #m2n.layout<#m2n.mesh<[1]>, [replicate]>>
!d = !m2n.dist<16xf32, #m2n.layout<#m2n.mesh<[2]>, [replicate]>>
func.func @f(%c: !m2n.comm<2>, %x: !s) -> !d {
  %0 = m2n.program %x on %c strategy = "flat" : !m2n.comm<2>, !s -> !d {
    m2n.rank 0 counters = 1 {
      // expected-error @below {{reads bytes [0, 64) of dst(1) without waiting for rank 1: copy vector src(0)+0 -> dst(1)+0 64B signal 1:0 read-done 0:0, which writes them}}
      m2n.move vector copy dst(1)+0 -> dst(0)+0 64B read_done 1:1 step 1
      m2n.move vector copy src(0)+0 -> src(0)+0 0B wait 0:0>=1
    }
    m2n.rank 1 counters = 2 {
      m2n.move vector copy src(0)+0 -> dst(1)+0 64B signal 1:0 read_done 0:0 step 0
      m2n.move vector copy dst(1)+0 -> dst(1)+0 0B wait 1:1>=1
    }
  }
  return %0 : !d
}

// -----

// ... with the wait: valid.
!s = !m2n.dist<16xf32, #m2n.layout<#m2n.mesh<[1]>, [replicate]>>
!d = !m2n.dist<16xf32, #m2n.layout<#m2n.mesh<[2]>, [replicate]>>
func.func @f(%c: !m2n.comm<2>, %x: !s) -> !d {
  %0 = m2n.program %x on %c strategy = "flat" : !m2n.comm<2>, !s -> !d {
    m2n.rank 0 counters = 1 {
      m2n.move vector copy dst(1)+0 -> dst(0)+0 64B wait 1:0>=1 read_done 1:1 step 1
      m2n.move vector copy src(0)+0 -> src(0)+0 0B wait 0:0>=1
    }
    m2n.rank 1 counters = 2 {
      m2n.move vector copy src(0)+0 -> dst(1)+0 64B signal 1:0 read_done 0:0 step 0
      m2n.move vector copy dst(1)+0 -> dst(1)+0 0B wait 1:1>=1
    }
  }
  return %0 : !d
}

// -----

// Destination bytes no move writes.
!s = !m2n.dist<16xf32, #m2n.layout<#m2n.mesh<[1]>, [replicate]>>
!d = !m2n.dist<16xf32, #m2n.layout<#m2n.mesh<[2]>, [replicate]>>
func.func @f(%c: !m2n.comm<2>, %x: !s) -> !d {
  // expected-error @below {{no move copies bytes [32, 64) of dst(0): every destination byte is written once}}
  %0 = m2n.program %x on %c strategy = "flat" : !m2n.comm<2>, !s -> !d {
    m2n.rank 0 counters = 1 {
      m2n.move vector copy src(0)+0 -> dst(0)+0 32B step 1
    }
    m2n.rank 1 counters = 1 {
      m2n.move vector copy src(0)+0 -> dst(1)+0 64B step 0
    }
  }
  return %0 : !d
}

// -----

// Bytes written twice.
!s = !m2n.dist<16xf32, #m2n.layout<#m2n.mesh<[1]>, [replicate]>>
!d = !m2n.dist<16xf32, #m2n.layout<#m2n.mesh<[1]>, [replicate]>>
func.func @f(%c: !m2n.comm<1>, %x: !s) -> !d {
  %0 = m2n.program %x on %c strategy = "flat" : !m2n.comm<1>, !s -> !d {
    m2n.rank 0 counters = 0 {
      m2n.move bulk copy src(0)+0 -> dst(0)+0 48B
      // expected-error @below {{copies onto bytes [32, 48) of dst(0), which rank 0: copy src(0)+0 -> dst(0)+0 48B copies onto too: every byte is written once}}
      m2n.move bulk copy src(0)+32 -> dst(0)+32 32B
    }
  }
  return %0 : !d
}

// -----

// Reductions of a partial sum that do not wait for the copy they reduce
// into (and, on the SM path, for each other).
!s = !m2n.dist<16xf32, #m2n.layout<#m2n.mesh<[2]>, [partial<sum>]>>
!d = !m2n.dist<16xf32, #m2n.layout<#m2n.mesh<[1]>, [replicate]>>
func.func @f(%c: !m2n.comm<2>, %x: !s) -> !d {
  %0 = m2n.program %x on %c strategy = "flat" : !m2n.comm<2>, !s -> !d {
    m2n.rank 0 counters = 0 {
      m2n.move vector copy src(0)+0 -> dst(0)+0 64B step 0
      // expected-error @below {{reduces onto bytes [0, 64) of dst(0) without waiting for rank 0: copy vector src(0)+0 -> dst(0)+0 64B, which copies them first}}
      m2n.move vector reduce<sum> src(1)+0 -> dst(0)+0 64B step 1
    }
    m2n.rank 1 counters = 0 {
      m2n.move vector reduce<sum> src(1)+0 -> dst(0)+0 64B step 2
    }
  }
  return %0 : !d
}

// -----

!s = !m2n.dist<16xf32, #m2n.layout<#m2n.mesh<[2]>, [partial<sum>]>>
!d = !m2n.dist<16xf32, #m2n.layout<#m2n.mesh<[1]>, [replicate]>>
func.func @f(%c: !m2n.comm<2>, %x: !s) -> !d {
  %0 = m2n.program %x on %c strategy = "flat" : !m2n.comm<2>, !s -> !d {
    m2n.rank 0 counters = 1 {
      m2n.move vector copy src(0)+0 -> dst(0)+0 64B signal 0:0 step 0
      m2n.move vector reduce<sum> src(1)+0 -> dst(0)+0 64B wait 0:0>=1 step 1
    }
    m2n.rank 1 counters = 0 {
      // expected-error @below {{reduces on the SM path (load, combine, store) onto bytes [0, 64) of dst(0), which rank 0: add.f32 vector src(1)+0 -> dst(0)+0 64B wait 0:0>=1 reduces onto too, and neither waits for the other}}
      m2n.move vector reduce<sum> src(1)+0 -> dst(0)+0 64B wait 0:0>=1 step 2
    }
  }
  return %0 : !d
}

// -----

// Waits in a cycle: neither move ever runs.
!s = !m2n.dist<16xf32, #m2n.layout<#m2n.mesh<[1]>, [replicate]>>
!d = !m2n.dist<16xf32, #m2n.layout<#m2n.mesh<[1]>, [replicate]>>
func.func @f(%c: !m2n.comm<1>, %x: !s) -> !d {
  %0 = m2n.program %x on %c strategy = "flat" : !m2n.comm<1>, !s -> !d {
    m2n.rank 0 counters = 2 {
      // expected-error @below {{never runs: its waits depend on each other in a cycle (or on a move that never runs)}}
      m2n.move bulk copy src(0)+0 -> dst(0)+0 32B signal 0:0 wait 0:1>=1
      m2n.move bulk copy src(0)+32 -> dst(0)+32 32B signal 0:1 wait 0:0>=1
    }
  }
  return %0 : !d
}

// -----

// A move signals one counter and reports its reads to one.
!s = !m2n.dist<16xf32, #m2n.layout<#m2n.mesh<[2]>, [shard<0>]>>
!d = !m2n.dist<16xf32, #m2n.layout<#m2n.mesh<[2]>, [replicate]>>
func.func @f(%c: !m2n.comm<2>, %x: !s) {
  %0 = m2n.program %x on %c strategy = "flat" : !m2n.comm<2>, !s -> !d {
    m2n.rank 0 counters = 2 {
      // expected-error@+1 {{a move signals one counter}}
      m2n.move bulk copy src(0)+0 -> dst(0)+0 16B signal 0:0 signal 0:1
    }
  }
  return
}

// -----

!s = !m2n.dist<16xf32, #m2n.layout<#m2n.mesh<[2]>, [shard<0>]>>
!d = !m2n.dist<16xf32, #m2n.layout<#m2n.mesh<[2]>, [replicate]>>
func.func @f(%c: !m2n.comm<2>, %x: !s) {
  %0 = m2n.program %x on %c strategy = "flat" : !m2n.comm<2>, !s -> !d {
    m2n.rank 0 counters = 2 {
      // expected-error@+1 {{a move reports its reads to one counter}}
      m2n.move bulk copy src(1)+0 -> dst(0)+0 16B read_done 1:0 read_done 1:1
    }
  }
  return
}

// -----

// The generic form: the mechanism is one of the five names; counters, waits
// and repeats are arrays of 2, 3 and 4 integers.
!s = !m2n.dist<16xf32, #m2n.layout<#m2n.mesh<[2]>, [shard<0>]>>
!d = !m2n.dist<16xf32, #m2n.layout<#m2n.mesh<[2]>, [replicate]>>
func.func @f(%c: !m2n.comm<2>, %x: !s) {
  %0 = m2n.program %x on %c strategy = "flat" : !m2n.comm<2>, !s -> !d {
    m2n.rank 0 counters = 0 {
      // expected-error@+1 {{expected a mechanism: "bulk", "tile", "vector", "engine" or "network"}}
      "m2n.move"() <{bytes = 16 : i64, dst_coords = [], dst_kind = 1 : i32, dst_map = -1 : i64, dst_offset = 0 : i64, dst_rank = 0 : i64, dst_scratch = -1 : i64, mechanism = "teleport", read_done = [], reduction = [], repeats = [], signal = [], src_coords = [], src_kind = 0 : i32, src_map = -1 : i64, src_offset = 0 : i64, src_rank = 0 : i64, src_scratch = -1 : i64, step = 0 : i64, waits = []}> : () -> ()
    }
  }
  return
}

// -----

!s = !m2n.dist<16xf32, #m2n.layout<#m2n.mesh<[2]>, [shard<0>]>>
!d = !m2n.dist<16xf32, #m2n.layout<#m2n.mesh<[2]>, [replicate]>>
func.func @f(%c: !m2n.comm<2>, %x: !s) {
  %0 = m2n.program %x on %c strategy = "flat" : !m2n.comm<2>, !s -> !d {
    m2n.rank 0 counters = 1 {
      // expected-error@+1 {{expected a wait [rank, index, value] as array<i64: 3 values>}}
      "m2n.move"() <{bytes = 16 : i64, dst_coords = [], dst_kind = 1 : i32, dst_map = -1 : i64, dst_offset = 0 : i64, dst_rank = 0 : i64, dst_scratch = -1 : i64, mechanism = "bulk", read_done = [], reduction = [], repeats = [], signal = [], src_coords = [], src_kind = 0 : i32, src_map = -1 : i64, src_offset = 0 : i64, src_rank = 0 : i64, src_scratch = -1 : i64, step = 0 : i64, waits = [array<i64: 0, 0>]}> : () -> ()
    }
  }
  return
}

// -----

!s = !m2n.dist<16xf32, #m2n.layout<#m2n.mesh<[2]>, [shard<0>]>>
!d = !m2n.dist<16xf32, #m2n.layout<#m2n.mesh<[2]>, [replicate]>>
func.func @f(%c: !m2n.comm<2>, %x: !s) {
  %0 = m2n.program %x on %c strategy = "flat" : !m2n.comm<2>, !s -> !d {
    m2n.rank 0 counters = 1 {
      // expected-error@+1 {{expected a counter [rank, index] as array<i64: 2 values>}}
      "m2n.move"() <{bytes = 16 : i64, dst_coords = [], dst_kind = 1 : i32, dst_map = -1 : i64, dst_offset = 0 : i64, dst_rank = 0 : i64, dst_scratch = -1 : i64, mechanism = "bulk", read_done = [], reduction = [], repeats = [array<i64: 2, 16, 16>], signal = [array<i64: 0, 0, 0>], src_coords = [], src_kind = 0 : i32, src_map = -1 : i64, src_offset = 0 : i64, src_rank = 0 : i64, src_scratch = -1 : i64, step = 0 : i64, waits = []}> : () -> ()
    }
  }
  return
}

// -----

!s = !m2n.dist<16xf32, #m2n.layout<#m2n.mesh<[2]>, [shard<0>]>>
!d = !m2n.dist<16xf32, #m2n.layout<#m2n.mesh<[2]>, [replicate]>>
func.func @f(%c: !m2n.comm<2>, %x: !s) {
  %0 = m2n.program %x on %c strategy = "flat" : !m2n.comm<2>, !s -> !d {
    m2n.rank 0 counters = 1 {
      // expected-error@+1 {{expected a repeat [count, source stride, destination stride, dim, entry stride] as array<i64: 5 values>}}
      "m2n.move"() <{bytes = 16 : i64, dst_coords = [], dst_kind = 1 : i32, dst_map = -1 : i64, dst_offset = 0 : i64, dst_rank = 0 : i64, dst_scratch = -1 : i64, mechanism = "bulk", read_done = [], reduction = [], repeats = [array<i64: 2, 16, 16>], signal = [], src_coords = [], src_kind = 0 : i32, src_map = -1 : i64, src_offset = 0 : i64, src_rank = 0 : i64, src_scratch = -1 : i64, step = 0 : i64, waits = []}> : () -> ()
    }
  }
  return
}

// -----

// Between executions: rank 1 reads rank 0's source, but rank 0's kernel
// never waits for the read (no read_done): once rank 0's stream passes its
// execution, its caller may overwrite the source while rank 1 reads it.
!s = !m2n.dist<16xf32, #m2n.layout<#m2n.mesh<[1]>, [replicate]>>
!d = !m2n.dist<16xf32, #m2n.layout<#m2n.mesh<[2]>, [replicate]>>
func.func @f(%c: !m2n.comm<2>, %x: !s) -> !d {
  %0 = m2n.program %x on %c strategy = "flat" : !m2n.comm<2>, !s -> !d {
    m2n.rank 0 counters = 1 {
      m2n.move bulk copy src(0)+0 -> dst(0)+0 64B step 0
    }
    m2n.rank 1 counters = 0 {
      // expected-error @below {{reads src(0), but no kernel item of rank 0 waits for it (a read-done counter of rank 0): once rank 0's execution ends, its next one or its caller may overwrite the bytes while this move still uses them}}
      m2n.move bulk copy src(0)+0 -> dst(1)+0 64B step 1
    }
  }
  return %0 : !d
}

// -----

// The same with the read reported and waited for: valid.
!s = !m2n.dist<16xf32, #m2n.layout<#m2n.mesh<[1]>, [replicate]>>
!d = !m2n.dist<16xf32, #m2n.layout<#m2n.mesh<[2]>, [replicate]>>
func.func @f(%c: !m2n.comm<2>, %x: !s) -> !d {
  %0 = m2n.program %x on %c strategy = "flat" : !m2n.comm<2>, !s -> !d {
    m2n.rank 0 counters = 1 {
      m2n.move bulk copy src(0)+0 -> dst(0)+0 64B step 0
      m2n.move bulk copy dst(0)+0 -> dst(0)+0 0B wait 0:0>=1
    }
    m2n.rank 1 counters = 0 {
      m2n.move bulk copy src(0)+0 -> dst(1)+0 64B read_done 0:0 step 1
    }
  }
  return %0 : !d
}

// -----

// An accumulator (acc) is a vector reduction's other operand.
!s = !m2n.dist<16xf32, #m2n.layout<#m2n.mesh<[2]>, [partial<sum>]>>
!d = !m2n.dist<16xf32, #m2n.layout<#m2n.mesh<[2]>, [replicate]>>
func.func @f(%c: !m2n.comm<2>, %x: !s) {
  %0 = m2n.program %x on %c strategy = "flat" : !m2n.comm<2>, !s -> !d {
    m2n.rank 0 counters = 0 {
      // expected-error@+1 {{'m2n.move' op has an accumulator but is not a vector reduction}}
      m2n.move vector copy src(1)+0 -> dst(0)+0 64B acc src(0)
    }
  }
  return
}

// -----

!s = !m2n.dist<16xf32, #m2n.layout<#m2n.mesh<[2]>, [partial<sum>]>>
!d = !m2n.dist<16xf32, #m2n.layout<#m2n.mesh<[2]>, [replicate]>>
func.func @f(%c: !m2n.comm<2>, %x: !s) {
  %0 = m2n.program %x on %c strategy = "flat" : !m2n.comm<2>, !s -> !d {
    m2n.rank 0 counters = 0 {
      // expected-error@+1 {{'m2n.move' op has an accumulator but is not a vector reduction}}
      m2n.move bulk reduce<sum> src(1)+0 -> dst(0)+0 64B acc src(0)
    }
  }
  return
}

// -----

// ... the executing rank's own source: read-only, and nobody's reads to
// report.
!s = !m2n.dist<16xf32, #m2n.layout<#m2n.mesh<[2]>, [partial<sum>]>>
!d = !m2n.dist<16xf32, #m2n.layout<#m2n.mesh<[2]>, [replicate]>>
func.func @f(%c: !m2n.comm<2>, %x: !s) {
  %0 = m2n.program %x on %c strategy = "flat" : !m2n.comm<2>, !s -> !d {
    m2n.rank 0 counters = 0 {
      // expected-error@+1 {{'m2n.move' op accumulates src(1), not its rank's own source of the tensor}}
      m2n.move vector reduce<sum> src(1)+0 -> dst(0)+0 64B acc src(1)
    }
  }
  return
}

// -----

!s = !m2n.dist<16xf32, #m2n.layout<#m2n.mesh<[2]>, [partial<sum>]>>
!d = !m2n.dist<16xf32, #m2n.layout<#m2n.mesh<[2]>, [replicate]>>
func.func @f(%c: !m2n.comm<2>, %x: !s) {
  %0 = m2n.program %x on %c strategy = "flat" : !m2n.comm<2>, !s -> !d {
    m2n.rank 1 counters = 0 {
      // expected-error@+1 {{'m2n.move' op accumulates dst(1), not its rank's own source of the tensor}}
      m2n.move vector reduce<sum> src(0)+0 -> dst(1)+0 64B acc dst(1)
    }
  }
  return
}

// -----

// ... read at the source's offsets, which must lie in it too (rank 1 holds
// 8 of the 17 elements, rank 0 nine).
!s = !m2n.dist<17xf32, #m2n.layout<#m2n.mesh<[2, 2]>, [partial<sum>, shard<0>]>>
!d = !m2n.dist<17xf32, #m2n.layout<#m2n.mesh<[2, 2]>, [replicate, replicate]>>
func.func @f(%c: !m2n.comm<4>, %x: !s) {
  %0 = m2n.program %x on %c strategy = "flat" : !m2n.comm<4>, !s -> !d {
    m2n.rank 1 counters = 0 {
      // expected-error@+1 {{'m2n.move' op reads its accumulator outside its buffer}}
      m2n.move vector reduce<sum> src(0)+0 -> dst(1)+0 36B acc src(1)
    }
  }
  return
}

// -----

!s = !m2n.dist<16xf32, #m2n.layout<#m2n.mesh<[2]>, [partial<sum>]>>
!d = !m2n.dist<16xf32, #m2n.layout<#m2n.mesh<[2]>, [replicate]>>
func.func @f(%c: !m2n.comm<2>, %x: !s) {
  %0 = m2n.program %x on %c strategy = "flat" : !m2n.comm<2>, !s -> !d {
    m2n.rank 0 counters = 0 {
      // expected-error@+1 {{a move has one accumulator}}
      m2n.move vector reduce<sum> src(1)+0 -> dst(0)+0 64B acc src(0) acc src(0)
    }
  }
  return
}
