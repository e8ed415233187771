// Every diagnostic of m2n.group and m2n.group_rank: the members (results
// of reshards of the group's block, distinct, independent, one
// communicator) and the structure of a merged body (whether it is the
// members' merge is --m2n-verify-groups's: verify-groups.mlir).
// RUN: m2n-opt %s --split-input-file --verify-diagnostics

!s = !m2n.dist<8xf32, #m2n.layout<#m2n.mesh<[2]>, [shard<0>]>>
func.func @f(%c: !m2n.comm<2>, %x: !s) {
  // expected-error@+1 {{'m2n.group' op needs at least one member}}
  "m2n.group"() <{name = "g"}> ({}) : () -> ()
  return
}

// -----

!s = !m2n.dist<8xf32, #m2n.layout<#m2n.mesh<[2]>, [shard<0>]>>
func.func @f(%c: !m2n.comm<2>, %x: !s) {
  // expected-error@+1 {{'m2n.group' op member 0 is not the result of a reshard of this block}}
  m2n.group "g"(%x) : !s
  return
}

// -----

!s = !m2n.dist<8xf32, #m2n.layout<#m2n.mesh<[2]>, [shard<0>]>>
!d = !m2n.dist<8xf32, #m2n.layout<#m2n.mesh<[2]>, [replicate]>>
func.func @f(%c: !m2n.comm<2>, %x: !s) {
  %0 = m2n.reshard %x on %c : !m2n.comm<2>, !s -> !d
  // expected-error@+1 {{'m2n.group' op member 1 repeats member 0: a reshard launched twice at once would write its destination twice}}
  m2n.group "g"(%0, %0) : !d, !d
  return
}

// -----

!s = !m2n.dist<8xf32, #m2n.layout<#m2n.mesh<[2]>, [shard<0>]>>
!d = !m2n.dist<8xf32, #m2n.layout<#m2n.mesh<[2]>, [replicate]>>
func.func @f(%c: !m2n.comm<2>, %x: !s) {
  %0 = m2n.reshard %x on %c : !m2n.comm<2>, !s -> !d
  %1 = m2n.reshard %0 on %c : !m2n.comm<2>, !d -> !s
  // expected-error@+1 {{'m2n.group' op member 1 reads member 0's result: the members of a group run at the same time}}
  m2n.group "g"(%0, %1) : !d, !s
  return
}

// -----

!s = !m2n.dist<8xf32, #m2n.layout<#m2n.mesh<[2]>, [shard<0>]>>
!d = !m2n.dist<8xf32, #m2n.layout<#m2n.mesh<[2]>, [replicate]>>
func.func @f(%c: !m2n.comm<2>, %e: !m2n.comm<2>, %x: !s, %y: !s) {
  %0 = m2n.reshard %x on %c : !m2n.comm<2>, !s -> !d
  %1 = m2n.reshard %y on %e : !m2n.comm<2>, !s -> !d
  // expected-error@+1 {{'m2n.group' op member 1 runs on another communicator than member 0}}
  m2n.group "g"(%0, %1) : !d, !d
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
    // expected-error@+1 {{'m2n.group_rank' op rank 0 follows rank 0: ranks are listed once, in order}}
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
    // expected-error@+1 {{'m2n.group_rank' op lists at least one member and one counter base per member}}
    m2n.group_rank 0 counters = 1 members = [0] counter_bases = []
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
    // expected-error@+1 {{'m2n.group_rank' op member 1 is out of order or not a member of the group: every rank runs its members in the group's order, each once}}
    m2n.group_rank 0 counters = 1 members = [1] counter_bases = [0]
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
    // expected-error@+1 {{'m2n.rank' op is not an m2n.group_rank: a merged group lists the program of each rank}}
    m2n.rank 0 counters = 1 {
    }
  }
  return
}

// -----

!s = !m2n.dist<8xf32, #m2n.layout<#m2n.mesh<[2]>, [shard<0>]>>
func.func @f(%c: !m2n.comm<2>, %x: !s) {
  // expected-error@+1 {{'m2n.group_rank' op expects parent op 'm2n.group'}}
  m2n.group_rank 0 counters = 1 members = [0] counter_bases = [0]
  return
}
