// Two casts that differ only in their scale (by one unit in the sixth
// significant digit): compiled once each, not shared.
!s = !m2n.dist<64x64xf32, #m2n.layout<#m2n.mesh<[2]>, [shard<0>]>>
!d = !m2n.dist<64x64xbf16, #m2n.layout<#m2n.mesh<[2], base = 2>, [shard<1>]>>
func.func @scales(%c: !m2n.comm<4>, %x: !s, %y: !s) {
  %0 = m2n.reshard %x on %c {scale = 2.232100e-03 : f32} : !m2n.comm<4>, !s -> !d
  %1 = m2n.reshard %y on %c {scale = 2.232400e-03 : f32} : !m2n.comm<4>, !s -> !d
  return
}
