// --m2n-verify-groups: a merged m2n.group's body must be the merge of its
// members' programs (m2n::groupLayout) and each group rank's launch its
// members' launches combined; every diagnostic, and a valid group accepted
// unchanged. The op verifier (group-invalid.mlir) checks only structure.
// RUN: m2n-opt %s --split-input-file --m2n-verify-groups --verify-diagnostics
// Without the pass every case parses: the op verifier leaves this check out.
// RUN: m2n-opt %s --split-input-file -o /dev/null

!s = !m2n.dist<16xf32, #m2n.layout<#m2n.mesh<[2]>, [shard<0>]>>
!d = !m2n.dist<16xf32, #m2n.layout<#m2n.mesh<[2]>, [replicate]>>
func.func @valid(%c: !m2n.comm<2>, %x: !s, %y: !s) {
  %0 = m2n.program %x on %c strategy = "flat" : !m2n.comm<2>, !s -> !d {
    m2n.rank 0 counters = 1 launch <threads = 32, walkers = 4, stage_bytes = 16384> {
      m2n.move bulk copy src(0)+0 -> dst(0)+0 32B
    }
  }
  %1 = m2n.program %y on %c strategy = "flat" : !m2n.comm<2>, !s -> !d {
    m2n.rank 0 counters = 2 launch <threads = 32, walkers = 8, stage_bytes = 128> {
      m2n.move bulk copy src(0)+0 -> dst(0)+0 32B
    }
    m2n.rank 1 counters = 0 launch <threads = 32, walkers = 8, stage_bytes = 128> {
      m2n.move bulk copy src(1)+0 -> dst(1)+0 32B
    }
  }
  m2n.group "g"(%0, %1) : !d, !d merged {
    m2n.group_rank 0 counters = 3 members = [0, 1] counter_bases = [0, 1] launch <threads = 32, walkers = 4, stage_bytes = 16384>
    m2n.group_rank 1 counters = 0 members = [1] counter_bases = [0] launch <threads = 32, walkers = 8, stage_bytes = 128>
  }
  return
}

// -----

!s = !m2n.dist<8xf32, #m2n.layout<#m2n.mesh<[2]>, [shard<0>]>>
!d = !m2n.dist<8xf32, #m2n.layout<#m2n.mesh<[2]>, [replicate]>>
func.func @f(%c: !m2n.comm<2>, %x: !s) {
  %0 = m2n.reshard %x on %c : !m2n.comm<2>, !s -> !d
  // expected-error@+1 {{'m2n.group' op is merged but member 0 is not lowered to a program}}
  m2n.group "g"(%0) : !d merged {
    m2n.group_rank 0 counters = 1 members = [0] counter_bases = [0]
  }
  return
}

// -----

!s = !m2n.dist<16xf32, #m2n.layout<#m2n.mesh<[2]>, [shard<0>]>>
!d = !m2n.dist<16xf32, #m2n.layout<#m2n.mesh<[2]>, [replicate]>>
func.func @f(%c: !m2n.comm<2>, %x: !s, %y: !s) {
  %0 = m2n.program %x on %c strategy = "flat" : !m2n.comm<2>, !s -> !d {
    m2n.rank 0 counters = 1 {
      m2n.move bulk copy src(0)+0 -> dst(0)+0 32B
    }
  }
  %1 = m2n.program %y on %c strategy = "flat" : !m2n.comm<2>, !s -> !d {
    m2n.rank 0 counters = 2 {
      m2n.move bulk copy src(0)+0 -> dst(0)+0 32B
    }
    m2n.rank 1 counters = 0 {
      m2n.move bulk copy src(1)+0 -> dst(1)+0 32B
    }
  }
  m2n.group "g"(%0, %1) : !d, !d merged {
    // expected-error@+1 {{'m2n.group_rank' op is not the merge of the members' programs of rank 0: expected 3 counters, members and bases [0 from 0, 1 from 1]}}
    m2n.group_rank 0 counters = 3 members = [0, 1] counter_bases = [0, 0]
  }
  return
}

// -----

