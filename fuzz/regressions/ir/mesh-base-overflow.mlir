#m = #m2n.mesh<[2, 2], base = 9223372036854775807>
func.func @f(%x: !m2n.dist<8xf32, #m2n.layout<#m, [shard<0>, replicate]>>) { return }
