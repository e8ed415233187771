// The whole pipeline on quantizing reshards (docs/fp8-scaling.md): each is
// outlined with its scales (the function yields both, its calls return
// both), planned, routed, lowered, verified, compiled into the kernel's
// quantizing items (amax, scale and quantize op codes) and written into
// the artifact, whose programs keep their scaling, kinds and block
// lookups. The runtime's host backend runs the artifact and m2n-run
// checks every destination element and scale bit for bit against the
// reference quantizer, across NVLink domains too.
//
// RUN: rm -rf %t && mkdir -p %t
// RUN: m2n-opt %s "--m2n-pipeline=artifact=%t/q.m2n max-ctas=4" | FileCheck %s --check-prefix=IR
// RUN: m2n-artifact-dump %t/q.m2n | FileCheck %s
// RUN: %python %S/../Tools/m2n-artifact-dump/read_artifact.py %t/q.m2n | FileCheck %s --check-prefix=DOC
// RUN: m2n-run %t/q.m2n --seed 11 | FileCheck %s --check-prefix=RAN
// RUN: m2n-run %s --seed 12 "--pipeline=strategy=flat topology=%S/../Dialect/M2N/Inputs/domains-of-4.json" | FileCheck %s --check-prefix=RAN
// RUN: %if ptxas %{ m2n-artifact-dump %t/q.m2n --ptx | sed -n '/^--- PTX ---$/,$p' | tail -n +2 > %t/q.ptx %}
// RUN: %if ptxas %{ %ptxas -arch=sm_90a %t/q.ptx -o %t/q.cubin %}
//
// The GPU machine's quantizing cases (every fast-path variant: f16, f32,
// e5m2, straddling vectors), checked here on the host with the kernel's
// launch (256 threads: the kernel quantizes) and PTX.
// RUN: m2n-opt %m2n_src_root/test/GPU/quantizing.mlir "--m2n-pipeline=artifact=%t/gpu.m2n" -o /dev/null
// RUN: m2n-run %t/gpu.m2n --seed 13 | FileCheck %s --check-prefix=GPUCASES
// RUN: m2n-artifact-dump %t/gpu.m2n | FileCheck %s --check-prefix=GPULAUNCH
// RUN: %if ptxas %{ m2n-artifact-dump %t/gpu.m2n --ptx | sed -n '/^--- PTX ---$/,$p' | tail -n +2 > %t/gpu.ptx %}
// RUN: %if ptxas %{ %ptxas -arch=sm_90a %t/gpu.ptx -o %t/gpu.cubin %}
// GPUCASES: 7 passed, 0 failed
// GPULAUNCH: kernel m2n_transfer: {{[0-9]+}} CTAs x 256 threads
// GPULAUNCH: launch 1 walker x 256 threads
//
// The MX scales themselves move as data (f8E8M0FNU bytes) like any tensor.
// RUN: m2n-sim %S/../Dialect/M2N/Inputs/e8m0-scales.mlir | FileCheck %s --check-prefix=SIM
// SIM: m2n-sim: PASS: 1 plan, 8 transfers, 32 destination elements checked

// IR: m2n.kernel_ops = {{{.*}}vector = array<i32: {{.*}}54, 55, 56, 59, 64, 68, 71>}
// IR-LABEL: func.func @block
// IR: %{{.*}}, %{{.*}} = m2n.call @reshard_0(%{{.*}}) on %{{.*}} : {{.*}} -> !m2n.dist<256x64xf8E4M3FN, {{.*}}>, !m2n.dist<2x1xf32
// IR-LABEL: m2n.reshard_fn @reshard_0
// IR: m2n.program {{.*}} {scaling = #m2n.scaling<block(128, 128)>}
// IR: m2n.yield %{{.*}}, %{{.*}} : !m2n.dist<256x64xf8E4M3FN, {{.*}}>, !m2n.dist<2x1xf32

