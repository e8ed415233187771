"""The Python frontend on the runtime's host backend (numpy arrays): the
paper's examples, the collectives, uneven shards, the JIT cache and every
argument error."""
import ctypes
import os
import time

import numpy as np
from pathlib import Path
import pytest

import m2n
from m2n import Mesh, Partial, Replicate, Shard
from m2n._request import Request, ReshardSpec

rng = np.random.default_rng(7)


def test_example_a_tp4_to_dp2_tp2():
    # Trainer TP4 on ranks 0-3 -> generator DP2 x TP2 on ranks 4-7.
    comm = m2n.Communicator.host(8)
    w = rng.standard_normal((64, 32)).astype(np.float32)
    src = [w[16 * r:16 * (r + 1)].copy() for r in range(4)] + [None] * 4
    dst = [None] * 4 + [np.full((32, 32), np.nan, np.float32) for _ in range(4)]
    m2n.reshard(src, dst, comm, src_mesh=Mesh([1, 4]),
                src_placements=[Replicate(), Shard(0)],
                dst_mesh=Mesh([2, 2], start_rank=4),
                dst_placements=[Replicate(), Shard(0)])
    for i in range(4):
        tp = i % 2
        np.testing.assert_array_equal(dst[4 + i], w[32 * tp:32 * (tp + 1)])


def test_example_b_stage_to_generator():
    # A TP2 pipeline stage on ranks 0-1 hands its rows to the generator, rank 2.
    comm = m2n.Communicator.host(3)
    w = rng.standard_normal((8, 16)).astype(np.float32)
    src = [w[:4].copy(), w[4:].copy(), None]
    dst = [None, None, np.zeros((8, 16), np.float32)]
    m2n.reshard(src, dst, comm, src_mesh=Mesh([2]), src_placements=[Shard(0)],
                dst_mesh=Mesh([1], start_rank=2), dst_placements=[Replicate()])
    np.testing.assert_array_equal(dst[2], w)


def test_explicit_rank_lists():
    comm = m2n.Communicator.host(4)
    w = np.arange(32, dtype=np.int32).reshape(4, 8)
    src = [w[:2].copy(), None, None, w[2:].copy()]
    dst = [None, w * 0, w * 0, None]
    m2n.reshard(src, dst, comm, src_mesh=Mesh([2], ranks=[0, 3]), src_placements=[Shard(0)],
                dst_mesh=Mesh([2], ranks=[2, 1]), dst_placements=[Replicate()])
    np.testing.assert_array_equal(dst[1], w)
    np.testing.assert_array_equal(dst[2], w)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16, np.int32, np.int64,
                                   np.int16, np.int8])
def test_collectives(dtype):
    comm = m2n.Communicator.host(4)
    parts = [(rng.integers(-8, 8, (8, 12))).astype(dtype) for _ in range(4)]
    whole = np.concatenate(parts)

    out = [np.zeros((32, 12), dtype) for _ in range(4)]
    m2n.all_gather(parts, out, comm, dim=0)
    for o in out:
        np.testing.assert_array_equal(o, whole)

    total = sum(p.astype(np.float64) for p in parts).astype(dtype)
    out = [np.zeros((8, 12), dtype) for _ in range(4)]
    m2n.all_reduce(parts, out, comm)
    for o in out:
        np.testing.assert_array_equal(o, total)

    out = [np.zeros((2, 12), dtype) for _ in range(4)]
    m2n.reduce_scatter(parts, out, comm, dim=0)
    for r, o in enumerate(out):
        np.testing.assert_array_equal(o, total[2 * r:2 * (r + 1)])

    # Max and min on every type: TMA bulk reductions where they exist, the SM
    # path where they do not (f32/f64 max/min, 8/16-bit integers).
    for op, reduce in (("max", np.maximum), ("min", np.minimum)):
        out = [np.zeros((8, 12), dtype) for _ in range(4)]
        m2n.all_reduce(parts, out, comm, op=op)
        for o in out:
            np.testing.assert_array_equal(o, reduce.reduce(parts))


def test_all_to_all():
    comm = m2n.Communicator.host(2)
    w = rng.standard_normal((4, 8)).astype(np.float32)
    src = [w[:2].copy(), w[2:].copy()]
    dst = [np.zeros((4, 4), np.float32) for _ in range(2)]
    m2n.all_to_all(src, dst, comm, split_dim=1, concat_dim=0)
    np.testing.assert_array_equal(dst[0], w[:, :4])
    np.testing.assert_array_equal(dst[1], w[:, 4:])


def test_uneven_shards_need_the_global_shape():
    comm = m2n.Communicator.host(2)
    w = rng.standard_normal((5, 4)).astype(np.float32)
    src = [w[:3].copy(), w[3:].copy()]
    dst = [np.zeros((5, 4), np.float32) for _ in range(2)]
    kwargs = dict(src_mesh=Mesh([2]), src_placements=[Shard(0)], dst_mesh=Mesh([2]),
                  dst_placements=[Replicate()])
    with pytest.raises(ValueError, match="pass global_shape="):
        m2n.reshard(src, dst, comm, **kwargs)
    m2n.reshard(src, dst, comm, global_shape=(5, 4), **kwargs)
    for d in dst:
        np.testing.assert_array_equal(d, w)
    # The split rule, for allocating destinations.
    compiles = m2n.stats.compiles
    shapes = [m2n.local_shape(r, mesh=Mesh([2]), placements=[Shard(0)],
                              global_shape=(5, 4)) for r in range(2)]
    assert shapes == [(3, 4), (2, 4)]
    assert m2n.local_shape(2, mesh=Mesh([2]), placements=[Shard(0)],
                           global_shape=(5, 4)) is None
    assert m2n.stats.compiles == compiles  # Computed, not compiled.


