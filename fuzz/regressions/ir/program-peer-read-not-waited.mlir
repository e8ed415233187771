!s = !m2n.dist<16xf32, #m2n.layout<#m2n.mesh<[1]>, [replicate]>>
!d = !m2n.dist<16xf32, #m2n.layout<#m2n.mesh<[2]>, [replicate]>>
func.func @f(%c: !m2n.comm<2>, %x: !s) -> !d {
  %0 = m2n.program %x on %c strategy = "flat" : !m2n.comm<2>, !s -> !d {
    m2n.rank 0 counters = 1 {
      m2n.move bulk copy src(0)+0 -> dst(0)+0 64B step 0
    }
    m2n.rank 1 counters = 0 {
      m2n.move bulk copy src(0)+0 -> dst(1)+0 64B step 1
    }
  }
  return %0 : !d
}
