"""Layouts with explicit split boundaries (Shard(d, boundaries=...) or
Shard(d, sizes=...)) on the host backend, checked against numpy slicing
written here from the boundaries alone (not from m2n's layout code)."""
import os
import time

import numpy as np
import pytest

import m2n
from m2n import Mesh, Replicate, Shard


def parts(w, boundaries, dim):
    """numpy's view of the parts: w cut along `dim` at `boundaries`."""
    return [np.take(w, range(lo, hi), axis=dim) for lo, hi in zip(boundaries, boundaries[1:])]


def test_padded_vocabulary_to_torch_chunk_rows():
    """A vocabulary of 10 rows that the trainer split 4, 4, 2 (padded per
    rank) to a generator whose 2 ranks hold torch.chunk's halves."""
    comm = m2n.Communicator.host(5)
    w = np.arange(30, dtype=np.float32).reshape(10, 3)
    src = parts(w, [0, 4, 8, 10], 0) + [None, None]
    dst = [None] * 3 + [np.full((5, 3), -1, np.float32) for _ in range(2)]
    m2n.reshard(src, dst, comm, src_mesh=Mesh([3]), src_placements=[Shard(0, sizes=[4, 4, 2])],
                dst_mesh=Mesh([2], start_rank=3), dst_placements=[Shard(0)])
    np.testing.assert_array_equal(dst[3], w[:5])
    np.testing.assert_array_equal(dst[4], w[5:])
    # The global shape comes from the boundaries where the other side splits evenly.
    assert m2n.local_shape(2, mesh=Mesh([3]), placements=[Shard(0, sizes=[4, 4, 2])],
                           global_shape=(10, 3)) == (2, 3)


def test_empty_parts_and_two_axes():
    """Mesh [2, 2] splitting the columns into 4 parts (row-major: axis 0
    outermost), one of them empty, to 3 ranks splitting the rows unevenly."""
    comm = m2n.Communicator.host(7)
    w = np.arange(6 * 7, dtype=np.int32).reshape(6, 7)
    column_parts = parts(w, [0, 3, 3, 4, 7], 1)
    src = column_parts + [None] * 3
    dst = [None] * 4 + [np.full((n, 7), -1, np.int32) for n in (1, 0, 5)]
    m2n.reshard(src, dst, comm, src_mesh=Mesh([2, 2]),
                src_placements=[Shard(1, boundaries=[0, 3, 3, 4, 7]), Shard(1)],
                dst_mesh=Mesh([3], start_rank=4), dst_placements=[Shard(0, [0, 1, 1, 6])],
                global_shape=(6, 7))
    for d, want in zip(dst[4:], parts(w, [0, 1, 1, 6], 0)):
        np.testing.assert_array_equal(d, want)


def random_boundaries(rng, extent, count):
    cuts = sorted(int(c) for c in rng.integers(0, extent + 1, count - 1))
    return [0] + cuts + [extent]


def test_random_boundaries_against_numpy():
    """Random reshards between layouts whose every split is at random
    explicit boundaries (one or two mesh axes a dimension, empty parts,
    partial-free), run on the host backend in one reshard_many and compared
    with numpy slicing."""
    seed = int(os.environ.get("M2N_PROPERTY_SEED", "0")) or int(time.time())
    print(f"seed {seed} (M2N_PROPERTY_SEED={seed} repeats it)")
    rng = np.random.default_rng(seed)
    ranks = 8
    comm = m2n.Communicator.host(ranks)

    def layout(shape, start):
        axes = int(rng.integers(1, 3))
        dims = [int(rng.integers(1, 3)) for _ in range(axes)]
        size = int(np.prod(dims))
        splits = [int(rng.integers(0, len(shape) + 1)) for _ in range(axes)]  # len = replicate
        placements, boundaries = [], {}
        for axis, d in enumerate(splits):
            if d == len(shape):
                placements.append(Replicate())
            elif d in boundaries:
                placements.append(Shard(d))
            else:
                parts_of_d = int(np.prod([n for n, s in zip(dims, splits) if s == d]))
                boundaries[d] = random_boundaries(rng, shape[d], parts_of_d)
                placements.append(Shard(d, boundaries=boundaries[d]))
        return Mesh(dims, start_rank=start), placements, boundaries, splits, dims

    def part(w, mesh, boundaries, splits, dims, position):
        coords = np.unravel_index(position, dims)
        index = [slice(None)] * w.ndim
        for d, b in boundaries.items():
            p = 0
            for axis, s in enumerate(splits):
                if s == d:
                    p = p * dims[axis] + int(coords[axis])
            index[d] = slice(b[p], b[p + 1])
        return np.ascontiguousarray(w[tuple(index)])

    calls, wants = [], []
    for _ in range(60):
        shape = tuple(int(rng.integers(1, 8)) for _ in range(int(rng.integers(1, 4))))
        w = rng.standard_normal(shape).astype(np.float32)
        src_mesh, src_pl, src_b, src_s, src_d = layout(shape, int(rng.integers(0, 5)))
        dst_mesh, dst_pl, dst_b, dst_s, dst_d = layout(shape, int(rng.integers(0, 5)))
        src = [None] * ranks
        for position, r in enumerate(src_mesh.rank_list()):
            src[r] = part(w, src_mesh, src_b, src_s, src_d, position)
        dst = [None] * ranks
        want = [None] * ranks
        for position, r in enumerate(dst_mesh.rank_list()):
            want[r] = part(w, dst_mesh, dst_b, dst_s, dst_d, position)
            dst[r] = np.full(want[r].shape, np.nan, np.float32)
        calls.append(dict(src=src, dst=dst, src_mesh=src_mesh, src_placements=src_pl,
                          dst_mesh=dst_mesh, dst_placements=dst_pl, global_shape=shape))
        wants.append(want)
    m2n.reshard_many(calls, comm, group=False)
    for index, (call, want) in enumerate(zip(calls, wants)):
        for r in range(ranks):
            if want[r] is not None:
                np.testing.assert_array_equal(
                    call["dst"][r], want[r],
                    err_msg=f"seed {seed} case {index} rank {r}: {call['src_placements']} -> "
                            f"{call['dst_placements']} of {call['global_shape']}")


