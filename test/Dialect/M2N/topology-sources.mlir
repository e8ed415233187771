// Where routing finds the topology: a file given as a pass option, else the
// nearest m2n.topology attribute, else one NVLink domain over the whole
// communicator. Bad files and topologies that do not fit are errors.
//
// RUN: m2n-opt %s --m2n-plan-intersections --m2n-estimate -o /dev/null | FileCheck %s --check-prefix=DEFAULT
// RUN: m2n-opt %s --m2n-plan-intersections "--m2n-estimate=topology=%m2n_src_root/examples/topologies/h200-1x8-split4.json" -o /dev/null | FileCheck %s --check-prefix=FILE
// RUN: m2n-opt %s --m2n-plan-intersections "--m2n-route-topology=topology=%m2n_src_root/examples/topologies/h200-1x8-split4.json" --mlir-print-local-scope | FileCheck %s --check-prefix=ROUTE
// RUN: m2n-opt %s --m2n-plan-intersections "--m2n-estimate=topology=%S/Inputs/domains-of-4.json" -o /dev/null | FileCheck %s --check-prefix=FILE
// RUN: m2n-opt %s --m2n-plan-intersections "--m2n-route-topology=topology=%S/Inputs/domains-of-4.json" --mlir-print-local-scope | FileCheck %s --check-prefix=SIZED
// RUN: m2n-opt %s --m2n-plan-intersections --m2n-route-topology --mlir-print-local-scope | FileCheck %s --check-prefix=ONE
// Outlined into shared functions (the pipeline's way), each reshard keeps the
// topology of its function.
// RUN: m2n-opt %s --m2n-outline-reshards --m2n-plan-intersections --m2n-route-topology --mlir-print-local-scope | FileCheck %s --check-prefix=OUTLINED
// RUN: not m2n-opt %s --m2n-plan-intersections "--m2n-route-topology=topology=%m2n_src_root/examples/topologies/h200-2x8.json" -o /dev/null 2>&1 | FileCheck %s --check-prefix=TOOBIG
// RUN: not m2n-opt %s --m2n-plan-intersections "--m2n-route-topology=topology=%S/Inputs/missing.json" -o /dev/null 2>&1 | FileCheck %s --check-prefix=MISSING
// RUN: not m2n-opt %s --m2n-plan-intersections "--m2n-route-topology=topology=%S/Inputs/not-json.json" -o /dev/null 2>&1 | FileCheck %s --check-prefix=NOTJSON
// RUN: not m2n-opt %s --m2n-plan-intersections "--m2n-route-topology=topology=%S/Inputs/bad-topology.json" -o /dev/null 2>&1 | FileCheck %s --check-prefix=OVERLAP
// RUN: not m2n-opt %s --m2n-plan-intersections "--m2n-route-topology=strategy=ring" -o /dev/null 2>&1 | FileCheck %s --check-prefix=STRATEGY
// RUN: not m2n-opt %s --m2n-plan-intersections "--m2n-route-topology=chunk-bytes=-1" -o /dev/null 2>&1 | FileCheck %s --check-prefix=CHUNK
// RUN: not m2n-opt %s --m2n-plan-intersections "--m2n-route-topology=scale-bands=0" -o /dev/null 2>&1 | FileCheck %s --check-prefix=BANDS
// RUN: not m2n-opt %s --m2n-plan-intersections "--m2n-estimate=format=csv" -o /dev/null 2>&1 | FileCheck %s --check-prefix=FORMAT

