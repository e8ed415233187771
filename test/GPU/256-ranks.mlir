// 256 virtual ranks that wait for each other (issue 35, item 7), compiled
// for one CTA a rank with small stages (test/GPU/prepare.sh): given one
// stream (artifact_runner --stream-per-device, as m2n-run and Python launch
// them) they run as one kernel launch of 256 CTAs, several to an SM; given a
// stream each they would be 256 kernels, more than a GPU runs at once, and
// the launch is refused with a message (test/GPU/run.sh).
func.func @all_gather_256(%c: !m2n.comm<256>, %x: !m2n.dist<4096xf32, #m2n.layout<#m2n.mesh<[256]>, [shard<0>]>>) {
  %0 = m2n.all_gather %x on %c mesh_axes = [0] : !m2n.comm<256>, !m2n.dist<4096xf32, #m2n.layout<#m2n.mesh<[256]>, [shard<0>]>> -> !m2n.dist<4096xf32, #m2n.layout<#m2n.mesh<[256]>, [replicate]>>
  return
}