// CHECK: m2n artifact version 19
// CHECK: reshard @block#0: bf16 -> f8E4M3FN scaling block(128, 128)[256x64] hierarchical
// CHECK: item amax vector src(0)+0 -> slots(0)+0 32B times 128 by (+32,+0) blocks 0+0/128
// CHECK: item scale vector holder({{[0-9]}})+0 -> scales({{[0-9]}})+0 4B
// CHECK: reshard @mx#1: bf16 -> f8E5M2 scaling mx[2x3x96] hierarchical
// CHECK: reshard @tensor#2: f16 -> f8E4M3FN scaling tensor[1001] hierarchical

// DOC: reshard @block#0: bf16 -> f8E4M3FN scaling block(128, 128)[256x64] hierarchical
// DOC: rank 0: {{.*}} amax or scale items
// DOC: reshard @mx#1: bf16 -> f8E5M2 scaling mx[2x3x96] hierarchical

// RAN: @block#0{{ +}}PASS
// RAN: @mx#1{{ +}}PASS
// RAN: @tensor#2{{ +}}PASS
// A group of a quantizing member and a plain one: one launch, both checked.
// RAN: group refit{{ +}}PASS  2 members
// RAN: 6 passed, 0 failed

func.func @block(%c: !m2n.comm<4>, %w: !m2n.dist<256x64xbf16, #m2n.layout<#m2n.mesh<[4]>, [shard<1>]>>)
    -> (!m2n.dist<256x64xf8E4M3FN, #m2n.layout<#m2n.mesh<[2]>, [shard<0>]>>, !m2n.dist<2x1xf32, #m2n.layout<#m2n.mesh<[2]>, [shard<0>]>>) {
  %q, %s = m2n.reshard %w on %c {scaling = #m2n.scaling<block(128, 128)>} : !m2n.comm<4>, !m2n.dist<256x64xbf16, #m2n.layout<#m2n.mesh<[4]>, [shard<1>]>> -> !m2n.dist<256x64xf8E4M3FN, #m2n.layout<#m2n.mesh<[2]>, [shard<0>]>>, !m2n.dist<2x1xf32, #m2n.layout<#m2n.mesh<[2]>, [shard<0>]>>
  return %q, %s : !m2n.dist<256x64xf8E4M3FN, #m2n.layout<#m2n.mesh<[2]>, [shard<0>]>>, !m2n.dist<2x1xf32, #m2n.layout<#m2n.mesh<[2]>, [shard<0>]>>
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

func.func @refit(%c: !m2n.comm<4>, %w: !m2n.dist<256x64xbf16, #m2n.layout<#m2n.mesh<[4]>, [shard<1>]>>, %v: !m2n.dist<16x8xbf16, #m2n.layout<#m2n.mesh<[2]>, [shard<0>]>>) {
  %q, %s = m2n.reshard %w on %c {scaling = #m2n.scaling<block(128, 128)>} : !m2n.comm<4>, !m2n.dist<256x64xbf16, #m2n.layout<#m2n.mesh<[4]>, [shard<1>]>> -> !m2n.dist<256x64xf8E4M3FN, #m2n.layout<#m2n.mesh<[2]>, [shard<0>]>>, !m2n.dist<2x1xf32, #m2n.layout<#m2n.mesh<[2]>, [shard<0>]>>
  %n = m2n.reshard %v on %c : !m2n.comm<4>, !m2n.dist<16x8xbf16, #m2n.layout<#m2n.mesh<[2]>, [shard<0>]>> -> !m2n.dist<16x8xbf16, #m2n.layout<#m2n.mesh<[4]>, [replicate]>>
  m2n.group "refit"(%q, %n) : !m2n.dist<256x64xf8E4M3FN, #m2n.layout<#m2n.mesh<[2]>, [shard<0>]>>, !m2n.dist<16x8xbf16, #m2n.layout<#m2n.mesh<[4]>, [replicate]>>
  return
}