def test_local_shape_is_the_compilers_split_rule():
    """m2n.local_shape (m2n_layout_local_box, without compiling) and a
    compiled artifact's local shapes agree on random layouts: several mesh
    axes sharding one dimension, uneven and empty parts, explicit
    boundaries, explicit rank lists."""
    seed = int(os.environ.get("M2N_PROPERTY_SEED", "0")) or int(time.time())
    print(f"seed {seed} (M2N_PROPERTY_SEED={seed} repeats it)")
    rng = np.random.default_rng(seed)
    cases = []
    for index in range(150):
        tensor_rank = int(rng.integers(1, 4))
        shape = tuple(int(rng.integers(1, 12)) for _ in range(tensor_rank))
        dims = tuple(int(rng.integers(1, 4)) for _ in range(int(rng.integers(1, 4))))
        size = int(np.prod(dims))
        ranks = tuple(int(r) for r in rng.permutation(size + 2)[:size])
        mesh = Mesh(dims, ranks=ranks)
        placements = [Shard(int(rng.integers(tensor_rank))) if rng.random() < 0.7
                      else Replicate() for _ in dims]
        # Explicit boundaries on the first axis of a split dimension, one
        # time in three (the compiler writes torch.chunk's as shard<d>).
        for axis, p in enumerate(placements):
            if not isinstance(p, Shard):
                continue
            first = next(a for a, q in enumerate(placements)
                         if isinstance(q, Shard) and q.dim == p.dim)
            if first == axis and rng.random() < 1 / 3:
                count = int(np.prod([n for n, q in zip(dims, placements)
                                     if isinstance(q, Shard) and q.dim == p.dim]))
                cuts = sorted(int(c) for c in rng.integers(0, shape[p.dim] + 1, count - 1))
                placements[axis] = Shard(p.dim, [0] + cuts + [shape[p.dim]])
        cases.append((mesh, tuple(placements), shape, size + 2))
    # One structured request, reshard i of the artifact being case i (each
    # layout to itself), on a communicator holding every case's ranks.
    request = Request("split_rule", max(ranks for *_, ranks in cases), [
        ReshardSpec(mesh, placements, mesh, placements, shape, "float32")
        for mesh, placements, shape, _ in cases], group=False)
    artifact = m2n.jit.Artifact(m2n._native.compile_request(request.c), "test")
    for index, (mesh, placements, shape, ranks) in enumerate(cases):
        for rank in range(ranks):
            want = artifact.local_shape(rank, source=True, reshard=index)
            got = m2n.local_shape(rank, mesh=mesh, placements=placements, global_shape=shape)
            assert got == want, (seed, index, mesh, placements, shape, rank)


def test_jit_caches_in_memory_and_on_disk(fresh_cache, tmp_path):
    comm = m2n.Communicator.host(2)
    src = [np.ones(16, np.float32), np.ones(16, np.float32)]
    dst = [np.zeros(32, np.float32), np.zeros(32, np.float32)]
    before = m2n.stats.compiles
    m2n.all_gather(src, dst, comm)
    assert m2n.stats.compiles == before + 1
    files = list(fresh_cache.glob("*.m2n"))
    assert len(files) == 1 and not list(fresh_cache.glob("*.tmp"))
    # The kernel's binary is kept beside the artifacts, for the next process.
    assert len(list((fresh_cache / "kernels").glob("*.objects"))) == 1
    # Warm: no compilation, not even a lookup of the artifact cache.
    m2n.all_gather(src, dst, comm)
    assert m2n.stats.compiles == before + 1
    # Another process (simulated: the memory cache dropped) finds the file.
    # The host communicator's runtime context, which kept the artifact
    # alive, goes with the cache.
    assert len(comm._contexts) == 1
    m2n.clear_memory_cache()
    assert not comm._contexts
    disk = m2n.stats.disk_hits
    m2n.all_gather(src, dst, comm)
    assert m2n.stats.disk_hits == disk + 1 and m2n.stats.compiles == before + 1
    # A corrupted file is compiled again and rewritten.
    files[0].write_bytes(b"garbage")
    m2n.clear_memory_cache()
    m2n.all_gather(src, dst, comm)
    assert m2n.stats.compiles == before + 2
    assert files[0].read_bytes().startswith(b"M2NA") or files[0].stat().st_size > 100
    # Another shape is another key.
    m2n.all_gather([np.ones(8, np.float32)] * 2, [np.zeros(16, np.float32) for _ in range(2)], comm)
    assert m2n.stats.compiles == before + 3
    np.testing.assert_array_equal(dst[0], np.ones(32, np.float32))


def test_disk_cache_keeps_the_most_recently_used_within_its_limit(fresh_cache):
    comm = m2n.Communicator.host(2)

    def gather(n):
        m2n.all_gather([np.ones(n, np.float32)] * 2,
                       [np.zeros(2 * n, np.float32) for _ in range(2)], comm)
        return max(fresh_cache.glob("*.m2n"), key=lambda p: p.stat().st_mtime_ns)

    first, second = gather(4), gather(8)
    # A disk hit (another process: the memory cache dropped) refreshes the
    # artifact's time; `second` is made the least recently used.
    os.utime(first, (1, 1))
    os.utime(second, (2, 2))
    m2n.clear_memory_cache()
    hits = m2n.stats.disk_hits
    gather(4)
    assert m2n.stats.disk_hits == hits + 1 and first.stat().st_mtime > 2
    # Room for two artifacts: the third write evicts `second`, not `first`.
    m2n.set_cache_limit(first.stat().st_size + second.stat().st_size + 100)
    evictions = m2n.stats.evictions
    third = gather(16)
    assert first.exists() and third.exists() and not second.exists()
    assert m2n.stats.evictions == evictions + 1
    # A limit of 0 keeps only the artifact just written.
    m2n.set_cache_limit(0)
    fourth = gather(32)
    assert list(fresh_cache.glob("*.m2n")) == [fourth]


def test_cache_limit_is_checked(fresh_cache, monkeypatch):
    with pytest.raises(ValueError, match="cache limit"):
        m2n.set_cache_limit(-1)
    with pytest.raises(ValueError, match="cache limit"):
        m2n.set_cache_limit("1G")
    monkeypatch.setenv("M2N_CACHE_MAX_BYTES", "lots")
    with pytest.raises(ValueError, match="M2N_CACHE_MAX_BYTES"):
        m2n.all_gather([np.ones(3, np.float32)] * 2, [np.zeros(6, np.float32) for _ in range(2)],
                       m2n.Communicator.host(2))


def test_topology_files_are_part_of_the_key(tmp_path):
    comm = m2n.Communicator.host(2)
    topology = tmp_path / "t.json"
    src = [np.ones(16, np.float32)] * 2
    dst = [np.zeros(32, np.float32) for _ in range(2)]
    before = m2n.stats.compiles
    for domains in ("[[0, 1]]", "[[0], [1]]"):
        topology.write_text('{"nvlink_gbps": 450, "network_gbps": 50, "domains": %s}' % domains)
        m2n.clear_memory_cache()
        m2n.all_gather(src, dst, comm, options=f"topology={topology}")
        np.testing.assert_array_equal(dst[0], np.ones(32, np.float32))
    # The same path with other contents compiled again.
    assert m2n.stats.compiles == before + 2
    with pytest.raises(m2n.CompileError, match="cannot read the topology file"):
        m2n.all_gather(src, dst, comm, options=f"topology={tmp_path / 'missing.json'}")


