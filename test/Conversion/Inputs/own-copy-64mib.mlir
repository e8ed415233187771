// A colocated trainer and generator: each rank copies its own 64 MiB (a
// shard stays on its rank, its layout changing from replicated on one rank
// to a mesh of one): one contiguous run of the rank's own bytes.
func.func @own_copy(%c: !m2n.comm<1>, %x: !m2n.dist<16777216xf32, #m2n.layout<#m2n.mesh<[1]>, [replicate]>>) {
  %0 = m2n.reshard %x on %c : !m2n.comm<1>, !m2n.dist<16777216xf32, #m2n.layout<#m2n.mesh<[1]>, [replicate]>> -> !m2n.dist<16777216xf32, #m2n.layout<#m2n.mesh<[1]>, [shard<0>]>>
  return
}