!s = !m2n.dist<16xf32, #m2n.layout<#m2n.mesh<[2]>, [shard<0>]>>
!d = !m2n.dist<16xf32, #m2n.layout<#m2n.mesh<[2]>, [replicate]>>
func.func @f(%c: !m2n.comm<2>, %x: !s) {
  %0 = m2n.program %x on %c strategy = "flat" : !m2n.comm<2>, !s -> !d {
    m2n.rank 0 counters = 1 {
      m2n.move bulk copy src(0)+0 -> dst(0)+0 32B
    }
    m2n.rank 1 counters = 0 {
      m2n.move bulk copy src(1)+0 -> dst(1)+0 32B
    }
  }
  // expected-error@+1 {{'m2n.group' op lists no m2n.group_rank for rank 1, which member 0 runs on}}
  m2n.group "g"(%0) : !d merged {
    m2n.group_rank 0 counters = 1 members = [0] counter_bases = [0]
  }
  return
}

// -----

!s = !m2n.dist<16xf32, #m2n.layout<#m2n.mesh<[2]>, [shard<0>]>>
!d = !m2n.dist<16xf32, #m2n.layout<#m2n.mesh<[2]>, [replicate]>>
func.func @f(%c: !m2n.comm<2>, %x: !s) {
  %0 = m2n.program %x on %c strategy = "flat" : !m2n.comm<2>, !s -> !d {
    m2n.rank 0 counters = 1 {
      m2n.move bulk copy src(0)+0 -> dst(0)+0 32B
    }
  }
  m2n.group "g"(%0) : !d merged {
    m2n.group_rank 0 counters = 1 members = [0] counter_bases = [0]
    // expected-error@+1 {{'m2n.group_rank' op rank 1 runs no member's program}}
    m2n.group_rank 1 counters = 1 members = [0] counter_bases = [0]
  }
  return
}

// -----

// A group rank's launch must be its members' combined.
!s = !m2n.dist<16xf32, #m2n.layout<#m2n.mesh<[2]>, [shard<0>]>>
!d = !m2n.dist<16xf32, #m2n.layout<#m2n.mesh<[2]>, [replicate]>>
func.func @f(%c: !m2n.comm<2>, %x: !s, %y: !s) {
  %0 = m2n.program %x on %c strategy = "flat" : !m2n.comm<2>, !s -> !d {
    m2n.rank 0 counters = 0 launch <threads = 32, walkers = 8, stage_bytes = 128> {
      m2n.move bulk copy src(0)+0 -> dst(0)+0 32B
    }
  }
  %1 = m2n.program %y on %c strategy = "flat" : !m2n.comm<2>, !s -> !d {
    m2n.rank 0 counters = 0 launch <threads = 32, walkers = 4, stage_bytes = 16384> {
      m2n.move bulk copy src(0)+0 -> dst(0)+0 32B
    }
  }
  m2n.group "g"(%0, %1) : !d, !d merged {
    // expected-error@+1 {{'m2n.group_rank' op launch 8 walkers x 32 threads, stages of 128 B is not its members' launches combined: expected 4 walkers x 32 threads, stages of 16384 B}}
    m2n.group_rank 0 counters = 0 members = [0, 1] counter_bases = [0, 0] launch <threads = 32, walkers = 8, stage_bytes = 128>
  }
  return
}

// -----

!s = !m2n.dist<16xf32, #m2n.layout<#m2n.mesh<[2]>, [shard<0>]>>
!d = !m2n.dist<16xf32, #m2n.layout<#m2n.mesh<[2]>, [replicate]>>
func.func @f(%c: !m2n.comm<2>, %x: !s) {
  %0 = m2n.program %x on %c strategy = "flat" : !m2n.comm<2>, !s -> !d {
    m2n.rank 0 counters = 0 {
      m2n.move bulk copy src(0)+0 -> dst(0)+0 32B
    }
  }
  m2n.group "g"(%0) : !d merged {
    // expected-error@+1 {{'m2n.group_rank' op has a launch but member 0's program of rank 0 has none: run m2n-choose-launch on the whole module}}
    m2n.group_rank 0 counters = 0 members = [0] counter_bases = [0] launch <threads = 32, walkers = 8, stage_bytes = 128>
  }
  return
}
