// The m2n transfer kernel: the GPU side of every m2n.schedule.
//
// Each rank launches it over its own table of work items. One elected thread
// per CTA walks the items assigned to the CTA (b, b + grid, ...): it waits for
// the item's dependencies (flags in peer-visible memory, bounded by a timeout
// that records the item and traps instead of hanging), loads the item's bytes
// with a TMA bulk copy into one of `stages` shared-memory stages (mbarrier
// completion), and stores or reduces them into the destination with a TMA
// bulk store / bulk reduction. Loads of later items are in flight while
// earlier items are stored. An item with a signal address increments that
// counter (release, system scope) once its bytes have landed.
//
// Item record, 128 bytes, little endian:
//   0 src u64 | 8 dst u64 | 16 bytes u32 | 20 op u32 | 24 signal u64 |
//   32 wait0 address u64 | 40 wait0 value u64 | 48 wait1 address u64 |
//   56 wait1 value u64 | 64 kind u32 | 68 rank u32 |
//   72 source coordinates i32 x 5 | 92 destination coordinates i32 x 5 |
//   112 flags u32 | 120 read-done u64
// kind 0 (bulk): src and dst are addresses of `bytes` contiguous bytes.
// kind 1 (tile): src and dst are CUtensorMap addresses (global memory), the
//   coordinates (innermost first, `rank` of them) select the box, `bytes`
//   is its size; op 0 copy, 1 add, 2 min, 3 max (the type is the map's).
// Bulk `op`: 0 copy; reductions (cp.reduce.async.bulk, .noftz for 16-bit floats):
//   1 add.f32  2 add.f16  3 add.bf16  4 min.f16  5 max.f16  6 min.bf16
//   7 max.bf16  8 add.s32  9 min.s32  10 max.s32  11 add.u64  12 min.s64
//   13 max.s64  14 add.f64
// Flags: bit 0 (store waits): the item's source is never written by the
//   reshard, so its waits order only the store; its load is issued ahead like
//   that of an item without waits.
// Read-done: an item that reads a peer's buffer adds 1 to that peer's
//   counter at `read-done` once its bytes are in shared memory; the peer's
//   last item waits for all of them, so its kernel ends only when nobody
//   reads its buffers any more.
// Signals: a CTA adds up its items' signals to the same counter and releases
//   the sum once, when the next item signals another counter, before it waits
//   for any counter (the wait may need the sum) and at the end.
// Error record (u64[4], host-mapped): 1, item index, wait address, value seen.
//
// Parameters: items, number of items, error record, timeout in clock cycles,
// stage size in bytes (>= the largest item), number of stages (1-8), epoch
// words (u64[2] in device memory, zero before the first launch).
// The stages live in dynamic shared memory (stages x stage size bytes).
// Counters are never reset: the n-th execution of a table (epoch n) waits
// for n times the values in its items. The epoch lives on the device, so
// that launches replayed from a CUDA graph advance it: each CTA reads
// word 0 (the executions finished) and runs epoch word0 + 1; the last CTA
// to finish (word 1 counts finished CTAs) stores the new epoch. The next
// launch on the stream starts after that store.
//
// MLIR has no op for cp.reduce.async.bulk (non-tensor), the acquire/release
// flag accesses, the proxy fence or trap: those are nvvm.inline_ptx.