def test_disk_cache_can_be_disabled(fresh_cache):
    m2n.set_cache_dir(None)
    comm = m2n.Communicator.host(2)
    dst = [np.zeros(8, np.float32) for _ in range(2)]
    m2n.all_gather([np.ones(4, np.float32)] * 2, dst, comm)
    np.testing.assert_array_equal(dst[1], np.ones(8, np.float32))
    assert not fresh_cache.exists() or not list(fresh_cache.glob("*.m2n"))


def test_dump_dir_holds_every_stage(tmp_path):
    m2n.set_dump_dir(tmp_path / "dump")
    try:
        comm = m2n.Communicator.host(2)
        m2n.all_gather([np.ones(4, np.float32)] * 2, [np.zeros(8, np.float32) for _ in range(2)], comm)
    finally:
        m2n.set_dump_dir(None)
    dumps = list((tmp_path / "dump").glob("*.mlir"))
    assert len(dumps) == 1
    text = dumps[0].read_text()
    for stage in ("m2n-plan-intersections", "m2n-route-topology", "m2n-convert-to-gpu"):
        assert stage in text.replace("M2N", "m2n").lower() or stage.replace("-", "") in text.lower()


def test_options_reach_the_compiler():
    comm = m2n.Communicator.host(2)
    src = [np.ones(16, np.float32)] * 2
    dst = [np.zeros(32, np.float32) for _ in range(2)]
    m2n.all_gather(src, dst, comm, options="strategy=flat max-ctas=4")
    np.testing.assert_array_equal(dst[1], np.ones(32, np.float32))
    with pytest.raises(m2n.CompileError, match="m2n-pipeline"):
        m2n.all_gather(src, dst, comm, options="no-such-option=1")
    # TMA needs Hopper: a chip before sm_90 is refused by name, not compiled
    # for sm_90a behind the caller's back.
    for chip in ("sm_80", "sm_89", "hopper"):
        with pytest.raises(ValueError, match=f"chip={chip}: .* sm_90 .*or newer"):
            m2n.all_gather(src, dst, comm, options=f"chip={chip}")
    m2n.all_gather(src, dst, comm, options="chip=sm_90a")


def test_own_copy_on_the_copy_engine():
    comm = m2n.Communicator.host(2)
    rng = np.random.default_rng(7)
    parts = [rng.integers(-8, 8, 4096).astype(np.float32) for _ in range(2)]
    out = [np.full(4096, np.nan, np.float32) for _ in range(2)]
    m2n.all_reduce(parts, out, comm, options="copy-engine=true engine-min-bytes=0")
    for o in out:
        np.testing.assert_array_equal(o, parts[0] + parts[1])
    # The option reaches the lowering: the artifact is another one.
    from m2n._prepared import compiled
    args = (comm, Mesh([2]), [Partial("sum")], Mesh([2]), [Replicate()], [4096], "float32")
    assert compiled(*args, options="copy-engine=true engine-min-bytes=0").data != compiled(*args).data


two = dict(src_mesh=Mesh([2]), src_placements=[Shard(0)], dst_mesh=Mesh([2]),
           dst_placements=[Replicate()])


def arrays():
    return [np.ones((2, 4), np.float32)] * 2, [np.zeros((4, 4), np.float32) for _ in range(2)]


def test_wrong_number_of_placements():
    src, dst = arrays()
    with pytest.raises(ValueError, match="has 1 axes but 2 placements"):
        m2n.reshard(src, dst, m2n.Communicator.host(2), src_mesh=Mesh([2]),
                    src_placements=[Shard(0), Replicate()], dst_mesh=Mesh([2]),
                    dst_placements=[Replicate()])


@pytest.mark.parametrize("make", [
    lambda: Mesh([2.7]), lambda: Mesh("22"), lambda: Mesh([2], ranks=[0.5, 1.5]),
    lambda: Mesh([True, 2]), lambda: Mesh([2], start_rank=1.0), lambda: Shard("0"),
    lambda: Shard(0.0), lambda: Mesh(4)])
def test_non_integers_are_refused_not_coerced(make):
    with pytest.raises(TypeError, match="integer"):
        make()


def test_numpy_integers_are_integers():
    assert Mesh([np.int64(2)], ranks=[np.int32(0), np.int32(3)]).dims == (2,)
    assert Shard(np.int8(1)).dim == 1


def test_comm_must_be_a_communicator():
    src = [np.zeros(4, np.float32)] * 2
    dst = [np.zeros(8, np.float32), np.zeros(8, np.float32)]
    with pytest.raises(TypeError, match="m2n.Communicator, got str"):
        m2n.all_gather(src, dst, "comm")
    with pytest.raises(TypeError, match="m2n.Communicator, got str"):
        m2n.reshard_many([], "comm")


def test_shape_mismatch():
    src, _ = arrays()
    dst = [np.zeros((4, 5), np.float32), np.zeros((4, 4), np.float32)]
    with pytest.raises(ValueError, match=r"dst\[0\] has shape \[4, 5\], rank 0's part is \[4, 4\]"):
        m2n.reshard(src, dst, m2n.Communicator.host(2), **two)


