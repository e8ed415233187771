// RUN: m2n-opt %s | m2n-opt --mlir-print-local-scope | FileCheck %s
// RUN: m2n-opt %s --mlir-print-op-generic | m2n-opt --mlir-print-local-scope | FileCheck %s
// RUN: m2n-opt %s --mlir-print-op-generic | FileCheck %s --check-prefix=GENERIC
// RUN: m2n-opt %s --emit-bytecode | m2n-opt --mlir-print-local-scope | FileCheck %s
// RUN: m2n-opt %s | FileCheck %s --check-prefix=ALIAS

// Meshes, layouts and topologies print as aliases.
// ALIAS-DAG: #[[TRAINER:mesh[0-9]*]] = #m2n.mesh<[1, 4]>
// ALIAS-DAG: #[[GEN:mesh[0-9]*]] = #m2n.mesh<[2, 2], base = 4>
// ALIAS-DAG: #[[SRC:layout[0-9]*]] = #m2n.layout<#[[TRAINER]], [replicate, shard<0>]>
// ALIAS-DAG: #[[DST:layout[0-9]*]] = #m2n.layout<#[[GEN]], [replicate, shard<0>]>
// ALIAS-DAG: #[[TOPO:topology]] = #m2n.topology<domains = {{\[}}[0, 1, 2, 3], [4, 5, 6, 7]], nvlink_gbps = 4.500000e+02, network_gbps = 5.000000e+01>
// ALIAS: module attributes {m2n.topology = #[[TOPO]]}
// ALIAS: m2n.reshard %{{.*}} on %{{.*}} : !m2n.comm<8>, !m2n.dist<4x8xbf16, #[[SRC]]> -> !m2n.dist<4x8xbf16, #[[DST]]>

// CHECK: module attributes {m2n.topology = #m2n.topology<domains = {{\[}}[0, 1, 2, 3], [4, 5, 6, 7]], nvlink_gbps = 4.500000e+02, network_gbps = 5.000000e+01>}

#trainer = #m2n.mesh<[1, 4]>
#gen = #m2n.mesh<[2, 2], base = 4>
#src = #m2n.layout<#trainer, [replicate, shard<0>]>
#dst = #m2n.layout<#gen, [replicate, shard<0>]>

