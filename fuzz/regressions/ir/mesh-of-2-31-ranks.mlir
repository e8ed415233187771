// A 2^31-rank mesh: the verifier built its 16 GB rank list (out-of-memory abort).
!s = !m2n.dist<8xf32, #m2n.layout<#m2n.mesh<[65536, 32768]>, [replicate, replicate]>>
!d = !m2n.dist<8xf32, #m2n.layout<#m2n.mesh<[1]>, [replicate]>>
func.func @f(%c: !m2n.comm<2147483648>, %x: !s) -> !d {
  %0 = m2n.reshard %x on %c : !m2n.comm<2147483648>, !s -> !d
  return %0 : !d
}
