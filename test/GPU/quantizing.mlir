// Quantizing reshards for the GPU (test/GPU/quantizing_runner.cu): issue
// 32's block-scaled case scaled down, MX into e5m2, one scale per tensor
// of an uneven f16 tensor, blocks that straddle both sides' shards, and
// the fast path's f16, f32, e5m2 and block-straddling vectors.
func.func @block(%c: !m2n.comm<4>, %w: !m2n.dist<256x64xbf16, #m2n.layout<#m2n.mesh<[4]>, [shard<1>]>>)
    -> (!m2n.dist<256x64xf8E4M3FN, #m2n.layout<#m2n.mesh<[2]>, [shard<0>]>>, !m2n.dist<2x1xf32, #m2n.layout<#m2n.mesh<[2]>, [shard<0>]>>) {
  %q, %s = m2n.reshard %w on %c {scaling = #m2n.scaling<block(128, 128)>} : !m2n.comm<4>, !m2n.dist<256x64xbf16, #m2n.layout<#m2n.mesh<[4]>, [shard<1>]>> -> !m2n.dist<256x64xf8E4M3FN, #m2n.layout<#m2n.mesh<[2]>, [shard<0>]>>, !m2n.dist<2x1xf32, #m2n.layout<#m2n.mesh<[2]>, [shard<0>]>>
  return %q, %s : !m2n.dist<256x64xf8E4M3FN, #m2n.layout<#m2n.mesh<[2]>, [shard<0>]>>, !m2n.dist<2x1xf32, #m2n.layout<#m2n.mesh<[2]>, [shard<0>]>>
}

func.func @straddling(%c: !m2n.comm<8>, %w: !m2n.dist<6x40xbf16, #m2n.layout<#m2n.mesh<[4]>, [shard<1>]>>)
    -> (!m2n.dist<6x40xf8E4M3FN, #m2n.layout<#m2n.mesh<[4], ranks = [4, 5, 6, 7]>, [shard<0>]>>, !m2n.dist<2x3xf32, #m2n.layout<#m2n.mesh<[4], ranks = [4, 5, 6, 7]>, [shard<0>]>>) {
  %q, %s = m2n.reshard %w on %c {scaling = #m2n.scaling<block(4, 16)>} : !m2n.comm<8>, !m2n.dist<6x40xbf16, #m2n.layout<#m2n.mesh<[4]>, [shard<1>]>> -> !m2n.dist<6x40xf8E4M3FN, #m2n.layout<#m2n.mesh<[4], ranks = [4, 5, 6, 7]>, [shard<0>]>>, !m2n.dist<2x3xf32, #m2n.layout<#m2n.mesh<[4], ranks = [4, 5, 6, 7]>, [shard<0>]>>
  return %q, %s : !m2n.dist<6x40xf8E4M3FN, #m2n.layout<#m2n.mesh<[4], ranks = [4, 5, 6, 7]>, [shard<0>]>>, !m2n.dist<2x3xf32, #m2n.layout<#m2n.mesh<[4], ranks = [4, 5, 6, 7]>, [shard<0>]>>
}

func.func @mx(%c: !m2n.comm<4>, %w: !m2n.dist<2x3x96xbf16, #m2n.layout<#m2n.mesh<[2]>, [shard<0>]>>)
    -> (!m2n.dist<2x3x96xf8E5M2, #m2n.layout<#m2n.mesh<[2], ranks = [2, 3]>, [shard<2>]>>, !m2n.dist<2x3x3xf8E8M0FNU, #m2n.layout<#m2n.mesh<[2], ranks = [2, 3]>, [shard<2>]>>) {
  %q, %s = m2n.reshard %w on %c {scaling = #m2n.scaling<mx>} : !m2n.comm<4>, !m2n.dist<2x3x96xbf16, #m2n.layout<#m2n.mesh<[2]>, [shard<0>]>> -> !m2n.dist<2x3x96xf8E5M2, #m2n.layout<#m2n.mesh<[2], ranks = [2, 3]>, [shard<2>]>>, !m2n.dist<2x3x3xf8E8M0FNU, #m2n.layout<#m2n.mesh<[2], ranks = [2, 3]>, [shard<2>]>>
  return %q, %s : !m2n.dist<2x3x96xf8E5M2, #m2n.layout<#m2n.mesh<[2], ranks = [2, 3]>, [shard<2>]>>, !m2n.dist<2x3x3xf8E8M0FNU, #m2n.layout<#m2n.mesh<[2], ranks = [2, 3]>, [shard<2>]>>
}

func.func @tensor(%c: !m2n.comm<4>, %w: !m2n.dist<1001xf16, #m2n.layout<#m2n.mesh<[3]>, [shard<0>]>>)
    -> (!m2n.dist<1001xf8E4M3FN, #m2n.layout<#m2n.mesh<[1], ranks = [3]>, [replicate]>>, !m2n.dist<1xf32, #m2n.layout<#m2n.mesh<[1], ranks = [3]>, [replicate]>>) {
  %q, %s = m2n.reshard %w on %c {scaling = #m2n.scaling<tensor>} : !m2n.comm<4>, !m2n.dist<1001xf16, #m2n.layout<#m2n.mesh<[3]>, [shard<0>]>> -> !m2n.dist<1001xf8E4M3FN, #m2n.layout<#m2n.mesh<[1], ranks = [3]>, [replicate]>>, !m2n.dist<1xf32, #m2n.layout<#m2n.mesh<[1], ranks = [3]>, [replicate]>>
  return %q, %s : !m2n.dist<1001xf8E4M3FN, #m2n.layout<#m2n.mesh<[1], ranks = [3]>, [replicate]>>, !m2n.dist<1xf32, #m2n.layout<#m2n.mesh<[1], ranks = [3]>, [replicate]>>
}

// The fast path with f16 and f32 sources (packed f16 maxima, four f32
// lanes a vector) and e5m2 blocks.
func.func @f16_blocks(%c: !m2n.comm<4>, %w: !m2n.dist<128x96xf16, #m2n.layout<#m2n.mesh<[2]>, [shard<1>]>>)
    -> (!m2n.dist<128x96xf8E4M3FN, #m2n.layout<#m2n.mesh<[2], ranks = [2, 3]>, [shard<0>]>>, !m2n.dist<4x6xf32, #m2n.layout<#m2n.mesh<[2], ranks = [2, 3]>, [shard<0>]>>) {
  %q, %s = m2n.reshard %w on %c {scaling = #m2n.scaling<block(32, 16)>} : !m2n.comm<4>, !m2n.dist<128x96xf16, #m2n.layout<#m2n.mesh<[2]>, [shard<1>]>> -> !m2n.dist<128x96xf8E4M3FN, #m2n.layout<#m2n.mesh<[2], ranks = [2, 3]>, [shard<0>]>>, !m2n.dist<4x6xf32, #m2n.layout<#m2n.mesh<[2], ranks = [2, 3]>, [shard<0>]>>
  return %q, %s : !m2n.dist<128x96xf8E4M3FN, #m2n.layout<#m2n.mesh<[2], ranks = [2, 3]>, [shard<0>]>>, !m2n.dist<4x6xf32, #m2n.layout<#m2n.mesh<[2], ranks = [2, 3]>, [shard<0>]>>
}
func.func @f32_e5m2(%c: !m2n.comm<6>, %w: !m2n.dist<64x64xf32, #m2n.layout<#m2n.mesh<[4]>, [shard<0>]>>)
    -> (!m2n.dist<64x64xf8E5M2, #m2n.layout<#m2n.mesh<[2], ranks = [4, 5]>, [shard<1>]>>, !m2n.dist<8x2xf32, #m2n.layout<#m2n.mesh<[2], ranks = [4, 5]>, [shard<1>]>>) {
  %q, %s = m2n.reshard %w on %c {scaling = #m2n.scaling<block(8, 32)>} : !m2n.comm<6>, !m2n.dist<64x64xf32, #m2n.layout<#m2n.mesh<[4]>, [shard<0>]>> -> !m2n.dist<64x64xf8E5M2, #m2n.layout<#m2n.mesh<[2], ranks = [4, 5]>, [shard<1>]>>, !m2n.dist<8x2xf32, #m2n.layout<#m2n.mesh<[2], ranks = [4, 5]>, [shard<1>]>>
  return %q, %s : !m2n.dist<64x64xf8E5M2, #m2n.layout<#m2n.mesh<[2], ranks = [4, 5]>, [shard<1>]>>, !m2n.dist<8x2xf32, #m2n.layout<#m2n.mesh<[2], ranks = [4, 5]>, [shard<1>]>>
}
// Vectors that straddle two blocks in the fast path: rank 1's columns
// start at 32, 12 columns into a block of 20.
func.func @crossing(%c: !m2n.comm<5>, %w: !m2n.dist<64x96xbf16, #m2n.layout<#m2n.mesh<[3]>, [shard<1>]>>)
    -> (!m2n.dist<64x96xf8E4M3FN, #m2n.layout<#m2n.mesh<[2], ranks = [3, 4]>, [shard<0>]>>, !m2n.dist<4x5xf32, #m2n.layout<#m2n.mesh<[2], ranks = [3, 4]>, [shard<0>]>>) {
  %q, %s = m2n.reshard %w on %c {scaling = #m2n.scaling<block(16, 20)>} : !m2n.comm<5>, !m2n.dist<64x96xbf16, #m2n.layout<#m2n.mesh<[3]>, [shard<1>]>> -> !m2n.dist<64x96xf8E4M3FN, #m2n.layout<#m2n.mesh<[2], ranks = [3, 4]>, [shard<0>]>>, !m2n.dist<4x5xf32, #m2n.layout<#m2n.mesh<[2], ranks = [3, 4]>, [shard<0>]>>
  return %q, %s : !m2n.dist<64x96xf8E4M3FN, #m2n.layout<#m2n.mesh<[2], ranks = [3, 4]>, [shard<0>]>>, !m2n.dist<4x5xf32, #m2n.layout<#m2n.mesh<[2], ranks = [3, 4]>, [shard<0>]>>
}