module attributes {m2n.topology = #m2n.topology<domains = [[0, 1, 2, 3], [4, 5, 6, 7]], nvlink_gbps = 450.0, network_gbps = 50.0>} {

// The M2N paper's Example A: trainer TP4 on ranks 0-3 to generator DP2 x TP2
// on ranks 4-7.
// CHECK-LABEL: func.func @example_a
// CHECK-SAME: (%[[COMM:.*]]: !m2n.comm<8>, %[[W:.*]]: !m2n.dist<4x8xbf16, #m2n.layout<#m2n.mesh<[1, 4]>, [replicate, shard<0>]>>)
// CHECK: %[[R:.*]] = m2n.reshard %[[W]] on %[[COMM]] : !m2n.comm<8>, !m2n.dist<4x8xbf16, #m2n.layout<#m2n.mesh<[1, 4]>, [replicate, shard<0>]>> -> !m2n.dist<4x8xbf16, #m2n.layout<#m2n.mesh<[2, 2], base = 4>, [replicate, shard<0>]>>
// CHECK: return %[[R]]
// GENERIC-LABEL: sym_name = "example_a"
// GENERIC: "m2n.reshard"(%{{.*}}, %{{.*}}) : (!m2n.dist<4x8xbf16, #{{.*}}>, !m2n.comm<8>) -> !m2n.dist<4x8xbf16, #{{.*}}>
func.func @example_a(%comm: !m2n.comm<8>, %w: !m2n.dist<4x8xbf16, #src>) -> !m2n.dist<4x8xbf16, #dst> {
  %0 = m2n.reshard %w on %comm : !m2n.comm<8>, !m2n.dist<4x8xbf16, #src> -> !m2n.dist<4x8xbf16, #dst>
  return %0 : !m2n.dist<4x8xbf16, #dst>
}

// An in-flight cast with a scale: bf16 trainer shards to an fp8 generator.
// CHECK-LABEL: func.func @cast
// CHECK: m2n.reshard %{{.*}} on %{{.*}} {scale = 2.500000e-01 : f32} : !m2n.comm<8>, !m2n.dist<4x8xbf16, {{.*}}> -> !m2n.dist<4x8xf8E4M3FN, {{.*}}>
// CHECK: m2n.reshard %{{.*}} on %{{.*}} : !m2n.comm<8>, !m2n.dist<4x8xf8E4M3FN, {{.*}}> -> !m2n.dist<4x8xf32, {{.*}}>
func.func @cast(%comm: !m2n.comm<8>, %w: !m2n.dist<4x8xbf16, #src>) -> !m2n.dist<4x8xf32, #src> {
  %0 = m2n.reshard %w on %comm {scale = 0.25 : f32} : !m2n.comm<8>, !m2n.dist<4x8xbf16, #src> -> !m2n.dist<4x8xf8E4M3FN, #dst>
  %1 = m2n.reshard %0 on %comm : !m2n.comm<8>, !m2n.dist<4x8xf8E4M3FN, #dst> -> !m2n.dist<4x8xf32, #src>
  return %1 : !m2n.dist<4x8xf32, #src>
}

// Quantizing with scales taken from the data: DeepSeek-V3's 128 x 128
// blocks, one scale per tensor, MX (e8m0 scales); and e8m0 scales moved as
// data.
// CHECK-LABEL: func.func @scaled
// CHECK: %{{.*}}, %{{.*}} = m2n.reshard %{{.*}} on %{{.*}} {scaling = #m2n.scaling<block(128, 16)>} : !m2n.comm<8>, !m2n.dist<256x64xbf16, {{.*}}> -> !m2n.dist<256x64xf8E4M3FN, {{.*}}>, !m2n.dist<2x4xf32, {{.*}}>
// CHECK: m2n.reshard %{{.*}} on %{{.*}} {scaling = #m2n.scaling<tensor>} : !m2n.comm<8>, !m2n.dist<4x8xf32, {{.*}}> -> !m2n.dist<4x8xf8E5M2, {{.*}}>, !m2n.dist<1x1xf32, {{.*}}>
// CHECK: m2n.reshard %{{.*}} on %{{.*}} {scaling = #m2n.scaling<mx>} : !m2n.comm<8>, !m2n.dist<4x64xf16, {{.*}}> -> !m2n.dist<4x64xf8E4M3FN, {{.*}}>, !m2n.dist<4x2xf8E8M0FNU, {{.*}}>
// CHECK: m2n.reshard %{{.*}} on %{{.*}} : !m2n.comm<8>, !m2n.dist<4x2xf8E8M0FNU, {{.*}}> -> !m2n.dist<4x2xf8E8M0FNU, {{.*}}>
// GENERIC-LABEL: sym_name = "scaled"
// GENERIC: "m2n.reshard"(%{{.*}}, %{{.*}}) <{scaling = #m2n.scaling<block(128, 16)>}>
func.func @scaled(%comm: !m2n.comm<8>, %w: !m2n.dist<256x64xbf16, #src>, %t: !m2n.dist<4x8xf32, #src>, %m: !m2n.dist<4x64xf16, #src>) -> !m2n.dist<4x2xf8E8M0FNU, #src> {
  %q, %s = m2n.reshard %w on %comm {scaling = #m2n.scaling<block(128,16)>} : !m2n.comm<8>, !m2n.dist<256x64xbf16, #src> -> !m2n.dist<256x64xf8E4M3FN, #dst>, !m2n.dist<2x4xf32, #dst>
  %tq, %ts = m2n.reshard %t on %comm {scaling = #m2n.scaling<tensor>} : !m2n.comm<8>, !m2n.dist<4x8xf32, #src> -> !m2n.dist<4x8xf8E5M2, #dst>, !m2n.dist<1x1xf32, #dst>
  %mq, %ms = m2n.reshard %m on %comm {scaling = #m2n.scaling<mx>} : !m2n.comm<8>, !m2n.dist<4x64xf16, #src> -> !m2n.dist<4x64xf8E4M3FN, #dst>, !m2n.dist<4x2xf8E8M0FNU, #dst>
  %back = m2n.reshard %ms on %comm : !m2n.comm<8>, !m2n.dist<4x2xf8E8M0FNU, #dst> -> !m2n.dist<4x2xf8E8M0FNU, #src>
  return %back : !m2n.dist<4x2xf8E8M0FNU, #src>
}

// Explicit rank lists, 3-D tensors, a 3-D mesh with two axes sharding the
// same tensor dimension, and a 0-d tensor.
// CHECK-LABEL: func.func @general_layouts
// CHECK: m2n.reshard %{{.*}} on %{{.*}} : !m2n.comm<8>, !m2n.dist<6x10xf32, #m2n.layout<#m2n.mesh<[2], ranks = [3, 1]>, [shard<1>]>> -> !m2n.dist<6x10xf32, #m2n.layout<#m2n.mesh<[2, 2], base = 4>, [shard<0>, replicate]>>
// CHECK: m2n.reshard %{{.*}} : !m2n.comm<8>, !m2n.dist<3x5x7xi64, #m2n.layout<#m2n.mesh<[2, 2, 2]>, [shard<0>, shard<0>, shard<2>]>> -> !m2n.dist<3x5x7xi64, #m2n.layout<#m2n.mesh<[8]>, [shard<1>]>>
// CHECK: m2n.reshard %{{.*}} : !m2n.comm<4>, !m2n.dist<f64, #m2n.layout<#m2n.mesh<[4]>, [partial<max>]>> -> !m2n.dist<f64, #m2n.layout<#m2n.mesh<[4]>, [replicate]>>
func.func @general_layouts(%comm: !m2n.comm<8>, %small: !m2n.comm<4>,
    %a: !m2n.dist<6x10xf32, #m2n.layout<#m2n.mesh<[2], ranks = [3, 1]>, [shard<1>]>>,
    %b: !m2n.dist<3x5x7xi64, #m2n.layout<#m2n.mesh<[2, 2, 2]>, [shard<0>, shard<0>, shard<2>]>>,
    %c: !m2n.dist<f64, #m2n.layout<#m2n.mesh<[4]>, [partial<max>]>>) {
  %0 = m2n.reshard %a on %comm : !m2n.comm<8>, !m2n.dist<6x10xf32, #m2n.layout<#m2n.mesh<[2], ranks = [3, 1]>, [shard<1>]>> -> !m2n.dist<6x10xf32, #m2n.layout<#m2n.mesh<[2, 2], base = 4>, [shard<0>, replicate]>>
  %1 = m2n.reshard %b on %comm : !m2n.comm<8>, !m2n.dist<3x5x7xi64, #m2n.layout<#m2n.mesh<[2, 2, 2]>, [shard<0>, shard<0>, shard<2>]>> -> !m2n.dist<3x5x7xi64, #m2n.layout<#m2n.mesh<[8]>, [shard<1>]>>
  %2 = m2n.reshard %c on %small : !m2n.comm<4>, !m2n.dist<f64, #m2n.layout<#m2n.mesh<[4]>, [partial<max>]>> -> !m2n.dist<f64, #m2n.layout<#m2n.mesh<[4]>, [replicate]>>
  return
}

// Partial contributions kept on their ranks while another axis is gathered.
// CHECK-LABEL: func.func @keep_partial
// CHECK: m2n.reshard {{.*}} -> !m2n.dist<8x8xf16, #m2n.layout<#m2n.mesh<[2, 2]>, [partial<sum>, replicate]>>
func.func @keep_partial(%comm: !m2n.comm<4>, %x: !m2n.dist<8x8xf16, #m2n.layout<#m2n.mesh<[2, 2]>, [partial<sum>, shard<1>]>>) {
  %0 = m2n.reshard %x on %comm : !m2n.comm<4>, !m2n.dist<8x8xf16, #m2n.layout<#m2n.mesh<[2, 2]>, [partial<sum>, shard<1>]>> -> !m2n.dist<8x8xf16, #m2n.layout<#m2n.mesh<[2, 2]>, [partial<sum>, replicate]>>
  return
}

// CHECK-LABEL: func.func @collectives
// CHECK: m2n.all_gather %{{.*}} on %{{.*}} mesh_axes = [1] : !m2n.comm<8>
// CHECK-SAME: -> !m2n.dist<64x32xbf16, #m2n.layout<#m2n.mesh<[2, 4]>, [shard<0>, replicate]>>
// CHECK: m2n.reduce_scatter %{{.*}} on %{{.*}} mesh_axes = [0, 1] scatter_dim = 1 : !m2n.comm<8>
// CHECK-SAME: -> !m2n.dist<64x32xbf16, #m2n.layout<#m2n.mesh<[2, 4]>, [shard<1>, shard<1>]>>
// CHECK: m2n.all_reduce %{{.*}} on %{{.*}} mesh_axes = [0] : !m2n.comm<8>
// CHECK-SAME: -> !m2n.dist<64x32xbf16, #m2n.layout<#m2n.mesh<[2, 4]>, [replicate, shard<1>]>>
// CHECK: m2n.all_to_all %{{.*}} on %{{.*}} mesh_axes = [1] split_dim = 0 : !m2n.comm<8>
// CHECK-SAME: -> !m2n.dist<64x32xbf16, #m2n.layout<#m2n.mesh<[2, 4]>, [replicate, shard<0>]>>
// GENERIC-LABEL: sym_name = "collectives"
// GENERIC: "m2n.all_gather"(%{{.*}}, %{{.*}}) <{mesh_axes = array<i64: 1>}>
// GENERIC: "m2n.reduce_scatter"(%{{.*}}, %{{.*}}) <{mesh_axes = array<i64: 0, 1>, scatter_dim = 1 : i64}>
// GENERIC: "m2n.all_reduce"(%{{.*}}, %{{.*}}) <{mesh_axes = array<i64: 0>}>
// GENERIC: "m2n.all_to_all"(%{{.*}}, %{{.*}}) <{mesh_axes = array<i64: 1>, split_dim = 0 : i64}>
func.func @collectives(%comm: !m2n.comm<8>,
    %s: !m2n.dist<64x32xbf16, #m2n.layout<#m2n.mesh<[2, 4]>, [shard<0>, shard<1>]>>,
    %p: !m2n.dist<64x32xbf16, #m2n.layout<#m2n.mesh<[2, 4]>, [partial<sum>, partial<sum>]>>,
    %q: !m2n.dist<64x32xbf16, #m2n.layout<#m2n.mesh<[2, 4]>, [partial<sum>, shard<1>]>>) {
  %0 = m2n.all_gather %s on %comm mesh_axes = [1] : !m2n.comm<8>, !m2n.dist<64x32xbf16, #m2n.layout<#m2n.mesh<[2, 4]>, [shard<0>, shard<1>]>> -> !m2n.dist<64x32xbf16, #m2n.layout<#m2n.mesh<[2, 4]>, [shard<0>, replicate]>>
  %1 = m2n.reduce_scatter %p on %comm mesh_axes = [0, 1] scatter_dim = 1 : !m2n.comm<8>, !m2n.dist<64x32xbf16, #m2n.layout<#m2n.mesh<[2, 4]>, [partial<sum>, partial<sum>]>> -> !m2n.dist<64x32xbf16, #m2n.layout<#m2n.mesh<[2, 4]>, [shard<1>, shard<1>]>>
  %2 = m2n.all_reduce %q on %comm mesh_axes = [0] : !m2n.comm<8>, !m2n.dist<64x32xbf16, #m2n.layout<#m2n.mesh<[2, 4]>, [partial<sum>, shard<1>]>> -> !m2n.dist<64x32xbf16, #m2n.layout<#m2n.mesh<[2, 4]>, [replicate, shard<1>]>>
  %3 = m2n.all_to_all %2 on %comm mesh_axes = [1] split_dim = 0 : !m2n.comm<8>, !m2n.dist<64x32xbf16, #m2n.layout<#m2n.mesh<[2, 4]>, [replicate, shard<1>]>> -> !m2n.dist<64x32xbf16, #m2n.layout<#m2n.mesh<[2, 4]>, [replicate, shard<0>]>>
  return
}


// Plan level: transfers with copy and reduce, multi-dimensional and 0-d boxes.
// CHECK-LABEL: func.func @plan
// CHECK: %{{.*}} = m2n.plan %{{.*}} on %{{.*}} : !m2n.comm<2>, !m2n.dist<4x2xf32, #m2n.layout<#m2n.mesh<[2]>, [partial<sum>]>> -> !m2n.dist<4x2xf32, #m2n.layout<#m2n.mesh<[2]>, [shard<0>]>> {
// CHECK-NEXT: m2n.transfer copy from 0 [0:2, 0:2] to 0 [0:2, 0:2]
// CHECK-NEXT: m2n.transfer reduce<sum> from 1 [0:2, 0:2] to 0 [0:2, 0:2]
// CHECK-NEXT: m2n.transfer copy from 1 [2:4, 0:2] to 1 [0:2, 0:2]
// CHECK-NEXT: m2n.transfer reduce<sum> from 0 [2:4, 0:2] to 1 [0:2, 0:2]
// CHECK-NEXT: }
// CHECK: m2n.plan
// CHECK-NEXT: m2n.transfer copy from 1 [] to 1 []
// CHECK-NEXT: m2n.transfer reduce<min> from 0 [] to 1 []
// GENERIC-LABEL: sym_name = "plan"
// GENERIC: "m2n.plan"(%{{.*}}, %{{.*}}) ({
// GENERIC-NEXT: "m2n.transfer"() <{dst_offsets = [0, 0], dst_rank = 0 : i64, reduction = [], sizes = [2, 2], src_offsets = [0, 0], src_rank = 0 : i64}> : () -> ()
// GENERIC-NEXT: "m2n.transfer"() <{dst_offsets = [0, 0], dst_rank = 0 : i64, reduction = [0 : i32], sizes = [2, 2], src_offsets = [0, 0], src_rank = 1 : i64}> : () -> ()
func.func @plan(%c: !m2n.comm<2>, %x: !m2n.dist<4x2xf32, #m2n.layout<#m2n.mesh<[2]>, [partial<sum>]>>, %s: !m2n.dist<f64, #m2n.layout<#m2n.mesh<[2]>, [partial<min>]>>) {
  %0 = m2n.plan %x on %c : !m2n.comm<2>, !m2n.dist<4x2xf32, #m2n.layout<#m2n.mesh<[2]>, [partial<sum>]>> -> !m2n.dist<4x2xf32, #m2n.layout<#m2n.mesh<[2]>, [shard<0>]>> {
    m2n.transfer copy from 0 [0:2, 0:2] to 0 [0:2, 0:2]
    m2n.transfer reduce<sum> from 1 [0:2, 0:2] to 0 [0:2, 0:2]
    m2n.transfer copy from 1 [2:4, 0:2] to 1 [0:2, 0:2]
    m2n.transfer reduce<sum> from 0 [2:4, 0:2] to 1 [0:2, 0:2]
  }
  %1 = m2n.plan %s on %c : !m2n.comm<2>, !m2n.dist<f64, #m2n.layout<#m2n.mesh<[2]>, [partial<min>]>> -> !m2n.dist<f64, #m2n.layout<#m2n.mesh<[1], base = 1>, [replicate]>> {
    m2n.transfer copy from 1 [] to 1 []
    m2n.transfer reduce<min> from 0 [] to 1 []
  }
  return
}


// Schedule level: scratch buffers, copies and reductions over each link
// class, dependencies.
// CHECK-LABEL: func.func @schedule
// CHECK: m2n.schedule %{{.*}} on %{{.*}} strategy = "hierarchical" topology(#m2n.topology<domains = {{\[}}[0, 1], [2, 3]], nvlink_gbps = 4.500000e+02, network_gbps = 5.000000e+01>) : !m2n.comm<4>, !m2n.dist<4xf32, #m2n.layout<#m2n.mesh<[2], ranks = [0, 2]>, [partial<sum>]>> -> !m2n.dist<4xf32, #m2n.layout<#m2n.mesh<[2], ranks = [1, 3]>, [replicate]>> {
// CHECK-NEXT: m2n.scratch 0 on 3 [4]
// CHECK-NEXT: m2n.step 0 copy src(0) [0:4] -> dst(1) [0:4] via nvlink
// CHECK-NEXT: m2n.step 1 copy src(0) [0:4] -> scratch0(3) [0:4] via network
// CHECK-NEXT: m2n.step 2 reduce<sum> scratch0(3) [0:4] -> dst(3) [0:4] via local after [1, 3]
// CHECK-NEXT: m2n.step 3 copy src(2) [0:4] -> dst(3) [0:4] via nvlink
// CHECK-NEXT: m2n.step 4 reduce<sum> src(2) [0:4] -> dst(1) [0:4] via network after [0]
// CHECK-NEXT: }
// GENERIC-LABEL: sym_name = "schedule"
// GENERIC: "m2n.schedule"(%{{.*}}, %{{.*}}) <{strategy = "hierarchical", topology = #
// GENERIC: "m2n.scratch"() <{id = 0 : i64, rank = 3 : i64, shape = array<i64: 4>}> : () -> ()
// GENERIC: "m2n.step"() <{deps = [], from_kind = 0 : i32, from_offsets = [0], from_rank = 0 : i64, from_scratch = -1 : i64, id = 0 : i64, kind = [], link = 1 : i32, reduction = [], sizes = [4], to_kind = 1 : i32, to_offsets = [0], to_rank = 1 : i64, to_scratch = -1 : i64}> : () -> ()
func.func @schedule(%c: !m2n.comm<4>, %x: !m2n.dist<4xf32, #m2n.layout<#m2n.mesh<[2], ranks = [0, 2]>, [partial<sum>]>>) {
  %0 = m2n.schedule %x on %c strategy = "hierarchical" topology(#m2n.topology<domains = [[0, 1], [2, 3]], nvlink_gbps = 450.0, network_gbps = 50.0>) : !m2n.comm<4>, !m2n.dist<4xf32, #m2n.layout<#m2n.mesh<[2], ranks = [0, 2]>, [partial<sum>]>> -> !m2n.dist<4xf32, #m2n.layout<#m2n.mesh<[2], ranks = [1, 3]>, [replicate]>> {
    m2n.scratch 0 on 3 [4]
    m2n.step 0 copy src(0) [0:4] -> dst(1) [0:4] via nvlink
    m2n.step 1 copy src(0) [0:4] -> scratch0(3) [0:4] via network
    m2n.step 2 reduce<sum> scratch0(3) [0:4] -> dst(3) [0:4] via local after [1, 3]
    m2n.step 3 copy src(2) [0:4] -> dst(3) [0:4] via nvlink
    m2n.step 4 reduce<sum> src(2) [0:4] -> dst(1) [0:4] via network after [0]
  }
  return
}

// Domains given by their size round-trip in that form.
// CHECK-LABEL: func.func @sized_domains
// CHECK: m2n.schedule %{{.*}} on %{{.*}} strategy = "flat" topology(#m2n.topology<domain_size = 2, nvlink_gbps = 4.500000e+02, network_gbps = 5.000000e+01>)
// CHECK-NEXT: m2n.step 0 copy src(0) [0:4] -> dst(1) [0:4] via nvlink
func.func @sized_domains(%c: !m2n.comm<4>, %x: !m2n.dist<4xf32, #m2n.layout<#m2n.mesh<[1]>, [replicate]>>) {
  %0 = m2n.schedule %x on %c strategy = "flat" topology(#m2n.topology<domain_size = 2, nvlink_gbps = 450.0, network_gbps = 50.0>) : !m2n.comm<4>, !m2n.dist<4xf32, #m2n.layout<#m2n.mesh<[1]>, [replicate]>> -> !m2n.dist<4xf32, #m2n.layout<#m2n.mesh<[1], base = 1>, [replicate]>> {
    m2n.step 0 copy src(0) [0:4] -> dst(1) [0:4] via nvlink
  }
  return
}


// The program level: a move of every mechanism, with repeats, waits,
// counters; its mechanism, counters, waits and repeats are typed properties
// (the artifact's C++ types), in the generic form as strings and arrays.
// CHECK-LABEL: func.func @program
// CHECK: m2n.rank 0 counters = 2 {
// CHECK-NEXT: m2n.move engine copy src(0)+0 -> dst(0)+0 128B step 0
// CHECK-NEXT: m2n.move network copy src(1)+0 -> dst(0)+0 64B times 2 by (+64,+64) signal 0:0 step 1
// CHECK-NEXT: m2n.move vector reduce<sum> src(1)+0 -> dst(0)+0 64B wait 0:0>=2 wait 0:1>=1 read_done 1:0 step 2
// CHECK-NEXT: m2n.move tile reduce<sum> src(1) map 0 (0) -> dst(0) map 1 (0) 64B times 2 along 0 by (+16,+16) signal 0:1
// A reduction whose first operand is the rank's own source (acc), not dst.
// CHECK: m2n.rank 1 counters = 1 {
// CHECK-NEXT: m2n.move vector reduce<sum> src(0)+64 -> dst(1)+0 64B acc src(1) read_done 0:0 step 3
// GENERIC-LABEL: sym_name = "program"
// GENERIC: "m2n.move"() <{{.*}}mechanism = "engine", read_done = [], reduction = [], repeats = [], signal = [],
// GENERIC: "m2n.move"() <{{.*}}mechanism = "network", read_done = [], reduction = [], repeats = [array<i64: 2, 64, 64, -1, 0>], signal = [array<i64: 0, 0>],
// GENERIC: "m2n.move"() <{{.*}}mechanism = "vector", read_done = [array<i64: 1, 0>], {{.*}}waits = [array<i64: 0, 0, 2>, array<i64: 0, 1, 1>]}>
// GENERIC: "m2n.move"() <{{.*}}mechanism = "tile", {{.*}}repeats = [array<i64: 2, 16, 16, 0, 0>], signal = [array<i64: 0, 1>],
// GENERIC: "m2n.move"() <{acc_kind = [0 : i32], acc_rank = 1 : i64, acc_scratch = -1 : i64,
func.func @program(%c: !m2n.comm<2>, %x: !m2n.dist<32xf32, #m2n.layout<#m2n.mesh<[2]>, [partial<sum>]>>) {
  %0 = m2n.program %x on %c strategy = "flat" : !m2n.comm<2>, !m2n.dist<32xf32, #m2n.layout<#m2n.mesh<[2]>, [partial<sum>]>> -> !m2n.dist<32xf32, #m2n.layout<#m2n.mesh<[2]>, [replicate]>> {
    m2n.tensor_map 0 of src(1) [32] box [16]
    m2n.tensor_map 1 of dst(0) [32] box [16]
    m2n.rank 0 counters = 2 {
      m2n.move engine copy src(0)+0 -> dst(0)+0 128B step 0
      m2n.move network copy src(1)+0 -> dst(0)+0 64B times 2 by (+64,+64) signal 0:0 step 1
      m2n.move vector reduce<sum> src(1)+0 -> dst(0)+0 64B wait 0:0>=2 wait 0:1>=1 read_done 1:0 step 2
      m2n.move tile reduce<sum> src(1) map 0 (0) -> dst(0) map 1 (0) 64B times 2 along 0 by (+16,+16) signal 0:1
    }
    m2n.rank 1 counters = 1 {
      m2n.move vector reduce<sum> src(0)+64 -> dst(1)+0 64B acc src(1) read_done 0:0 step 3
    }
  }
  return
}

}
