// RUN: m2n-opt %s --m2n-verify-plan -split-input-file -verify-diagnostics

// Two ranks each hold two rows of a 4-row tensor; rank 2 gathers all of it.
// The correct plan passes unchanged.
func.func @correct(%c: !m2n.comm<3>, %x: !m2n.dist<4xf32, #m2n.layout<#m2n.mesh<[2]>, [shard<0>]>>) {
  %0 = m2n.plan %x on %c : !m2n.comm<3>, !m2n.dist<4xf32, #m2n.layout<#m2n.mesh<[2]>, [shard<0>]>> -> !m2n.dist<4xf32, #m2n.layout<#m2n.mesh<[1], base = 2>, [replicate]>> {
    m2n.transfer copy from 0 [0:2] to 2 [0:2]
    m2n.transfer copy from 1 [0:2] to 2 [2:4]
  }
  return
}

// -----

func.func @missing(%c: !m2n.comm<3>, %x: !m2n.dist<4xf32, #m2n.layout<#m2n.mesh<[2]>, [shard<0>]>>) {
  // expected-error@+1 {{destination rank 2: local elements [2:4] receive 0 copies, expected exactly 1}}
  %0 = m2n.plan %x on %c : !m2n.comm<3>, !m2n.dist<4xf32, #m2n.layout<#m2n.mesh<[2]>, [shard<0>]>> -> !m2n.dist<4xf32, #m2n.layout<#m2n.mesh<[1], base = 2>, [replicate]>> {
    m2n.transfer copy from 0 [0:2] to 2 [0:2]
  }
  return
}

// -----

func.func @twice(%c: !m2n.comm<3>, %x: !m2n.dist<4xf32, #m2n.layout<#m2n.mesh<[2]>, [shard<0>]>>) {
  // expected-error@+1 {{destination rank 2: local elements [0:1] receive 2 copies, expected exactly 1}}
  %0 = m2n.plan %x on %c : !m2n.comm<3>, !m2n.dist<4xf32, #m2n.layout<#m2n.mesh<[2]>, [shard<0>]>> -> !m2n.dist<4xf32, #m2n.layout<#m2n.mesh<[1], base = 2>, [replicate]>> {
    m2n.transfer copy from 0 [0:2] to 2 [0:2]
    m2n.transfer copy from 1 [0:2] to 2 [2:4]
    m2n.transfer copy from 0 [0:1] to 2 [0:1]
  }
  return
}

// -----

func.func @source_out_of_bounds(%c: !m2n.comm<3>, %x: !m2n.dist<4xf32, #m2n.layout<#m2n.mesh<[2]>, [shard<0>]>>) {
  %0 = m2n.plan %x on %c : !m2n.comm<3>, !m2n.dist<4xf32, #m2n.layout<#m2n.mesh<[2]>, [shard<0>]>> -> !m2n.dist<4xf32, #m2n.layout<#m2n.mesh<[1], base = 2>, [replicate]>> {
    // expected-error@+1 {{source box [1:3] is outside the local buffer [0:2] of rank 0}}
    m2n.transfer copy from 0 [1:3] to 2 [0:2]
    m2n.transfer copy from 1 [0:2] to 2 [2:4]
  }
  return
}

// -----

func.func @destination_out_of_bounds(%c: !m2n.comm<3>, %x: !m2n.dist<4xf32, #m2n.layout<#m2n.mesh<[2]>, [shard<0>]>>) {
  %0 = m2n.plan %x on %c : !m2n.comm<3>, !m2n.dist<4xf32, #m2n.layout<#m2n.mesh<[2]>, [shard<0>]>> -> !m2n.dist<4xf32, #m2n.layout<#m2n.mesh<[1], base = 2>, [replicate]>> {
    m2n.transfer copy from 0 [0:2] to 2 [0:2]
    // expected-error@+1 {{destination box [3:5] is outside the local buffer [0:4] of rank 2}}
    m2n.transfer copy from 1 [0:2] to 2 [3:5]
  }
  return
}

// -----

func.func @wrong_elements(%c: !m2n.comm<3>, %x: !m2n.dist<4xf32, #m2n.layout<#m2n.mesh<[2]>, [shard<0>]>>) {
  %0 = m2n.plan %x on %c : !m2n.comm<3>, !m2n.dist<4xf32, #m2n.layout<#m2n.mesh<[2]>, [shard<0>]>> -> !m2n.dist<4xf32, #m2n.layout<#m2n.mesh<[1], base = 2>, [replicate]>> {
    m2n.transfer copy from 0 [0:2] to 2 [0:2]
    // expected-error@+1 {{moves global elements [2:4] into global elements [1:3]}}
    m2n.transfer copy from 1 [0:2] to 2 [1:3]
  }
  return
}

// -----

// Partial -> Replicate needs the other contributor reduced in.
func.func @missing_reduction(%c: !m2n.comm<2>, %x: !m2n.dist<4xf32, #m2n.layout<#m2n.mesh<[2]>, [partial<sum>]>>) {
  // expected-error@+1 {{destination rank 0: local elements [0:4] receive contributor 1 0 times, expected 1}}
  %0 = m2n.plan %x on %c : !m2n.comm<2>, !m2n.dist<4xf32, #m2n.layout<#m2n.mesh<[2]>, [partial<sum>]>> -> !m2n.dist<4xf32, #m2n.layout<#m2n.mesh<[2]>, [replicate]>> {
    m2n.transfer copy from 0 [0:4] to 0 [0:4]
    m2n.transfer copy from 1 [0:4] to 1 [0:4]
    m2n.transfer reduce<sum> from 0 [0:4] to 1 [0:4]
  }
  return
}

// -----

// The same contributor twice: one copy, one reduce of itself.
func.func @contributor_twice(%c: !m2n.comm<2>, %x: !m2n.dist<4xf32, #m2n.layout<#m2n.mesh<[2]>, [partial<sum>]>>) {
  // expected-error@+1 {{destination rank 1: local elements [0:4] receive contributor 0 2 times, expected 1}}
  %0 = m2n.plan %x on %c : !m2n.comm<2>, !m2n.dist<4xf32, #m2n.layout<#m2n.mesh<[2]>, [partial<sum>]>> -> !m2n.dist<4xf32, #m2n.layout<#m2n.mesh<[2]>, [replicate]>> {
    m2n.transfer copy from 0 [0:4] to 0 [0:4]
    m2n.transfer reduce<sum> from 1 [0:4] to 0 [0:4]
    m2n.transfer copy from 0 [0:4] to 1 [0:4]
    m2n.transfer reduce<sum> from 0 [0:4] to 1 [0:4]
  }
  return
}

// -----

// A destination that keeps the partial axis must get its own contributor.
func.func @wrong_contributor(%c: !m2n.comm<4>, %x: !m2n.dist<4xf32, #m2n.layout<#m2n.mesh<[2, 2]>, [partial<sum>, shard<0>]>>) {
  %0 = m2n.plan %x on %c : !m2n.comm<4>, !m2n.dist<4xf32, #m2n.layout<#m2n.mesh<[2, 2]>, [partial<sum>, shard<0>]>> -> !m2n.dist<4xf32, #m2n.layout<#m2n.mesh<[2, 2]>, [partial<sum>, replicate]>> {
    m2n.transfer copy from 0 [0:2] to 0 [0:2]
    // expected-error@+1 {{moves contributor 1 into destination contributor 0}}
    m2n.transfer copy from 3 [0:2] to 0 [2:4]
  }
  return
}
