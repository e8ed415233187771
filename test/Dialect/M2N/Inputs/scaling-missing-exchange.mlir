// Rank 0 never gets its own share of block column 0: m2n-sim --no-verify
// finds the block quantized without its amax.
func.func @missing_quantizer_copy(%c: !m2n.comm<5>, %w: !m2n.dist<4x6xbf16, #m2n.layout<#m2n.mesh<[3]>, [shard<1>]>>) {
  %q, %s = m2n.plan %w on %c {scaling = #m2n.scaling<block(2, 4)>} : !m2n.comm<5>, !m2n.dist<4x6xbf16, #m2n.layout<#m2n.mesh<[3]>, [shard<1>]>> -> !m2n.dist<4x6xf8E4M3FN, #m2n.layout<#m2n.mesh<[2], base = 3>, [shard<0>]>>, !m2n.dist<2x2xf32, #m2n.layout<#m2n.mesh<[2], base = 3>, [shard<0>]>> {
    m2n.transfer copy from 0 [0:2, 0:2] to 3 [0:2, 0:2]
    m2n.transfer copy from 1 [0:2, 0:2] to 3 [0:2, 2:4]
    m2n.transfer copy from 2 [0:2, 0:2] to 3 [0:2, 4:6]
    m2n.transfer copy from 0 [2:4, 0:2] to 4 [0:2, 0:2]
    m2n.transfer copy from 1 [2:4, 0:2] to 4 [0:2, 2:4]
    m2n.transfer copy from 2 [2:4, 0:2] to 4 [0:2, 4:6]
    m2n.amax on 0 blocks [0:2, 0:1]
    m2n.amax on 1 blocks [0:2, 0:1]
    m2n.amax on 2 blocks [0:2, 1:2]
    m2n.exchange copy from 1 [0:2, 0:1] to 1 quantizer [0:2, 0:1]
    m2n.exchange copy from 2 [0:2, 0:1] to 2 quantizer [0:2, 0:1]
    m2n.exchange copy from 0 [0:1, 0:1] to 3 holder [0:1, 0:1]
    m2n.exchange copy from 2 [0:1, 0:1] to 3 holder [0:1, 1:2]
    m2n.exchange copy from 0 [1:2, 0:1] to 4 holder [0:1, 0:1]
    m2n.exchange copy from 2 [1:2, 0:1] to 4 holder [0:1, 1:2]
    m2n.exchange max from 1 [0:2, 0:1] to 0 quantizer [0:2, 0:1]
    m2n.exchange max from 0 [0:2, 0:1] to 1 quantizer [0:2, 0:1]
    m2n.exchange max from 1 [1:2, 0:1] to 4 holder [0:1, 0:1]
  }
  return
}

