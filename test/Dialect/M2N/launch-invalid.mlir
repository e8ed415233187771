// The launch of a rank (`launch <...>` on m2n.rank and m2n.group_rank) and
// of the kernel (the module's m2n.kernel_launch) are checked by the rule the
// artifact loader uses (m2n::checkLaunch): a launch runs its rank's items,
// fits the kernel (a group rank's combining its members' is verify-groups.mlir's).
// RUN: m2n-opt %s --split-input-file --verify-diagnostics

!s = !m2n.dist<16xf32, #m2n.layout<#m2n.mesh<[2]>, [shard<0>]>>
!d = !m2n.dist<16xf32, #m2n.layout<#m2n.mesh<[2]>, [replicate]>>
func.func @f(%c: !m2n.comm<2>, %x: !s) {
  %0 = m2n.program %x on %c strategy = "flat" : !m2n.comm<2>, !s -> !d {
    // expected-error@+1 {{'m2n.rank' op launch 8 walkers x 32 threads, stages of 128 B cannot run vector items: they take one walker of the SM path's 128 or 256 threads}}
    m2n.rank 0 counters = 0 launch <threads = 32, walkers = 8, stage_bytes = 128> {
      m2n.move vector copy src(0)+0 -> dst(0)+0 32B
    }
  }
  return
}

// -----

!s = !m2n.dist<16xf32, #m2n.layout<#m2n.mesh<[2]>, [shard<0>]>>
!d = !m2n.dist<16xf32, #m2n.layout<#m2n.mesh<[2]>, [replicate]>>
func.func @f(%c: !m2n.comm<2>, %x: !s) {
  %0 = m2n.program %x on %c strategy = "flat" : !m2n.comm<2>, !s -> !d {
    // expected-error@+1 {{'m2n.rank' op launch 8 walkers x 32 threads, stages of 128 B cannot run an item of 256 bytes: an item goes through one stage}}
    m2n.rank 0 counters = 0 launch <threads = 32, walkers = 8, stage_bytes = 128> {
      m2n.move bulk copy src(0)+0 -> dst(0)+0 256B
    }
  }
  return
}

// -----

// expected-error@+1 {{launch 9 walkers x 32 threads, stages of 128 B: threads must be 32, 128 or 256, walkers 1-8 and stages a positive multiple of 128 bytes}}
#bad = #m2n.launch<threads = 32, walkers = 9, stage_bytes = 128>

// -----

// expected-error@+1 {{launch 2 walkers x 128 threads, stages of 128 B: a block of 128 threads (the SM path's) runs one walker}}
#bad = #m2n.launch<threads = 128, walkers = 2, stage_bytes = 128>

// -----

// expected-error@+1 {{8 stages of 65536 bytes (each rounded up to 128) take 524288 bytes of shared memory, more than the 222592 a CTA may use}}
#bad = #m2n.kernel_launch<ctas = 16, threads = 32, stages = 8, stage_bytes = 65536, walkers = 8>

// -----

// expected-error@+1 {{a kernel of 32 threads, 0 CTAs, 8 walkers and 3 stages of 65536 bytes}}
#bad = #m2n.kernel_launch<ctas = 0, threads = 32, stages = 3, stage_bytes = 65536, walkers = 8>

// -----

// A rank's stages larger than the compiled ones.
!s = !m2n.dist<16xf32, #m2n.layout<#m2n.mesh<[2]>, [shard<0>]>>
!d = !m2n.dist<16xf32, #m2n.layout<#m2n.mesh<[2]>, [replicate]>>
module attributes {m2n.kernel_launch = #m2n.kernel_launch<ctas = 16, threads = 32, stages = 3, stage_bytes = 4096, walkers = 8>} {
  func.func @f(%c: !m2n.comm<2>, %x: !s) {
    %0 = m2n.program %x on %c strategy = "flat" : !m2n.comm<2>, !s -> !d {
      // expected-error@+1 {{'m2n.rank' op launch 1 walker x 32 threads, stages of 65536 B does not fit the kernel's 3 stages of 4096 B a walker (12288 B of shared memory, 64 barriers)}}
      m2n.rank 0 counters = 0 launch <threads = 32, walkers = 1, stage_bytes = 65536> {
        m2n.move bulk copy src(0)+0 -> dst(0)+0 32B
      }
    }
    return
  }
}

