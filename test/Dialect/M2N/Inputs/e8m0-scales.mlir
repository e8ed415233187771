// MX scales (f8E8M0FNU) resharded as data: TP4 rows to TP2 columns.
func.func @scales(%c: !m2n.comm<4>, %s: !m2n.dist<8x4xf8E8M0FNU, #m2n.layout<#m2n.mesh<[4]>, [shard<0>]>>)
    -> !m2n.dist<8x4xf8E8M0FNU, #m2n.layout<#m2n.mesh<[2]>, [shard<1>]>> {
  %0 = m2n.reshard %s on %c : !m2n.comm<4>, !m2n.dist<8x4xf8E8M0FNU, #m2n.layout<#m2n.mesh<[4]>, [shard<0>]>> -> !m2n.dist<8x4xf8E8M0FNU, #m2n.layout<#m2n.mesh<[2]>, [shard<1>]>>
  return %0 : !m2n.dist<8x4xf8E8M0FNU, #m2n.layout<#m2n.mesh<[2]>, [shard<1>]>>
}
