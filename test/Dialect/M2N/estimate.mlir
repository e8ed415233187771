// The NCCL M2N paper's single-layer SOL table (seeds/001, Section VI-B):
// an expert gate projection from a 16-GPU EP trainer (one NVLink domain) to a
// TP8 generator with DP = 2, 4, 8 (another NVLink domain), 50 GB/s per NIC.
//
//   DP   flat SOL   gather-bcast SOL   hierarchical SOL
//    2   17.92 ms   143.36 ms          8.96 ms
//    4   35.84 ms   143.36 ms          8.96 ms
//    8   71.68 ms   143.36 ms          8.96 ms
//
// The paper's 143.36 ms is 7168e6 bytes / 50e9 bytes/s, so its "7168 MB"
// counts 1e6-byte megabytes; the tensor here has exactly 7.168e9 bytes
// (256 experts x 2000 x 7000 bf16, split as the real 256 x 2048 x 7168
// one is). NVLink: GB200, 900 GB/s per direction; it stays off the critical
// path, as the paper checks.
//
// RUN: m2n-opt %s --m2n-plan-intersections --m2n-estimate -o /dev/null | FileCheck %s
// RUN: m2n-opt %s --m2n-plan-intersections --m2n-estimate=format=json -o /dev/null | FileCheck %s --check-prefix=JSON

// CHECK-LABEL: m2n-estimate: plan 0 in @ep16_to_tp8_dp2: 256x2000x7000xbf16 (7168.000 MB), 32 ranks, 2 NVLink domains, NVLink 900 GB/s, network 50 GB/s
// CHECK-NEXT: strategy network MB NVLink MB local MB busiest link T_network ms T_NVLink ms T_SOL ms
// CHECK-NEXT: flat 14336.000 0.000 0.000 network: rank 0 egress 17.920 0.000 17.920
// CHECK-NEXT: gather-bcast 7168.000 114240.000 14784.000 network: rank 0 egress 143.360 7.964 143.360
// CHECK-NEXT: hierarchical 7168.000 7168.000 0.000 network: rank 0 egress 8.960 0.498 8.960
func.func @ep16_to_tp8_dp2(%comm: !m2n.comm<32>, %w: !m2n.dist<256x2000x7000xbf16, #m2n.layout<#m2n.mesh<[16]>, [shard<0>]>>)
    attributes {m2n.topology = #m2n.topology<domains = [[0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15], [16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31]], nvlink_gbps = 900.0, network_gbps = 50.0>} {
  %0 = m2n.reshard %w on %comm : !m2n.comm<32>, !m2n.dist<256x2000x7000xbf16, #m2n.layout<#m2n.mesh<[16]>, [shard<0>]>> -> !m2n.dist<256x2000x7000xbf16, #m2n.layout<#m2n.mesh<[2, 8], base = 16>, [replicate, shard<1>]>>
  return
}

// CHECK-LABEL: m2n-estimate: plan 1 in @ep16_to_tp8_dp4: 256x2000x7000xbf16 (7168.000 MB), 48 ranks, 2 NVLink domains
// CHECK: flat 28672.000 {{.*}} network: rank 0 egress 35.840 0.000 35.840
// CHECK-NEXT: gather-bcast 7168.000 {{.*}} 143.360
// CHECK-NEXT: hierarchical 7168.000 21504.000 0.000 network: rank 0 egress 8.960 {{.*}} 8.960
func.func @ep16_to_tp8_dp4(%comm: !m2n.comm<48>, %w: !m2n.dist<256x2000x7000xbf16, #m2n.layout<#m2n.mesh<[16]>, [shard<0>]>>)
    attributes {m2n.topology = #m2n.topology<domains = [[0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15], [16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32, 33, 34, 35, 36, 37, 38, 39, 40, 41, 42, 43, 44, 45, 46, 47]], nvlink_gbps = 900.0, network_gbps = 50.0>} {
  %0 = m2n.reshard %w on %comm : !m2n.comm<48>, !m2n.dist<256x2000x7000xbf16, #m2n.layout<#m2n.mesh<[16]>, [shard<0>]>> -> !m2n.dist<256x2000x7000xbf16, #m2n.layout<#m2n.mesh<[4, 8], base = 16>, [replicate, shard<1>]>>
  return
}

// CHECK-LABEL: m2n-estimate: plan 2 in @ep16_to_tp8_dp8: 256x2000x7000xbf16 (7168.000 MB), 80 ranks, 2 NVLink domains
// CHECK: flat 57344.000 {{.*}} network: rank 0 egress 71.680 0.000 71.680
// CHECK-NEXT: gather-bcast 7168.000 {{.*}} 143.360
// CHECK-NEXT: hierarchical 7168.000 50176.000 0.000 network: rank 0 egress 8.960 0.871 8.960
func.func @ep16_to_tp8_dp8(%comm: !m2n.comm<80>, %w: !m2n.dist<256x2000x7000xbf16, #m2n.layout<#m2n.mesh<[16]>, [shard<0>]>>)
    attributes {m2n.topology = #m2n.topology<domains = [[0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15], [16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32, 33, 34, 35, 36, 37, 38, 39, 40, 41, 42, 43, 44, 45, 46, 47, 48, 49, 50, 51, 52, 53, 54, 55, 56, 57, 58, 59, 60, 61, 62, 63, 64, 65, 66, 67, 68, 69, 70, 71, 72, 73, 74, 75, 76, 77, 78, 79]], nvlink_gbps = 900.0, network_gbps = 50.0>} {
  %0 = m2n.reshard %w on %comm : !m2n.comm<80>, !m2n.dist<256x2000x7000xbf16, #m2n.layout<#m2n.mesh<[16]>, [shard<0>]>> -> !m2n.dist<256x2000x7000xbf16, #m2n.layout<#m2n.mesh<[8, 8], base = 16>, [replicate, shard<1>]>>
  return
}

// JSON: "estimates": [
// JSON: "reshard": "plan 0 in @ep16_to_tp8_dp2",
// JSON: "bytes": 7168000000,
// JSON: "nvlink_domains": 2,
// JSON: "strategy": "flat",
// JSON: "t_sol_ms": 17.92
// JSON: "strategy": "gather-bcast",
// JSON: "t_sol_ms": 143.36
// JSON: "strategy": "hierarchical",
// JSON: "network_bytes": 7168000000,
// JSON: "busiest_link": "network: rank 0 egress",
// JSON: "t_network_ms": 8.96
// JSON: "t_sol_ms": 8.96
