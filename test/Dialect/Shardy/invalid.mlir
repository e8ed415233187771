// Malformed Shardy syntax (a parse error that names what is wrong) and ops
// Shardy's own verifier refuses (the same diagnostic).
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

// -----

// Shardy's all_to_all rules (its collective_verification tests): each
// dimension is the source or target of one parameter, sources ascending.
sdy.mesh @mesh = <["x"=2, "y"=2]>
func.func @a2a_same_target(%arg0 : tensor<8x4x4xf32> {sdy.sharding=#sdy.sharding<@mesh, [{"x"}, {}, {"y"}]>}) -> tensor<8x4x4xf32> {
  // expected-error@+1 {{overlapping source/target dimensions in all-to-all params: 1}}
  %0 = sdy.all_to_all [{"x"}: 0->1, {"y"}: 2->1] %arg0 out_sharding=<@mesh, [{}, {"x", "y"}, {}]> : tensor<8x4x4xf32>
  return %0 : tensor<8x4x4xf32>
}

// -----

sdy.mesh @mesh = <["x"=2, "y"=2]>
func.func @a2a_same_source(%arg0 : tensor<8x4x4xf32> {sdy.sharding=#sdy.sharding<@mesh, [{"x", "y"}, {}, {}]>}) -> tensor<8x4x4xf32> {
  // expected-error@+1 {{overlapping source/target dimensions in all-to-all params: 0}}
  %0 = sdy.all_to_all [{"x"}: 0->1, {"y"}: 0->2] %arg0 out_sharding=<@mesh, [{}, {"x"}, {"y"}]> : tensor<8x4x4xf32>
  return %0 : tensor<8x4x4xf32>
}

// -----

sdy.mesh @mesh = <["x"=2, "y"=2]>
func.func @a2a_swapped(%arg0 : tensor<8x4xf32> {sdy.sharding=#sdy.sharding<@mesh, [{"y"}, {"x"}]>}) -> tensor<8x4xf32> {
  // expected-error@+1 {{overlapping source/target dimensions in all-to-all params: 0}}
  %0 = sdy.all_to_all [{"x"}: 1->0, {"y"}: 0->1] %arg0 out_sharding=<@mesh, [{"x"}, {"y"}]> : tensor<8x4xf32>
  return %0 : tensor<8x4xf32>
}

// -----

sdy.mesh @mesh = <["x"=2, "y"=2]>
func.func @a2a_one_dim(%arg0 : tensor<8x4xf32> {sdy.sharding=#sdy.sharding<@mesh, [{"y"}, {}]>}) -> tensor<8x4xf32> {
  // expected-error@+1 {{overlapping source/target dimensions in all-to-all params: 0}}
  %0 = sdy.all_to_all [{"y"}: 0->0] %arg0 out_sharding=<@mesh, [{"y"}, {}]> : tensor<8x4xf32>
  return %0 : tensor<8x4xf32>
}

// -----

sdy.mesh @mesh = <["x"=2, "y"=2]>
func.func @a2a_descending(%arg0 : tensor<8x4x4x4xf32> {sdy.sharding=#sdy.sharding<@mesh, [{"x"}, {}, {"y"}, {}]>}) -> tensor<8x4x4x4xf32> {
  // expected-error@+1 {{source dimensions are not sorted in ascending order: 0 appears after 2}}
  %0 = sdy.all_to_all [{"y"}: 2->1, {"x"}: 0->3] %arg0 out_sharding=<@mesh, [{}, {"y"}, {}, {"x"}]> : tensor<8x4x4x4xf32>
  return %0 : tensor<8x4x4x4xf32>
}
