func.func @f(%x: !m2n.dist<3037000500x3037000500xf32, #m2n.layout<#m2n.mesh<[2]>, [shard<0>]>>, %c: !m2n.comm<4>) -> !m2n.dist<3037000500x3037000500xf32, #m2n.layout<#m2n.mesh<[2], base = 2>, [shard<1>]>> {
  %0 = m2n.reshard %x on %c : !m2n.comm<4>, !m2n.dist<3037000500x3037000500xf32, #m2n.layout<#m2n.mesh<[2]>, [shard<0>]>> -> !m2n.dist<3037000500x3037000500xf32, #m2n.layout<#m2n.mesh<[2], base = 2>, [shard<1>]>>
  return %0 : !m2n.dist<3037000500x3037000500xf32, #m2n.layout<#m2n.mesh<[2], base = 2>, [shard<1>]>>
}