def test_reshard_many_compiles_once(fresh_cache):
    """A refit's worth of reshards (different layouts, shapes, dtypes, an
    uneven shard and a reduction) through one artifact: one compilation,
    every result right, warm calls compile nothing."""
    comm = m2n.Communicator.host(4)
    tp2, dp2tp2 = Mesh([2]), Mesh([2, 2])
    w1 = rng.standard_normal((6, 8)).astype(np.float32)
    w2 = rng.integers(-100, 100, (5, 3)).astype(np.int32)        # uneven rows
    w3 = rng.standard_normal((4, 4)).astype(np.float16)
    parts3 = [rng.integers(-4, 4, (4, 4)).astype(np.float16) for _ in range(2)]

    def calls():
        out1 = [np.zeros((3, 8), np.float32) for _ in range(4)]
        out2 = [np.zeros((5, 2 if r % 2 == 0 else 1), np.int32) for r in range(4)]
        out3 = [np.zeros((4, 4), np.float16) for _ in range(2)] + [None, None]
        return [
            dict(src=[w1[:, :4].copy(), w1[:, 4:].copy(), None, None], dst=out1,
                 src_mesh=tp2, src_placements=[Shard(1)], dst_mesh=dp2tp2,
                 dst_placements=[Replicate(), Shard(0)]),
            dict(src=[w2[:3].copy(), w2[3:].copy(), None, None], dst=out2,
                 src_mesh=tp2, src_placements=[Shard(0)], dst_mesh=dp2tp2,
                 dst_placements=[Replicate(), Shard(1)], global_shape=(5, 3)),
            dict(src=parts3 + [None, None], dst=out3, src_mesh=tp2,
                 src_placements=[Partial()], dst_mesh=tp2, dst_placements=[Replicate()]),
        ], out1, out2, out3

    def check(out1, out2, out3):
        for r in range(4):
            np.testing.assert_array_equal(out1[r], w1[3 * (r % 2):3 * (r % 2) + 3])
            np.testing.assert_array_equal(out2[r], w2[:, :2] if r % 2 == 0 else w2[:, 2:])
        for o in out3[:2]:
            np.testing.assert_array_equal(o, parts3[0] + parts3[1])

    before = m2n.stats.compiles
    batch, *outs = calls()
    m2n.reshard_many(batch, comm)
    check(*outs)
    assert m2n.stats.compiles == before + 1
    batch, *outs = calls()  # New destinations, same signature: warm.
    m2n.reshard_many(batch, comm)
    check(*outs)
    assert m2n.stats.compiles == before + 1
    with pytest.raises(TypeError, match=r"calls\[0\] must be a dict"):
        m2n.reshard_many([1], comm)
    with pytest.raises(TypeError, match=r"calls\[0\]: unknown argument\(s\) stream"):
        m2n.reshard_many([dict(batch[0], stream=None)], comm)
    with pytest.raises(TypeError, match=r"calls\[0\]: missing dst"):
        m2n.reshard_many([{k: v for k, v in batch[0].items() if k != "dst"}], comm)
    m2n.reshard_many([], comm)  # Nothing to do.
    # The calls run at once (one group): a destination of one call on a
    # tensor of another is refused before anything moves, warm or cold.
    batch, out1, out2, out3 = calls()
    batch[2]["dst"][1] = batch[0]["src"][0].view(np.float16).reshape(-1)[:16].reshape(4, 4)
    poisoned = [o.copy() for o in out1]
    with pytest.raises(ValueError, match=r"calls\[2\]\['dst'\]\[1\] overlaps "
                                         r"calls\[0\]\['src'\]\[0\]"):
        m2n.reshard_many(batch, comm)
    for o, p in zip(out1, poisoned):
        np.testing.assert_array_equal(o, p)


def test_unsigned_bytes_reduce_unsigned():
    """uint8 (ui8): max/min compare unsigned (200 > 100, where an int8 would
    read -56), sums wrap modulo 256; numpy computes the expectation."""
    comm = m2n.Communicator.host(4)
    parts = [rng.integers(0, 256, 77).astype(np.uint8) for _ in range(4)]
    parts[0][0], parts[1][0] = 200, 100
    for op, expect in (("max", np.maximum.reduce(parts)), ("min", np.minimum.reduce(parts)),
                       ("sum", np.add.reduce(parts, dtype=np.uint8))):
        out = [np.zeros(77, np.uint8) for _ in range(4)]
        m2n.all_reduce(parts, out, comm, op=op)
        for o in out:
            np.testing.assert_array_equal(o, expect)


def test_dtype_mismatch():
    src, _ = arrays()
    dst = [np.zeros((4, 4), np.float64) for _ in range(2)]
    with pytest.raises(TypeError, match="dst\\[0\\] has dtype float64, the sources have float32; "
                                        "a reshard casts only between bfloat16, float16"):
        m2n.reshard(src, dst, m2n.Communicator.host(2), **two)
    dst = [np.zeros((4, 4), np.float32), np.zeros((4, 4), np.float16)]
    with pytest.raises(TypeError, match=r"dst\[1\] has dtype float16, the other destinations "
                                        r"have float32"):
        m2n.reshard(src, dst, m2n.Communicator.host(2), **two)
    with pytest.raises(ValueError, match="scale= needs a cast: sources and destinations are "
                                         "both float32"):
        m2n.reshard(src, [np.zeros((4, 4), np.float32)] * 0 + arrays()[1],
                    m2n.Communicator.host(2), scale=2.0, **two)
    with pytest.raises(TypeError, match="scale must be a float, got '2'"):
        m2n.reshard(src, [np.zeros((4, 4), np.float16) for _ in range(2)],
                    m2n.Communicator.host(2), scale="2", **two)
    with pytest.raises(ValueError, match="scale 1e\\+39 is not a finite float32"):
        m2n.reshard(src, [np.zeros((4, 4), np.float16) for _ in range(2)],
                    m2n.Communicator.host(2), scale=1e39, **two)


def test_casts_on_the_way():
    """f32 -> f16 with a scale and f16 -> f32, across meshes and layouts (one
    NVLink domain and two): numpy computes the expectation (one float32
    multiply, round to nearest even)."""
    comm = m2n.Communicator.host(8)
    w = rng.standard_normal((33, 70)).astype(np.float32)
    parts = [w[:17], w[17:]] + [None] * 6
    for options in ("", "topology=" + str(Path(__file__).resolve().parents[2] /
                                          "test/Tools/m2n-run/Inputs/split4.json")):
        out = [None] * 4 + [np.full((33, 35), np.nan, np.float16) for _ in range(4)]
        m2n.reshard(parts, out, comm, src_mesh=Mesh([2]), src_placements=[Shard(0)],
                    dst_mesh=Mesh([2, 2], start_rank=4),
                    dst_placements=[Replicate(), Shard(1)], scale=0.375, options=options,
                    global_shape=(33, 70))
        want = (w * np.float32(0.375)).astype(np.float16)
        for r in range(4, 8):
            half = (r - 4) % 2
            np.testing.assert_array_equal(out[r].view(np.uint16),
                                          want[:, 35 * half:35 * half + 35].view(np.uint16))
        back = [np.zeros((33, 70), np.float32) for _ in range(2)] + [None] * 6
        m2n.reshard(out, back, comm, src_mesh=Mesh([2, 2], start_rank=4),
                    src_placements=[Replicate(), Shard(1)], dst_mesh=Mesh([2]),
                    dst_placements=[Replicate()], options=options, global_shape=(33, 70))
        for b in back[:2]:
            np.testing.assert_array_equal(b, want.astype(np.float32))


