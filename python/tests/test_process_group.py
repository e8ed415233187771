"""The process-group communicator's agreement on dtypes (one rank per
process: each process sees its own tensors only, so a rank that only sends
does not hold the destination's dtype). The all-reduce (MAX) is emulated
here over what each process contributes; the GPU run is
gpu_process_group_check.py."""
import pytest

from m2n import _process_group
from m2n._tensors import _IR_TYPES


def agree(processes):
    codes = sorted(_IR_TYPES)
    contributions = [_process_group._dtype_codes(src, dst, codes) for src, dst in processes]
    reduced = [max(column) for column in zip(*contributions)]
    return _process_group._agreed_dtypes(reduced, codes)


def test_senders_learn_the_destination_dtype():
    # TP2 -> TP3 on five processes: two senders, three receivers.
    processes = [("bfloat16", None)] * 2 + [(None, "float8_e4m3fn")] * 3
    assert agree(processes) == ("bfloat16", "float8_e4m3fn")


def test_without_destinations_nothing_is_cast():
    assert agree([("float32", None), ("float32", "float32")]) == ("float32", "float32")
    assert agree([("float16", None), ("float16", None)]) == ("float16", "float16")


@pytest.mark.parametrize("processes,message", [
    ([("bfloat16", None), ("float16", None)], "sources have different dtypes"),
    ([("bfloat16", "float8_e4m3fn"), (None, "float8_e5m2")],
     "destinations have different dtypes"),
])
def test_processes_that_disagree_are_refused(processes, message):
    with pytest.raises(TypeError, match=message):
        agree(processes)


def test_no_source_anywhere_is_refused():
    with pytest.raises(ValueError, match="no process passed a source tensor"):
        agree([(None, "bfloat16"), (None, "bfloat16")])


def test_an_unknown_dtype_is_refused_on_every_process():
    # Refused after the all-reduce (raising before it would leave the other
    # processes waiting), on every process alike.
    with pytest.raises(TypeError, match="a dtype m2n does not move"):
        agree([("bfloat16", None), (None, "complex64")])
