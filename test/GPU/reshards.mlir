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

// Uneven shards: 4099 rows over 2 ranks, then over 3 (virtual ranks).
func.func @uneven_rows(%c: !m2n.comm<3>, %x: !m2n.dist<4099x1024xbf16, #m2n.layout<#m2n.mesh<[2]>, [shard<0>]>>) {
  %0 = m2n.reshard %x on %c : !m2n.comm<3>, !m2n.dist<4099x1024xbf16, #m2n.layout<#m2n.mesh<[2]>, [shard<0>]>> -> !m2n.dist<4099x1024xbf16, #m2n.layout<#m2n.mesh<[3]>, [shard<0>]>>
  return
}

// Multi-axis: a 2x2 mesh swaps which axis splits rows and columns.
func.func @multi_axis_swap(%c: !m2n.comm<4>, %x: !m2n.dist<1024x1024xf32, #m2n.layout<#m2n.mesh<[2, 2]>, [shard<0>, shard<1>]>>) {
  %0 = m2n.reshard %x on %c : !m2n.comm<4>, !m2n.dist<1024x1024xf32, #m2n.layout<#m2n.mesh<[2, 2]>, [shard<0>, shard<1>]>> -> !m2n.dist<1024x1024xf32, #m2n.layout<#m2n.mesh<[2, 2]>, [shard<1>, shard<0>]>>
  return
}

// Partial -> Replicate in bf16.
func.func @all_reduce_bf16(%c: !m2n.comm<2>, %x: !m2n.dist<4194304xbf16, #m2n.layout<#m2n.mesh<[2]>, [partial<sum>]>>) {
  %0 = m2n.all_reduce %x on %c mesh_axes = [0] : !m2n.comm<2>, !m2n.dist<4194304xbf16, #m2n.layout<#m2n.mesh<[2]>, [partial<sum>]>> -> !m2n.dist<4194304xbf16, #m2n.layout<#m2n.mesh<[2]>, [replicate]>>
  return
}

// Partial -> Shard(1) in f32: column halves.
func.func @reduce_scatter_cols_f32(%c: !m2n.comm<2>, %x: !m2n.dist<2048x2048xf32, #m2n.layout<#m2n.mesh<[2]>, [partial<sum>]>>) {
  %0 = m2n.reduce_scatter %x on %c mesh_axes = [0] scatter_dim = 1 : !m2n.comm<2>, !m2n.dist<2048x2048xf32, #m2n.layout<#m2n.mesh<[2]>, [partial<sum>]>> -> !m2n.dist<2048x2048xf32, #m2n.layout<#m2n.mesh<[2]>, [shard<1>]>>
  return
}

// Four contributors (two per GPU) reduced into every rank.
func.func @all_reduce_4_ranks(%c: !m2n.comm<4>, %x: !m2n.dist<1048576xf32, #m2n.layout<#m2n.mesh<[4]>, [partial<sum>]>>) {
  %0 = m2n.all_reduce %x on %c mesh_axes = [0] : !m2n.comm<4>, !m2n.dist<1048576xf32, #m2n.layout<#m2n.mesh<[4]>, [partial<sum>]>> -> !m2n.dist<1048576xf32, #m2n.layout<#m2n.mesh<[4]>, [replicate]>>
  return
}

// All-to-all among 4 ranks.
func.func @all_to_all_4_ranks(%c: !m2n.comm<4>, %x: !m2n.dist<2048x2048xbf16, #m2n.layout<#m2n.mesh<[4]>, [shard<0>]>>) {
  %0 = m2n.all_to_all %x on %c mesh_axes = [0] split_dim = 1 : !m2n.comm<4>, !m2n.dist<2048x2048xbf16, #m2n.layout<#m2n.mesh<[4]>, [shard<0>]>> -> !m2n.dist<2048x2048xbf16, #m2n.layout<#m2n.mesh<[4]>, [shard<1>]>>
  return
}

// All-gather of uneven shards among 4 ranks.
func.func @all_gather_uneven_4_ranks(%c: !m2n.comm<4>, %x: !m2n.dist<1001x512xbf16, #m2n.layout<#m2n.mesh<[4]>, [shard<0>]>>) {
  %0 = m2n.all_gather %x on %c mesh_axes = [0] : !m2n.comm<4>, !m2n.dist<1001x512xbf16, #m2n.layout<#m2n.mesh<[4]>, [shard<0>]>> -> !m2n.dist<1001x512xbf16, #m2n.layout<#m2n.mesh<[4]>, [replicate]>>
  return
}