def test_tensor_from_a_rank_outside_its_mesh():
    comm = m2n.Communicator.host(3)
    src = [np.ones((2, 4), np.float32)] * 2 + [np.ones((2, 4), np.float32)]
    dst = [np.zeros((4, 4), np.float32) for _ in range(2)] + [None]
    with pytest.raises(ValueError, match=r"src\[2\]: rank 2 is outside the source mesh"):
        m2n.reshard(src, dst, comm, **two)


def test_missing_tensor_of_a_rank_in_the_mesh():
    src, dst = arrays()
    with pytest.raises(ValueError, match=r"dst\[1\]: rank 1 is in the destination mesh"):
        m2n.reshard(src, [dst[0], None], m2n.Communicator.host(2), **two)


def test_non_contiguous_input():
    src = [np.ones((4, 4), np.float32)[::2], np.ones((2, 4), np.float32)]
    _, dst = arrays()
    with pytest.raises(ValueError, match=r"src\[0\] is not contiguous"):
        m2n.reshard(src, dst, m2n.Communicator.host(2), **two)


def test_communicator_too_small():
    src, dst = arrays()
    with pytest.raises(ValueError, match="dst_mesh uses rank 3, the communicator has 2 ranks"):
        m2n.reshard(src, dst, m2n.Communicator.host(2), src_mesh=Mesh([2]),
                    src_placements=[Shard(0)], dst_mesh=Mesh([2], start_rank=2),
                    dst_placements=[Replicate()])


def test_communicator_sizes_are_bounded_and_typed():
    # 2^31 ranks is the bound of m2n's rank numbers; building one is instant
    # (no per-rank table), and one more is refused by name.
    assert m2n.Communicator.host(2**31).size == 2**31
    with pytest.raises(ValueError, match="at most 2\\^31 ranks"):
        m2n.Communicator.host(2**31 + 1)
    with pytest.raises(TypeError, match="size is an int"):
        m2n.Communicator.host("2")


def test_options_must_be_a_string():
    src, dst = arrays()
    for call in (lambda: m2n.reshard(src, dst, m2n.Communicator.host(2), options=None, **two),
                 lambda: m2n.reshard_many([], m2n.Communicator.host(2), options=8)):
        with pytest.raises(TypeError, match="options is a string of --m2n-pipeline options"):
            call()


def test_bad_arguments():
    src, dst = arrays()
    comm = m2n.Communicator.host(2)
    with pytest.raises(ValueError, match="expected 2 entries"):
        m2n.reshard(src[:1], dst, comm, **two)
    with pytest.raises(TypeError, match="numpy array or a torch tensor"):
        m2n.reshard([[1.0], [2.0]], dst, comm, **two)
    with pytest.raises(TypeError, match="takes a list of 2 tensors"):
        m2n.reshard(src[0], dst, comm, **two)
    with pytest.raises(ValueError, match="Partial op must be one of"):
        Partial("avg")
    with pytest.raises(TypeError, match="Partial op must be a string"):
        Partial(np.zeros(3))
    with pytest.raises(ValueError, match="Shard\\(2\\) of a 2-dimensional tensor"):
        m2n.reshard(src, dst, comm, src_mesh=Mesh([2]), src_placements=[Shard(2)],
                    dst_mesh=Mesh([2]), dst_placements=[Replicate()])
    with pytest.raises(ValueError, match="mesh \\[2\\] needs 2 ranks, got 3"):
        Mesh([2], ranks=[0, 1, 2])
    with pytest.raises(TypeError, match="comm must be an m2n.Communicator"):
        m2n.reshard(src, dst, "world", **two)
    with pytest.raises(TypeError, match="m2n does not move"):
        m2n.all_gather([np.ones(2, np.complex64)] * 2, [np.zeros(4, np.complex64)] * 2, comm)


def test_reduce_some_partial_axes_and_keep_the_others():
    # DTensor's [Partial, Shard(0), Partial] -> [Shard(1), Shard(0), Partial]
    # on a [2, 1, 4] mesh: rank (a0, 0, a2) holds columns a0 of the sum of
    # the contributions of (0, 0, a2) and (1, 0, a2), still a Partial.
    comm = m2n.Communicator.host(8)
    parts = [rng.integers(-8, 8, (6, 10)).astype(np.int32) for _ in range(8)]
    out = [np.full((6, 5), -99, np.int32) for _ in range(8)]
    m2n.reshard(parts, out, comm, src_mesh=Mesh([2, 1, 4]),
                src_placements=[Partial("sum"), Shard(0), Partial("sum")],
                dst_mesh=Mesh([2, 1, 4]),
                dst_placements=[Shard(1), Shard(0), Partial("sum")])
    for r in range(8):
        a0, a2 = divmod(r, 4)
        kept = parts[a2] + parts[4 + a2]
        np.testing.assert_array_equal(out[r], kept[:, 5 * a0:5 * (a0 + 1)])
    # The logical tensor is unchanged: the kept partials still sum to it.
    whole = np.concatenate([sum(out[4 * a0 + a2] for a2 in range(4)) for a0 in range(2)], 1)
    np.testing.assert_array_equal(whole, sum(parts))

    # Creating a partial axis is refused before anything runs.
    with pytest.raises(m2n.CompileError, match="does not create them"):
        m2n.reshard(parts, out, comm, src_mesh=Mesh([2, 1, 4]),
                    src_placements=[Partial("sum"), Shard(0), Replicate()],
                    dst_mesh=Mesh([2, 1, 4]),
                    dst_placements=[Shard(1), Shard(0), Partial("sum")])


