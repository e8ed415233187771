// Reshards run on the GPU machine by test/GPU/run.sh (artifact_runner):
// each rank r on GPU r % (number of GPUs), one NVLink domain.

// 1-to-1: a 1 GiB tensor moves from rank 0 to rank 1.
func.func @one_to_one(%c: !m2n.comm<2>, %x: !m2n.dist<16384x16384xf32, #m2n.layout<#m2n.mesh<[1]>, [replicate]>>) {
  %0 = m2n.reshard %x on %c : !m2n.comm<2>, !m2n.dist<16384x16384xf32, #m2n.layout<#m2n.mesh<[1]>, [replicate]>> -> !m2n.dist<16384x16384xf32, #m2n.layout<#m2n.mesh<[1], base = 1>, [replicate]>>
  return
}

// Rows to columns: strided boxes, half local, half from the peer.
func.func @rows_to_columns(%c: !m2n.comm<2>, %x: !m2n.dist<4096x4096xbf16, #m2n.layout<#m2n.mesh<[2]>, [shard<0>]>>) {
  %0 = m2n.all_to_all %x on %c mesh_axes = [0] split_dim = 1 : !m2n.comm<2>, !m2n.dist<4096x4096xbf16, #m2n.layout<#m2n.mesh<[2]>, [shard<0>]>> -> !m2n.dist<4096x4096xbf16, #m2n.layout<#m2n.mesh<[2]>, [shard<1>]>>
  return
}

func.func @all_gather(%c: !m2n.comm<2>, %x: !m2n.dist<16777216xf32, #m2n.layout<#m2n.mesh<[2]>, [shard<0>]>>) {
  %0 = m2n.all_gather %x on %c mesh_axes = [0] : !m2n.comm<2>, !m2n.dist<16777216xf32, #m2n.layout<#m2n.mesh<[2]>, [shard<0>]>> -> !m2n.dist<16777216xf32, #m2n.layout<#m2n.mesh<[2]>, [replicate]>>
  return
}

func.func @all_reduce_f32(%c: !m2n.comm<2>, %x: !m2n.dist<16777216xf32, #m2n.layout<#m2n.mesh<[2]>, [partial<sum>]>>) {
  %0 = m2n.all_reduce %x on %c mesh_axes = [0] : !m2n.comm<2>, !m2n.dist<16777216xf32, #m2n.layout<#m2n.mesh<[2]>, [partial<sum>]>> -> !m2n.dist<16777216xf32, #m2n.layout<#m2n.mesh<[2]>, [replicate]>>
  return
}

func.func @reduce_scatter_bf16(%c: !m2n.comm<2>, %x: !m2n.dist<4096x4096xbf16, #m2n.layout<#m2n.mesh<[2]>, [partial<sum>]>>) {
  %0 = m2n.reduce_scatter %x on %c mesh_axes = [0] scatter_dim = 0 : !m2n.comm<2>, !m2n.dist<4096x4096xbf16, #m2n.layout<#m2n.mesh<[2]>, [partial<sum>]>> -> !m2n.dist<4096x4096xbf16, #m2n.layout<#m2n.mesh<[2]>, [shard<0>]>>
  return
}

// The paper's Example A on 8 virtual ranks (4 per GPU with 2 GPUs).
func.func @example_a(%c: !m2n.comm<8>, %w: !m2n.dist<4096x8192xbf16, #m2n.layout<#m2n.mesh<[1, 4]>, [replicate, shard<0>]>>) {
  %0 = m2n.reshard %w on %c : !m2n.comm<8>, !m2n.dist<4096x8192xbf16, #m2n.layout<#m2n.mesh<[1, 4]>, [replicate, shard<0>]>> -> !m2n.dist<4096x8192xbf16, #m2n.layout<#m2n.mesh<[2, 2], base = 4>, [replicate, shard<0>]>>
  return
}

// Short rows (64 bytes) move as 2-D tiles through tensor maps.
func.func @short_rows_tiles(%c: !m2n.comm<2>, %x: !m2n.dist<65536x64xbf16, #m2n.layout<#m2n.mesh<[2]>, [shard<0>]>>) {
  %0 = m2n.all_to_all %x on %c mesh_axes = [0] split_dim = 1 : !m2n.comm<2>, !m2n.dist<65536x64xbf16, #m2n.layout<#m2n.mesh<[2]>, [shard<0>]>> -> !m2n.dist<65536x64xbf16, #m2n.layout<#m2n.mesh<[2]>, [shard<1>]>>
  return
}

// A 3-D box: the innermost dimension is split, the outermost gathered.
func.func @three_d_tiles(%c: !m2n.comm<2>, %x: !m2n.dist<64x128x64xf32, #m2n.layout<#m2n.mesh<[2]>, [shard<0>]>>) {
  %0 = m2n.all_to_all %x on %c mesh_axes = [0] split_dim = 2 : !m2n.comm<2>, !m2n.dist<64x128x64xf32, #m2n.layout<#m2n.mesh<[2]>, [shard<0>]>> -> !m2n.dist<64x128x64xf32, #m2n.layout<#m2n.mesh<[2]>, [shard<2>]>>
  return
}

// Tile reductions: a reduce-scatter along the columns of a bf16 matrix.
func.func @reduce_scatter_tiles(%c: !m2n.comm<2>, %x: !m2n.dist<8192x128xbf16, #m2n.layout<#m2n.mesh<[2]>, [partial<sum>]>>) {
  %0 = m2n.reduce_scatter %x on %c mesh_axes = [0] scatter_dim = 1 : !m2n.comm<2>, !m2n.dist<8192x128xbf16, #m2n.layout<#m2n.mesh<[2]>, [partial<sum>]>> -> !m2n.dist<8192x128xbf16, #m2n.layout<#m2n.mesh<[2]>, [shard<1>]>>
  return
}
