// 130 virtual ranks that wait for each other, each given a stream of its
// own: more than the 128 kernels a GPU runs at once, so the runtime refuses
// the launch with a message (test/GPU/run.sh), where it used to wait until
// the timeout (issue 35).
func.func @all_gather_130(%c: !m2n.comm<130>, %x: !m2n.dist<1040xf32, #m2n.layout<#m2n.mesh<[130]>, [shard<0>]>>) {
  %0 = m2n.all_gather %x on %c mesh_axes = [0] : !m2n.comm<130>, !m2n.dist<1040xf32, #m2n.layout<#m2n.mesh<[130]>, [shard<0>]>> -> !m2n.dist<1040xf32, #m2n.layout<#m2n.mesh<[130]>, [replicate]>>
  return
}
