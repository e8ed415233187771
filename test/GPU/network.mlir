// Reshards with network steps, compiled with test/GPU/split-by-gpu.json
// (GPU 0 and GPU 1 as two domains): the runtime moves those steps with
// NCCL (or a copy between virtual ranks of one GPU).

// 1-to-1 across the domains: one network step.
func.func @one_to_one_network(%c: !m2n.comm<4>, %x: !m2n.dist<4096x1024xf32, #m2n.layout<#m2n.mesh<[1]>, [replicate]>>) {
  %0 = m2n.reshard %x on %c : !m2n.comm<4>, !m2n.dist<4096x1024xf32, #m2n.layout<#m2n.mesh<[1]>, [replicate]>> -> !m2n.dist<4096x1024xf32, #m2n.layout<#m2n.mesh<[1], base = 1>, [replicate]>>
  return
}

// Rows on ranks 0-1 to every rank of 4: each domain receives each row block
// once, into a leader, whose domain peer pulls it over "NVLink".
func.func @gather_to_two_domains(%c: !m2n.comm<4>, %x: !m2n.dist<2048x512xbf16, #m2n.layout<#m2n.mesh<[2]>, [shard<0>]>>) {
  %0 = m2n.reshard %x on %c : !m2n.comm<4>, !m2n.dist<2048x512xbf16, #m2n.layout<#m2n.mesh<[2]>, [shard<0>]>> -> !m2n.dist<2048x512xbf16, #m2n.layout<#m2n.mesh<[4]>, [replicate]>>
  return
}

// Partial contributions across domains: leaders land raw contributions in
// scratch, every replica reduces from there.
func.func @all_reduce_two_domains(%c: !m2n.comm<4>, %x: !m2n.dist<1048576xf32, #m2n.layout<#m2n.mesh<[4]>, [partial<sum>]>>) {
  %0 = m2n.all_reduce %x on %c mesh_axes = [0] : !m2n.comm<4>, !m2n.dist<1048576xf32, #m2n.layout<#m2n.mesh<[4]>, [partial<sum>]>> -> !m2n.dist<1048576xf32, #m2n.layout<#m2n.mesh<[4]>, [replicate]>>
  return
}