def test_ordinary_shapes_that_tma_alone_cannot_move():
    # 1000 f32 over 8 ranks: 125 elements (500 bytes) per shard.
    comm = m2n.Communicator.host(8)
    parts = [rng.integers(-8, 8, 1000).astype(np.float32) for _ in range(8)]
    out = [np.zeros(1000, np.float32) for _ in range(8)]
    m2n.all_reduce(parts, out, comm)
    for o in out:
        np.testing.assert_array_equal(o, sum(parts))

    # A 7x5 Partial(sum) over 3 ranks to Shard(1) over 2 ranks: rows of 20
    # and 12/8 bytes.
    comm = m2n.Communicator.host(3)
    parts = [rng.integers(-8, 8, (7, 5)).astype(np.float32) for _ in range(3)]
    out = [np.zeros((7, 3), np.float32), np.zeros((7, 2), np.float32), None]
    m2n.reshard(parts, out, comm, src_mesh=Mesh([3]), src_placements=[Partial("sum")],
                dst_mesh=Mesh([2]), dst_placements=[Shard(1)])
    total = sum(parts)
    np.testing.assert_array_equal(out[0], total[:, :3])
    np.testing.assert_array_equal(out[1], total[:, 3:])

    # Loss scalars: 1-3 f32 per rank, gathered and summed.
    for n in (1, 2, 3):
        comm = m2n.Communicator.host(4)
        losses = [rng.standard_normal(n).astype(np.float32) for _ in range(4)]
        gathered = [np.zeros(4 * n, np.float32) for _ in range(4)]
        m2n.all_gather(losses, gathered, comm)
        for g in gathered:
            np.testing.assert_array_equal(g, np.concatenate(losses))
        summed = [np.zeros(n, np.float32) for _ in range(4)]
        m2n.all_reduce(losses, summed, comm)
        expected = sum(l.astype(np.float64) for l in losses)
        for t in summed:
            np.testing.assert_allclose(t, expected, rtol=1e-5)


def _at_offset(values, offset_elements):
    """A copy of `values` that starts `offset_elements` past an aligned array."""
    base = np.zeros(values.size + offset_elements, values.dtype)
    view = base[offset_elements:].reshape(values.shape)
    view[...] = values
    return view


def test_buffers_at_any_alignment():
    # Views 4 and 8 bytes past 16-byte boundaries: the JIT compiles for the
    # alignment the buffers have (buffer-align), also when a warm call brings
    # less aligned buffers than the first one.
    comm = m2n.Communicator.host(4)
    parts = [rng.integers(-8, 8, (6, 32)).astype(np.float32) for _ in range(4)]
    for offset in (0, 1, 2, 0, 1):
        src = [_at_offset(p, offset) for p in parts]
        out = [_at_offset(np.zeros((6, 32), np.float32), (offset + 1) % 4) for _ in range(4)]
        m2n.all_reduce(src, out, comm)
        for o in out:
            np.testing.assert_array_equal(o, sum(parts))
        gathered = [_at_offset(np.zeros((24, 32), np.float32), offset) for _ in range(4)]
        m2n.all_gather(src, gathered, comm)
        for g in gathered:
            np.testing.assert_array_equal(g, np.concatenate(parts))
    # Half an element in is never aligned enough: a clear error.
    raw = np.zeros(6 * 32 * 4 + 2, np.uint8)
    odd = raw[2:].view(np.float32).reshape(6, 32)
    with pytest.raises(m2n.M2NError, match="not aligned to its 4-byte f32 elements"):
        m2n.all_reduce([odd] + [p.copy() for p in parts[1:]],
                       [np.zeros((6, 32), np.float32) for _ in range(4)], comm)


def test_arguments_are_checked_by_name():
    with pytest.raises(TypeError, match="a communicator's size is an int, got str '4'"):
        m2n.Communicator.host("4")
    with pytest.raises(TypeError, match="from_devices takes a list of CUDA device numbers"):
        m2n.Communicator.from_devices("01")
    comm = m2n.Communicator.host(2)
    parts = [np.zeros(8, np.float32) for _ in range(2)]
    out = [np.zeros(16, np.float32) for _ in range(2)]
    common = dict(src_mesh=Mesh([2]), dst_mesh=Mesh([2]), dst_placements=[Replicate()])
    with pytest.raises(TypeError, match="src_placements must be a sequence of m2n placements"):
        m2n.reshard(parts, out, comm, src_placements=None, **common)
    with pytest.raises(TypeError, match="global_shape must be a sequence of ints, got '16'"):
        m2n.reshard(parts, out, comm, src_placements=[Shard(0)], global_shape="16", **common)
    with pytest.raises(ValueError, match=r"global_shape \[-16\] has an extent < 1"):
        m2n.reshard(parts, out, comm, src_placements=[Shard(0)], global_shape=[-16], **common)
    scalars = [np.zeros((), np.float32) for _ in range(2)]
    with pytest.raises(ValueError, match=r"src\[0\] is 0-dimensional"):
        m2n.reshard(scalars, [np.zeros((), np.float32) for _ in range(2)], comm, src_placements=[Replicate()],
                    **common)


def test_destinations_are_writable_and_disjoint():
    comm = m2n.Communicator.host(2)
    parts = [np.arange(8, dtype=np.float32) + 8 * r for r in range(2)]
    common = dict(src_mesh=Mesh([2]), src_placements=[Shard(0)], dst_mesh=Mesh([2]),
                  dst_placements=[Replicate()])
    frozen = np.zeros(16, np.float32)
    frozen.flags.writeable = False
    with pytest.raises(ValueError, match=r"dst\[0\] is read-only"):
        m2n.reshard(parts, [frozen, np.zeros(16, np.float32)], comm, **common)
    shared = np.zeros(24, np.float32)
    with pytest.raises(ValueError, match=r"dst\[0\] overlaps dst\[1\]"):
        m2n.reshard(parts, [shared[:16], shared[8:]], comm, **common)
    whole = np.zeros(32, np.float32)
    src = [whole[:8], whole[8:16]]
    with pytest.raises(ValueError, match=r"dst\[0\] overlaps src\[0\]"):
        m2n.reshard(src, [whole[:16], whole[16:]], comm, **common)
    # Disjoint views of one allocation are fine.
    out = [whole[16:32], np.zeros(16, np.float32)]
    m2n.reshard(src, out, comm, **common)
    np.testing.assert_array_equal(out[1], np.concatenate(src))
    # Warm calls (same signature, prepared already) check new buffers too.
    with pytest.raises(ValueError, match=r"dst\[1\] overlaps src\[0\]"):
        m2n.reshard(src, [whole[16:32], whole[:16]], comm, **common)
    with pytest.raises(ValueError, match=r"dst\[0\] is read-only"):
        m2n.reshard(src, [frozen, out[1]], comm, **common)
    again = [np.zeros(16, np.float32), np.zeros(16, np.float32)]
    m2n.reshard(src, again, comm, **common)
    np.testing.assert_array_equal(again[0], np.concatenate(src))
    # The same arrays, made read-only after a call that used them.
    m2n.reshard(src, again, comm, **common)
    again[1].flags.writeable = False
    with pytest.raises(ValueError, match=r"dst\[1\] is read-only"):
        m2n.reshard(src, again, comm, **common)