gpu.module @m2n_kernels [#nvvm.target<chip = "@CHIP@", features = "@FEATURES@">] {
  llvm.mlir.global external @m2n_stages() {addr_space = 3 : i32, alignment = 128 : i64} : !llvm.array<0 x i8>
  llvm.mlir.global internal @m2n_bars() {addr_space = 3 : i32, alignment = 8 : i64} : !llvm.array<8 x i64>

  gpu.func @m2n_transfer(%items: !llvm.ptr<1>, %num_items: i64, %error: !llvm.ptr<1>,
                         %timeout: i64, %stage_bytes: i64, %stages: i64,
                         %epochWords: !llvm.ptr<1>) kernel {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %i0 = arith.constant 0 : i32
    %i1 = arith.constant 1 : i32
    %l0 = arith.constant 0 : i64
    %l1 = arith.constant 1 : i64
    %l64 = arith.constant 128 : i64
    %tid = nvvm.read.ptx.sreg.tid.x : i32
    %elected = arith.cmpi eq, %tid, %i0 : i32
    scf.if %elected {
      %finished = llvm.load volatile %epochWords : !llvm.ptr<1> -> i64
      %epoch = arith.addi %finished, %l1 : i64
      %stageBase = llvm.mlir.addressof @m2n_stages : !llvm.ptr<3>
      %barBase = llvm.mlir.addressof @m2n_bars : !llvm.ptr<3>
      %ns = arith.index_cast %stages : i64 to index
      scf.for %s = %c0 to %ns step %c1 {
        %si = arith.index_cast %s : index to i64
        %bar = llvm.getelementptr %barBase[%si] : (!llvm.ptr<3>, i64) -> !llvm.ptr<3>, i64
        nvvm.mbarrier.init %bar, %i1 : !llvm.ptr<3>, i32
      }
      nvvm.fence.mbarrier.init
      %bid32 = nvvm.read.ptx.sreg.ctaid.x : i32
      %grid32 = nvvm.read.ptx.sreg.nctaid.x : i32
      %bid = arith.extui %bid32 : i32 to i64
      %grid = arith.extui %grid32 : i32 to i64
      %rest = arith.subi %num_items, %bid : i64
      %has = arith.cmpi sgt, %rest, %l0 : i64
      %gm1 = arith.subi %grid, %l1 : i64
      %num = arith.addi %rest, %gm1 : i64
      %quot = arith.divui %num, %grid : i64
      %mine = arith.select %has, %quot, %l0 : i64
      %pre = arith.minui %mine, %stages : i64
      %preIdx = arith.index_cast %pre : i64 to index
      %mineIdx = arith.index_cast %mine : i64 to index
      // Prefetch the first `stages` items, then store item k and refill its
      // stage with item k + stages.
      scf.for %k = %c0 to %preIdx step %c1 {
        %kk = arith.index_cast %k : index to i64
        %early = arith.constant true
        func.call @m2n_issue(%items, %kk, %bid, %grid, %stages, %stage_bytes, %stageBase, %barBase, %error, %timeout, %early, %epoch)
            : (!llvm.ptr<1>, i64, i64, i64, i64, i64, !llvm.ptr<3>, !llvm.ptr<3>, !llvm.ptr<1>, i64, i1, i64) -> ()
      }
      %pending:2 = scf.for %k = %c0 to %mineIdx step %c1
          iter_args(%pendAddr = %l0, %pendCount = %l0) -> (i64, i64) {
        %kk = arith.index_cast %k : index to i64
        %g0 = arith.muli %kk, %grid : i64
        %g = arith.addi %g0, %bid : i64
        %rec = arith.muli %g, %l64 : i64
        %recp = llvm.getelementptr %items[%rec] : (!llvm.ptr<1>, i64) -> !llvm.ptr<1>, i8
        %dstpp = llvm.getelementptr %recp[8] : (!llvm.ptr<1>) -> !llvm.ptr<1>, i8
        %dstp = llvm.load %dstpp : !llvm.ptr<1> -> !llvm.ptr<1>
        %bytesp = llvm.getelementptr %recp[16] : (!llvm.ptr<1>) -> !llvm.ptr<1>, i8
        %bytes = llvm.load %bytesp : !llvm.ptr<1> -> i32
        %opp = llvm.getelementptr %recp[20] : (!llvm.ptr<1>) -> !llvm.ptr<1>, i8
        %op = llvm.load %opp : !llvm.ptr<1> -> i32
        %sigpp = llvm.getelementptr %recp[24] : (!llvm.ptr<1>) -> !llvm.ptr<1>, i8
        %sigp = llvm.load %sigpp : !llvm.ptr<1> -> !llvm.ptr<1>
        %s = arith.remui %kk, %stages : i64
        %round = arith.divui %kk, %stages : i64
        %par64 = arith.andi %round, %l1 : i64
        %parity = arith.trunci %par64 : i64 to i32
        %bar = llvm.getelementptr %barBase[%s] : (!llvm.ptr<3>, i64) -> !llvm.ptr<3>, i64
        %soff = arith.muli %s, %stage_bytes : i64
        %stage = llvm.getelementptr %stageBase[%soff] : (!llvm.ptr<3>, i64) -> !llvm.ptr<3>, i8
        %w0pp = llvm.getelementptr %recp[32] : (!llvm.ptr<1>) -> !llvm.ptr<1>, i8
        %w0 = llvm.load %w0pp : !llvm.ptr<1> -> i64
        %w1pp = llvm.getelementptr %recp[48] : (!llvm.ptr<1>) -> !llvm.ptr<1>, i8
        %w1 = llvm.load %w1pp : !llvm.ptr<1> -> i64
        %anyWait = arith.ori %w0, %w1 : i64
        %waits = arith.cmpi ne, %anyWait, %l0 : i64
        %flagsp = llvm.getelementptr %recp[112] : (!llvm.ptr<1>) -> !llvm.ptr<1>, i8
        %flags = llvm.load %flagsp : !llvm.ptr<1> -> i32
        %storeBit = arith.andi %flags, %i1 : i32
        %storeWaits = arith.cmpi ne, %storeBit, %i0 : i32
        %true = arith.constant true
        %loadWaits = arith.xori %storeWaits, %true : i1
        %deferred = arith.andi %waits, %loadWaits : i1
        %waitHere = arith.andi %waits, %storeWaits : i1
        // Release the signals held back before waiting: the wait may need them.
        %heldAddr, %heldCount = scf.if %waits -> (i64, i64) {
          func.call @m2n_release(%pendAddr, %pendCount) : (i64, i64) -> ()
          scf.yield %l0, %l0 : i64, i64
        } else {
          scf.yield %pendAddr, %pendCount : i64, i64
        }
        // An item whose load waits was not loaded ahead: load it now that
        // every earlier item of this CTA has been stored and signalled.
        scf.if %deferred {
          nvvm.cp.async.bulk.wait_group 0 {read}
          %late = arith.constant false
          func.call @m2n_issue(%items, %kk, %bid, %grid, %stages, %stage_bytes, %stageBase, %barBase, %error, %timeout, %late, %epoch)
              : (!llvm.ptr<1>, i64, i64, i64, i64, i64, !llvm.ptr<3>, !llvm.ptr<3>, !llvm.ptr<1>, i64, i1, i64) -> ()
        }
        // An item whose store waits was loaded ahead: wait before storing.
        scf.if %waitHere {
          func.call @m2n_wait(%recp, %g, %error, %timeout, %epoch)
              : (!llvm.ptr<1>, i64, !llvm.ptr<1>, i64, i64) -> ()
        }
        %moves = arith.cmpi ne, %bytes, %i0 : i32
        scf.if %moves {
          %ticks = arith.constant 1000000 : i32
          nvvm.mbarrier.try_wait.parity %bar, %parity, %ticks : !llvm.ptr<3>, i32, i32
          // The bytes are read: tell the peer they came from.
          %rdpp = llvm.getelementptr %recp[120] : (!llvm.ptr<1>) -> !llvm.ptr<1>, i8
          %rdp = llvm.load %rdpp : !llvm.ptr<1> -> !llvm.ptr<1>
          %rdi = llvm.ptrtoint %rdp : !llvm.ptr<1> to i64
          %readsPeer = arith.cmpi ne, %rdi, %l0 : i64
          scf.if %readsPeer {
            %one = arith.constant 1 : i64
            nvvm.inline_ptx "red.release.sys.global.add.u64 [$0], $1;" ro(%rdp, %one : !llvm.ptr<1>, i64)
          }
          %kindp = llvm.getelementptr %recp[64] : (!llvm.ptr<1>) -> !llvm.ptr<1>, i8
          %kind = llvm.load %kindp : !llvm.ptr<1> -> i32
          %tiled = arith.cmpi ne, %kind, %i0 : i32
          %opi = arith.index_cast %op : i32 to index
          scf.if %tiled {
          // A tile: store (or reduce) through the destination tensor map; the
          // element type comes from the map.
          %dmap = llvm.load %dstpp : !llvm.ptr<1> -> !llvm.ptr
          %drankp = llvm.getelementptr %recp[68] : (!llvm.ptr<1>) -> !llvm.ptr<1>, i8
          %drank = llvm.load %drankp : !llvm.ptr<1> -> i32
          %dranki = arith.index_cast %drank : i32 to index
          scf.index_switch %opi
            case 0 {
              scf.index_switch %dranki
                case 1 {
                  %dc0_p0 = llvm.getelementptr %recp[92] : (!llvm.ptr<1>) -> !llvm.ptr<1>, i8
                  %dc0_0 = llvm.load %dc0_p0 : !llvm.ptr<1> -> i32
                  nvvm.cp.async.bulk.tensor.global.shared.cta %dmap, %stage, box[%dc0_0] : !llvm.ptr, !llvm.ptr<3>
                  scf.yield
                }
                case 2 {
                  %dc0_p0 = llvm.getelementptr %recp[92] : (!llvm.ptr<1>) -> !llvm.ptr<1>, i8
                  %dc0_0 = llvm.load %dc0_p0 : !llvm.ptr<1> -> i32
                  %dc0_p1 = llvm.getelementptr %recp[96] : (!llvm.ptr<1>) -> !llvm.ptr<1>, i8
                  %dc0_1 = llvm.load %dc0_p1 : !llvm.ptr<1> -> i32
                  nvvm.cp.async.bulk.tensor.global.shared.cta %dmap, %stage, box[%dc0_0, %dc0_1] : !llvm.ptr, !llvm.ptr<3>
                  scf.yield
                }
                case 3 {
                  %dc0_p0 = llvm.getelementptr %recp[92] : (!llvm.ptr<1>) -> !llvm.ptr<1>, i8
                  %dc0_0 = llvm.load %dc0_p0 : !llvm.ptr<1> -> i32
                  %dc0_p1 = llvm.getelementptr %recp[96] : (!llvm.ptr<1>) -> !llvm.ptr<1>, i8
                  %dc0_1 = llvm.load %dc0_p1 : !llvm.ptr<1> -> i32
                  %dc0_p2 = llvm.getelementptr %recp[100] : (!llvm.ptr<1>) -> !llvm.ptr<1>, i8
                  %dc0_2 = llvm.load %dc0_p2 : !llvm.ptr<1> -> i32
                  nvvm.cp.async.bulk.tensor.global.shared.cta %dmap, %stage, box[%dc0_0, %dc0_1, %dc0_2] : !llvm.ptr, !llvm.ptr<3>
                  scf.yield
                }
                case 4 {
                  %dc0_p0 = llvm.getelementptr %recp[92] : (!llvm.ptr<1>) -> !llvm.ptr<1>, i8
                  %dc0_0 = llvm.load %dc0_p0 : !llvm.ptr<1> -> i32
                  %dc0_p1 = llvm.getelementptr %recp[96] : (!llvm.ptr<1>) -> !llvm.ptr<1>, i8
                  %dc0_1 = llvm.load %dc0_p1 : !llvm.ptr<1> -> i32
                  %dc0_p2 = llvm.getelementptr %recp[100] : (!llvm.ptr<1>) -> !llvm.ptr<1>, i8
                  %dc0_2 = llvm.load %dc0_p2 : !llvm.ptr<1> -> i32
                  %dc0_p3 = llvm.getelementptr %recp[104] : (!llvm.ptr<1>) -> !llvm.ptr<1>, i8
                  %dc0_3 = llvm.load %dc0_p3 : !llvm.ptr<1> -> i32
                  nvvm.cp.async.bulk.tensor.global.shared.cta %dmap, %stage, box[%dc0_0, %dc0_1, %dc0_2, %dc0_3] : !llvm.ptr, !llvm.ptr<3>
                  scf.yield
                }
                case 5 {
                  %dc0_p0 = llvm.getelementptr %recp[92] : (!llvm.ptr<1>) -> !llvm.ptr<1>, i8
                  %dc0_0 = llvm.load %dc0_p0 : !llvm.ptr<1> -> i32
                  %dc0_p1 = llvm.getelementptr %recp[96] : (!llvm.ptr<1>) -> !llvm.ptr<1>, i8
                  %dc0_1 = llvm.load %dc0_p1 : !llvm.ptr<1> -> i32
                  %dc0_p2 = llvm.getelementptr %recp[100] : (!llvm.ptr<1>) -> !llvm.ptr<1>, i8
                  %dc0_2 = llvm.load %dc0_p2 : !llvm.ptr<1> -> i32
                  %dc0_p3 = llvm.getelementptr %recp[104] : (!llvm.ptr<1>) -> !llvm.ptr<1>, i8
                  %dc0_3 = llvm.load %dc0_p3 : !llvm.ptr<1> -> i32
                  %dc0_p4 = llvm.getelementptr %recp[108] : (!llvm.ptr<1>) -> !llvm.ptr<1>, i8
                  %dc0_4 = llvm.load %dc0_p4 : !llvm.ptr<1> -> i32
                  nvvm.cp.async.bulk.tensor.global.shared.cta %dmap, %stage, box[%dc0_0, %dc0_1, %dc0_2, %dc0_3, %dc0_4] : !llvm.ptr, !llvm.ptr<3>
                  scf.yield
                }
                default {
                  scf.yield
                }
              scf.yield
            }
            case 1 {
              scf.index_switch %dranki
                case 1 {
                  %dc1_p0 = llvm.getelementptr %recp[92] : (!llvm.ptr<1>) -> !llvm.ptr<1>, i8
                  %dc1_0 = llvm.load %dc1_p0 : !llvm.ptr<1> -> i32
                  nvvm.cp.async.bulk.tensor.reduce %dmap, %stage, box[%dc1_0] {redKind = #nvvm.tma_redux_kind<add>} : !llvm.ptr, !llvm.ptr<3>
                  scf.yield
                }
                case 2 {
                  %dc1_p0 = llvm.getelementptr %recp[92] : (!llvm.ptr<1>) -> !llvm.ptr<1>, i8
                  %dc1_0 = llvm.load %dc1_p0 : !llvm.ptr<1> -> i32
                  %dc1_p1 = llvm.getelementptr %recp[96] : (!llvm.ptr<1>) -> !llvm.ptr<1>, i8
                  %dc1_1 = llvm.load %dc1_p1 : !llvm.ptr<1> -> i32
                  nvvm.cp.async.bulk.tensor.reduce %dmap, %stage, box[%dc1_0, %dc1_1] {redKind = #nvvm.tma_redux_kind<add>} : !llvm.ptr, !llvm.ptr<3>
                  scf.yield
                }
                case 3 {
                  %dc1_p0 = llvm.getelementptr %recp[92] : (!llvm.ptr<1>) -> !llvm.ptr<1>, i8
                  %dc1_0 = llvm.load %dc1_p0 : !llvm.ptr<1> -> i32
                  %dc1_p1 = llvm.getelementptr %recp[96] : (!llvm.ptr<1>) -> !llvm.ptr<1>, i8
                  %dc1_1 = llvm.load %dc1_p1 : !llvm.ptr<1> -> i32
                  %dc1_p2 = llvm.getelementptr %recp[100] : (!llvm.ptr<1>) -> !llvm.ptr<1>, i8
                  %dc1_2 = llvm.load %dc1_p2 : !llvm.ptr<1> -> i32
                  nvvm.cp.async.bulk.tensor.reduce %dmap, %stage, box[%dc1_0, %dc1_1, %dc1_2] {redKind = #nvvm.tma_redux_kind<add>} : !llvm.ptr, !llvm.ptr<3>
                  scf.yield
                }
                case 4 {
                  %dc1_p0 = llvm.getelementptr %recp[92] : (!llvm.ptr<1>) -> !llvm.ptr<1>, i8
                  %dc1_0 = llvm.load %dc1_p0 : !llvm.ptr<1> -> i32
                  %dc1_p1 = llvm.getelementptr %recp[96] : (!llvm.ptr<1>) -> !llvm.ptr<1>, i8
                  %dc1_1 = llvm.load %dc1_p1 : !llvm.ptr<1> -> i32
                  %dc1_p2 = llvm.getelementptr %recp[100] : (!llvm.ptr<1>) -> !llvm.ptr<1>, i8
                  %dc1_2 = llvm.load %dc1_p2 : !llvm.ptr<1> -> i32
                  %dc1_p3 = llvm.getelementptr %recp[104] : (!llvm.ptr<1>) -> !llvm.ptr<1>, i8
                  %dc1_3 = llvm.load %dc1_p3 : !llvm.ptr<1> -> i32
                  nvvm.cp.async.bulk.tensor.reduce %dmap, %stage, box[%dc1_0, %dc1_1, %dc1_2, %dc1_3] {redKind = #nvvm.tma_redux_kind<add>} : !llvm.ptr, !llvm.ptr<3>
                  scf.yield
                }
                case 5 {
                  %dc1_p0 = llvm.getelementptr %recp[92] : (!llvm.ptr<1>) -> !llvm.ptr<1>, i8
                  %dc1_0 = llvm.load %dc1_p0 : !llvm.ptr<1> -> i32
                  %dc1_p1 = llvm.getelementptr %recp[96] : (!llvm.ptr<1>) -> !llvm.ptr<1>, i8
                  %dc1_1 = llvm.load %dc1_p1 : !llvm.ptr<1> -> i32
                  %dc1_p2 = llvm.getelementptr %recp[100] : (!llvm.ptr<1>) -> !llvm.ptr<1>, i8
                  %dc1_2 = llvm.load %dc1_p2 : !llvm.ptr<1> -> i32
                  %dc1_p3 = llvm.getelementptr %recp[104] : (!llvm.ptr<1>) -> !llvm.ptr<1>, i8
                  %dc1_3 = llvm.load %dc1_p3 : !llvm.ptr<1> -> i32
                  %dc1_p4 = llvm.getelementptr %recp[108] : (!llvm.ptr<1>) -> !llvm.ptr<1>, i8
                  %dc1_4 = llvm.load %dc1_p4 : !llvm.ptr<1> -> i32
                  nvvm.cp.async.bulk.tensor.reduce %dmap, %stage, box[%dc1_0, %dc1_1, %dc1_2, %dc1_3, %dc1_4] {redKind = #nvvm.tma_redux_kind<add>} : !llvm.ptr, !llvm.ptr<3>
                  scf.yield
                }
                default {
                  scf.yield
                }
              scf.yield
            }
            case 2 {
              scf.index_switch %dranki
                case 1 {
                  %dc2_p0 = llvm.getelementptr %recp[92] : (!llvm.ptr<1>) -> !llvm.ptr<1>, i8
                  %dc2_0 = llvm.load %dc2_p0 : !llvm.ptr<1> -> i32
                  nvvm.cp.async.bulk.tensor.reduce %dmap, %stage, box[%dc2_0] {redKind = #nvvm.tma_redux_kind<min>} : !llvm.ptr, !llvm.ptr<3>
                  scf.yield
                }
                case 2 {
                  %dc2_p0 = llvm.getelementptr %recp[92] : (!llvm.ptr<1>) -> !llvm.ptr<1>, i8
                  %dc2_0 = llvm.load %dc2_p0 : !llvm.ptr<1> -> i32
                  %dc2_p1 = llvm.getelementptr %recp[96] : (!llvm.ptr<1>) -> !llvm.ptr<1>, i8
                  %dc2_1 = llvm.load %dc2_p1 : !llvm.ptr<1> -> i32
                  nvvm.cp.async.bulk.tensor.reduce %dmap, %stage, box[%dc2_0, %dc2_1] {redKind = #nvvm.tma_redux_kind<min>} : !llvm.ptr, !llvm.ptr<3>
                  scf.yield
                }
                case 3 {
                  %dc2_p0 = llvm.getelementptr %recp[92] : (!llvm.ptr<1>) -> !llvm.ptr<1>, i8
                  %dc2_0 = llvm.load %dc2_p0 : !llvm.ptr<1> -> i32
                  %dc2_p1 = llvm.getelementptr %recp[96] : (!llvm.ptr<1>) -> !llvm.ptr<1>, i8
                  %dc2_1 = llvm.load %dc2_p1 : !llvm.ptr<1> -> i32
                  %dc2_p2 = llvm.getelementptr %recp[100] : (!llvm.ptr<1>) -> !llvm.ptr<1>, i8
                  %dc2_2 = llvm.load %dc2_p2 : !llvm.ptr<1> -> i32
                  nvvm.cp.async.bulk.tensor.reduce %dmap, %stage, box[%dc2_0, %dc2_1, %dc2_2] {redKind = #nvvm.tma_redux_kind<min>} : !llvm.ptr, !llvm.ptr<3>
                  scf.yield
                }
                case 4 {
                  %dc2_p0 = llvm.getelementptr %recp[92] : (!llvm.ptr<1>) -> !llvm.ptr<1>, i8
                  %dc2_0 = llvm.load %dc2_p0 : !llvm.ptr<1> -> i32
                  %dc2_p1 = llvm.getelementptr %recp[96] : (!llvm.ptr<1>) -> !llvm.ptr<1>, i8
                  %dc2_1 = llvm.load %dc2_p1 : !llvm.ptr<1> -> i32
                  %dc2_p2 = llvm.getelementptr %recp[100] : (!llvm.ptr<1>) -> !llvm.ptr<1>, i8
                  %dc2_2 = llvm.load %dc2_p2 : !llvm.ptr<1> -> i32
                  %dc2_p3 = llvm.getelementptr %recp[104] : (!llvm.ptr<1>) -> !llvm.ptr<1>, i8
                  %dc2_3 = llvm.load %dc2_p3 : !llvm.ptr<1> -> i32
                  nvvm.cp.async.bulk.tensor.reduce %dmap, %stage, box[%dc2_0, %dc2_1, %dc2_2, %dc2_3] {redKind = #nvvm.tma_redux_kind<min>} : !llvm.ptr, !llvm.ptr<3>
                  scf.yield
                }
                case 5 {
                  %dc2_p0 = llvm.getelementptr %recp[92] : (!llvm.ptr<1>) -> !llvm.ptr<1>, i8
                  %dc2_0 = llvm.load %dc2_p0 : !llvm.ptr<1> -> i32
                  %dc2_p1 = llvm.getelementptr %recp[96] : (!llvm.ptr<1>) -> !llvm.ptr<1>, i8
                  %dc2_1 = llvm.load %dc2_p1 : !llvm.ptr<1> -> i32
                  %dc2_p2 = llvm.getelementptr %recp[100] : (!llvm.ptr<1>) -> !llvm.ptr<1>, i8
                  %dc2_2 = llvm.load %dc2_p2 : !llvm.ptr<1> -> i32
                  %dc2_p3 = llvm.getelementptr %recp[104] : (!llvm.ptr<1>) -> !llvm.ptr<1>, i8
                  %dc2_3 = llvm.load %dc2_p3 : !llvm.ptr<1> -> i32
                  %dc2_p4 = llvm.getelementptr %recp[108] : (!llvm.ptr<1>) -> !llvm.ptr<1>, i8
                  %dc2_4 = llvm.load %dc2_p4 : !llvm.ptr<1> -> i32
                  nvvm.cp.async.bulk.tensor.reduce %dmap, %stage, box[%dc2_0, %dc2_1, %dc2_2, %dc2_3, %dc2_4] {redKind = #nvvm.tma_redux_kind<min>} : !llvm.ptr, !llvm.ptr<3>
                  scf.yield
                }
                default {
                  scf.yield
                }
              scf.yield
            }
            case 3 {
              scf.index_switch %dranki
                case 1 {
                  %dc3_p0 = llvm.getelementptr %recp[92] : (!llvm.ptr<1>) -> !llvm.ptr<1>, i8
                  %dc3_0 = llvm.load %dc3_p0 : !llvm.ptr<1> -> i32
                  nvvm.cp.async.bulk.tensor.reduce %dmap, %stage, box[%dc3_0] {redKind = #nvvm.tma_redux_kind<max>} : !llvm.ptr, !llvm.ptr<3>
                  scf.yield
                }
                case 2 {
                  %dc3_p0 = llvm.getelementptr %recp[92] : (!llvm.ptr<1>) -> !llvm.ptr<1>, i8
                  %dc3_0 = llvm.load %dc3_p0 : !llvm.ptr<1> -> i32
                  %dc3_p1 = llvm.getelementptr %recp[96] : (!llvm.ptr<1>) -> !llvm.ptr<1>, i8
                  %dc3_1 = llvm.load %dc3_p1 : !llvm.ptr<1> -> i32
                  nvvm.cp.async.bulk.tensor.reduce %dmap, %stage, box[%dc3_0, %dc3_1] {redKind = #nvvm.tma_redux_kind<max>} : !llvm.ptr, !llvm.ptr<3>
                  scf.yield
                }
                case 3 {
                  %dc3_p0 = llvm.getelementptr %recp[92] : (!llvm.ptr<1>) -> !llvm.ptr<1>, i8
                  %dc3_0 = llvm.load %dc3_p0 : !llvm.ptr<1> -> i32
                  %dc3_p1 = llvm.getelementptr %recp[96] : (!llvm.ptr<1>) -> !llvm.ptr<1>, i8
                  %dc3_1 = llvm.load %dc3_p1 : !llvm.ptr<1> -> i32
                  %dc3_p2 = llvm.getelementptr %recp[100] : (!llvm.ptr<1>) -> !llvm.ptr<1>, i8
                  %dc3_2 = llvm.load %dc3_p2 : !llvm.ptr<1> -> i32
                  nvvm.cp.async.bulk.tensor.reduce %dmap, %stage, box[%dc3_0, %dc3_1, %dc3_2] {redKind = #nvvm.tma_redux_kind<max>} : !llvm.ptr, !llvm.ptr<3>
                  scf.yield
                }
                case 4 {
                  %dc3_p0 = llvm.getelementptr %recp[92] : (!llvm.ptr<1>) -> !llvm.ptr<1>, i8
                  %dc3_0 = llvm.load %dc3_p0 : !llvm.ptr<1> -> i32
                  %dc3_p1 = llvm.getelementptr %recp[96] : (!llvm.ptr<1>) -> !llvm.ptr<1>, i8
                  %dc3_1 = llvm.load %dc3_p1 : !llvm.ptr<1> -> i32
                  %dc3_p2 = llvm.getelementptr %recp[100] : (!llvm.ptr<1>) -> !llvm.ptr<1>, i8
                  %dc3_2 = llvm.load %dc3_p2 : !llvm.ptr<1> -> i32
                  %dc3_p3 = llvm.getelementptr %recp[104] : (!llvm.ptr<1>) -> !llvm.ptr<1>, i8
                  %dc3_3 = llvm.load %dc3_p3 : !llvm.ptr<1> -> i32
                  nvvm.cp.async.bulk.tensor.reduce %dmap, %stage, box[%dc3_0, %dc3_1, %dc3_2, %dc3_3] {redKind = #nvvm.tma_redux_kind<max>} : !llvm.ptr, !llvm.ptr<3>
                  scf.yield
                }
                case 5 {
                  %dc3_p0 = llvm.getelementptr %recp[92] : (!llvm.ptr<1>) -> !llvm.ptr<1>, i8
                  %dc3_0 = llvm.load %dc3_p0 : !llvm.ptr<1> -> i32
                  %dc3_p1 = llvm.getelementptr %recp[96] : (!llvm.ptr<1>) -> !llvm.ptr<1>, i8
                  %dc3_1 = llvm.load %dc3_p1 : !llvm.ptr<1> -> i32
                  %dc3_p2 = llvm.getelementptr %recp[100] : (!llvm.ptr<1>) -> !llvm.ptr<1>, i8
                  %dc3_2 = llvm.load %dc3_p2 : !llvm.ptr<1> -> i32
                  %dc3_p3 = llvm.getelementptr %recp[104] : (!llvm.ptr<1>) -> !llvm.ptr<1>, i8
                  %dc3_3 = llvm.load %dc3_p3 : !llvm.ptr<1> -> i32
                  %dc3_p4 = llvm.getelementptr %recp[108] : (!llvm.ptr<1>) -> !llvm.ptr<1>, i8
                  %dc3_4 = llvm.load %dc3_p4 : !llvm.ptr<1> -> i32
                  nvvm.cp.async.bulk.tensor.reduce %dmap, %stage, box[%dc3_0, %dc3_1, %dc3_2, %dc3_3, %dc3_4] {redKind = #nvvm.tma_redux_kind<max>} : !llvm.ptr, !llvm.ptr<3>
                  scf.yield
                }
                default {
                  scf.yield
                }
              scf.yield
            }
            default {
              scf.yield
            }
          } else {
          scf.index_switch %opi
          case 0 {
            nvvm.cp.async.bulk.global.shared.cta %dstp, %stage, %bytes : !llvm.ptr<1>, !llvm.ptr<3>
            scf.yield
          }
          case 1 {
            nvvm.inline_ptx "cp.reduce.async.bulk.global.shared::cta.bulk_group.add.f32 [$0], [$1], $2;" ro(%dstp, %stage, %bytes : !llvm.ptr<1>, !llvm.ptr<3>, i32)
            scf.yield
          }
          case 2 {
            nvvm.inline_ptx "cp.reduce.async.bulk.global.shared::cta.bulk_group.add.noftz.f16 [$0], [$1], $2;" ro(%dstp, %stage, %bytes : !llvm.ptr<1>, !llvm.ptr<3>, i32)
            scf.yield
          }
          case 3 {
            nvvm.inline_ptx "cp.reduce.async.bulk.global.shared::cta.bulk_group.add.noftz.bf16 [$0], [$1], $2;" ro(%dstp, %stage, %bytes : !llvm.ptr<1>, !llvm.ptr<3>, i32)
            scf.yield
          }
          case 4 {
            nvvm.inline_ptx "cp.reduce.async.bulk.global.shared::cta.bulk_group.min.f16 [$0], [$1], $2;" ro(%dstp, %stage, %bytes : !llvm.ptr<1>, !llvm.ptr<3>, i32)
            scf.yield
          }
          case 5 {
            nvvm.inline_ptx "cp.reduce.async.bulk.global.shared::cta.bulk_group.max.f16 [$0], [$1], $2;" ro(%dstp, %stage, %bytes : !llvm.ptr<1>, !llvm.ptr<3>, i32)
            scf.yield
          }
          case 6 {
            nvvm.inline_ptx "cp.reduce.async.bulk.global.shared::cta.bulk_group.min.bf16 [$0], [$1], $2;" ro(%dstp, %stage, %bytes : !llvm.ptr<1>, !llvm.ptr<3>, i32)
            scf.yield
          }
          case 7 {
            nvvm.inline_ptx "cp.reduce.async.bulk.global.shared::cta.bulk_group.max.bf16 [$0], [$1], $2;" ro(%dstp, %stage, %bytes : !llvm.ptr<1>, !llvm.ptr<3>, i32)
            scf.yield
          }
          case 8 {
            nvvm.inline_ptx "cp.reduce.async.bulk.global.shared::cta.bulk_group.add.s32 [$0], [$1], $2;" ro(%dstp, %stage, %bytes : !llvm.ptr<1>, !llvm.ptr<3>, i32)
            scf.yield
          }
          case 9 {
            nvvm.inline_ptx "cp.reduce.async.bulk.global.shared::cta.bulk_group.min.s32 [$0], [$1], $2;" ro(%dstp, %stage, %bytes : !llvm.ptr<1>, !llvm.ptr<3>, i32)
            scf.yield
          }
          case 10 {
            nvvm.inline_ptx "cp.reduce.async.bulk.global.shared::cta.bulk_group.max.s32 [$0], [$1], $2;" ro(%dstp, %stage, %bytes : !llvm.ptr<1>, !llvm.ptr<3>, i32)
            scf.yield
          }
          case 11 {
            nvvm.inline_ptx "cp.reduce.async.bulk.global.shared::cta.bulk_group.add.u64 [$0], [$1], $2;" ro(%dstp, %stage, %bytes : !llvm.ptr<1>, !llvm.ptr<3>, i32)
            scf.yield
          }
          case 12 {
            nvvm.inline_ptx "cp.reduce.async.bulk.global.shared::cta.bulk_group.min.s64 [$0], [$1], $2;" ro(%dstp, %stage, %bytes : !llvm.ptr<1>, !llvm.ptr<3>, i32)
            scf.yield
          }
          case 13 {
            nvvm.inline_ptx "cp.reduce.async.bulk.global.shared::cta.bulk_group.max.s64 [$0], [$1], $2;" ro(%dstp, %stage, %bytes : !llvm.ptr<1>, !llvm.ptr<3>, i32)
            scf.yield
          }
          case 14 {
            nvvm.inline_ptx "cp.reduce.async.bulk.global.shared::cta.bulk_group.add.f64 [$0], [$1], $2;" ro(%dstp, %stage, %bytes : !llvm.ptr<1>, !llvm.ptr<3>, i32)
            scf.yield
          }
          default {
            scf.yield
          }
          }
          nvvm.cp.async.bulk.commit.group
        }
        // Hold the signal back; release the held sum first if it is for
        // another counter.
        %sigi = llvm.ptrtoint %sigp : !llvm.ptr<1> to i64
        %signals = arith.cmpi ne, %sigi, %l0 : i64
        %nextAddr, %nextCount = scf.if %signals -> (i64, i64) {
          %held = arith.cmpi ne, %heldAddr, %l0 : i64
          %differs = arith.cmpi ne, %heldAddr, %sigi : i64
          %other = arith.andi %held, %differs : i1
          %base = scf.if %other -> (i64) {
            func.call @m2n_release(%heldAddr, %heldCount) : (i64, i64) -> ()
            scf.yield %l0 : i64
          } else {
            scf.yield %heldCount : i64
          }
          %count = arith.addi %base, %l1 : i64
          scf.yield %sigi, %count : i64, i64
        } else {
          scf.yield %heldAddr, %heldCount : i64, i64
        }
        // Refill a stage once the store that reads it has read it. With
        // several stages, refill the previous item's stage, so that this
        // item's store may still be reading its own.
        %single = arith.cmpi eq, %stages, %l1 : i64
        scf.if %single {
          %next = arith.addi %kk, %l1 : i64
          %refill = arith.cmpi ult, %next, %mine : i64
          scf.if %refill {
            nvvm.cp.async.bulk.wait_group 0 {read}
            %early = arith.constant true
            func.call @m2n_issue(%items, %next, %bid, %grid, %stages, %stage_bytes, %stageBase, %barBase, %error, %timeout, %early, %epoch)
                : (!llvm.ptr<1>, i64, i64, i64, i64, i64, !llvm.ptr<3>, !llvm.ptr<3>, !llvm.ptr<1>, i64, i1, i64) -> ()
          }
        } else {
          %notFirst = arith.cmpi uge, %kk, %l1 : i64
          %prev = arith.subi %kk, %l1 : i64
          %next = arith.addi %prev, %stages : i64
          %inRange = arith.cmpi ult, %next, %mine : i64
          %refill = arith.andi %notFirst, %inRange : i1
          scf.if %refill {
            nvvm.cp.async.bulk.wait_group 1 {read}
            %early = arith.constant true
            func.call @m2n_issue(%items, %next, %bid, %grid, %stages, %stage_bytes, %stageBase, %barBase, %error, %timeout, %early, %epoch)
                : (!llvm.ptr<1>, i64, i64, i64, i64, i64, !llvm.ptr<3>, !llvm.ptr<3>, !llvm.ptr<1>, i64, i1, i64) -> ()
          }
        }
        scf.yield %nextAddr, %nextCount : i64, i64
      }
      func.call @m2n_release(%pending#0, %pending#1) : (i64, i64) -> ()
      nvvm.cp.async.bulk.wait_group 0
      // The last CTA to finish advances the epoch.
      %doneWord = llvm.getelementptr %epochWords[1] : (!llvm.ptr<1>) -> !llvm.ptr<1>, i64
      %before = llvm.atomicrmw add %doneWord, %l1 acq_rel : !llvm.ptr<1>, i64
      %all = arith.muli %epoch, %grid : i64
      %allm1 = arith.subi %all, %l1 : i64
      %last = arith.cmpi eq, %before, %allm1 : i64
      scf.if %last {
        llvm.store volatile %epoch, %epochWords : i64, !llvm.ptr<1>
      }
    }
    gpu.return
  }

  // Adds `count` to the counter at `addr` (release, system scope) once every
  // store this thread issued has landed; nothing when `count` is 0.
  func.func private @m2n_release(%addr: i64, %count: i64) attributes {always_inline} {
    %l0 = arith.constant 0 : i64
    %some = arith.cmpi ne, %count, %l0 : i64
    scf.if %some {
      %ptr = llvm.inttoptr %addr : i64 to !llvm.ptr<1>
      nvvm.cp.async.bulk.wait_group 0
      nvvm.inline_ptx "fence.proxy.async.global;"
      nvvm.inline_ptx "red.release.sys.global.add.u64 [$0], $1;" ro(%ptr, %count : !llvm.ptr<1>, i64)
    }
    return
  }

  // Waits for item k's dependencies, then starts loading its bytes into
  // stage k % stages. Ahead of time (`early`), an item with dependencies is
  // left for later: its dependencies may be items of this very CTA that
  // have not been stored yet.
  func.func private @m2n_issue(%items: !llvm.ptr<1>, %k: i64, %bid: i64, %grid: i64, %stages: i64,
                               %stage_bytes: i64, %stageBase: !llvm.ptr<3>, %barBase: !llvm.ptr<3>,
                               %error: !llvm.ptr<1>, %timeout: i64, %early: i1,
                               %epoch: i64) attributes {always_inline} {
    %i0 = arith.constant 0 : i32
    %l0 = arith.constant 0 : i64
    %l64 = arith.constant 128 : i64
    %g0 = arith.muli %k, %grid : i64
    %g = arith.addi %g0, %bid : i64
    %rec = arith.muli %g, %l64 : i64
    %recp = llvm.getelementptr %items[%rec] : (!llvm.ptr<1>, i64) -> !llvm.ptr<1>, i8
    %w0pp = llvm.getelementptr %recp[32] : (!llvm.ptr<1>) -> !llvm.ptr<1>, i8
    %w0 = llvm.load %w0pp : !llvm.ptr<1> -> i64
    %w1pp = llvm.getelementptr %recp[48] : (!llvm.ptr<1>) -> !llvm.ptr<1>, i8
    %w1 = llvm.load %w1pp : !llvm.ptr<1> -> i64
    %anyWait = arith.ori %w0, %w1 : i64
    %hasWait = arith.cmpi ne, %anyWait, %l0 : i64
    %flagsp = llvm.getelementptr %recp[112] : (!llvm.ptr<1>) -> !llvm.ptr<1>, i8
    %flags = llvm.load %flagsp : !llvm.ptr<1> -> i32
    %i1 = arith.constant 1 : i32
    %storeBit = arith.andi %flags, %i1 : i32
    %loadWaits = arith.cmpi eq, %storeBit, %i0 : i32
    %waitsForLoad = arith.andi %hasWait, %loadWaits : i1
    %skip = arith.andi %early, %waitsForLoad : i1
    scf.if %skip {
    } else {
    scf.if %waitsForLoad {
      func.call @m2n_wait(%recp, %g, %error, %timeout, %epoch)
          : (!llvm.ptr<1>, i64, !llvm.ptr<1>, i64, i64) -> ()
    }
    %bytesp = llvm.getelementptr %recp[16] : (!llvm.ptr<1>) -> !llvm.ptr<1>, i8
    %bytes = llvm.load %bytesp : !llvm.ptr<1> -> i32
    %moves = arith.cmpi ne, %bytes, %i0 : i32
    scf.if %moves {
      %s = arith.remui %k, %stages : i64
      %bar = llvm.getelementptr %barBase[%s] : (!llvm.ptr<3>, i64) -> !llvm.ptr<3>, i64
      %soff = arith.muli %s, %stage_bytes : i64
      %stage = llvm.getelementptr %stageBase[%soff] : (!llvm.ptr<3>, i64) -> !llvm.ptr<3>, i8
      %stage7 = llvm.addrspacecast %stage : !llvm.ptr<3> to !llvm.ptr<7>
      %kindp = llvm.getelementptr %recp[64] : (!llvm.ptr<1>) -> !llvm.ptr<1>, i8
      %kind = llvm.load %kindp : !llvm.ptr<1> -> i32
      %tiled = arith.cmpi ne, %kind, %i0 : i32
      nvvm.mbarrier.arrive.expect_tx %bar, %bytes : !llvm.ptr<3>, i32
      scf.if %tiled {
        // A tile: the source tensor map and its coordinates, innermost first.
        %map = llvm.load %recp : !llvm.ptr<1> -> !llvm.ptr
        %rankp = llvm.getelementptr %recp[68] : (!llvm.ptr<1>) -> !llvm.ptr<1>, i8
        %rank = llvm.load %rankp : !llvm.ptr<1> -> i32
        %ranki = arith.index_cast %rank : i32 to index
        scf.index_switch %ranki
          case 1 {
            %scp0 = llvm.getelementptr %recp[72] : (!llvm.ptr<1>) -> !llvm.ptr<1>, i8
            %sc0 = llvm.load %scp0 : !llvm.ptr<1> -> i32
            nvvm.cp.async.bulk.tensor.shared.cluster.global %stage7, %map, %bar, box[%sc0] : !llvm.ptr<7>, !llvm.ptr
            scf.yield
          }
          case 2 {
            %scp0 = llvm.getelementptr %recp[72] : (!llvm.ptr<1>) -> !llvm.ptr<1>, i8
            %sc0 = llvm.load %scp0 : !llvm.ptr<1> -> i32
            %scp1 = llvm.getelementptr %recp[76] : (!llvm.ptr<1>) -> !llvm.ptr<1>, i8
            %sc1 = llvm.load %scp1 : !llvm.ptr<1> -> i32
            nvvm.cp.async.bulk.tensor.shared.cluster.global %stage7, %map, %bar, box[%sc0, %sc1] : !llvm.ptr<7>, !llvm.ptr
            scf.yield
          }
          case 3 {
            %scp0 = llvm.getelementptr %recp[72] : (!llvm.ptr<1>) -> !llvm.ptr<1>, i8
            %sc0 = llvm.load %scp0 : !llvm.ptr<1> -> i32
            %scp1 = llvm.getelementptr %recp[76] : (!llvm.ptr<1>) -> !llvm.ptr<1>, i8
            %sc1 = llvm.load %scp1 : !llvm.ptr<1> -> i32
            %scp2 = llvm.getelementptr %recp[80] : (!llvm.ptr<1>) -> !llvm.ptr<1>, i8
            %sc2 = llvm.load %scp2 : !llvm.ptr<1> -> i32
            nvvm.cp.async.bulk.tensor.shared.cluster.global %stage7, %map, %bar, box[%sc0, %sc1, %sc2] : !llvm.ptr<7>, !llvm.ptr
            scf.yield
          }
          case 4 {
            %scp0 = llvm.getelementptr %recp[72] : (!llvm.ptr<1>) -> !llvm.ptr<1>, i8
            %sc0 = llvm.load %scp0 : !llvm.ptr<1> -> i32
            %scp1 = llvm.getelementptr %recp[76] : (!llvm.ptr<1>) -> !llvm.ptr<1>, i8
            %sc1 = llvm.load %scp1 : !llvm.ptr<1> -> i32
            %scp2 = llvm.getelementptr %recp[80] : (!llvm.ptr<1>) -> !llvm.ptr<1>, i8
            %sc2 = llvm.load %scp2 : !llvm.ptr<1> -> i32
            %scp3 = llvm.getelementptr %recp[84] : (!llvm.ptr<1>) -> !llvm.ptr<1>, i8
            %sc3 = llvm.load %scp3 : !llvm.ptr<1> -> i32
            nvvm.cp.async.bulk.tensor.shared.cluster.global %stage7, %map, %bar, box[%sc0, %sc1, %sc2, %sc3] : !llvm.ptr<7>, !llvm.ptr
            scf.yield
          }
          case 5 {
            %scp0 = llvm.getelementptr %recp[72] : (!llvm.ptr<1>) -> !llvm.ptr<1>, i8
            %sc0 = llvm.load %scp0 : !llvm.ptr<1> -> i32
            %scp1 = llvm.getelementptr %recp[76] : (!llvm.ptr<1>) -> !llvm.ptr<1>, i8
            %sc1 = llvm.load %scp1 : !llvm.ptr<1> -> i32
            %scp2 = llvm.getelementptr %recp[80] : (!llvm.ptr<1>) -> !llvm.ptr<1>, i8
            %sc2 = llvm.load %scp2 : !llvm.ptr<1> -> i32
            %scp3 = llvm.getelementptr %recp[84] : (!llvm.ptr<1>) -> !llvm.ptr<1>, i8
            %sc3 = llvm.load %scp3 : !llvm.ptr<1> -> i32
            %scp4 = llvm.getelementptr %recp[88] : (!llvm.ptr<1>) -> !llvm.ptr<1>, i8
            %sc4 = llvm.load %scp4 : !llvm.ptr<1> -> i32
            nvvm.cp.async.bulk.tensor.shared.cluster.global %stage7, %map, %bar, box[%sc0, %sc1, %sc2, %sc3, %sc4] : !llvm.ptr<7>, !llvm.ptr
            scf.yield
          }
          default {
            scf.yield
          }
      } else {
        %srcp = llvm.load %recp : !llvm.ptr<1> -> !llvm.ptr<1>
        nvvm.cp.async.bulk.shared.cluster.global %stage7, %srcp, %bar, %bytes : !llvm.ptr<7>, !llvm.ptr<1>
      }
    } else {
      // A zero-byte item (a gate that only waits and signals) still completes
      // one phase of its stage's barrier: the parity the loop waits for is
      // counted in items, so a skipped phase would let a later item on this
      // stage store before its bytes arrived.
      %s = arith.remui %k, %stages : i64
      %bar = llvm.getelementptr %barBase[%s] : (!llvm.ptr<3>, i64) -> !llvm.ptr<3>, i64
      nvvm.mbarrier.arrive %bar : !llvm.ptr<3>
    }
    }
    return
  }

  // Waits until each of the item's counters reaches its value times the
  // epoch; past the timeout, records the item (global index `g`) and traps.
  func.func private @m2n_wait(%recp: !llvm.ptr<1>, %g: i64, %error: !llvm.ptr<1>,
                              %timeout: i64, %epoch: i64) attributes {always_inline} {
    %l0 = arith.constant 0 : i64
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    scf.for %w = %c0 to %c2 step %c1 {
      %wi = arith.index_cast %w : index to i64
      %l16 = arith.constant 16 : i64
      %l32 = arith.constant 32 : i64
      %woff0 = arith.muli %wi, %l16 : i64
      %woff = arith.addi %woff0, %l32 : i64
      %wap = llvm.getelementptr %recp[%woff] : (!llvm.ptr<1>, i64) -> !llvm.ptr<1>, i8
      %waddr = llvm.load %wap : !llvm.ptr<1> -> !llvm.ptr<1>
      %wvp = llvm.getelementptr %wap[8] : (!llvm.ptr<1>) -> !llvm.ptr<1>, i8
      %wvalue1 = llvm.load %wvp : !llvm.ptr<1> -> i64
      // Counters only grow: execution `epoch` waits for epoch x the count.
      %wvalue = arith.muli %wvalue1, %epoch : i64
      %wai = llvm.ptrtoint %waddr : !llvm.ptr<1> to i64
      %waits = arith.cmpi ne, %wai, %l0 : i64
      scf.if %waits {
        %start = nvvm.read.ptx.sreg.clock64 : i64
        %seen = scf.while (%last = %l0) : (i64) -> i64 {
          %v = nvvm.inline_ptx "ld.acquire.sys.global.u64 $0, [$1];" ro(%waddr : !llvm.ptr<1>) -> i64
          %ready = arith.cmpi uge, %v, %wvalue : i64
          %now = nvvm.read.ptx.sreg.clock64 : i64
          %elapsed = arith.subi %now, %start : i64
          %late = arith.cmpi ugt, %elapsed, %timeout : i64
          %stop = arith.ori %ready, %late : i1
          %true = arith.constant true
          %spin = arith.xori %stop, %true : i1
          scf.condition(%spin) %v : i64
        } do {
        ^bb0(%v: i64):
          scf.yield %v : i64
        }
        %ok = arith.cmpi uge, %seen, %wvalue : i64
        scf.if %ok {
          // Order the async-proxy load after the acquire.
          nvvm.inline_ptx "fence.proxy.async.global;"
        } else {
          %e1 = llvm.getelementptr %error[1] : (!llvm.ptr<1>) -> !llvm.ptr<1>, i64
          %e2 = llvm.getelementptr %error[2] : (!llvm.ptr<1>) -> !llvm.ptr<1>, i64
          %e3 = llvm.getelementptr %error[3] : (!llvm.ptr<1>) -> !llvm.ptr<1>, i64
          %one = arith.constant 1 : i64
          llvm.store volatile %g, %e1 : i64, !llvm.ptr<1>
          llvm.store volatile %wai, %e2 : i64, !llvm.ptr<1>
          llvm.store volatile %seen, %e3 : i64, !llvm.ptr<1>
          nvvm.inline_ptx "fence.sc.sys;"
          llvm.store volatile %one, %error : i64, !llvm.ptr<1>
          nvvm.inline_ptx "fence.sc.sys;"
          nvvm.inline_ptx "trap;"
        }
      }
    }
    return
  }
}
