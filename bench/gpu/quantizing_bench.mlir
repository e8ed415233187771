// Issue 32's benchmark: a 7168 x 18432 bf16 weight, TP8 on ranks 0-7 to
// TP4 x DP2 on ranks 8-15, quantized into f8E4M3FN with block(128, 128)
// scales, beside the same reshard without a cast (bf16 to bf16), compiled
// with the same options (bench/gpu/run.sh quantizing).
!src = !m2n.dist<7168x18432xbf16, #m2n.layout<#m2n.mesh<[8]>, [shard<1>]>>
!dst = !m2n.dist<7168x18432xbf16, #m2n.layout<#m2n.mesh<[2, 4], ranks = [8, 9, 10, 11, 12, 13, 14, 15]>, [replicate, shard<1>]>>
!q = !m2n.dist<7168x18432xf8E4M3FN, #m2n.layout<#m2n.mesh<[2, 4], ranks = [8, 9, 10, 11, 12, 13, 14, 15]>, [replicate, shard<1>]>>
!s = !m2n.dist<56x144xf32, #m2n.layout<#m2n.mesh<[2, 4], ranks = [8, 9, 10, 11, 12, 13, 14, 15]>, [replicate, shard<1>]>>
func.func @quantizing(%c: !m2n.comm<16>, %w: !src) -> (!q, !s) {
  %q, %s = m2n.reshard %w on %c {scaling = #m2n.scaling<block(128, 128)>} : !m2n.comm<16>, !src -> !q, !s
  return %q, %s : !q, !s
}
func.func @uncast(%c: !m2n.comm<16>, %w: !src) -> !dst {
  %r = m2n.reshard %w on %c : !m2n.comm<16>, !src -> !dst
  return %r : !dst
}