def test_read_only_memory_is_never_a_destination(tmp_path):
    # A read-only memory map (a write would fault) and an array over an
    # immutable bytes object (a write would change a Python constant).
    comm = m2n.Communicator.host(2)
    parts = [np.arange(8, dtype=np.float32) + 8 * r for r in range(2)]
    common = dict(src_mesh=Mesh([2]), src_placements=[Shard(0)], dst_mesh=Mesh([2]),
                  dst_placements=[Replicate()])
    np.zeros(16, np.float32).tofile(tmp_path / "weights")
    mapped = np.memmap(tmp_path / "weights", dtype=np.float32, mode="r", shape=(16,))
    with pytest.raises(ValueError, match=r"dst\[0\] is read-only"):
        m2n.reshard(parts, [mapped, np.zeros(16, np.float32)], comm, **common)
    immutable = bytes(64)
    with pytest.raises(ValueError, match=r"dst\[1\] is read-only"):
        m2n.reshard(parts, [np.zeros(16, np.float32), np.frombuffer(immutable, np.float32)],
                    comm, **common)
    assert immutable == bytes(64)


def test_shapes_beyond_int64_are_refused():
    comm = m2n.Communicator.host(2)
    parts = [np.arange(8, dtype=np.float32) for _ in range(2)]
    out = [np.zeros(16, np.float32) for _ in range(2)]
    common = dict(src_mesh=Mesh([2]), src_placements=[Shard(0)], dst_mesh=Mesh([2]),
                  dst_placements=[Replicate()])
    # 2^62 f32 elements: an element count that fits, a byte size that does
    # not (the verifier's diagnostic, not an abort).
    with pytest.raises(m2n.CompileError, match="more than 2\\^63 - 1 bytes"):
        m2n.reshard(parts, out, comm, global_shape=(2**62,), **common)
    for shape in ((2**70,), (2**40, 2**30)):
        with pytest.raises(ValueError, match="2\\^63 or more elements"):
            m2n.reshard(parts, out, comm, global_shape=shape, **common)
        with pytest.raises(ValueError, match="2\\^63 or more elements"):
            m2n.local_shape(0, mesh=Mesh([2]), placements=[Shard(0)], global_shape=shape)
    assert m2n.local_shape(1, mesh=Mesh([2]), placements=[Shard(0)],
                           global_shape=(2**62,)) == (2**61,)


def test_from_devices_needs_the_devices():
    count = ctypes.c_int(0)
    status = m2n._native.runtime().m2n_cuda_device_count(ctypes.byref(count))
    if status == 0 and count.value > 0:
        with pytest.raises(ValueError, match="does not exist"):
            m2n.Communicator.from_devices([count.value])
    else:  # No GPU here (CI): a clear error, not a communicator that fails later.
        with pytest.raises(m2n.M2NError, match="M2N_UNSUPPORTED"):
            m2n.Communicator.from_devices([0])


def test_refit_fills_the_generator_by_name():
    """A model's weights from a TP2 trainer (ranks 0-1) into a TP2 x DP2
    generator (ranks 2-5): a column-split f32 weight cast to f16 with a
    scale, a row-split one, a replicated bias with uneven shapes; names
    checked both ways before anything moves."""
    comm = m2n.Communicator.host(6)
    tp, gen = Mesh([2]), Mesh([2, 2], start_rank=2)
    qkv = rng.standard_normal((8, 6)).astype(np.float32)
    down = rng.standard_normal((5, 4)).astype(np.float32)
    bias = rng.standard_normal(7).astype(np.float32)
    trainer = {
        "qkv": m2n.Sharded([qkv[:4], qkv[4:], None, None, None, None], tp, [Shard(0)]),
        "down": m2n.Sharded([down[:3], down[3:], None, None, None, None], tp, [Shard(0)],
                            global_shape=(5, 4)),
        "bias": m2n.Sharded([bias, bias, None, None, None, None], tp, [Replicate()]),
    }
    out_qkv = [None, None] + [np.zeros((8, 3), np.float16) for _ in range(4)]
    out_down = [None, None] + [np.zeros((5, 2), np.float32) for _ in range(4)]
    out_bias = [None, None] + [np.zeros(7, np.float32) for _ in range(4)]
    generator = {
        "qkv": m2n.Sharded(out_qkv, gen, [Replicate(), Shard(1)]),
        "down": m2n.Sharded(out_down, gen, [Replicate(), Shard(1)]),
        "bias": m2n.Sharded(out_bias, gen, [Replicate(), Replicate()]),
    }
    with pytest.raises(KeyError, match="the trainer has no tensor named 'extra'"):
        m2n.refit(trainer, dict(generator, extra=generator["bias"]), comm)
    with pytest.raises(KeyError, match="the generator has no tensor named 'bias'"):
        m2n.refit(trainer, {k: v for k, v in generator.items() if k != "bias"}, comm)
    with pytest.raises(TypeError, match=r"generator\['qkv'\] must be an m2n.Sharded"):
        m2n.refit(trainer, dict(generator, qkv=out_qkv), comm)
    assert all(not o.any() for o in out_qkv[2:])  # Nothing moved yet.
    m2n.refit(trainer, generator, comm, scale={"qkv": 0.5})
    for r in range(2, 6):
        cols = slice(0, 3) if r % 2 == 0 else slice(3, 6)
        np.testing.assert_array_equal(out_qkv[r], (qkv[:, cols] * np.float32(0.5)).astype(np.float16))
        np.testing.assert_array_equal(out_down[r], down[:, 0:2] if r % 2 == 0 else down[:, 2:4])
        np.testing.assert_array_equal(out_bias[r], bias)
    # One scale for the model applies to the tensors that are cast only.
    for o in out_qkv[2:] + out_down[2:]:
        o.fill(0)
    m2n.refit(trainer, generator, comm, scale=0.5)
    for r in range(2, 6):
        cols = slice(0, 3) if r % 2 == 0 else slice(3, 6)
        np.testing.assert_array_equal(out_qkv[r], (qkv[:, cols] * np.float32(0.5)).astype(np.float16))
        np.testing.assert_array_equal(out_down[r], down[:, 0:2] if r % 2 == 0 else down[:, 2:4])
    # strict=False moves only what the generator has.
    m2n.refit(trainer, {"bias": generator["bias"]}, comm, strict=False)


