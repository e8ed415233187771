// RUN: m2n-opt %s -split-input-file -verify-diagnostics

//===----------------------------------------------------------------------===//
// Meshes
//===----------------------------------------------------------------------===//

// expected-error@+1 {{mesh must have at least one axis}}
#m = #m2n.mesh<[]>

// -----

// expected-error@+1 {{mesh axis 1 has size 0; every mesh axis needs at least one rank}}
#m = #m2n.mesh<[2, 0]>

// -----

// expected-error@+1 {{mesh axis 0 has size -2; every mesh axis needs at least one rank}}
#m = #m2n.mesh<[-2]>

// -----

// expected-error@+1 {{mesh has more than 2147483648 ranks}}
#m = #m2n.mesh<[65536, 65536]>

// -----

// A mesh is laid out rank by rank: 2^31 ranks took 16 GB in the verifier.
// expected-error@+1 {{mesh of 2147483648 ranks: m2n lays out meshes of at most 1048576 ranks (2^20; their ranks may be numbered up to 2147483647)}}
#m = #m2n.mesh<[65536, 32768]>

// -----

// expected-error@+1 {{mesh base rank must be non-negative, got -1}}
#m = #m2n.mesh<[2], base = -1>

// -----

// A base near INT64_MAX used to wrap the largest rank negative and pass.
// expected-error@+1 {{mesh of 4 ranks from base 9223372036854775807 reaches past rank 2147483647}}
#m = #m2n.mesh<[2, 2], base = 9223372036854775807>

// -----

// expected-error@+1 {{mesh rank list contains rank 2147483648, past rank 2147483647}}
#m = #m2n.mesh<[2], ranks = [0, 2147483648]>

// -----

// expected-error@+1 {{mesh of 4 ranks has a rank list of 3 entries}}
#m = #m2n.mesh<[2, 2], ranks = [0, 1, 2]>

// -----

// expected-error@+1 {{mesh rank list contains negative rank -1}}
#m = #m2n.mesh<[2], ranks = [0, -1]>

// -----

// expected-error@+1 {{mesh rank list contains rank 1 more than once}}
#m = #m2n.mesh<[3], ranks = [1, 0, 1]>

// -----

// expected-error@+1 {{a mesh takes either a base rank or an explicit rank list, not both}}
#m = #m2n.mesh<[2], base = 0, ranks = [0, 1]>

// -----

// expected-error@+1 {{mesh parameter 'base' given twice}}
#m = #m2n.mesh<[2], base = 1, base = 2>

// -----

// expected-error@+1 {{unknown mesh parameter 'start'; expected 'base' or 'ranks'}}
#m = #m2n.mesh<[2], start = 1>

// -----

//===----------------------------------------------------------------------===//
// Placements and layouts
//===----------------------------------------------------------------------===//

// expected-error@+1 {{shard dimension must be non-negative, got -1}}
#l = #m2n.layout<#m2n.mesh<[2]>, [shard<-1>]>

// -----

// expected-error@+2 {{expected ::mlir::m2n::ReductionKind to be one of: sum, max, min}}
// expected-error@+1 {{failed to parse M2N_PartialAttr parameter 'reduction'}}
#l = #m2n.layout<#m2n.mesh<[2]>, [partial<avg>]>

// -----

// expected-error@+1 {{expected a placement (shard<d>, replicate or partial<op>), got 'split'}}
#l = #m2n.layout<#m2n.mesh<[2]>, [split<0>]>

// -----

// expected-error@+1 {{expected a placement (shard<d>, replicate or partial<op>), got 'mesh'}}
#l = #m2n.layout<#m2n.mesh<[2]>, [mesh<[2]>]>

// -----

// expected-error@+1 {{expected a placement (shard<d>, replicate or partial<op>) without the '#m2n.' prefix}}
#l = #m2n.layout<#m2n.mesh<[2]>, [#m2n.replicate]>

// -----

// expected-error@+1 {{layout has 1 placements but its mesh has 2 axes; give one placement per mesh axis}}
#l = #m2n.layout<#m2n.mesh<[2, 2]>, [shard<0>]>

// -----

// expected-error@+1 {{layout has 3 placements but its mesh has 2 axes; give one placement per mesh axis}}
#l = #m2n.layout<#m2n.mesh<[2, 2]>, [shard<0>, replicate, replicate]>

// -----

// expected-error@+1 {{partial placements on mesh axes 0 and 2 use different reductions (sum and max)}}
#l = #m2n.layout<#m2n.mesh<[2, 2, 2]>, [partial<sum>, replicate, partial<max>]>

// -----

// expected-error@+1 {{invalid kind of attribute specified}}
#l = #m2n.layout<#m2n.replicate, [replicate]>

// -----

//===----------------------------------------------------------------------===//
// Topologies
//===----------------------------------------------------------------------===//

// expected-error@+1 {{NVLink domain 1 is empty}}
#t = #m2n.topology<domains = [[0, 1], []], nvlink_gbps = 450.0, network_gbps = 50.0>

// -----

// expected-error@+1 {{NVLink domain 0 contains negative rank -1}}
#t = #m2n.topology<domains = [[-1, 0]], nvlink_gbps = 450.0, network_gbps = 50.0>

// -----

// expected-error@+1 {{rank 3 appears in NVLink domains 0 and 1; domains must be disjoint}}
#t = #m2n.topology<domains = [[0, 3], [2, 3]], nvlink_gbps = 450.0, network_gbps = 50.0>

// -----

// expected-error@+1 {{rank 1 appears in NVLink domains 0 and 0; domains must be disjoint}}
#t = #m2n.topology<domains = [[1, 1]], nvlink_gbps = 450.0, network_gbps = 50.0>

// -----

// expected-error@+1 {{nvlink_gbps must be a positive finite bandwidth, got 0}}
#t = #m2n.topology<domains = [[0, 1]], nvlink_gbps = 0.0, network_gbps = 50.0>

// -----

// expected-error@+1 {{network_gbps must be a positive finite bandwidth, got -5}}
#t = #m2n.topology<domains = [[0, 1]], nvlink_gbps = 450.0, network_gbps = -5.0>

// -----

// expected-error@+1 {{topology is missing parameter 'network_gbps'}}
#t = #m2n.topology<domains = [[0, 1]], nvlink_gbps = 450.0>

// -----

// expected-error@+1 {{topology parameter 'nvlink_gbps' given twice}}
#t = #m2n.topology<domains = [[0, 1]], nvlink_gbps = 450.0, nvlink_gbps = 400.0, network_gbps = 50.0>

// -----

// expected-error@+1 {{topology parameter 'domains' given twice}}
#t = #m2n.topology<domains = [[0, 1]], domains = [[0, 1]], nvlink_gbps = 450.0, network_gbps = 50.0>

// -----

// expected-error@+1 {{unknown topology parameter 'nic_gbps'; expected 'domains', 'domain_size', 'nvlink_gbps' or 'network_gbps'}}
#t = #m2n.topology<domains = [[0, 1]], nvlink_gbps = 450.0, nic_gbps = 50.0>

// -----

// expected-error@+1 {{topology gives 'domains' and 'domain_size'; give one of them}}
#t = #m2n.topology<domains = [[0, 1]], domain_size = 2, nvlink_gbps = 450.0, network_gbps = 50.0>

// -----

// expected-error@+1 {{topology parameter 'domain_size' given twice}}
#t = #m2n.topology<domain_size = 2, domain_size = 4, nvlink_gbps = 450.0, network_gbps = 50.0>

// -----

// expected-error@+1 {{domain_size must be positive, got -8}}
#t = #m2n.topology<domain_size = -8, nvlink_gbps = 450.0, network_gbps = 50.0>

// -----

// expected-error@+1 {{'m2n.topology' must be a #m2n.topology attribute, got "dgx"}}
module attributes {m2n.topology = "dgx"} {}

// -----

// The transfer kernel's op codes (m2n-convert-to-gpu) have a fixed form.
// expected-error@+1 {{'m2n.kernel_ops' must be {bulk = array<i32>, tile = array<i32>, vector = array<i32>}, got {bulk = array<i32: 0>}}}
module attributes {m2n.kernel_ops = {bulk = array<i32: 0>}} {}

// -----

// expected-error@+1 {{unknown m2n attribute 'm2n.plan'}}
module attributes {m2n.plan = 1} {}

// -----

//===----------------------------------------------------------------------===//
// Types
//===----------------------------------------------------------------------===//

// expected-error@+1 {{communicator must have at least one rank, got 0}}
func.func private @f(!m2n.comm<0>)

// -----

// expected-error@+1 {{communicator of 2147483649 ranks has more than 2^31}}
func.func private @f(!m2n.comm<2147483649>)

// -----

