"""m2n.refit: every weight of a model from the trainer's layout into the
generator's in one call (one compilation, one launch per rank), the job an
RL refit does after every training step."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping, Optional, Sequence, Union

from ._many import reshard_many
from .comm import Communicator
from .layout import Mesh, Placement


def _dtype(tensors) -> Optional[str]:
    """The dtype name of the first tensor given ("bfloat16", "float32")."""
    first = next((t for t in tensors if t is not None), None)
    return None if first is None else str(first.dtype).replace("torch.", "")


@dataclass(frozen=True)
class Sharded:
    """One tensor on one side of a refit: its part on every rank of the
    communicator (None outside `mesh`) and its layout. `global_shape` is
    needed where the parts do not tell it (uneven shards). A generator
    tensor in float8 with scales from the data (docs/fp8-scaling.md) names
    its `scaling` ('tensor', 'block(R, C)', 'mx') and the scale tensor of
    every rank (`scales`, shaped by m2n.scale_shape), which each refit
    fills."""

    tensors: Sequence[Any]
    mesh: Mesh
    placements: Sequence[Placement]
    global_shape: Optional[Sequence[int]] = None
    scaling: Optional[str] = None
    scales: Optional[Sequence[Any]] = None


def refit(trainer: Mapping[str, Sharded], generator: Mapping[str, Sharded],
          comm: Communicator, stream=None, *,
          scale: Union[None, float, Mapping[str, float]] = None,
          options: str = "", strict: bool = True) -> None:
    """Fills every generator tensor from the trainer tensor of the same name,
    all of them as one group (m2n.reshard_many). A generator tensor of
    another float dtype is cast on the way; `scale` is the cast's factor,
    one for every tensor or a mapping by name (a single one skips the
    tensors quantized with a `scaling`, whose scales come from the data).
    With `strict` (the default)
    every trainer tensor must have a generator tensor; a generator tensor
    without a trainer tensor is always an error (KeyError naming them)."""
    for side, tensors in (("trainer", trainer), ("generator", generator)):
        for name, value in tensors.items():
            if not isinstance(value, Sharded):
                raise TypeError(f"{side}[{name!r}] must be an m2n.Sharded, "
                                f"got {type(value).__name__}")
            if side == "trainer" and (value.scaling is not None or
                                      value.scales is not None):
                raise ValueError(f"trainer[{name!r}] has a scaling or scales: they belong "
                                 f"to the generator tensor the refit quantizes into")
    missing = [name for name in generator if name not in trainer]
    if missing:
        raise KeyError(f"the trainer has no tensor named {', '.join(map(repr, missing))}")
    unused = [name for name in trainer if name not in generator]
    if strict and unused:
        raise KeyError(f"the generator has no tensor named {', '.join(map(repr, unused))} "
                       f"(strict=False moves only the generator's)")
    if isinstance(scale, Mapping):
        unknown = [name for name in scale if name not in generator]
        if unknown:
            raise KeyError(f"scale names tensors the generator does not have: "
                           f"{', '.join(map(repr, unknown))}")
    calls = []
    for name, dst in generator.items():
        src = trainer[name]
        shape = src.global_shape if src.global_shape is not None else dst.global_shape
        call = dict(src=src.tensors, dst=dst.tensors, src_mesh=src.mesh,
                    src_placements=src.placements, dst_mesh=dst.mesh,
                    dst_placements=dst.placements, global_shape=shape)
        factor = scale.get(name) if isinstance(scale, Mapping) else scale
        # One scale for every tensor applies to those that are cast (norms
        # and biases kept in their dtype take none); a named one always.
        if factor is not None and (isinstance(scale, Mapping) or
                                   (_dtype(src.tensors) != _dtype(dst.tensors) and
                                    dst.scaling is None)):
            call["scale"] = factor
        if dst.scaling is not None or dst.scales is not None:
            call["scaling"] = dst.scaling
            call["scales"] = dst.scales
        calls.append(call)
    reshard_many(calls, comm, stream, options=options)
