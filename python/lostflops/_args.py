"""Argument checks and conversions shared by the lostflops functions: a job
(path, dict, text or None) for the C++ side, counts in the command line's
ranges, lists of strings."""
from __future__ import annotations

import json
import operator
import os
from typing import Any, Dict, Iterable, List, Optional, Sequence, Tuple, Union

from ._lostflops import LostflopsError

Job = Union[None, str, "os.PathLike[str]", Dict[str, Any]]

_MAX_GPUS = 1_000_000      # the job file's num_gpus range (src/job/hardware_bounds.h kMaxGpus)
_MAX_SWEEP_SIZES = 64      # the command line's --gpus list (src/cli/common.cpp gpu_list)
_MAX_SLICES = 65536        # the command line's --slices range (src/cli/cmd_import.cpp)
_MAX_SIMULATE = 10_000_000  # the command line's --simulate range (src/cli/cmd_goodput.cpp)


def _count(name: str, value: Any, lo: int, hi: int) -> int:
    """An int argument in [lo, hi], else LostflopsError naming it and the
    bound, as the command line says (pybind11 alone answers a value beyond
    the C++ type's range with "incompatible function arguments")."""
    if isinstance(value, bool):
        raise TypeError("%s: expected an int, got bool" % name)
    try:
        value = operator.index(value)  # int, numpy integers
    except TypeError:
        raise TypeError("%s: expected an int, got %s" % (name, type(value).__name__)) from None
    if not lo <= value <= hi:
        error = LostflopsError("%s: %d: expected an integer from %d to %d" % (name, value, lo, hi))
        error.file, error.key, error.message = name, "", "%d: expected an integer from %d to %d" % (value, lo, hi)
        raise error
    return value


def _flag(name: str, value: Any) -> bool:
    """A yes/no argument: True or False (numpy's bool too), else TypeError;
    bool() made best="no" a True, the command line's flag given."""
    if not isinstance(value, bool) and type(value).__name__ != "bool_":
        raise TypeError("%s: expected True or False, got %s" % (name, type(value).__name__))
    return bool(value)


def _sizes(gpus: Optional[Sequence[int]]) -> List[int]:
    """A ``--gpus`` list: at most 64 sizes of 1 to 1,000,000 GPUs each."""
    sizes = [] if gpus is None else list(gpus)
    _count("gpus (sizes in the list)", len(sizes), 0, _MAX_SWEEP_SIZES)
    return [_count("gpus", n, 1, _MAX_GPUS) for n in sizes]


def _job_arg(job: Job) -> Tuple[Optional[str], bool]:
    """(text or path, is_text) for the C++ side; (None, False) for the built-in job."""
    if job is None:
        return None, False
    if isinstance(job, dict):
        return json.dumps(job), True
    if isinstance(job, os.PathLike):
        return os.fspath(job), False
    if isinstance(job, str):
        # A multi-line string or one that opens a mapping is the job itself.
        if "\n" in job or job.lstrip().startswith("{"):
            return job, True
        return job, False
    raise TypeError("job: expected a path, a dict, a YAML/JSON string or None, got %s" % type(job).__name__)


def _strings(name: str, values: Optional[Iterable[str]]) -> List[str]:
    if values is None:
        return []
    if isinstance(values, str):
        raise TypeError("%s: expected a list of strings like ['parallel.tp=4'], got a string" % name)
    out = list(values)
    for v in out:
        if not isinstance(v, str):
            raise TypeError("%s: expected strings, got %s" % (name, type(v).__name__))
    return out


def _job_file(job: Job) -> Optional[str]:
    """A path for commands that re-load the job per lever (explain, report):
    a path as it is, None for the built-in job; a dict or text is refused."""
    text, is_text = _job_arg(job)
    if is_text:
        raise TypeError("explain and report re-load the job for each lever: give a path or None, not a dict or text")
    return text