// Replicate -> Shard(1): every rank keeps its columns, nothing crosses a link.
func.func @replicate_to_shard(%c: !m2n.comm<2>, %x: !m2n.dist<1024x1024xf32, #m2n.layout<#m2n.mesh<[2]>, [replicate]>>) {
  %0 = m2n.reshard %x on %c : !m2n.comm<2>, !m2n.dist<1024x1024xf32, #m2n.layout<#m2n.mesh<[2]>, [replicate]>> -> !m2n.dist<1024x1024xf32, #m2n.layout<#m2n.mesh<[2]>, [shard<1>]>>
  return
}

// EP8 -> TP4 x DP2 on 8 virtual ranks.
func.func @ep8_to_tp4_dp2(%c: !m2n.comm<8>, %x: !m2n.dist<2048x1024xbf16, #m2n.layout<#m2n.mesh<[8]>, [shard<0>]>>) {
  %0 = m2n.reshard %x on %c : !m2n.comm<8>, !m2n.dist<2048x1024xbf16, #m2n.layout<#m2n.mesh<[8]>, [shard<0>]>> -> !m2n.dist<2048x1024xbf16, #m2n.layout<#m2n.mesh<[2, 4]>, [replicate, shard<1>]>>
  return
}

// Disjoint meshes: rows on ranks 0-1 become columns on ranks 2-3.
func.func @cross_mesh(%c: !m2n.comm<4>, %x: !m2n.dist<2048x2048xf32, #m2n.layout<#m2n.mesh<[2]>, [shard<0>]>>) {
  %0 = m2n.reshard %x on %c : !m2n.comm<4>, !m2n.dist<2048x2048xf32, #m2n.layout<#m2n.mesh<[2]>, [shard<0>]>> -> !m2n.dist<2048x2048xf32, #m2n.layout<#m2n.mesh<[2], base = 2>, [shard<1>]>>
  return
}

// A 3-D tensor on a 2x2 mesh, two dimensions split, to one split and one
// replicated axis.
func.func @three_d_multi_axis(%c: !m2n.comm<4>, %x: !m2n.dist<64x256x128xf32, #m2n.layout<#m2n.mesh<[2, 2]>, [shard<0>, shard<2>]>>) {
  %0 = m2n.reshard %x on %c : !m2n.comm<4>, !m2n.dist<64x256x128xf32, #m2n.layout<#m2n.mesh<[2, 2]>, [shard<0>, shard<2>]>> -> !m2n.dist<64x256x128xf32, #m2n.layout<#m2n.mesh<[2, 2]>, [shard<1>, replicate]>>
  return
}

// Partial on one axis of a 2x2 mesh, rows split on the other, to Replicate.
func.func @partial_and_shard_to_replicate(%c: !m2n.comm<4>, %x: !m2n.dist<1024x1024xbf16, #m2n.layout<#m2n.mesh<[2, 2]>, [partial<sum>, shard<0>]>>) {
  %0 = m2n.reshard %x on %c : !m2n.comm<4>, !m2n.dist<1024x1024xbf16, #m2n.layout<#m2n.mesh<[2, 2]>, [partial<sum>, shard<0>]>> -> !m2n.dist<1024x1024xbf16, #m2n.layout<#m2n.mesh<[2, 2]>, [replicate, replicate]>>
  return
}

// The paper's Example B: a TP2 stage hands its rows to the generator rank.
func.func @example_b_stage(%c: !m2n.comm<3>, %x: !m2n.dist<1024x512xbf16, #m2n.layout<#m2n.mesh<[2]>, [shard<0>]>>) {
  %0 = m2n.reshard %x on %c : !m2n.comm<3>, !m2n.dist<1024x512xbf16, #m2n.layout<#m2n.mesh<[2]>, [shard<0>]>> -> !m2n.dist<1024x512xbf16, #m2n.layout<#m2n.mesh<[1], base = 2>, [replicate]>>
  return
}

// f16 all-gather.
func.func @all_gather_f16(%c: !m2n.comm<2>, %x: !m2n.dist<8388608xf16, #m2n.layout<#m2n.mesh<[2]>, [shard<0>]>>) {
  %0 = m2n.all_gather %x on %c mesh_axes = [0] : !m2n.comm<2>, !m2n.dist<8388608xf16, #m2n.layout<#m2n.mesh<[2]>, [shard<0>]>> -> !m2n.dist<8388608xf16, #m2n.layout<#m2n.mesh<[2]>, [replicate]>>
  return
}