// -----

// More walkers than the compiled shared memory holds.
!s = !m2n.dist<16xf32, #m2n.layout<#m2n.mesh<[2]>, [shard<0>]>>
!d = !m2n.dist<16xf32, #m2n.layout<#m2n.mesh<[2]>, [replicate]>>
module attributes {m2n.kernel_launch = #m2n.kernel_launch<ctas = 16, threads = 32, stages = 3, stage_bytes = 65536, walkers = 8>} {
  func.func @f(%c: !m2n.comm<2>, %x: !s) {
    %0 = m2n.program %x on %c strategy = "flat" : !m2n.comm<2>, !s -> !d {
      // expected-error@+1 {{'m2n.rank' op launch 2 walkers x 32 threads, stages of 65536 B does not fit}}
      m2n.rank 0 counters = 0 launch <threads = 32, walkers = 2, stage_bytes = 65536> {
        m2n.move bulk copy src(0)+0 -> dst(0)+0 32B
      }
    }
    return
  }
}

// -----

// The SM path's block in a kernel without vector ops.
!s = !m2n.dist<16xf32, #m2n.layout<#m2n.mesh<[2]>, [shard<0>]>>
!d = !m2n.dist<16xf32, #m2n.layout<#m2n.mesh<[2]>, [replicate]>>
module attributes {m2n.kernel_launch = #m2n.kernel_launch<ctas = 16, threads = 32, stages = 3, stage_bytes = 65536, walkers = 8>} {
  func.func @f(%c: !m2n.comm<2>, %x: !s) {
    %0 = m2n.program %x on %c strategy = "flat" : !m2n.comm<2>, !s -> !d {
      // expected-error@+1 {{'m2n.rank' op launch 1 walker x 128 threads, stages of 65536 B: the kernel has no SM path, its blocks are 32 threads}}
      m2n.rank 0 counters = 0 launch <threads = 128, walkers = 1, stage_bytes = 65536> {
        m2n.move vector copy src(0)+0 -> dst(0)+0 32B
      }
    }
    return
  }
}

// -----

// expected-error@+1 {{'m2n.kernel_launch' has 128 threads but the kernel has no vector ops (32)}}
module attributes {m2n.kernel_launch = #m2n.kernel_launch<ctas = 16, threads = 128, stages = 3, stage_bytes = 65536, walkers = 8>, m2n.kernel_ops = {bulk = array<i32: 0>, tile = array<i32>, vector = array<i32>}} {
}

// -----

// A kernel with quantizing ops (op codes 53-71) runs blocks of 256 threads.
// expected-error@+1 {{'m2n.kernel_launch' has 128 threads but the kernel has reducing or quantizing vector ops (256)}}
module attributes {m2n.kernel_launch = #m2n.kernel_launch<ctas = 16, threads = 128, stages = 3, stage_bytes = 65536, walkers = 8>, m2n.kernel_ops = {bulk = array<i32: 0>, tile = array<i32>, vector = array<i32: 0, 60>}} {
}

// -----

// expected-error@+1 {{'m2n.kernel_launch' has 256 threads but the kernel has vector ops (128)}}
module attributes {m2n.kernel_launch = #m2n.kernel_launch<ctas = 16, threads = 256, stages = 3, stage_bytes = 65536, walkers = 8>, m2n.kernel_ops = {bulk = array<i32: 0>, tile = array<i32>, vector = array<i32: 0>}} {
}

// -----

// expected-error@+1 {{'m2n.kernel_launch' must be a #m2n.kernel_launch attribute of a module}}
module attributes {m2n.kernel_launch = 3 : i64} {
}
