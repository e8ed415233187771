"""nccl_m2n's correctness matrix through the Python frontend (host backend),
checked the way nccl_m2n checks it: every byte of the global tensor holds
its global byte index modulo 256, and every destination byte must hold the
value of its global position (the cases: test/GPU/nccl_m2n_matrix.py;
m2n-run runs the whole matrix in test/Tools/m2n-run/nccl-m2n-matrix.test).

bf16 cases move int16 arrays here: numpy has no bfloat16, and a reshard
moves the same bytes whatever 2-byte type it names."""
import importlib.util
import itertools
from pathlib import Path

import numpy as np
import pytest

import m2n
from m2n import Mesh, Replicate, Shard

_MATRIX = Path(__file__).resolve().parents[2] / "test" / "GPU" / "nccl_m2n_matrix.py"
_spec = importlib.util.spec_from_file_location("nccl_m2n_matrix", _MATRIX)
matrix = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(matrix)

WORLD = 8
MAX_ELEMENTS = 1 << 20
DTYPES = {4: np.float32, 2: np.int16, 1: np.uint8}


def _cases():
    for case in matrix.build_cases():
        layout = case.layout_at(WORLD)
        if isinstance(layout, str) or case.elements() > MAX_ELEMENTS:
            continue
        yield pytest.param(case, layout, id=case.name)


def _placements(names):
    return [Replicate() if name == "replicate" else Shard(int(name[6:-1])) for name in names]


def _local_boxes(shape, side):
    """{rank: tuple of slices}: each rank's part of the global tensor
    (every split here is even; mesh ranks in row-major order)."""
    dims, placements, base = side
    boxes = {}
    for local, coords in enumerate(itertools.product(*(range(d) for d in dims))):
        box = [slice(0, extent) for extent in shape]
        for axis, name in enumerate(placements):
            if name == "replicate":
                continue
            d = int(name[6:-1])
            part = box[d].stop // dims[axis] if box[d].start == 0 else None
            assert part is not None, "one mesh axis shards each dimension here"
            box[d] = slice(coords[axis] * part, (coords[axis] + 1) * part)
        boxes[base + local] = tuple(box)
    return boxes


@pytest.mark.parametrize("case,layout", list(_cases()))
def test_nccl_m2n_case(case, layout):
    dtype = DTYPES[case.esz]
    shape = tuple(case.dims)
    # nccl_m2n's pattern: byte i of the global tensor is i % 256.
    nbytes = case.elements() * case.esz
    whole = (np.arange(nbytes, dtype=np.uint64) % 256).astype(np.uint8).view(dtype).reshape(shape)
    comm = m2n.Communicator.host(WORLD)
    src_boxes = _local_boxes(shape, layout[0])
    dst_boxes = _local_boxes(shape, layout[1])
    src = [whole[src_boxes[r]].copy() if r in src_boxes else None for r in range(WORLD)]
    dst = [None] * WORLD
    for r, box in dst_boxes.items():
        dst[r] = np.empty(whole[box].shape, dtype)
        dst[r].view(np.uint8)[...] = 0xA5  # Poisoned.
    m2n.reshard(src, dst, comm,
                src_mesh=Mesh(layout[0][0], start_rank=layout[0][2]),
                src_placements=_placements(layout[0][1]),
                dst_mesh=Mesh(layout[1][0], start_rank=layout[1][2]),
                dst_placements=_placements(layout[1][1]))
    for r, box in dst_boxes.items():
        np.testing.assert_array_equal(dst[r].view(np.uint8), whole[box].view(np.uint8),
                                      err_msg=f"{case.name}: rank {r}")
