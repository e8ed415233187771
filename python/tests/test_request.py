"""The compiler's structured request (m2n-c/Compiler.h, what the JIT sends
instead of IR text): the module it builds, the same artifact as that
module's text compiled, and every bad descriptor named."""
import ctypes

import pytest

from m2n import CompileError, Mesh, Partial, Replicate, Shard, _native
from m2n._request import Request, ReshardSpec


def specs():
    return [
        # A quantizing reshard (DeepSeek-V3's blocks), TP2 -> TP2 x DP2.
        ReshardSpec(Mesh([2]), (Shard(1),), Mesh([2, 2], start_rank=2),
                    (Replicate(), Shard(1)), (256, 512), "bfloat16", "float8_e4m3fn",
                    scaling="block(128, 128)"),
        # A cast by a constant, into explicit boundaries on a strided mesh.
        ReshardSpec(Mesh([2], ranks=[0, 3]), (Shard(0),), Mesh([3]),
                    (Shard(0, boundaries=[0, 1, 6, 10]),), (10, 4), "float32", "bfloat16",
                    scale=0.5),
        # A reduction.
        ReshardSpec(Mesh([2]), (Partial("max"),), Mesh([2]), (Replicate(),), (7,), "int32"),
    ]


def test_the_module_a_request_builds():
    text = Request("refit", 6, specs(), group=True).ir()
    assert "func.func @refit(%arg0: !m2n.comm<6>" in text
    assert ("{scaling = #m2n.scaling<block(128, 128)>} : !m2n.comm<6>, "
            "!m2n.dist<256x512xbf16, #m2n.layout<#m2n.mesh<[2]>, [shard<1>]>> -> "
            "!m2n.dist<256x512xf8E4M3FN, #m2n.layout<#m2n.mesh<[2, 2], base = 2>, "
            "[replicate, shard<1>]>>, !m2n.dist<2x4xf32, #m2n.layout<#m2n.mesh<[2, 2], "
            "base = 2>, [replicate, shard<1>]>>") in text
    assert ("{scale = 5.000000e-01 : f32} : !m2n.comm<6>, !m2n.dist<10x4xf32, "
            "#m2n.layout<#m2n.mesh<[2], ranks = [0, 3]>, [shard<0>]>> -> "
            "!m2n.dist<10x4xbf16, #m2n.layout<#m2n.mesh<[3]>, [shard<0, [0, 1, 6, 10]>]>>"
            ) in text
    assert "[partial<max>]>> -> !m2n.dist<7xi32" in text
    assert 'm2n.group "refit"(%result, %result_0, %result_1)' in text
    # torch.chunk's boundaries are written shard<d> (one spelling each).
    chunked = Request("f", 2, [ReshardSpec(Mesh([2]), (Shard(0, boundaries=[0, 4, 7]),),
                                           Mesh([2]), (Replicate(),), (7,), "float32")],
                      group=False).ir()
    assert "[shard<0>]" in chunked and "m2n.group" not in chunked


def test_a_request_compiles_as_its_module_does():
    request = Request("refit", 6, specs(), group=True)
    assert _native.compile_request(request.c) == _native.compile_ir(request.ir())


def request_with(**changes):
    """A valid one-reshard request, then `changes` applied to its C
    descriptors (request.c, reshard, the destination layout, its first
    placement)."""
    request = Request("f", 4, [ReshardSpec(Mesh([2]), (Shard(0),), Mesh([2], start_rank=2),
                                           (Shard(0),), (8, 4), "float32")], group=False)
    reshard = request.c.reshards[0]
    for name, value in changes.items():
        target, field = name.split("__")
        obj = {"request": request.c, "reshard": reshard, "dst": reshard.dst,
               "placement": reshard.dst.placements[0]}[target]
        setattr(obj, field, value)
    return request


@pytest.mark.parametrize("changes, message", [
    (dict(request__version=2), "a compile request of version 2; this compiler reads version 1"),
    (dict(request__comm_size=0), "needs a name, a communicator of at least one rank"),
    (dict(request__reshard_count=0), "at least one reshard"),
    (dict(request__name=b""), "needs a name"),
    (dict(reshard__tensor_rank=0), "reshard 0: a tensor of 1 to 64 dimensions"),
    (dict(reshard__src_type=b"bf17"), "reshard 0: the source element type .bf17. is not one"),
    (dict(reshard__dst_type=b"tensor<4xf32>"),
     "the destination element type .tensor<4xf32>. is not one"),
    (dict(dst__mesh_axes=0), "reshard 0: the destination: a mesh needs 1 to 64 axes"),
    (dict(dst__base=3), "reshard 0: the destination: "),
    (dict(placement__kind=7), "the destination: placement 0 has an unknown kind"),
    (dict(placement__dim=2), "the destination: "),
    (dict(reshard__scaling=9), "reshard 0: an unknown scaling"),
    (dict(reshard__scaling=2), "block scaling takes positive block rows and columns"),
])
def test_bad_descriptors_are_named(changes, message):
    request = request_with(**changes)
    with pytest.raises(CompileError, match=message.replace("(", r"\(").replace(")", r"\)")):
        _native.compile_request(request.c)
    with pytest.raises(CompileError, match=message.replace("(", r"\(").replace(")", r"\)")):
        _native.request_ir(request.c)


def test_explicit_boundaries_are_checked_by_the_layout_rules():
    request = request_with()
    boundaries = (ctypes.c_int64 * 3)(0, 3, 9)  # Past the extent 8.
    placement = request.c.reshards[0].dst.placements[0]
    placement.boundaries = ctypes.cast(boundaries, ctypes.POINTER(ctypes.c_int64))
    placement.boundary_count = 3
    with pytest.raises(CompileError, match="reshard 0: the destination: .*9"):
        _native.compile_request(request.c)


def test_a_type_beyond_64_bits_is_the_types_verifier_message():
    request = Request("f", 2, [ReshardSpec(Mesh([2]), (Shard(0),), Mesh([2]), (Replicate(),),
                                           (2**62,), "float32")], group=False)
    with pytest.raises(CompileError, match="reshard 0: .*more than 2\\^63 - 1 bytes"):
        _native.compile_request(request.c)


def test_a_request_is_keyed_by_what_the_compiler_takes():
    def text(scale):
        return Request("f", 2, [ReshardSpec(Mesh([2]), (Shard(0),), Mesh([2]), (Replicate(),),
                                            (8,), "float32", "bfloat16", scale=scale)],
                       group=False).text
    # 0.1 and its float32 rounding are one float32 scale: one artifact.
    assert text(0.1) == text(0.100000001490116119384765625)
    assert text(0.1) != text(0.2)
