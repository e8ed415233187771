// Malformed Shardy syntax: a parse error that names what is wrong.
// RUN: m2n-opt %s --split-input-file --verify-diagnostics

sdy.mesh @mesh = <["x"=2]>
// expected-error@+1 {{expected a priority p<N>, got 'q1'}}
func.func @f(%a: tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}q1]>})

// -----

sdy.mesh @mesh = <["x"=2]>
// expected-error@+1 {{expected a priority p<N>, got 'p01'}}
func.func @f(%a: tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}p01]>})

// -----

sdy.mesh @mesh = <["x"=2]>
// expected-error@+1 {{unreduced axes reduce with sum, max or min, not 'prod'}}
func.func @f(%a: tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}], unreduced=prod{"x"}>})

// -----

sdy.mesh @mesh = <["x"=2]>
// expected-error@+1 {{expected 'replicated' or 'unreduced', got 'partial'}}
func.func @f(%a: tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}], partial={"x"}>})

// -----

// expected-error@+1 {{expected 'sharding' or 'memory_kind', got 'layout'}}
func.func @f(%a: !mpmd.mesh_tensor<"m", tensor<8xf32>, layout="x">)

// -----

func.func @f(%arg0: !mpmd.mesh_tensor<"m1", tensor<4xf32>>) {
  // expected-error@+1 {{expected 'stage', 'in_shardings' or 'out_shardings', got 'stages'}}
  %0 = mpmd.fragment<mesh="m1", origin=[], stages=1> (%arg0) (%a: tensor<4xf32>) {
    mpmd.return %a : tensor<4xf32>
  } : (!mpmd.mesh_tensor<"m1", tensor<4xf32>>) -> !mpmd.mesh_tensor<"m1", tensor<4xf32>>
  return
}

// -----

// expected-error@+1 {{mesh axis "x" is named twice}}
sdy.mesh @twice = <["x"=2, "x"=2]>

// -----

// expected-error@+1 {{mesh axis "x" has size 0}}
sdy.mesh @empty_axis = <["x"=0]>

// -----

// expected-error@+1 {{device_ids must be a permutation of 0..1}}
sdy.mesh @ids = <["x"=2], device_ids=[0, 2]>

// -----

func.func @f(%arg0: tensor<4x4xf32>) {
  // expected-error@+1 {{'sdy.all_reduce' op needs one list of reduction axes}}
  %0 = "sdy.all_reduce"(%arg0) {reductionAxes = [], kind = "sum", outSharding = #sdy.sharding<mesh<["x"=2]>, [{}, {}]>} : (tensor<4x4xf32>) -> tensor<4x4xf32>
  return
}

// -----

func.func @f(%arg0: tensor<4x4xf32>) {
  // expected-error@+1 {{'sdy.all_gather' op needs one axis list per dimension of the tensor}}
  %0 = sdy.all_gather [{}] %arg0 out_sharding=<mesh<["x"=2]>, [{}, {}]> : tensor<4x4xf32>
  return
}
