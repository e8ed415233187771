// An RL refit written as a Shardy MPMD program: on the trainer's mesh (8
// devices, DP2 x TP4) a fragment applies the optimizer step, then three
// weights move to the generator's mesh (4 devices, DP2 x TP2) with
// mpmd.transfer, where a fragment consumes them. m2n imports each transfer
// as one M-to-N reshard (the fragments stay as they are) and moves exactly
// the intersections of the two layouts.
//
//   build/bin/m2n-opt examples/integration/mpmd_refit.mlir --m2n-import-sdy | build/bin/m2n-run -
//
// Devices: the topology's meshes one after the other (trainer 0-7,
// generator 8-11), row-major over each mesh's axes.
func.func @refit(
    // Column-parallel projection and its update: rows over the trainer's TP.
    %qkv: !mpmd.mesh_tensor<"trainer", tensor<1024x512xbf16>, sharding=<@mesh, [{"tp"}, {}]>>,
    %step: !mpmd.mesh_tensor<"trainer", tensor<1024x512xbf16>, sharding=<@mesh, [{"tp"}, {}]>>,
    // An embedding split over all 8 trainer devices (125 rows each).
    %embed: !mpmd.mesh_tensor<"trainer", tensor<1000x64xf32>, sharding=<@mesh, [{"dp", "tp"}, {}]>>,
    // A replicated norm scale.
    %norm: !mpmd.mesh_tensor<"trainer", tensor<512xbf16>>)
    -> (!mpmd.mesh_tensor<"generator", tensor<1024x512xbf16>, sharding=<@mesh, [{}, {"tp"}]>>,
        !mpmd.mesh_tensor<"generator", tensor<1000x64xf32>, sharding=<@mesh, [{"tp"}, {}]>>,
        !mpmd.mesh_tensor<"generator", tensor<512xbf16>>)
    attributes {topology = #mpmd.topology<<"trainer": <["dp"=2, "tp"=4]>>, <"generator": <["dp"=2, "tp"=2]>>>} {
  %updated = mpmd.fragment<mesh="trainer", origin=["optimizer"]> (%qkv, %step) (%w: tensor<1024x512xbf16>, %d: tensor<1024x512xbf16>) {
    %new = arith.subf %w, %d : tensor<1024x512xbf16>
    mpmd.return %new : tensor<1024x512xbf16>
  } : (!mpmd.mesh_tensor<"trainer", tensor<1024x512xbf16>, sharding=<@mesh, [{"tp"}, {}]>>, !mpmd.mesh_tensor<"trainer", tensor<1024x512xbf16>, sharding=<@mesh, [{"tp"}, {}]>>) -> !mpmd.mesh_tensor<"trainer", tensor<1024x512xbf16>, sharding=<@mesh, [{"tp"}, {}]>>
  %0 = mpmd.transfer %updated : (!mpmd.mesh_tensor<"trainer", tensor<1024x512xbf16>, sharding=<@mesh, [{"tp"}, {}]>>) -> !mpmd.mesh_tensor<"generator", tensor<1024x512xbf16>, sharding=<@mesh, [{}, {"tp"}]>>
  %1 = mpmd.transfer %embed : (!mpmd.mesh_tensor<"trainer", tensor<1000x64xf32>, sharding=<@mesh, [{"dp", "tp"}, {}]>>) -> !mpmd.mesh_tensor<"generator", tensor<1000x64xf32>, sharding=<@mesh, [{"tp"}, {}]>>
  %2 = mpmd.transfer %norm : (!mpmd.mesh_tensor<"trainer", tensor<512xbf16>>) -> !mpmd.mesh_tensor<"generator", tensor<512xbf16>>
  %served = mpmd.fragment<mesh="generator", origin=["load_weights"]> (%0) (%w: tensor<1024x512xbf16>) {
    mpmd.return %w : tensor<1024x512xbf16>
  } : (!mpmd.mesh_tensor<"generator", tensor<1024x512xbf16>, sharding=<@mesh, [{}, {"tp"}]>>) -> !mpmd.mesh_tensor<"generator", tensor<1024x512xbf16>, sharding=<@mesh, [{}, {"tp"}]>>
  return %served, %1, %2 : !mpmd.mesh_tensor<"generator", tensor<1024x512xbf16>, sharding=<@mesh, [{}, {"tp"}]>>, !mpmd.mesh_tensor<"generator", tensor<1000x64xf32>, sharding=<@mesh, [{"tp"}, {}]>>, !mpmd.mesh_tensor<"generator", tensor<512xbf16>>
}