// expected-error@+1 {{distributed tensor must have a static global shape}}
func.func private @f(!m2n.dist<?x8xf32, #m2n.layout<#m2n.mesh<[2]>, [shard<1>]>>)

// -----

// fp8 is moved, never reduced.
// expected-error@+1 {{partial placements of 'f8E4M3FN' would need a reduction in 8 bits; reduce in bf16 or f32 and cast}}
func.func private @f(!m2n.dist<64xf8E4M3FN, #m2n.layout<#m2n.mesh<[2]>, [partial<sum>]>>)

// -----

// Types without an executor are refused here, not at the last stage.
// expected-error@+1 {{element type 'f8E4M3FNUZ' is not supported}}
func.func private @f(!m2n.dist<64xf8E4M3FNUZ, #m2n.layout<#m2n.mesh<[2]>, [shard<0>]>>)

// -----

// 2^62 x 4 f32: 2^66 bytes, which no 64-bit offset reaches.
// expected-error@+1 {{distributed tensor of 4611686018427387904x4 'f32' elements has more than 2^63 - 1 bytes}}
func.func private @f(!m2n.dist<4611686018427387904x4xf32, #m2n.layout<#m2n.mesh<[2]>, [shard<0>]>>)

// -----

// 3037000500^2 elements: the element count itself wraps int64 (once a
// division by zero in chunking, SIGFPE).
// expected-error@+1 {{distributed tensor of 3037000500x3037000500 'f32' elements has more than 2^63 - 1 bytes}}
func.func private @f(!m2n.dist<3037000500x3037000500xf32, #m2n.layout<#m2n.mesh<[2]>, [shard<0>]>>)

// -----

// An all-gather of 2^32 x 2^32 bytes: the sizes wrap (once compiled with
// rc 0).
// expected-error@+1 {{distributed tensor of 4294967296x4294967296 'i8' elements has more than 2^63 - 1 bytes}}
func.func private @g(!m2n.comm<2>, !m2n.dist<4294967296x4294967296xi8, #m2n.layout<#m2n.mesh<[2]>, [shard<0>]>>)

// -----

// expected-error@+1 {{element type 'i1' is not supported; expected i8, i16, i32, i64, f16, bf16, f32, f64, f8E4M3FN, f8E5M2, ui8 or f8E8M0FNU (wider unsigned integers are not moved)}}
func.func private @f(!m2n.dist<8xi1, #m2n.layout<#m2n.mesh<[2]>, [shard<0>]>>)

// -----

// Unsigned integers other than bytes would compare signed in max/min.
// expected-error@+1 {{element type 'ui16' is not supported}}
func.func private @f(!m2n.dist<8xui16, #m2n.layout<#m2n.mesh<[2]>, [partial<max>]>>)

// -----

// expected-error@+1 {{element type 'index' is not supported}}
func.func private @f(!m2n.dist<8xindex, #m2n.layout<#m2n.mesh<[2]>, [shard<0>]>>)

// -----

// expected-error@+1 {{element type 'complex<f32>' is not supported}}
func.func private @f(!m2n.dist<8xcomplex<f32>, #m2n.layout<#m2n.mesh<[2]>, [shard<0>]>>)

// -----

// expected-error@+1 {{element type 'i128' is not supported}}
func.func private @f(!m2n.dist<8xi128, #m2n.layout<#m2n.mesh<[2]>, [shard<0>]>>)

// -----

// expected-error@+1 {{mesh axis 1 shards tensor dimension 2, but the tensor has rank 2}}
func.func private @f(!m2n.dist<8x8xf32, #m2n.layout<#m2n.mesh<[2, 2]>, [shard<0>, shard<2>]>>)

// -----

// expected-error@+1 {{mesh axis 0 shards tensor dimension 0, but the tensor has rank 0}}
func.func private @f(!m2n.dist<f32, #m2n.layout<#m2n.mesh<[2]>, [shard<0>]>>)

// -----

//===----------------------------------------------------------------------===//
// m2n.reshard
//===----------------------------------------------------------------------===//

func.func @f(%c: !m2n.comm<8>, %x: !m2n.dist<4x8xi32, #m2n.layout<#m2n.mesh<[4]>, [shard<0>]>>) {
  // expected-error@+1 {{'m2n.reshard' op cannot cast 'i32' to 'f32': in-flight casts convert between f32, f16, bf16, f8E4M3FN and f8E5M2}}
  %0 = m2n.reshard %x on %c : !m2n.comm<8>, !m2n.dist<4x8xi32, #m2n.layout<#m2n.mesh<[4]>, [shard<0>]>> -> !m2n.dist<4x8xf32, #m2n.layout<#m2n.mesh<[4], base = 4>, [replicate]>>
  return
}

// -----

func.func @f(%c: !m2n.comm<8>, %x: !m2n.dist<4x8xbf16, #m2n.layout<#m2n.mesh<[4]>, [partial<sum>]>>) {
  // expected-error@+1 {{'m2n.reshard' op casts a partial source from 'bf16' to 'f32'; a reduction keeps its element type (reshard, then cast)}}
  %0 = m2n.reshard %x on %c : !m2n.comm<8>, !m2n.dist<4x8xbf16, #m2n.layout<#m2n.mesh<[4]>, [partial<sum>]>> -> !m2n.dist<4x8xf32, #m2n.layout<#m2n.mesh<[4], base = 4>, [replicate]>>
  return
}

// -----

func.func @f(%c: !m2n.comm<8>, %x: !m2n.dist<4x8xbf16, #m2n.layout<#m2n.mesh<[4]>, [shard<0>]>>) {
  // expected-error@+1 {{'m2n.reshard' op has a scale but no cast (both element types are 'bf16')}}
  %0 = m2n.reshard %x on %c {scale = 2.0 : f32} : !m2n.comm<8>, !m2n.dist<4x8xbf16, #m2n.layout<#m2n.mesh<[4]>, [shard<0>]>> -> !m2n.dist<4x8xbf16, #m2n.layout<#m2n.mesh<[4], base = 4>, [replicate]>>
  return
}

// -----

func.func @f(%c: !m2n.comm<8>, %x: !m2n.dist<4x8xbf16, #m2n.layout<#m2n.mesh<[4]>, [shard<0>]>>) {
  // expected-error@+1 {{'m2n.reshard' op has a scale that is not finite}}
  %0 = m2n.reshard %x on %c {scale = 0x7F800000 : f32} : !m2n.comm<8>, !m2n.dist<4x8xbf16, #m2n.layout<#m2n.mesh<[4]>, [shard<0>]>> -> !m2n.dist<4x8xf8E4M3FN, #m2n.layout<#m2n.mesh<[4], base = 4>, [replicate]>>
  return
}

// -----

func.func @f(%c: !m2n.comm<8>, %x: !m2n.dist<4x8xf32, #m2n.layout<#m2n.mesh<[4]>, [shard<0>]>>) {
  // expected-error@+1 {{'m2n.reshard' op changes the global shape from [4, 8] to [8, 4]}}
  %0 = m2n.reshard %x on %c : !m2n.comm<8>, !m2n.dist<4x8xf32, #m2n.layout<#m2n.mesh<[4]>, [shard<0>]>> -> !m2n.dist<8x4xf32, #m2n.layout<#m2n.mesh<[4], base = 4>, [replicate]>>
  return
}

// -----

func.func @f(%c: !m2n.comm<4>, %x: !m2n.dist<4x8xf32, #m2n.layout<#m2n.mesh<[4]>, [shard<0>]>>) {
  // expected-error@+1 {{'m2n.reshard' op destination mesh contains rank 7, but the communicator has only 4 ranks}}
  %0 = m2n.reshard %x on %c : !m2n.comm<4>, !m2n.dist<4x8xf32, #m2n.layout<#m2n.mesh<[4]>, [shard<0>]>> -> !m2n.dist<4x8xf32, #m2n.layout<#m2n.mesh<[4], base = 4>, [replicate]>>
  return
}

// -----

func.func @f(%c: !m2n.comm<4>, %x: !m2n.dist<4x8xf32, #m2n.layout<#m2n.mesh<[2], ranks = [9, 0]>, [shard<0>]>>) {
  // expected-error@+1 {{'m2n.reshard' op source mesh contains rank 9, but the communicator has only 4 ranks}}
  %0 = m2n.reshard %x on %c : !m2n.comm<4>, !m2n.dist<4x8xf32, #m2n.layout<#m2n.mesh<[2], ranks = [9, 0]>, [shard<0>]>> -> !m2n.dist<4x8xf32, #m2n.layout<#m2n.mesh<[4]>, [replicate]>>
  return
}

// -----

func.func @f(%c: !m2n.comm<8>, %x: !m2n.dist<4x8xf32, #m2n.layout<#m2n.mesh<[4]>, [shard<0>]>>) {
  // expected-error@+1 {{'m2n.reshard' op destination has partial placements, so its mesh must be the source mesh: a reshard keeps partial contributions on the ranks that hold them}}
  %0 = m2n.reshard %x on %c : !m2n.comm<8>, !m2n.dist<4x8xf32, #m2n.layout<#m2n.mesh<[4]>, [shard<0>]>> -> !m2n.dist<4x8xf32, #m2n.layout<#m2n.mesh<[4], base = 4>, [partial<sum>]>>
  return
}

// -----

func.func @f(%c: !m2n.comm<4>, %x: !m2n.dist<4x8xf32, #m2n.layout<#m2n.mesh<[2, 2]>, [partial<sum>, shard<0>]>>) {
  // expected-error@+1 {{'m2n.reshard' op destination is partial on mesh axis 1 where the source is shard<0>; a reshard reduces partial axes or keeps them, it does not create them}}
  %0 = m2n.reshard %x on %c : !m2n.comm<4>, !m2n.dist<4x8xf32, #m2n.layout<#m2n.mesh<[2, 2]>, [partial<sum>, shard<0>]>> -> !m2n.dist<4x8xf32, #m2n.layout<#m2n.mesh<[2, 2]>, [shard<0>, partial<sum>]>>
  return
}

// -----

func.func @f(%c: !m2n.comm<4>, %x: !m2n.dist<4x8xf32, #m2n.layout<#m2n.mesh<[4]>, [shard<0>]>>) {
  // expected-error@+1 {{'m2n.reshard' op destination is partial on mesh axis 0 where the source is shard<0>}}
  %0 = m2n.reshard %x on %c : !m2n.comm<4>, !m2n.dist<4x8xf32, #m2n.layout<#m2n.mesh<[4]>, [shard<0>]>> -> !m2n.dist<4x8xf32, #m2n.layout<#m2n.mesh<[4]>, [partial<max>]>>
  return
}

// -----

func.func @f(%c: !m2n.comm<4>, %x: !m2n.dist<4x8xf32, #m2n.layout<#m2n.mesh<[2, 2]>, [partial<sum>, shard<0>]>>) {
  // expected-error@+1 {{'m2n.reshard' op destination reduction 'max' differs from source reduction 'sum'}}
  %0 = m2n.reshard %x on %c : !m2n.comm<4>, !m2n.dist<4x8xf32, #m2n.layout<#m2n.mesh<[2, 2]>, [partial<sum>, shard<0>]>> -> !m2n.dist<4x8xf32, #m2n.layout<#m2n.mesh<[2, 2]>, [partial<max>, replicate]>>
  return
}

// -----

func.func @f(%c: !m2n.comm<4>, %t: tensor<4x8xf32>) {
  // expected-error@+1 {{'m2n.reshard' op operand #0 must be distributed tensor, but got 'tensor<4x8xf32>'}}
  %0 = "m2n.reshard"(%t, %c) : (tensor<4x8xf32>, !m2n.comm<4>) -> !m2n.dist<4x8xf32, #m2n.layout<#m2n.mesh<[4]>, [replicate]>>
  return
}

// -----

//===----------------------------------------------------------------------===//
// Collectives
//===----------------------------------------------------------------------===//

func.func @f(%c: !m2n.comm<4>, %x: !m2n.dist<4x8xf32, #m2n.layout<#m2n.mesh<[2, 2]>, [shard<0>, shard<1>]>>) {
  // expected-error@+1 {{'m2n.all_gather' op expects at least one mesh axis}}
  %0 = m2n.all_gather %x on %c mesh_axes = [] : !m2n.comm<4>, !m2n.dist<4x8xf32, #m2n.layout<#m2n.mesh<[2, 2]>, [shard<0>, shard<1>]>> -> !m2n.dist<4x8xf32, #m2n.layout<#m2n.mesh<[2, 2]>, [shard<0>, shard<1>]>>
  return
}

// -----

func.func @f(%c: !m2n.comm<4>, %x: !m2n.dist<4x8xf32, #m2n.layout<#m2n.mesh<[2, 2]>, [shard<0>, shard<1>]>>) {
  // expected-error@+1 {{'m2n.all_gather' op mesh axis 2 is out of range for a mesh with 2 axes}}
  %0 = m2n.all_gather %x on %c mesh_axes = [2] : !m2n.comm<4>, !m2n.dist<4x8xf32, #m2n.layout<#m2n.mesh<[2, 2]>, [shard<0>, shard<1>]>> -> !m2n.dist<4x8xf32, #m2n.layout<#m2n.mesh<[2, 2]>, [shard<0>, replicate]>>
  return
}

// -----

func.func @f(%c: !m2n.comm<4>, %x: !m2n.dist<4x8xf32, #m2n.layout<#m2n.mesh<[2, 2]>, [shard<0>, shard<1>]>>) {
  // expected-error@+1 {{'m2n.all_gather' op mesh axis -1 is out of range for a mesh with 2 axes}}
  %0 = m2n.all_gather %x on %c mesh_axes = [-1] : !m2n.comm<4>, !m2n.dist<4x8xf32, #m2n.layout<#m2n.mesh<[2, 2]>, [shard<0>, shard<1>]>> -> !m2n.dist<4x8xf32, #m2n.layout<#m2n.mesh<[2, 2]>, [shard<0>, replicate]>>
  return
}

// -----

func.func @f(%c: !m2n.comm<4>, %x: !m2n.dist<4x8xf32, #m2n.layout<#m2n.mesh<[2, 2]>, [shard<0>, shard<1>]>>) {
  // expected-error@+1 {{'m2n.all_gather' op mesh axis 1 is listed twice}}
  %0 = m2n.all_gather %x on %c mesh_axes = [1, 1] : !m2n.comm<4>, !m2n.dist<4x8xf32, #m2n.layout<#m2n.mesh<[2, 2]>, [shard<0>, shard<1>]>> -> !m2n.dist<4x8xf32, #m2n.layout<#m2n.mesh<[2, 2]>, [shard<0>, replicate]>>
  return
}

// -----

func.func @f(%c: !m2n.comm<2>, %x: !m2n.dist<4x8xf32, #m2n.layout<#m2n.mesh<[2, 2]>, [shard<0>, shard<1>]>>) {
  // expected-error@+1 {{'m2n.all_gather' op input mesh contains rank 3, but the communicator has only 2 ranks}}
  %0 = m2n.all_gather %x on %c mesh_axes = [1] : !m2n.comm<2>, !m2n.dist<4x8xf32, #m2n.layout<#m2n.mesh<[2, 2]>, [shard<0>, shard<1>]>> -> !m2n.dist<4x8xf32, #m2n.layout<#m2n.mesh<[2, 2]>, [shard<0>, replicate]>>
  return
}

// -----

func.func @f(%c: !m2n.comm<4>, %x: !m2n.dist<4x8xf32, #m2n.layout<#m2n.mesh<[2, 2]>, [partial<sum>, shard<1>]>>) {
  // expected-error@+1 {{'m2n.all_gather' op all_gather expects a shard placement on mesh axis 0, got #m2n.partial<sum>}}
  %0 = m2n.all_gather %x on %c mesh_axes = [0] : !m2n.comm<4>, !m2n.dist<4x8xf32, #m2n.layout<#m2n.mesh<[2, 2]>, [partial<sum>, shard<1>]>> -> !m2n.dist<4x8xf32, #m2n.layout<#m2n.mesh<[2, 2]>, [replicate, shard<1>]>>
  return
}

// -----

func.func @f(%c: !m2n.comm<4>, %x: !m2n.dist<4x8xf32, #m2n.layout<#m2n.mesh<[2, 2]>, [shard<0>, shard<1>]>>) {
  // expected-error@+1 {{'m2n.all_gather' op result type must be '!m2n.dist<4x8xf32, #m2n.layout<#m2n.mesh<[2, 2]>, [shard<0>, replicate]>>', got '!m2n.dist<4x8xf32, #m2n.layout<#m2n.mesh<[2, 2]>, [replicate, replicate]>>'}}
  %0 = m2n.all_gather %x on %c mesh_axes = [1] : !m2n.comm<4>, !m2n.dist<4x8xf32, #m2n.layout<#m2n.mesh<[2, 2]>, [shard<0>, shard<1>]>> -> !m2n.dist<4x8xf32, #m2n.layout<#m2n.mesh<[2, 2]>, [replicate, replicate]>>
  return
}

// -----

func.func @f(%c: !m2n.comm<4>, %x: !m2n.dist<4x8xf32, #m2n.layout<#m2n.mesh<[4]>, [replicate]>>) {
  // expected-error@+1 {{'m2n.reduce_scatter' op reduce_scatter expects a partial placement on mesh axis 0, got #m2n.replicate}}
  %0 = m2n.reduce_scatter %x on %c mesh_axes = [0] scatter_dim = 0 : !m2n.comm<4>, !m2n.dist<4x8xf32, #m2n.layout<#m2n.mesh<[4]>, [replicate]>> -> !m2n.dist<4x8xf32, #m2n.layout<#m2n.mesh<[4]>, [shard<0>]>>
  return
}

// -----

func.func @f(%c: !m2n.comm<4>, %x: !m2n.dist<4x8xf32, #m2n.layout<#m2n.mesh<[4]>, [partial<sum>]>>) {
  // expected-error@+1 {{'m2n.reduce_scatter' op scatter_dim 2 is out of range for a tensor of rank 2}}
  %0 = m2n.reduce_scatter %x on %c mesh_axes = [0] scatter_dim = 2 : !m2n.comm<4>, !m2n.dist<4x8xf32, #m2n.layout<#m2n.mesh<[4]>, [partial<sum>]>> -> !m2n.dist<4x8xf32, #m2n.layout<#m2n.mesh<[4]>, [shard<0>]>>
  return
}

// -----

func.func @f(%c: !m2n.comm<4>, %x: !m2n.dist<4x8xf32, #m2n.layout<#m2n.mesh<[4]>, [partial<sum>]>>) {
  // expected-error@+1 {{'m2n.reduce_scatter' op result type must be '!m2n.dist<4x8xf32, #m2n.layout<#m2n.mesh<[4]>, [shard<1>]>>'}}
  %0 = m2n.reduce_scatter %x on %c mesh_axes = [0] scatter_dim = 1 : !m2n.comm<4>, !m2n.dist<4x8xf32, #m2n.layout<#m2n.mesh<[4]>, [partial<sum>]>> -> !m2n.dist<4x8xf32, #m2n.layout<#m2n.mesh<[4]>, [shard<0>]>>
  return
}

// -----

func.func @f(%c: !m2n.comm<4>, %x: !m2n.dist<4x8xf32, #m2n.layout<#m2n.mesh<[4]>, [shard<0>]>>) {
  // expected-error@+1 {{'m2n.all_reduce' op all_reduce expects a partial placement on mesh axis 0, got #m2n.shard<0>}}
  %0 = m2n.all_reduce %x on %c mesh_axes = [0] : !m2n.comm<4>, !m2n.dist<4x8xf32, #m2n.layout<#m2n.mesh<[4]>, [shard<0>]>> -> !m2n.dist<4x8xf32, #m2n.layout<#m2n.mesh<[4]>, [replicate]>>
  return
}

// -----

func.func @f(%c: !m2n.comm<4>, %x: !m2n.dist<4x8xf32, #m2n.layout<#m2n.mesh<[4]>, [partial<min>]>>) {
  // expected-error@+1 {{'m2n.all_reduce' op result type must be '!m2n.dist<4x8xf32, #m2n.layout<#m2n.mesh<[4]>, [replicate]>>'}}
  %0 = m2n.all_reduce %x on %c mesh_axes = [0] : !m2n.comm<4>, !m2n.dist<4x8xf32, #m2n.layout<#m2n.mesh<[4]>, [partial<min>]>> -> !m2n.dist<4x8xf32, #m2n.layout<#m2n.mesh<[4]>, [partial<min>]>>
  return
}

// -----

func.func @f(%c: !m2n.comm<4>, %x: !m2n.dist<4x8xf32, #m2n.layout<#m2n.mesh<[4]>, [replicate]>>) {
  // expected-error@+1 {{'m2n.all_to_all' op all_to_all expects a shard placement on mesh axis 0, got #m2n.replicate}}
  %0 = m2n.all_to_all %x on %c mesh_axes = [0] split_dim = 1 : !m2n.comm<4>, !m2n.dist<4x8xf32, #m2n.layout<#m2n.mesh<[4]>, [replicate]>> -> !m2n.dist<4x8xf32, #m2n.layout<#m2n.mesh<[4]>, [shard<1>]>>
  return
}

// -----

func.func @f(%c: !m2n.comm<4>, %x: !m2n.dist<4x8xf32, #m2n.layout<#m2n.mesh<[4]>, [shard<1>]>>) {
  // expected-error@+1 {{'m2n.all_to_all' op mesh axis 0 already shards split_dim 1}}
  %0 = m2n.all_to_all %x on %c mesh_axes = [0] split_dim = 1 : !m2n.comm<4>, !m2n.dist<4x8xf32, #m2n.layout<#m2n.mesh<[4]>, [shard<1>]>> -> !m2n.dist<4x8xf32, #m2n.layout<#m2n.mesh<[4]>, [shard<1>]>>
  return
}

// -----

func.func @f(%c: !m2n.comm<4>, %x: !m2n.dist<4x8xf32, #m2n.layout<#m2n.mesh<[4]>, [shard<0>]>>) {
  // expected-error@+1 {{'m2n.all_to_all' op split_dim -1 is out of range for a tensor of rank 2}}
  %0 = m2n.all_to_all %x on %c mesh_axes = [0] split_dim = -1 : !m2n.comm<4>, !m2n.dist<4x8xf32, #m2n.layout<#m2n.mesh<[4]>, [shard<0>]>> -> !m2n.dist<4x8xf32, #m2n.layout<#m2n.mesh<[4]>, [shard<1>]>>
  return
}

// -----

func.func @f(%c: !m2n.comm<4>, %x: !m2n.dist<4x8xf32, #m2n.layout<#m2n.mesh<[4]>, [shard<0>]>>) {
  // expected-error@+1 {{'m2n.all_to_all' op result type must be '!m2n.dist<4x8xf32, #m2n.layout<#m2n.mesh<[4]>, [shard<1>]>>'}}
  %0 = m2n.all_to_all %x on %c mesh_axes = [0] split_dim = 1 : !m2n.comm<4>, !m2n.dist<4x8xf32, #m2n.layout<#m2n.mesh<[4]>, [shard<0>]>> -> !m2n.dist<4x8xf32, #m2n.layout<#m2n.mesh<[4]>, [replicate]>>
  return
}

// -----

//===----------------------------------------------------------------------===//
// m2n.plan and m2n.transfer
//===----------------------------------------------------------------------===//

func.func @f(%c: !m2n.comm<3>, %x: !m2n.dist<4x2xf32, #m2n.layout<#m2n.mesh<[2]>, [shard<0>]>>) {
  %0 = m2n.plan %x on %c : !m2n.comm<3>, !m2n.dist<4x2xf32, #m2n.layout<#m2n.mesh<[2]>, [shard<0>]>> -> !m2n.dist<4x2xf32, #m2n.layout<#m2n.mesh<[1], base = 2>, [replicate]>> {
    // expected-error@+1 {{'m2n.transfer' op boxes must have 2 dimensions, the rank of the tensor}}
    m2n.transfer copy from 0 [0:2] to 2 [0:2]
  }
  return
}

// -----

func.func @f(%c: !m2n.comm<3>, %x: !m2n.dist<4xf32, #m2n.layout<#m2n.mesh<[2]>, [shard<0>]>>) {
  %0 = m2n.plan %x on %c : !m2n.comm<3>, !m2n.dist<4xf32, #m2n.layout<#m2n.mesh<[2]>, [shard<0>]>> -> !m2n.dist<4xf32, #m2n.layout<#m2n.mesh<[1], base = 2>, [replicate]>> {
    // expected-error@+1 {{'m2n.transfer' op moves an empty box (dimension 0 has size 0)}}
    m2n.transfer copy from 0 [1:1] to 2 [0:0]
  }
  return
}

// -----

func.func @f(%c: !m2n.comm<3>, %x: !m2n.dist<4xf32, #m2n.layout<#m2n.mesh<[2]>, [shard<0>]>>) {
  %0 = m2n.plan %x on %c : !m2n.comm<3>, !m2n.dist<4xf32, #m2n.layout<#m2n.mesh<[2]>, [shard<0>]>> -> !m2n.dist<4xf32, #m2n.layout<#m2n.mesh<[1], base = 2>, [replicate]>> {
    // expected-error@+1 {{'m2n.transfer' op box offsets must be non-negative}}
    m2n.transfer copy from 0 [-1:1] to 2 [0:2]
  }
  return
}

// -----

func.func @f(%c: !m2n.comm<3>, %x: !m2n.dist<4xf32, #m2n.layout<#m2n.mesh<[2]>, [shard<0>]>>) {
  %0 = m2n.plan %x on %c : !m2n.comm<3>, !m2n.dist<4xf32, #m2n.layout<#m2n.mesh<[2]>, [shard<0>]>> -> !m2n.dist<4xf32, #m2n.layout<#m2n.mesh<[1], base = 2>, [replicate]>> {
    // expected-error@+1 {{'m2n.transfer' op source rank 2 is not in the source mesh}}
    m2n.transfer copy from 2 [0:2] to 2 [0:2]
  }
  return
}

// -----

func.func @f(%c: !m2n.comm<3>, %x: !m2n.dist<4xf32, #m2n.layout<#m2n.mesh<[2]>, [shard<0>]>>) {
  %0 = m2n.plan %x on %c : !m2n.comm<3>, !m2n.dist<4xf32, #m2n.layout<#m2n.mesh<[2]>, [shard<0>]>> -> !m2n.dist<4xf32, #m2n.layout<#m2n.mesh<[1], base = 2>, [replicate]>> {
    // expected-error@+1 {{'m2n.transfer' op destination rank 1 is not in the destination mesh}}
    m2n.transfer copy from 0 [0:2] to 1 [0:2]
  }
  return
}

// -----

func.func @f(%c: !m2n.comm<3>, %x: !m2n.dist<4xf32, #m2n.layout<#m2n.mesh<[2]>, [shard<0>]>>) {
  %0 = m2n.plan %x on %c : !m2n.comm<3>, !m2n.dist<4xf32, #m2n.layout<#m2n.mesh<[2]>, [shard<0>]>> -> !m2n.dist<4xf32, #m2n.layout<#m2n.mesh<[1], base = 2>, [replicate]>> {
    // expected-error@+1 {{'m2n.transfer' op reduces, but the source layout has no partial placement}}
    m2n.transfer reduce<sum> from 0 [0:2] to 2 [0:2]
  }
  return
}

// -----

func.func @f(%c: !m2n.comm<2>, %x: !m2n.dist<4xf32, #m2n.layout<#m2n.mesh<[2]>, [partial<sum>]>>) {
  %0 = m2n.plan %x on %c : !m2n.comm<2>, !m2n.dist<4xf32, #m2n.layout<#m2n.mesh<[2]>, [partial<sum>]>> -> !m2n.dist<4xf32, #m2n.layout<#m2n.mesh<[2]>, [replicate]>> {
    // expected-error@+1 {{'m2n.transfer' op reduces with 'max' but the source layout with 'sum'}}
    m2n.transfer reduce<max> from 0 [0:4] to 1 [0:4]
  }
  return
}

// -----

func.func @f(%c: !m2n.comm<3>, %x: !m2n.dist<4xf32, #m2n.layout<#m2n.mesh<[2]>, [shard<0>]>>) {
  %0 = m2n.plan %x on %c : !m2n.comm<3>, !m2n.dist<4xf32, #m2n.layout<#m2n.mesh<[2]>, [shard<0>]>> -> !m2n.dist<4xf32, #m2n.layout<#m2n.mesh<[1], base = 2>, [replicate]>> {
    // expected-error@+1 {{expected 'copy' or 'reduce<op>', got 'move'}}
    m2n.transfer move from 0 [0:2] to 2 [0:2]
  }
  return
}

// -----

func.func @f(%c: !m2n.comm<2>, %x: !m2n.dist<4xf32, #m2n.layout<#m2n.mesh<[2]>, [partial<sum>]>>) {
  %0 = m2n.plan %x on %c : !m2n.comm<2>, !m2n.dist<4xf32, #m2n.layout<#m2n.mesh<[2]>, [partial<sum>]>> -> !m2n.dist<4xf32, #m2n.layout<#m2n.mesh<[2]>, [replicate]>> {
    // expected-error@+1 {{unknown reduction 'avg'; expected sum, max or min}}
    m2n.transfer reduce<avg> from 0 [0:4] to 1 [0:4]
  }
  return
}

// -----

func.func @f(%c: !m2n.comm<3>, %x: !m2n.dist<4xf32, #m2n.layout<#m2n.mesh<[2]>, [shard<0>]>>) {
  %0 = m2n.plan %x on %c : !m2n.comm<3>, !m2n.dist<4xf32, #m2n.layout<#m2n.mesh<[2]>, [shard<0>]>> -> !m2n.dist<4xf32, #m2n.layout<#m2n.mesh<[1], base = 2>, [replicate]>> {
    // expected-error@+1 {{source and destination boxes differ in size}}
    m2n.transfer copy from 0 [0:2] to 2 [0:3]
  }
  return
}

// -----

func.func @f(%c: !m2n.comm<3>, %x: !m2n.dist<4xf32, #m2n.layout<#m2n.mesh<[2]>, [shard<0>]>>) {
  %0 = m2n.plan %x on %c : !m2n.comm<3>, !m2n.dist<4xf32, #m2n.layout<#m2n.mesh<[2]>, [shard<0>]>> -> !m2n.dist<4xf32, #m2n.layout<#m2n.mesh<[1], base = 2>, [replicate]>> {
    // expected-error@+1 {{'arith.constant' op is not allowed in an m2n.plan body; only m2n.transfer is}}
    %k = arith.constant 0 : i32
  }
  return
}

// -----

func.func @f(%c: !m2n.comm<3>, %x: !m2n.dist<4xf32, #m2n.layout<#m2n.mesh<[2]>, [shard<0>]>>) {
  // expected-error@+1 {{'m2n.plan' op changes the global shape from [4] to [8]}}
  %0 = m2n.plan %x on %c : !m2n.comm<3>, !m2n.dist<4xf32, #m2n.layout<#m2n.mesh<[2]>, [shard<0>]>> -> !m2n.dist<8xf32, #m2n.layout<#m2n.mesh<[1], base = 2>, [replicate]>> {
  }
  return
}

// -----

func.func @f() {
  // expected-error@+1 {{'m2n.transfer' op expects parent op 'm2n.plan'}}
  m2n.transfer copy from 0 [0:2] to 2 [0:2]
  return
}

// -----

//===----------------------------------------------------------------------===//
// m2n.schedule, m2n.scratch and m2n.step
//===----------------------------------------------------------------------===//

func.func @f(%c: !m2n.comm<3>, %x: !m2n.dist<4xf32, #m2n.layout<#m2n.mesh<[2]>, [shard<0>]>>) {
  // expected-error@+1 {{'m2n.schedule' op unknown strategy 'ring'; expected flat, gather-bcast or hierarchical}}
  %0 = m2n.schedule %x on %c strategy = "ring" topology(#m2n.topology<domains = [[0, 1, 2]], nvlink_gbps = 450.0, network_gbps = 50.0>) : !m2n.comm<3>, !m2n.dist<4xf32, #m2n.layout<#m2n.mesh<[2]>, [shard<0>]>> -> !m2n.dist<4xf32, #m2n.layout<#m2n.mesh<[1], base = 2>, [replicate]>> {

  }
  return
}

// -----

func.func @f(%c: !m2n.comm<3>, %x: !m2n.dist<4xf32, #m2n.layout<#m2n.mesh<[2]>, [shard<0>]>>) {
  // expected-error@+1 {{'m2n.schedule' op topology: NVLink domain 0 names rank 3, outside the communicator of 3 ranks}}
  %0 = m2n.schedule %x on %c strategy = "flat" topology(#m2n.topology<domains = [[0, 3]], nvlink_gbps = 450.0, network_gbps = 50.0>) : !m2n.comm<3>, !m2n.dist<4xf32, #m2n.layout<#m2n.mesh<[2]>, [shard<0>]>> -> !m2n.dist<4xf32, #m2n.layout<#m2n.mesh<[1], base = 2>, [replicate]>> {

  }
  return
}

// -----

func.func @f(%c: !m2n.comm<3>, %x: !m2n.dist<4xf32, #m2n.layout<#m2n.mesh<[2]>, [shard<0>]>>) {
  %0 = m2n.schedule %x on %c strategy = "flat" topology(#m2n.topology<domains = [[0, 1, 2]], nvlink_gbps = 450.0, network_gbps = 50.0>) : !m2n.comm<3>, !m2n.dist<4xf32, #m2n.layout<#m2n.mesh<[2]>, [shard<0>]>> -> !m2n.dist<4xf32, #m2n.layout<#m2n.mesh<[1], base = 2>, [replicate]>> {
    // expected-error@+1 {{'m2n.scratch' op has id 1, expected 0 (scratch ids count from 0 in order)}}
    m2n.scratch 1 on 2 [4]
  }
  return
}

// -----

func.func @f(%c: !m2n.comm<3>, %x: !m2n.dist<4xf32, #m2n.layout<#m2n.mesh<[2]>, [shard<0>]>>) {
  %0 = m2n.schedule %x on %c strategy = "flat" topology(#m2n.topology<domains = [[0, 1, 2]], nvlink_gbps = 450.0, network_gbps = 50.0>) : !m2n.comm<3>, !m2n.dist<4xf32, #m2n.layout<#m2n.mesh<[2]>, [shard<0>]>> -> !m2n.dist<4xf32, #m2n.layout<#m2n.mesh<[1], base = 2>, [replicate]>> {
    // expected-error@+1 {{'m2n.scratch' op rank 5 is outside the communicator of 3 ranks}}
    m2n.scratch 0 on 5 [4]
  }
  return
}

// -----

func.func @f(%c: !m2n.comm<3>, %x: !m2n.dist<4xf32, #m2n.layout<#m2n.mesh<[2]>, [shard<0>]>>) {
  %0 = m2n.schedule %x on %c strategy = "flat" topology(#m2n.topology<domains = [[0, 1, 2]], nvlink_gbps = 450.0, network_gbps = 50.0>) : !m2n.comm<3>, !m2n.dist<4xf32, #m2n.layout<#m2n.mesh<[2]>, [shard<0>]>> -> !m2n.dist<4xf32, #m2n.layout<#m2n.mesh<[1], base = 2>, [replicate]>> {
    // expected-error@+1 {{'m2n.scratch' op shape must be non-negative}}
    m2n.scratch 0 on 2 [-4]
  }
  return
}

// -----

func.func @f(%c: !m2n.comm<3>, %x: !m2n.dist<4xf32, #m2n.layout<#m2n.mesh<[2]>, [shard<0>]>>) {
  %0 = m2n.schedule %x on %c strategy = "flat" topology(#m2n.topology<domains = [[0, 1, 2]], nvlink_gbps = 450.0, network_gbps = 50.0>) : !m2n.comm<3>, !m2n.dist<4xf32, #m2n.layout<#m2n.mesh<[2]>, [shard<0>]>> -> !m2n.dist<4xf32, #m2n.layout<#m2n.mesh<[1], base = 2>, [replicate]>> {
    // expected-error@+1 {{'m2n.step' op has id 3, expected 0 (step ids count from 0 in order)}}
    m2n.step 3 copy src(0) [0:2] -> dst(2) [0:2] via nvlink
  }
  return
}

// -----

func.func @f(%c: !m2n.comm<3>, %x: !m2n.dist<4xf32, #m2n.layout<#m2n.mesh<[2]>, [shard<0>]>>) {
  %0 = m2n.schedule %x on %c strategy = "flat" topology(#m2n.topology<domains = [[0, 1, 2]], nvlink_gbps = 450.0, network_gbps = 50.0>) : !m2n.comm<3>, !m2n.dist<4xf32, #m2n.layout<#m2n.mesh<[2]>, [shard<0>]>> -> !m2n.dist<4xf32, #m2n.layout<#m2n.mesh<[1], base = 2>, [replicate]>> {
    // expected-error@+1 {{'m2n.transfer' op is not allowed in an m2n.schedule body; only m2n.scratch and m2n.step are}}
    m2n.transfer copy from 0 [0:2] to 2 [0:2]
  }
  return
}

// -----

func.func @f(%c: !m2n.comm<3>, %x: !m2n.dist<4xf32, #m2n.layout<#m2n.mesh<[2]>, [shard<0>]>>) {
  %0 = m2n.schedule %x on %c strategy = "flat" topology(#m2n.topology<domains = [[0, 1, 2]], nvlink_gbps = 450.0, network_gbps = 50.0>) : !m2n.comm<3>, !m2n.dist<4xf32, #m2n.layout<#m2n.mesh<[2]>, [shard<0>]>> -> !m2n.dist<4xf32, #m2n.layout<#m2n.mesh<[1], base = 2>, [replicate]>> {
    // expected-error@+1 {{'m2n.step' op source rank 2 is not in the source mesh}}
    m2n.step 0 copy src(2) [0:2] -> dst(2) [0:2] via local
  }
  return
}

// -----

func.func @f(%c: !m2n.comm<3>, %x: !m2n.dist<4xf32, #m2n.layout<#m2n.mesh<[2]>, [shard<0>]>>) {
  %0 = m2n.schedule %x on %c strategy = "flat" topology(#m2n.topology<domains = [[0, 1, 2]], nvlink_gbps = 450.0, network_gbps = 50.0>) : !m2n.comm<3>, !m2n.dist<4xf32, #m2n.layout<#m2n.mesh<[2]>, [shard<0>]>> -> !m2n.dist<4xf32, #m2n.layout<#m2n.mesh<[1], base = 2>, [replicate]>> {
    // expected-error@+1 {{'m2n.step' op destination rank 1 is not in the destination mesh}}
    m2n.step 0 copy src(0) [0:2] -> dst(1) [0:2] via nvlink
  }
  return
}

// -----

func.func @f(%c: !m2n.comm<3>, %x: !m2n.dist<4xf32, #m2n.layout<#m2n.mesh<[2]>, [shard<0>]>>) {
  %0 = m2n.schedule %x on %c strategy = "flat" topology(#m2n.topology<domains = [[0, 1, 2]], nvlink_gbps = 450.0, network_gbps = 50.0>) : !m2n.comm<3>, !m2n.dist<4xf32, #m2n.layout<#m2n.mesh<[2]>, [shard<0>]>> -> !m2n.dist<4xf32, #m2n.layout<#m2n.mesh<[1], base = 2>, [replicate]>> {
    // expected-error@+1 {{'m2n.step' op destination scratch buffer 0 is not declared}}
    m2n.step 0 copy src(0) [0:2] -> scratch0(2) [0:2] via nvlink
  }
  return
}

// -----

func.func @f(%c: !m2n.comm<3>, %x: !m2n.dist<4xf32, #m2n.layout<#m2n.mesh<[2]>, [shard<0>]>>) {
  %0 = m2n.schedule %x on %c strategy = "flat" topology(#m2n.topology<domains = [[0, 1, 2]], nvlink_gbps = 450.0, network_gbps = 50.0>) : !m2n.comm<3>, !m2n.dist<4xf32, #m2n.layout<#m2n.mesh<[2]>, [shard<0>]>> -> !m2n.dist<4xf32, #m2n.layout<#m2n.mesh<[1], base = 2>, [replicate]>> {
    m2n.scratch 0 on 1 [4]
    // expected-error@+1 {{'m2n.step' op destination scratch buffer 0 belongs to rank 1, not 2}}
    m2n.step 0 copy src(0) [0:2] -> scratch0(2) [0:2] via nvlink
  }
  return
}

// -----

func.func @f(%c: !m2n.comm<3>, %x: !m2n.dist<4xf32, #m2n.layout<#m2n.mesh<[2]>, [shard<0>]>>) {
  %0 = m2n.schedule %x on %c strategy = "flat" topology(#m2n.topology<domains = [[0, 1, 2]], nvlink_gbps = 450.0, network_gbps = 50.0>) : !m2n.comm<3>, !m2n.dist<4xf32, #m2n.layout<#m2n.mesh<[2]>, [shard<0>]>> -> !m2n.dist<4xf32, #m2n.layout<#m2n.mesh<[1], base = 2>, [replicate]>> {
    m2n.scratch 0 on 2 [4, 1]
    // expected-error@+1 {{'m2n.step' op destination box must have 2 dimensions, the rank of its buffer}}
    m2n.step 0 copy src(0) [0:2] -> scratch0(2) [0:2] via nvlink
  }
  return
}

// -----

func.func @f(%c: !m2n.comm<3>, %x: !m2n.dist<4xf32, #m2n.layout<#m2n.mesh<[2]>, [shard<0>]>>) {
  %0 = m2n.schedule %x on %c strategy = "flat" topology(#m2n.topology<domains = [[0, 1, 2]], nvlink_gbps = 450.0, network_gbps = 50.0>) : !m2n.comm<3>, !m2n.dist<4xf32, #m2n.layout<#m2n.mesh<[2]>, [shard<0>]>> -> !m2n.dist<4xf32, #m2n.layout<#m2n.mesh<[1], base = 2>, [replicate]>> {
    // expected-error@+1 {{'m2n.step' op source box leaves its buffer in dimension 0 (extent 2)}}
    m2n.step 0 copy src(0) [1:3] -> dst(2) [0:2] via nvlink
  }
  return
}

// -----

func.func @f(%c: !m2n.comm<3>, %x: !m2n.dist<4xf32, #m2n.layout<#m2n.mesh<[2]>, [shard<0>]>>) {
  %0 = m2n.schedule %x on %c strategy = "flat" topology(#m2n.topology<domains = [[0, 1, 2]], nvlink_gbps = 450.0, network_gbps = 50.0>) : !m2n.comm<3>, !m2n.dist<4xf32, #m2n.layout<#m2n.mesh<[2]>, [shard<0>]>> -> !m2n.dist<4xf32, #m2n.layout<#m2n.mesh<[1], base = 2>, [replicate]>> {
    // expected-error@+1 {{'m2n.step' op writes a source buffer, which is read only}}
    m2n.step 0 copy src(0) [0:2] -> src(1) [0:2] via nvlink
  }
  return
}

// -----

func.func @f(%c: !m2n.comm<3>, %x: !m2n.dist<4xf32, #m2n.layout<#m2n.mesh<[2]>, [shard<0>]>>) {
  %0 = m2n.schedule %x on %c strategy = "flat" topology(#m2n.topology<domains = [[0, 1, 2]], nvlink_gbps = 450.0, network_gbps = 50.0>) : !m2n.comm<3>, !m2n.dist<4xf32, #m2n.layout<#m2n.mesh<[2]>, [shard<0>]>> -> !m2n.dist<4xf32, #m2n.layout<#m2n.mesh<[1], base = 2>, [replicate]>> {
    // expected-error@+1 {{'m2n.step' op reduces with 'sum' but the source layout does not}}
    m2n.step 0 reduce<sum> src(0) [0:2] -> dst(2) [0:2] via nvlink
  }
  return
}

// -----

func.func @f(%c: !m2n.comm<3>, %x: !m2n.dist<4xf32, #m2n.layout<#m2n.mesh<[2]>, [shard<0>]>>) {
  %0 = m2n.schedule %x on %c strategy = "flat" topology(#m2n.topology<domains = [[0, 1, 2]], nvlink_gbps = 450.0, network_gbps = 50.0>) : !m2n.comm<3>, !m2n.dist<4xf32, #m2n.layout<#m2n.mesh<[2]>, [shard<0>]>> -> !m2n.dist<4xf32, #m2n.layout<#m2n.mesh<[1], base = 2>, [replicate]>> {
    // expected-error@+1 {{'m2n.step' op goes via network but the topology connects rank 0 to rank 2 via nvlink}}
    m2n.step 0 copy src(0) [0:2] -> dst(2) [0:2] via network
  }
  return
}

// -----

func.func @f(%c: !m2n.comm<3>, %x: !m2n.dist<4xf32, #m2n.layout<#m2n.mesh<[2]>, [shard<0>]>>) {
  %0 = m2n.schedule %x on %c strategy = "flat" topology(#m2n.topology<domains = [[0, 1, 2]], nvlink_gbps = 450.0, network_gbps = 50.0>) : !m2n.comm<3>, !m2n.dist<4xf32, #m2n.layout<#m2n.mesh<[2]>, [shard<0>]>> -> !m2n.dist<4xf32, #m2n.layout<#m2n.mesh<[1], base = 2>, [replicate]>> {
    // expected-error@+1 {{'m2n.step' op depends on step 7, which does not exist}}
    m2n.step 0 copy src(0) [0:2] -> dst(2) [0:2] via nvlink after [7]
  }
  return
}

// -----

func.func @f(%c: !m2n.comm<3>, %x: !m2n.dist<4xf32, #m2n.layout<#m2n.mesh<[2]>, [shard<0>]>>) {
  // expected-error@+1 {{'m2n.schedule' op step dependencies form a cycle}}
  %0 = m2n.schedule %x on %c strategy = "flat" topology(#m2n.topology<domains = [[0, 1, 2]], nvlink_gbps = 450.0, network_gbps = 50.0>) : !m2n.comm<3>, !m2n.dist<4xf32, #m2n.layout<#m2n.mesh<[2]>, [shard<0>]>> -> !m2n.dist<4xf32, #m2n.layout<#m2n.mesh<[1], base = 2>, [replicate]>> {
    m2n.step 0 copy src(0) [0:2] -> dst(2) [0:2] via nvlink after [1]
    m2n.step 1 copy src(1) [0:2] -> dst(2) [2:4] via nvlink after [0]
  }
  return
}

// -----

func.func @f(%c: !m2n.comm<3>, %x: !m2n.dist<4xf32, #m2n.layout<#m2n.mesh<[2]>, [shard<0>]>>) {
  %0 = m2n.schedule %x on %c strategy = "flat" topology(#m2n.topology<domains = [[0, 1, 2]], nvlink_gbps = 450.0, network_gbps = 50.0>) : !m2n.comm<3>, !m2n.dist<4xf32, #m2n.layout<#m2n.mesh<[2]>, [shard<0>]>> -> !m2n.dist<4xf32, #m2n.layout<#m2n.mesh<[1], base = 2>, [replicate]>> {
    // expected-error@+1 {{expected a buffer (src(R), dst(R), scratchK(R), slots(R), quantizer(R), holder(R) or scales(R))}}
    m2n.step 0 copy source(0) [0:2] -> dst(2) [0:2] via nvlink
  }
  return
}

// -----

func.func @f(%c: !m2n.comm<3>, %x: !m2n.dist<4xf32, #m2n.layout<#m2n.mesh<[2]>, [shard<0>]>>) {
  %0 = m2n.schedule %x on %c strategy = "flat" topology(#m2n.topology<domains = [[0, 1, 2]], nvlink_gbps = 450.0, network_gbps = 50.0>) : !m2n.comm<3>, !m2n.dist<4xf32, #m2n.layout<#m2n.mesh<[2]>, [shard<0>]>> -> !m2n.dist<4xf32, #m2n.layout<#m2n.mesh<[1], base = 2>, [replicate]>> {
    // expected-error@+1 {{'m2n.step' op source buffer slots belongs to a quantizing schedule; this one has no scaling}}
    m2n.step 0 copy slots(0) [0:1] -> dst(2) [0:1] via nvlink
  }
  return
}

// -----

func.func @f(%c: !m2n.comm<3>, %x: !m2n.dist<4x8xbf16, #m2n.layout<#m2n.mesh<[2]>, [shard<0>]>>) {
  %0, %1 = m2n.schedule %x on %c strategy = "flat" topology(#m2n.topology<domains = [[0, 1, 2]], nvlink_gbps = 450.0, network_gbps = 50.0>) {scaling = #m2n.scaling<block(2, 4)>} : !m2n.comm<3>, !m2n.dist<4x8xbf16, #m2n.layout<#m2n.mesh<[2]>, [shard<0>]>> -> !m2n.dist<4x8xf8E4M3FN, #m2n.layout<#m2n.mesh<[1], base = 2>, [replicate]>>, !m2n.dist<2x2xf32, #m2n.layout<#m2n.mesh<[1], base = 2>, [replicate]>> {
    // expected-error@+1 {{'m2n.step' op amax reads a source buffer into slots, not dst into slots}}
    m2n.step 0 amax dst(2) [0:1, 0:1] -> slots(0) [0:1, 0:1] via nvlink
  }
  return
}

// -----

func.func @f(%c: !m2n.comm<3>, %x: !m2n.dist<4x8xbf16, #m2n.layout<#m2n.mesh<[2]>, [shard<0>]>>) {
  %0, %1 = m2n.schedule %x on %c strategy = "flat" topology(#m2n.topology<domains = [[0, 1, 2]], nvlink_gbps = 450.0, network_gbps = 50.0>) {scaling = #m2n.scaling<block(2, 4)>} : !m2n.comm<3>, !m2n.dist<4x8xbf16, #m2n.layout<#m2n.mesh<[2]>, [shard<0>]>> -> !m2n.dist<4x8xf8E4M3FN, #m2n.layout<#m2n.mesh<[1], base = 2>, [replicate]>>, !m2n.dist<2x2xf32, #m2n.layout<#m2n.mesh<[1], base = 2>, [replicate]>> {
    // expected-error@+1 {{'m2n.step' op amax computes within one rank, not from rank 0 to rank 1}}
    m2n.step 0 amax src(0) [0:1, 0:2] -> slots(1) [0:1, 0:2] via nvlink
  }
  return
}

// -----

func.func @f(%c: !m2n.comm<3>, %x: !m2n.dist<4x8xbf16, #m2n.layout<#m2n.mesh<[2]>, [shard<0>]>>) {
  %0, %1 = m2n.schedule %x on %c strategy = "flat" topology(#m2n.topology<domains = [[0, 1, 2]], nvlink_gbps = 450.0, network_gbps = 50.0>) {scaling = #m2n.scaling<block(2, 4)>} : !m2n.comm<3>, !m2n.dist<4x8xbf16, #m2n.layout<#m2n.mesh<[2]>, [shard<0>]>> -> !m2n.dist<4x8xf8E4M3FN, #m2n.layout<#m2n.mesh<[1], base = 2>, [replicate]>>, !m2n.dist<2x2xf32, #m2n.layout<#m2n.mesh<[1], base = 2>, [replicate]>> {
    // expected-error@+1 {{'m2n.step' op scale reads a holder table into scales, not slots into scales}}
    m2n.step 0 scale slots(0) [0:1, 0:2] -> scales(2) [0:1, 0:2] via nvlink
  }
  return
}

// -----

func.func @f(%c: !m2n.comm<3>, %x: !m2n.dist<4x8xbf16, #m2n.layout<#m2n.mesh<[2]>, [shard<0>]>>) {
  %0, %1 = m2n.schedule %x on %c strategy = "flat" topology(#m2n.topology<domains = [[0, 1, 2]], nvlink_gbps = 450.0, network_gbps = 50.0>) {scaling = #m2n.scaling<block(2, 4)>} : !m2n.comm<3>, !m2n.dist<4x8xbf16, #m2n.layout<#m2n.mesh<[2]>, [shard<0>]>> -> !m2n.dist<4x8xf8E4M3FN, #m2n.layout<#m2n.mesh<[1], base = 2>, [replicate]>>, !m2n.dist<2x2xf32, #m2n.layout<#m2n.mesh<[1], base = 2>, [replicate]>> {
    // expected-error@+1 {{'m2n.step' op moves src into holder; blocks move only from slots into quantizer and holder tables}}
    m2n.step 0 copy src(0) [0:1, 0:2] -> holder(2) [0:1, 0:2] via nvlink
  }
  return
}

// -----

// Amaxes cross the network only through scratches declared `amaxes`.
func.func @f(%c: !m2n.comm<3>, %x: !m2n.dist<4x8xbf16, #m2n.layout<#m2n.mesh<[2]>, [shard<0>]>>) {
  %0, %1 = m2n.schedule %x on %c strategy = "flat" topology(#m2n.topology<domains = [[0, 1, 2]], nvlink_gbps = 450.0, network_gbps = 50.0>) {scaling = #m2n.scaling<block(2, 4)>} : !m2n.comm<3>, !m2n.dist<4x8xbf16, #m2n.layout<#m2n.mesh<[2]>, [shard<0>]>> -> !m2n.dist<4x8xf8E4M3FN, #m2n.layout<#m2n.mesh<[1], base = 2>, [replicate]>>, !m2n.dist<2x2xf32, #m2n.layout<#m2n.mesh<[1], base = 2>, [replicate]>> {
    m2n.scratch 0 on 0 [1, 2]
    // expected-error@+1 {{'m2n.step' op moves slots into scratch; blocks move only from slots into quantizer and holder tables (copied through scratches staging amaxes)}}
    m2n.step 0 copy slots(0) [0:1, 0:2] -> scratch0(0) [0:1, 0:2] via local
  }
  return
}

// -----

// A scratch staging amaxes passes them on by copy: the max lands in a table.
func.func @f(%c: !m2n.comm<3>, %x: !m2n.dist<4x8xbf16, #m2n.layout<#m2n.mesh<[2]>, [shard<0>]>>) {
  %0, %1 = m2n.schedule %x on %c strategy = "flat" topology(#m2n.topology<domains = [[0, 1, 2]], nvlink_gbps = 450.0, network_gbps = 50.0>) {scaling = #m2n.scaling<block(2, 4)>} : !m2n.comm<3>, !m2n.dist<4x8xbf16, #m2n.layout<#m2n.mesh<[2]>, [shard<0>]>> -> !m2n.dist<4x8xf8E4M3FN, #m2n.layout<#m2n.mesh<[1], base = 2>, [replicate]>>, !m2n.dist<2x2xf32, #m2n.layout<#m2n.mesh<[1], base = 2>, [replicate]>> {
    m2n.scratch 0 on 0 [1, 2] amaxes
    // expected-error@+1 {{'m2n.step' op moves slots into scratch; blocks move only from slots into quantizer and holder tables (copied through scratches staging amaxes)}}
    m2n.step 0 reduce<max> slots(0) [0:1, 0:2] -> scratch0(0) [0:1, 0:2] via local
  }
  return
}

// -----

func.func @f(%c: !m2n.comm<3>, %x: !m2n.dist<4x8xbf16, #m2n.layout<#m2n.mesh<[2]>, [shard<0>]>>) {
  %0, %1 = m2n.schedule %x on %c strategy = "flat" topology(#m2n.topology<domains = [[0, 1, 2]], nvlink_gbps = 450.0, network_gbps = 50.0>) {scaling = #m2n.scaling<block(2, 4)>} : !m2n.comm<3>, !m2n.dist<4x8xbf16, #m2n.layout<#m2n.mesh<[2]>, [shard<0>]>> -> !m2n.dist<4x8xf8E4M3FN, #m2n.layout<#m2n.mesh<[1], base = 2>, [replicate]>>, !m2n.dist<2x2xf32, #m2n.layout<#m2n.mesh<[1], base = 2>, [replicate]>> {
    // expected-error@+1 {{'m2n.step' op reduces with 'sum' but amaxes are max-reduced}}
    m2n.step 0 reduce<sum> slots(0) [0:1, 0:2] -> holder(2) [0:1, 0:2] via nvlink
  }
  return
}

// -----

func.func @f(%c: !m2n.comm<3>, %x: !m2n.dist<4x8xbf16, #m2n.layout<#m2n.mesh<[2]>, [shard<0>]>>) {
  %0, %1 = m2n.schedule %x on %c strategy = "flat" topology(#m2n.topology<domains = [[0, 1, 2]], nvlink_gbps = 450.0, network_gbps = 50.0>) {scaling = #m2n.scaling<block(2, 4)>} : !m2n.comm<3>, !m2n.dist<4x8xbf16, #m2n.layout<#m2n.mesh<[2]>, [shard<0>]>> -> !m2n.dist<4x8xf8E4M3FN, #m2n.layout<#m2n.mesh<[1], base = 2>, [replicate]>>, !m2n.dist<2x2xf32, #m2n.layout<#m2n.mesh<[1], base = 2>, [replicate]>> {
    // expected-error@+1 {{'m2n.step' op destination box leaves its buffer in dimension 0 (extent 1)}}
    m2n.step 0 amax src(0) [0:2, 0:2] -> slots(0) [0:2, 0:2] via local
  }
  return
}

// -----

func.func @f(%c: !m2n.comm<3>, %x: !m2n.dist<4x8xbf16, #m2n.layout<#m2n.mesh<[2]>, [shard<0>]>>) {
  // expected-error@+1 {{'m2n.schedule' op with scaling block(2, 4) needs a second result for the scales}}
  %0 = m2n.schedule %x on %c strategy = "flat" topology(#m2n.topology<domains = [[0, 1, 2]], nvlink_gbps = 450.0, network_gbps = 50.0>) {scaling = #m2n.scaling<block(2, 4)>} : !m2n.comm<3>, !m2n.dist<4x8xbf16, #m2n.layout<#m2n.mesh<[2]>, [shard<0>]>> -> !m2n.dist<4x8xf8E4M3FN, #m2n.layout<#m2n.mesh<[1], base = 2>, [replicate]>> {
  }
  return
}

// -----

func.func @f(%c: !m2n.comm<3>, %x: !m2n.dist<4xf32, #m2n.layout<#m2n.mesh<[2]>, [shard<0>]>>) {
  %0 = m2n.schedule %x on %c strategy = "flat" topology(#m2n.topology<domains = [[0, 1, 2]], nvlink_gbps = 450.0, network_gbps = 50.0>) : !m2n.comm<3>, !m2n.dist<4xf32, #m2n.layout<#m2n.mesh<[2]>, [shard<0>]>> -> !m2n.dist<4xf32, #m2n.layout<#m2n.mesh<[1], base = 2>, [replicate]>> {
    // expected-error@+1 {{unknown link class 'pcie'; expected local, nvlink or network}}
    m2n.step 0 copy src(0) [0:2] -> dst(2) [0:2] via pcie
  }
  return
}

// -----

func.func @f(%c: !m2n.comm<3>, %x: !m2n.dist<4xf32, #m2n.layout<#m2n.mesh<[2]>, [shard<0>]>>) {
  %0 = m2n.schedule %x on %c strategy = "flat" topology(#m2n.topology<domains = [[0, 1, 2]], nvlink_gbps = 450.0, network_gbps = 50.0>) : !m2n.comm<3>, !m2n.dist<4xf32, #m2n.layout<#m2n.mesh<[2]>, [shard<0>]>> -> !m2n.dist<4xf32, #m2n.layout<#m2n.mesh<[1], base = 2>, [replicate]>> {
    // expected-error@+1 {{source and destination boxes differ in size}}
    m2n.step 0 copy src(0) [0:2] -> dst(2) [0:3] via nvlink
  }
  return
}

// -----

// expected-error@+1 {{'m2n.reshard_fn' op takes two block arguments: the input (!m2n.dist) and the communicator (!m2n.comm)}}
m2n.reshard_fn @r {
^bb0(%c: !m2n.comm<2>):
  m2n.yield %c : !m2n.comm<2>
}

// -----

// expected-error@+1 {{'m2n.reshard_fn' op must yield the result of one m2n.reshard, m2n.plan, m2n.schedule or m2n.program of its arguments}}
m2n.reshard_fn @r {
^bb0(%x: !m2n.dist<4xf32, #m2n.layout<#m2n.mesh<[2]>, [shard<0>]>>, %c: !m2n.comm<2>):
  m2n.yield %x : !m2n.dist<4xf32, #m2n.layout<#m2n.mesh<[2]>, [shard<0>]>>
}

// -----

// expected-error@+1 {{'m2n.reshard_fn' op holds exactly one reshard and its m2n.yield}}
m2n.reshard_fn @r {
^bb0(%x: !m2n.dist<4xf32, #m2n.layout<#m2n.mesh<[2]>, [shard<0>]>>, %c: !m2n.comm<2>):
  %0 = m2n.reshard %x on %c : !m2n.comm<2>, !m2n.dist<4xf32, #m2n.layout<#m2n.mesh<[2]>, [shard<0>]>> -> !m2n.dist<4xf32, #m2n.layout<#m2n.mesh<[2]>, [replicate]>>
  %1 = m2n.reshard %x on %c : !m2n.comm<2>, !m2n.dist<4xf32, #m2n.layout<#m2n.mesh<[2]>, [shard<0>]>> -> !m2n.dist<4xf32, #m2n.layout<#m2n.mesh<[2]>, [replicate]>>
  m2n.yield %1 : !m2n.dist<4xf32, #m2n.layout<#m2n.mesh<[2]>, [replicate]>>
}

// -----

func.func @f(%c: !m2n.comm<2>, %x: !m2n.dist<4xf32, #m2n.layout<#m2n.mesh<[2]>, [shard<0>]>>) {
  // expected-error@+1 {{'m2n.call' op 'missing' does not name an m2n.reshard_fn}}
  %0 = m2n.call @missing(%x) on %c : !m2n.comm<2>, !m2n.dist<4xf32, #m2n.layout<#m2n.mesh<[2]>, [shard<0>]>> -> !m2n.dist<4xf32, #m2n.layout<#m2n.mesh<[2]>, [replicate]>>
  return
}

// -----

m2n.reshard_fn @r {
^bb0(%x: !m2n.dist<4xf32, #m2n.layout<#m2n.mesh<[2]>, [shard<0>]>>, %c: !m2n.comm<2>):
  %0 = m2n.reshard %x on %c : !m2n.comm<2>, !m2n.dist<4xf32, #m2n.layout<#m2n.mesh<[2]>, [shard<0>]>> -> !m2n.dist<4xf32, #m2n.layout<#m2n.mesh<[2]>, [replicate]>>
  m2n.yield %0 : !m2n.dist<4xf32, #m2n.layout<#m2n.mesh<[2]>, [replicate]>>
}
func.func @f(%c: !m2n.comm<2>, %x: !m2n.dist<4xf32, #m2n.layout<#m2n.mesh<[2]>, [shard<0>]>>) {
  // expected-error@+1 {{'m2n.call' op types differ from those of @r: '!m2n.comm<2>', '!m2n.dist<4xf32, #m2n.layout<#m2n.mesh<[2]>, [shard<0>]>>' -> '!m2n.dist<4xf32, #m2n.layout<#m2n.mesh<[2]>, [replicate]>>'}}
  %0 = m2n.call @r(%x) on %c : !m2n.comm<2>, !m2n.dist<4xf32, #m2n.layout<#m2n.mesh<[2]>, [shard<0>]>> -> !m2n.dist<4xf32, #m2n.layout<#m2n.mesh<[2]>, [shard<0>]>>
  return
}

// -----

func.func @f(%c: !m2n.comm<8>, %x: !m2n.dist<4x8xbf16, #m2n.layout<#m2n.mesh<[4]>, [shard<0>]>>) {
  // expected-error@+1 {{scaling block(2, 2) quantizes into f8E4M3FN or f8E5M2, not f16}}
  %q, %s = m2n.reshard %x on %c {scaling = #m2n.scaling<block(2, 2)>} : !m2n.comm<8>, !m2n.dist<4x8xbf16, #m2n.layout<#m2n.mesh<[4]>, [shard<0>]>> -> !m2n.dist<4x8xf16, #m2n.layout<#m2n.mesh<[2]>, [shard<1>]>>, !m2n.dist<2x4xf32, #m2n.layout<#m2n.mesh<[2]>, [shard<1>]>>
  return
}

// -----

func.func @f(%c: !m2n.comm<8>, %x: !m2n.dist<4x8xf8E5M2, #m2n.layout<#m2n.mesh<[4]>, [shard<0>]>>) {
  // expected-error@+1 {{scaling tensor quantizes f32, f16 or bf16 elements, not f8E5M2}}
  %q, %s = m2n.reshard %x on %c {scaling = #m2n.scaling<tensor>} : !m2n.comm<8>, !m2n.dist<4x8xf8E5M2, #m2n.layout<#m2n.mesh<[4]>, [shard<0>]>> -> !m2n.dist<4x8xf8E4M3FN, #m2n.layout<#m2n.mesh<[2]>, [shard<1>]>>, !m2n.dist<1x1xf32, #m2n.layout<#m2n.mesh<[2]>, [shard<1>]>>
  return
}

// -----

func.func @f(%c: !m2n.comm<8>, %x: !m2n.dist<4x8xbf16, #m2n.layout<#m2n.mesh<[4]>, [shard<0>]>>) {
  // expected-error@+1 {{scaling mx puts 32 consecutive elements of the last dimension under one scale; the last dimension has 8 elements, not a multiple of 32}}
  %q, %s = m2n.reshard %x on %c {scaling = #m2n.scaling<mx>} : !m2n.comm<8>, !m2n.dist<4x8xbf16, #m2n.layout<#m2n.mesh<[4]>, [shard<0>]>> -> !m2n.dist<4x8xf8E4M3FN, #m2n.layout<#m2n.mesh<[2]>, [shard<1>]>>, !m2n.dist<4x1xf8E8M0FNU, #m2n.layout<#m2n.mesh<[2]>, [shard<1>]>>
  return
}

// -----

func.func @f(%c: !m2n.comm<8>, %x: !m2n.dist<4x8xbf16, #m2n.layout<#m2n.mesh<[4]>, [shard<0>]>>) {
  // expected-error@+1 {{with scaling block(2, 2) needs a second result for the scales}}
  %q = m2n.reshard %x on %c {scaling = #m2n.scaling<block(2, 2)>} : !m2n.comm<8>, !m2n.dist<4x8xbf16, #m2n.layout<#m2n.mesh<[4]>, [shard<0>]>> -> !m2n.dist<4x8xf8E4M3FN, #m2n.layout<#m2n.mesh<[2]>, [shard<1>]>>
  return
}

// -----

func.func @f(%c: !m2n.comm<8>, %x: !m2n.dist<4x8xbf16, #m2n.layout<#m2n.mesh<[4]>, [shard<0>]>>) {
  // expected-error@+1 {{has a scales result but no scaling}}
  %q, %s = m2n.reshard %x on %c : !m2n.comm<8>, !m2n.dist<4x8xbf16, #m2n.layout<#m2n.mesh<[4]>, [shard<0>]>> -> !m2n.dist<4x8xf8E4M3FN, #m2n.layout<#m2n.mesh<[2]>, [shard<1>]>>, !m2n.dist<2x4xf32, #m2n.layout<#m2n.mesh<[2]>, [shard<1>]>>
  return
}

// -----

func.func @f(%c: !m2n.comm<8>, %x: !m2n.dist<4x8xbf16, #m2n.layout<#m2n.mesh<[4]>, [shard<0>]>>) {
  // expected-error@+1 {{has a constant scale and a scaling; the scaling computes its scales from the data}}
  %q, %s = m2n.reshard %x on %c {scale = 2.0 : f32, scaling = #m2n.scaling<block(2, 2)>} : !m2n.comm<8>, !m2n.dist<4x8xbf16, #m2n.layout<#m2n.mesh<[4]>, [shard<0>]>> -> !m2n.dist<4x8xf8E4M3FN, #m2n.layout<#m2n.mesh<[2]>, [shard<1>]>>, !m2n.dist<2x4xf32, #m2n.layout<#m2n.mesh<[2]>, [shard<1>]>>
  return
}

// -----

func.func @f(%c: !m2n.comm<8>, %x: !m2n.dist<4x8xbf16, #m2n.layout<#m2n.mesh<[4]>, [shard<0>]>>) {
  // expected-error@+1 {{scales of scaling block(2, 2) are 'f32', not 'bf16'}}
  %q, %s = m2n.reshard %x on %c {scaling = #m2n.scaling<block(2, 2)>} : !m2n.comm<8>, !m2n.dist<4x8xbf16, #m2n.layout<#m2n.mesh<[4]>, [shard<0>]>> -> !m2n.dist<4x8xf8E4M3FN, #m2n.layout<#m2n.mesh<[2]>, [shard<1>]>>, !m2n.dist<2x4xbf16, #m2n.layout<#m2n.mesh<[2]>, [shard<1>]>>
  return
}

// -----

func.func @f(%c: !m2n.comm<8>, %x: !m2n.dist<4x64xbf16, #m2n.layout<#m2n.mesh<[4]>, [shard<0>]>>) {
  // expected-error@+1 {{scales of scaling mx are 'f8E8M0FNU', not 'f32'}}
  %q, %s = m2n.reshard %x on %c {scaling = #m2n.scaling<mx>} : !m2n.comm<8>, !m2n.dist<4x64xbf16, #m2n.layout<#m2n.mesh<[4]>, [shard<0>]>> -> !m2n.dist<4x64xf8E4M3FN, #m2n.layout<#m2n.mesh<[2]>, [shard<1>]>>, !m2n.dist<4x2xf32, #m2n.layout<#m2n.mesh<[2]>, [shard<1>]>>
  return
}

// -----

func.func @f(%c: !m2n.comm<8>, %x: !m2n.dist<4x8xbf16, #m2n.layout<#m2n.mesh<[4]>, [shard<0>]>>) {
  // expected-error@+1 {{scales of scaling block(3, 3) over [4, 8] have shape [2, 3], not [2, 4]}}
  %q, %s = m2n.reshard %x on %c {scaling = #m2n.scaling<block(3, 3)>} : !m2n.comm<8>, !m2n.dist<4x8xbf16, #m2n.layout<#m2n.mesh<[4]>, [shard<0>]>> -> !m2n.dist<4x8xf8E4M3FN, #m2n.layout<#m2n.mesh<[2]>, [shard<1>]>>, !m2n.dist<2x4xf32, #m2n.layout<#m2n.mesh<[2]>, [shard<1>]>>
  return
}

// -----

func.func @f(%c: !m2n.comm<8>, %x: !m2n.dist<4x8xbf16, #m2n.layout<#m2n.mesh<[4]>, [shard<0>]>>) {
  // expected-error@+1 {{scales are laid out as the quantized result without its explicit boundaries (#m2n.layout<#m2n.mesh<[2]>, [shard<1>]>: each rank holds the scales of its blocks), not as #m2n.layout<#m2n.mesh<[4]>, [shard<0>]>}}
  %q, %s = m2n.reshard %x on %c {scaling = #m2n.scaling<block(2, 2)>} : !m2n.comm<8>, !m2n.dist<4x8xbf16, #m2n.layout<#m2n.mesh<[4]>, [shard<0>]>> -> !m2n.dist<4x8xf8E4M3FN, #m2n.layout<#m2n.mesh<[2]>, [shard<1>]>>, !m2n.dist<2x4xf32, #m2n.layout<#m2n.mesh<[4]>, [shard<0>]>>
  return
}

// -----

func.func @f(%c: !m2n.comm<8>, %x: !m2n.dist<4x8xbf16, #m2n.layout<#m2n.mesh<[4]>, [partial<sum>]>>) {
  // expected-error@+1 {{casts a partial source from}}
  %q, %s = m2n.reshard %x on %c {scaling = #m2n.scaling<block(2, 2)>} : !m2n.comm<8>, !m2n.dist<4x8xbf16, #m2n.layout<#m2n.mesh<[4]>, [partial<sum>]>> -> !m2n.dist<4x8xf8E4M3FN, #m2n.layout<#m2n.mesh<[2]>, [shard<1>]>>, !m2n.dist<2x4xf32, #m2n.layout<#m2n.mesh<[2]>, [shard<1>]>>
  return
}

// -----

// expected-error@+1 {{a scaling block needs positive sizes, not 0 x 4}}
#bad = #m2n.scaling<block(0, 4)>

// -----

// expected-error@+1 {{unknown scaling 'blocks'; expected tensor, block(R, C) or mx}}
#bad = #m2n.scaling<blocks>

// -----

//===----------------------------------------------------------------------===//
// Explicit boundaries
//===----------------------------------------------------------------------===//

// expected-error@+1 {{shard<0> has one boundary; give one more than its parts}}
func.func private @f(!m2n.dist<7xf32, #m2n.layout<#m2n.mesh<[1]>, [shard<0, [0]>]>>)

// -----

// expected-error@+1 {{mesh axis 0 gives 3 boundaries of dimension 0 but the mesh axes sharding it cut it into 3 parts (4 boundaries)}}
func.func private @f(!m2n.dist<7xf32, #m2n.layout<#m2n.mesh<[3]>, [shard<0, [0, 2, 7]>]>>)

// -----

// Two axes split dimension 0 into 2 x 3 parts.
// expected-error@+1 {{mesh axis 0 gives 4 boundaries of dimension 0 but the mesh axes sharding it cut it into 6 parts (7 boundaries)}}
func.func private @f(!m2n.dist<7x4xf32, #m2n.layout<#m2n.mesh<[2, 2, 3]>, [shard<0, [0, 2, 5, 7]>, shard<1>, shard<0>]>>)

// -----

// expected-error@+1 {{mesh axis 1 has boundaries of dimension 0, but mesh axis 0 shards it first: the first axis carries every part's boundaries}}
func.func private @f(!m2n.dist<8xf32, #m2n.layout<#m2n.mesh<[2, 2]>, [shard<0>, shard<0, [0, 1, 2, 3, 8]>]>>)

// -----

// expected-error@+1 {{mesh axis 0: the boundaries of dimension 0 start at 1, not 0}}
func.func private @f(!m2n.dist<7xf32, #m2n.layout<#m2n.mesh<[3]>, [shard<0, [1, 2, 5, 7]>]>>)

// -----

// expected-error@+1 {{mesh axis 0: the boundaries of dimension 0 decrease (5 then 2)}}
func.func private @f(!m2n.dist<7xf32, #m2n.layout<#m2n.mesh<[3]>, [shard<0, [0, 5, 2, 7]>]>>)

// -----

// expected-error@+1 {{mesh axis 1: the boundaries of dimension 1 end at 6, not at its extent 7}}
func.func private @f(!m2n.dist<2x7xf32, #m2n.layout<#m2n.mesh<[2, 3]>, [replicate, shard<1, [0, 2, 5, 6]>]>>)

// -----

// A collective that gathers one of two axes splitting a dimension at
// explicit boundaries would leave boundaries that count the wrong parts.
func.func @f(%c: !m2n.comm<4>, %x: !m2n.dist<8xf32, #m2n.layout<#m2n.mesh<[2, 2]>, [shard<0, [0, 1, 4, 5, 8]>, shard<0>]>>) {
  // expected-error@+1 {{'m2n.all_gather' op mesh axis 0 splits dimension 0 at explicit boundaries over several mesh axes; a collective keeps or gathers all of them: write m2n.reshard to the layout wanted}}
  %0 = m2n.all_gather %x on %c mesh_axes = [1] : !m2n.comm<4>, !m2n.dist<8xf32, #m2n.layout<#m2n.mesh<[2, 2]>, [shard<0, [0, 1, 4, 5, 8]>, shard<0>]>> -> !m2n.dist<8xf32, #m2n.layout<#m2n.mesh<[2, 2]>, [shard<0, [0, 1, 8]>, replicate]>>
  return
}

// -----

// An all_to_all onto a dimension split at explicit boundaries by another
// axis would change its parts.
func.func @f(%c: !m2n.comm<4>, %x: !m2n.dist<8x4xf32, #m2n.layout<#m2n.mesh<[2, 2]>, [shard<0, [0, 3, 8]>, shard<1>]>>) {
  // expected-error@+1 {{'m2n.all_to_all' op mesh axis 0 splits dimension 0 at explicit boundaries over several mesh axes; a collective keeps or gathers all of them}}
  %0 = m2n.all_to_all %x on %c mesh_axes = [1] split_dim = 0 : !m2n.comm<4>, !m2n.dist<8x4xf32, #m2n.layout<#m2n.mesh<[2, 2]>, [shard<0, [0, 3, 8]>, shard<1>]>> -> !m2n.dist<8x4xf32, #m2n.layout<#m2n.mesh<[2, 2]>, [shard<0, [0, 1, 2, 3, 8]>, shard<0>]>>
  return
}

// -----

// A reduce_scatter result may split the scattered dimension at explicit
// boundaries only where no other mesh axis splits it.
func.func @f(%c: !m2n.comm<4>, %x: !m2n.dist<8xf32, #m2n.layout<#m2n.mesh<[2, 2]>, [shard<0>, partial<sum>]>>) {
  // expected-error@+1 {{'m2n.reduce_scatter' op result type must be '!m2n.dist<8xf32, #m2n.layout<#m2n.mesh<[2, 2]>, [shard<0>, shard<0>]>>'}}
  %0 = m2n.reduce_scatter %x on %c mesh_axes = [1] scatter_dim = 0 : !m2n.comm<4>, !m2n.dist<8xf32, #m2n.layout<#m2n.mesh<[2, 2]>, [shard<0>, partial<sum>]>> -> !m2n.dist<8xf32, #m2n.layout<#m2n.mesh<[2, 2]>, [shard<0, [0, 1, 2, 3, 8]>, shard<0>]>>
  return
}

// -----

// The scales of a quantizing reshard into explicit boundaries name the
// result's placements without them.
func.func @f(%c: !m2n.comm<8>, %x: !m2n.dist<8x8xbf16, #m2n.layout<#m2n.mesh<[4]>, [shard<0>]>>) {
  // expected-error@+1 {{scales are laid out as the quantized result without its explicit boundaries (#m2n.layout<#m2n.mesh<[2], base = 4>, [shard<0>]>: each rank holds the scales of its blocks), not as #m2n.layout<#m2n.mesh<[2], base = 4>, [replicate]>}}
  %q, %s = m2n.reshard %x on %c {scaling = #m2n.scaling<block(2, 2)>} : !m2n.comm<8>, !m2n.dist<8x8xbf16, #m2n.layout<#m2n.mesh<[4]>, [shard<0>]>> -> !m2n.dist<8x8xf8E4M3FN, #m2n.layout<#m2n.mesh<[2], base = 4>, [shard<0, [0, 3, 8]>]>>, !m2n.dist<4x4xf32, #m2n.layout<#m2n.mesh<[2], base = 4>, [replicate]>>
  return
}
