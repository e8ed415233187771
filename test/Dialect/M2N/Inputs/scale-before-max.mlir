// A scale write that does not wait for the max-reduction of a straddling
// block (the copy already filled the entry): verify-schedule-scaling.mlir
// names it; m2n-sim --no-verify counts the shares an entry has heard from.
func.func @f(%c: !m2n.comm<5>, %w: !m2n.dist<4x6xbf16, #m2n.layout<#m2n.mesh<[3]>, [shard<1>]>>) {
  %q, %s = m2n.schedule %w on %c strategy = "flat" topology(#m2n.topology<domain_size = 5, nvlink_gbps = 4.500000e+02, network_gbps = 5.000000e+01>) {scaling = #m2n.scaling<block(2, 4)>} : !m2n.comm<5>, !m2n.dist<4x6xbf16, #m2n.layout<#m2n.mesh<[3]>, [shard<1>]>> -> !m2n.dist<4x6xf8E4M3FN, #m2n.layout<#m2n.mesh<[2], base = 3>, [shard<0>]>>, !m2n.dist<2x2xf32, #m2n.layout<#m2n.mesh<[2], base = 3>, [shard<0>]>> {
    m2n.step 0 amax src(0) [0:2, 0:1] -> slots(0) [0:2, 0:1] via local
    m2n.step 1 amax src(1) [0:2, 0:1] -> slots(1) [0:2, 0:1] via local
    m2n.step 2 amax src(2) [0:2, 0:1] -> slots(2) [0:2, 0:1] via local
    m2n.step 3 copy slots(0) [0:2, 0:1] -> quantizer(0) [0:2, 0:1] via local after [0]
    m2n.step 4 copy slots(1) [0:2, 0:1] -> quantizer(1) [0:2, 0:1] via local after [1]
    m2n.step 5 copy slots(2) [0:2, 0:1] -> quantizer(2) [0:2, 0:1] via local after [2]
    m2n.step 6 copy slots(0) [0:1, 0:1] -> holder(3) [0:1, 0:1] via nvlink after [0]
    m2n.step 7 copy slots(2) [0:1, 0:1] -> holder(3) [0:1, 1:2] via nvlink after [2]
    m2n.step 8 copy slots(0) [1:2, 0:1] -> holder(4) [0:1, 0:1] via nvlink after [0]
    m2n.step 9 copy slots(2) [1:2, 0:1] -> holder(4) [0:1, 1:2] via nvlink after [2]
    m2n.step 10 reduce<max> slots(1) [0:2, 0:1] -> quantizer(0) [0:2, 0:1] via nvlink after [1, 3]
    m2n.step 11 reduce<max> slots(0) [0:2, 0:1] -> quantizer(1) [0:2, 0:1] via nvlink after [0, 4]
    m2n.step 12 reduce<max> slots(1) [0:1, 0:1] -> holder(3) [0:1, 0:1] via nvlink after [1, 6]
    m2n.step 13 reduce<max> slots(1) [1:2, 0:1] -> holder(4) [0:1, 0:1] via nvlink after [1, 8]
    m2n.step 14 scale holder(3) [0:1, 0:2] -> scales(3) [0:1, 0:2] via local after [6, 7]
    m2n.step 15 scale holder(4) [0:1, 0:2] -> scales(4) [0:1, 0:2] via local after [8, 9, 13]
    m2n.step 16 copy src(0) [0:2, 0:2] -> dst(3) [0:2, 0:2] via nvlink after [3, 10]
    m2n.step 17 copy src(1) [0:2, 0:2] -> dst(3) [0:2, 2:4] via nvlink after [4, 11]
    m2n.step 18 copy src(2) [0:2, 0:2] -> dst(3) [0:2, 4:6] via nvlink after [5]
    m2n.step 19 copy src(0) [2:4, 0:2] -> dst(4) [0:2, 0:2] via nvlink after [3, 10]
    m2n.step 20 copy src(1) [2:4, 0:2] -> dst(4) [0:2, 2:4] via nvlink after [4, 11]
    m2n.step 21 copy src(2) [2:4, 0:2] -> dst(4) [0:2, 4:6] via nvlink after [5]
  }
  return
}