// Without a file: @f has no attribute (default: one domain, all NVLink),
// @g has one that splits ranks 0-3 from 4-7.
// DEFAULT-LABEL: plan 0 in @f: 8x8xf32 (0.000 MB), 8 ranks, 1 NVLink domains, NVLink 450 GB/s, network 50 GB/s
// DEFAULT: hierarchical 0.000 0.000 0.000 nvlink: rank 0 egress
// DEFAULT-LABEL: plan 1 in @g: 8x8xf32 (0.000 MB), 8 ranks, 2 NVLink domains, NVLink 400 GB/s, network 25 GB/s
// DEFAULT: hierarchical 0.000 0.000 0.000 network: rank 0 egress
// FILE: plan 0 in @f: 8x8xf32 (0.000 MB), 8 ranks, 2 NVLink domains, NVLink 450 GB/s, network 50 GB/s
// FILE: plan 1 in @g: 8x8xf32 (0.000 MB), 8 ranks, 2 NVLink domains, NVLink 450 GB/s, network 50 GB/s
// The file wins over the attribute (whose bandwidths differ).
// ROUTE-LABEL: func.func @f
// ROUTE: m2n.schedule {{.*}} topology(#m2n.topology<domains = {{\[}}[0, 1, 2, 3], [4, 5, 6, 7]], nvlink_gbps = 4.500000e+02, network_gbps = 5.000000e+01>)
// ROUTE-LABEL: func.func @g
// ROUTE: m2n.schedule {{.*}} topology(#m2n.topology<domains = {{\[}}[0, 1, 2, 3], [4, 5, 6, 7]], nvlink_gbps = 4.500000e+02, network_gbps = 5.000000e+01>)
// Domains given by their size (4 consecutive ranks each) route as the
// listed ones do, and the schedule keeps them in that form; the default
// topology is one domain of the communicator's size, however large.
// SIZED-LABEL: func.func @f
// SIZED: m2n.schedule {{.*}} topology(#m2n.topology<domain_size = 4, nvlink_gbps = 4.500000e+02, network_gbps = 5.000000e+01>)
// ONE-LABEL: func.func @f
// ONE: m2n.schedule {{.*}} topology(#m2n.topology<domain_size = 8, nvlink_gbps = 4.500000e+02, network_gbps = 5.000000e+01>)
// ONE-LABEL: func.func @g
// ONE: m2n.schedule {{.*}} topology(#m2n.topology<domains = {{\[}}[0, 1, 2, 3], [4, 5, 6, 7]], nvlink_gbps = 4.000000e+02, network_gbps = 2.500000e+01>)
// OUTLINED: m2n.reshard_fn @reshard_0
// OUTLINED: m2n.schedule {{.*}} topology(#m2n.topology<domain_size = 8, nvlink_gbps = 4.500000e+02, network_gbps = 5.000000e+01>)
// OUTLINED: m2n.reshard_fn @reshard_1
// OUTLINED: m2n.schedule {{.*}} topology(#m2n.topology<domains = {{\[}}[0, 1, 2, 3], [4, 5, 6, 7]], nvlink_gbps = 4.000000e+02, network_gbps = 2.500000e+01>)
// A topology names the communicator's ranks: a 16-rank machine does not fit
// an 8-rank communicator.
// TOOBIG: error: topology file '{{.*}}h200-2x8.json' does not fit the communicator: NVLink domain 1 names rank 8, outside the communicator of 8 ranks
// MISSING: error: cannot read topology file '{{.*}}missing.json': No such file or directory
// NOTJSON: error: topology file '{{.*}}not-json.json': invalid JSON: expected ',' or ']' at offset
// OVERLAP: error: topology file '{{.*}}bad-topology.json' does not fit the communicator: rank 1 appears in more than one NVLink domain
// STRATEGY: error: unknown routing strategy 'ring'; expected flat, gather-bcast or hierarchical
// CHUNK: error: chunk-bytes must be non-negative
// BANDS: error: scale-bands must be between 1 and 8, got 0
// FORMAT: error: unknown estimate format 'csv'; expected text or json

func.func @f(%c: !m2n.comm<8>, %x: !m2n.dist<8x8xf32, #m2n.layout<#m2n.mesh<[4]>, [shard<0>]>>) {
  %0 = m2n.reshard %x on %c : !m2n.comm<8>, !m2n.dist<8x8xf32, #m2n.layout<#m2n.mesh<[4]>, [shard<0>]>> -> !m2n.dist<8x8xf32, #m2n.layout<#m2n.mesh<[4], base = 4>, [shard<1>]>>
  return
}

func.func @g(%c: !m2n.comm<8>, %x: !m2n.dist<8x8xf32, #m2n.layout<#m2n.mesh<[4]>, [shard<0>]>>)
    attributes {m2n.topology = #m2n.topology<domains = [[0, 1, 2, 3], [4, 5, 6, 7]], nvlink_gbps = 400.0, network_gbps = 25.0>} {
  %0 = m2n.reshard %x on %c : !m2n.comm<8>, !m2n.dist<8x8xf32, #m2n.layout<#m2n.mesh<[4]>, [shard<0>]>> -> !m2n.dist<8x8xf32, #m2n.layout<#m2n.mesh<[4], base = 4>, [shard<1>]>>
  return
}