def test_bad_boundaries_are_named():
    with pytest.raises(ValueError, match="start at 1, not 0"):
        Shard(0, [1, 2, 3])
    with pytest.raises(ValueError, match=r"decrease \(3 then 2\)"):
        Shard(0, [0, 3, 2, 5])
    with pytest.raises(ValueError, match="one more entry than parts"):
        Shard(0, [0])
    with pytest.raises(ValueError, match="not both"):
        Shard(0, [0, 1], sizes=[1])
    with pytest.raises(ValueError, match="must not be negative"):
        Shard(0, sizes=[2, -1])
    with pytest.raises(TypeError, match="must be an integer"):
        Shard(0, [0, 1.5, 3])
    kwargs = dict(mesh=Mesh([3]), global_shape=(7, 2))
    with pytest.raises(ValueError, match=r"gives 3 boundaries of dimension 0 but the mesh "
                                          r"axes sharding it cut it into 3 parts"):
        m2n.local_shape(0, placements=[Shard(0, [0, 2, 7])], **kwargs)
    with pytest.raises(ValueError, match=r"end at 6, not at its extent 7"):
        m2n.local_shape(0, placements=[Shard(0, [0, 2, 4, 6])], **kwargs)
    with pytest.raises(ValueError, match="the first axis carries every part's boundaries"):
        m2n.local_shape(0, mesh=Mesh([2, 2]), placements=[Shard(0), Shard(0, [0, 1, 2, 3, 7])],
                        global_shape=(7,))
    comm = m2n.Communicator.host(2)
    with pytest.raises(ValueError, match="end at 3, not at its extent 4"):
        m2n.reshard([np.zeros((1,), np.float32), np.zeros((2,), np.float32)],
                    [np.zeros((4,), np.float32) for _ in range(2)], comm, src_mesh=Mesh([2]),
                    src_placements=[Shard(0, [0, 1, 3])], dst_mesh=Mesh([2]),
                    dst_placements=[Replicate()], global_shape=(4,))


def test_dtensor_cannot_express_boundaries():
    from m2n import dtensor
    with pytest.raises(ValueError, match="a DTensor has no placement for Shard"):
        dtensor.placement_of(Shard(0, [0, 1, 3]))
    assert dtensor.placement_of(Shard(1)) == Shard(1)


def test_uneven_collectives():
    """all_gather of parts at explicit boundaries (an empty one included)
    and reduce_scatter into them, on 3 ranks."""
    comm = m2n.Communicator.host(3)
    w = np.arange(14, dtype=np.float32).reshape(7, 2)
    gathered = [np.full((7, 2), -1, np.float32) for _ in range(3)]
    m2n.all_gather(parts(w, [0, 5, 5, 7], 0), gathered, comm, dim=0, boundaries=[0, 5, 5, 7])
    for g in gathered:
        np.testing.assert_array_equal(g, w)
    contributions = [w * (r + 1) for r in range(3)]
    out = [np.full((n, 2), -1, np.float32) for n in (1, 6, 0)]
    m2n.reduce_scatter(contributions, out, comm, dim=0, boundaries=[0, 1, 7, 7])
    for o, want in zip(out, parts(6 * w, [0, 1, 7, 7], 0)):
        np.testing.assert_array_equal(o, want)