def test_bad_arguments_are_type_or_value_errors():
    """Every argument of the public calls replaced by each of a set of wrong
    values: the answer is TypeError, ValueError or an m2n error naming the
    problem, never another exception (AttributeError, KeyError, a crash)."""
    comm = m2n.Communicator.host(2)
    wrong = [None, 3, -1, 2**70, 1.5, "x", b"x", [], [None], [1, 2], (), {}, object(),
             np.float32(1), [Shard(5)], [Partial("sum")], Mesh([3]), Mesh([1]),
             [np.zeros(3)], np.zeros(3)]
    layouts = dict(src_mesh=Mesh([2]), src_placements=[Shard(0)], dst_mesh=Mesh([2]),
                   dst_placements=[Replicate()])
    fresh = lambda: ([np.arange(8, dtype=np.float32) for _ in range(2)],
                     [np.zeros(16, np.float32) for _ in range(2)])
    calls = []
    for key in list(layouts) + ["global_shape", "dtype", "options", "scale", "stream"]:
        calls += [lambda v=v, key=key: m2n.reshard(*fresh(), comm, **{**layouts, key: v})
                  for v in wrong]
    calls += [lambda v=v: m2n.reshard(v, fresh()[1], comm, **layouts) for v in wrong]
    calls += [lambda v=v: m2n.reshard(*fresh(), v, **layouts) for v in wrong]
    for name in ("all_gather", "all_reduce", "reduce_scatter", "all_to_all"):
        op = getattr(m2n, name)
        calls += [lambda v=v, op=op: op(v, fresh()[1], comm) for v in wrong]
        calls += [lambda v=v, op=op: op(*fresh(), comm, op=v) for v in wrong]
    shape = dict(rank=0, mesh=Mesh([2]), placements=[Shard(0)], global_shape=[8])
    for key in shape:
        calls += [lambda v=v, key=key: m2n.local_shape(**{**shape, key: v}) for v in wrong]
    for make in (Mesh, Shard, Partial, m2n.Communicator.host):
        calls += [lambda v=v, make=make: make(v) for v in wrong]
    for call in calls:
        try:
            call()
        except (TypeError, ValueError, m2n.CompileError, m2n.M2NError):
            pass


def test_all_to_all_of_one_dim_is_refused():
    # Shard(0) -> Shard(0) is no all_to_all (it returned the input before).
    comm = m2n.Communicator.host(2)
    src = [np.ones((2, 4), np.float32) for _ in range(2)]
    dst = [np.zeros((2, 4), np.float32) for _ in range(2)]
    with pytest.raises(ValueError, match="split_dim and concat_dim are both 0"):
        m2n.all_to_all(src, dst, comm, split_dim=0, concat_dim=0)
    assert not dst[0].any() and not dst[1].any()


def test_a_wrong_lib_dir_is_an_import_error(tmp_path):
    # The directory named in M2N_LIB_DIR is the only one tried (it fell back
    # to the checkout's build before).
    import subprocess
    import sys
    env = dict(os.environ, M2N_LIB_DIR=str(tmp_path),
               PYTHONPATH=str(Path(__file__).resolve().parents[1]))
    run = subprocess.run([sys.executable, "-c",
                          "import m2n._native as n; n.compiler()"],
                         env=env, capture_output=True, text=True)
    assert run.returncode != 0
    assert f"M2N_LIB_DIR={tmp_path}: no libm2n_compiler.so there" in run.stderr


def _in_threads(work, count):
    """Runs work(0) .. work(count - 1) at once, one thread each."""
    import threading
    threads = [threading.Thread(target=work, args=(t,)) for t in range(count)]
    for x in threads:
        x.start()
    for x in threads:
        x.join()


def test_threads_sharing_a_communicator():
    # Four threads on one Communicator and one prepared call (the same
    # shapes), each with its own arrays: every call fills its own
    # destinations (the shared pointer arrays corrupted the heap before).
    comm = m2n.Communicator.host(2)
    wrong, errors = [], []

    def work(t):
        try:
            for i in range(60):
                src = [np.full((64, 16), 1000 * t + 10 * i + r, np.float32) for r in range(2)]
                dst = [np.zeros((128, 16), np.float32) for _ in range(2)]
                if i % 2:
                    m2n.all_gather(src, dst, comm, dim=0)
                else:
                    m2n.reshard_many([dict(src=src, dst=dst, src_mesh=Mesh([2]),
                                           src_placements=[Shard(0)], dst_mesh=Mesh([2]),
                                           dst_placements=[Replicate()])], comm)
                if not all((d == np.concatenate(src)).all() for d in dst):
                    wrong.append((t, i))
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(e)

    _in_threads(work, 4)
    assert not errors and not wrong


def test_threads_compiling_at_once():
    # Cold compiles from four threads (one communicator each, shapes of
    # their own) share the compiler's one context: one compile at a time.
    m2n.jit.clear_memory_cache()
    results, errors = {}, []

    def work(t):
        try:
            comm = m2n.Communicator.host(2)
            w = rng.standard_normal((2 * (t + 3), 5)).astype(np.float32)
            src = [w[: t + 3].copy(), w[t + 3:].copy()]
            dst = [np.zeros_like(w) for _ in range(2)]
            m2n.all_gather(src, dst, comm, dim=0)
            results[t] = all((d == w).all() for d in dst)
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(e)

    _in_threads(work, 4)
    assert not errors and results == {t: True for t in range(4)}


def test_a_huge_mesh_is_refused_without_listing_its_ranks():
    # Mesh([8192, 8192]) on 2 ranks listed 2^26 ranks (2.7 GB, 14 s) before
    # its ValueError; the check needs only the largest rank.
    import tracemalloc
    comm = m2n.Communicator.host(2)
    big = Mesh([8192, 8192])
    assert big.max_rank == 2**26 - 1 and 2**26 - 1 in big and 2**26 not in big
    assert big.index(5) == 5 and Mesh([2], ranks=[3, 1]).index(1) == 1
    tracemalloc.start()
    try:
        with pytest.raises(ValueError, match="dst_mesh uses rank 67108863, the communicator "
                                             "has 2 ranks"):
            m2n.reshard([np.zeros(4, np.float32)] * 2,
                        [np.zeros(8, np.float32), np.zeros(8, np.float32)], comm,
                        src_mesh=Mesh([2]), src_placements=[Shard(0)],
                        dst_mesh=big, dst_placements=[Replicate(), Replicate()])
        assert tracemalloc.get_traced_memory()[1] < 64 << 20
    finally:
        tracemalloc.stop()
