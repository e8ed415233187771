// A 256-rank estimate on four GB200 NVL72 racks (64 GPUs used in each): the
// real 7168 MiB expert gate projection moves from an EP128 trainer (ranks
// 0-127, racks 0 and 1) to a TP8 x DP16 generator (ranks 128-255, racks 2 and
// 3). Flat sends each expert block to all 16 replicas: 18.79 ms of trainer
// NIC time. Hierarchical sends it once into each of the two generator racks
// (one rack from the source, the other along the ring): the bound becomes
// the 64 NICs of a generator rack receiving the whole tensor, 7516 MB /
// (64 x 50 GB/s) = 2.349 ms.
//
// RUN: m2n-opt %s --m2n-plan-intersections "--m2n-estimate=topology=%m2n_src_root/examples/topologies/gb200-nvl72-x4.json" -o /dev/null | FileCheck %s

// CHECK: m2n-estimate: plan 0 in @ep128_to_tp8_dp16: 256x2048x7168xbf16 (7516.193 MB), 256 ranks, 4 NVLink domains, NVLink 900 GB/s, network 50 GB/s
// CHECK: flat 120259.084 {{.*}} network: rank 0 egress 18.790 {{.*}} 18.790
// CHECK: hierarchical 15032.386 {{.*}} network: rank {{[0-9]+}} ingress 2.349 {{.*}} 2.349
func.func @ep128_to_tp8_dp16(%comm: !m2n.comm<256>, %w: !m2n.dist<256x2048x7168xbf16, #m2n.layout<#m2n.mesh<[128]>, [shard<0>]>>) {
  %0 = m2n.reshard %w on %comm : !m2n.comm<256>, !m2n.dist<256x2048x7168xbf16, #m2n.layout<#m2n.mesh<[128]>, [shard<0>]>> -> !m2n.dist<256x2048x7168xbf16, #m2n.layout<#m2n.mesh<[16, 8], base = 128>, [replicate, shard<1>]>>
  return
}
