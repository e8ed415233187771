// Two virtual ranks whose CTAs wait for each other, compiled for 132 CTAs a
// rank (max-ctas=132) with 64 KiB stages: 264 CTAs of one SM each, more than
// one GPU holds at once. The runtime refuses the binding with a message
// (test/GPU/run.sh) instead of leaving the CTAs that could not start to the
// timeout.
func.func @all_reduce_2(%c: !m2n.comm<2>, %x: !m2n.dist<8192x1024xf32, #m2n.layout<#m2n.mesh<[2]>, [partial<sum>]>>) {
  %0 = m2n.all_reduce %x on %c mesh_axes = [0] : !m2n.comm<2>, !m2n.dist<8192x1024xf32, #m2n.layout<#m2n.mesh<[2]>, [partial<sum>]>> -> !m2n.dist<8192x1024xf32, #m2n.layout<#m2n.mesh<[2]>, [replicate]>>
  return
}
