// In-flight casts: bf16 -> fp8 with a scale, fp8 -> f32, f32 -> bf16 and
// f16 -> f8E5M2, over odd shapes, disjoint meshes and two NVLink domains
// (casts.test runs them with a topology that splits the ranks).
func.func @bf16_to_e4m3(%c: !m2n.comm<8>,
    %w: !m2n.dist<33x70xbf16, #m2n.layout<#m2n.mesh<[4]>, [shard<0>]>>) {
  %r = m2n.reshard %w on %c {scale = 0.25 : f32} : !m2n.comm<8>,
      !m2n.dist<33x70xbf16, #m2n.layout<#m2n.mesh<[4]>, [shard<0>]>>
   -> !m2n.dist<33x70xf8E4M3FN, #m2n.layout<#m2n.mesh<[2, 2], base = 4>, [replicate, shard<1>]>>
  return
}
func.func @e4m3_to_f32(%c: !m2n.comm<8>,
    %w: !m2n.dist<16x24xf8E4M3FN, #m2n.layout<#m2n.mesh<[2]>, [shard<1>]>>) {
  %r = m2n.reshard %w on %c : !m2n.comm<8>,
      !m2n.dist<16x24xf8E4M3FN, #m2n.layout<#m2n.mesh<[2]>, [shard<1>]>>
   -> !m2n.dist<16x24xf32, #m2n.layout<#m2n.mesh<[4], base = 4>, [shard<0>]>>
  return
}
func.func @f32_to_bf16(%c: !m2n.comm<8>,
    %w: !m2n.dist<1000xf32, #m2n.layout<#m2n.mesh<[8]>, [shard<0>]>>) {
  %r = m2n.reshard %w on %c {scale = 3.0 : f32} : !m2n.comm<8>,
      !m2n.dist<1000xf32, #m2n.layout<#m2n.mesh<[8]>, [shard<0>]>>
   -> !m2n.dist<1000xbf16, #m2n.layout<#m2n.mesh<[8]>, [replicate]>>
  return
}
func.func @f16_to_e5m2(%c: !m2n.comm<8>,
    %w: !m2n.dist<7x5x9xf16, #m2n.layout<#m2n.mesh<[2, 2]>, [shard<2>, shard<0>]>>) {
  %r = m2n.reshard %w on %c : !m2n.comm<8>,
      !m2n.dist<7x5x9xf16, #m2n.layout<#m2n.mesh<[2, 2]>, [shard<2>, shard<0>]>>
   -> !m2n.dist<7x5x9xf8E5M2, #m2n.layout<#m2n.mesh<[2], base = 6>, [shard<1>]>>
  return
}
