"""Framework configs in and out: import a Megatron-LM, torchtitan or MaxText
config as a job (YAML and notes), export a job's plan as one."""
from __future__ import annotations

import os
import warnings
from typing import Dict, List, Optional, Sequence, Tuple, Union

from . import _lostflops
from ._args import _MAX_GPUS, _MAX_SLICES, Job, _count, _flag, _job_arg, _strings

def _import_arg(text_or_path: Union[str, "os.PathLike[str]"]) -> Tuple[str, bool]:
    """(text or path, is_path). A path-like object is a path; a string is the
    text itself when it has a line break, whitespace, '=' or starts with '-',
    '[' or '#' (a flag list, a TOML table), else a path (read, with the
    command line's checks and size bound, so a missing file is an error)."""
    if isinstance(text_or_path, os.PathLike):
        return os.fspath(text_or_path), True
    if not isinstance(text_or_path, str):
        raise TypeError("expected a path or the text, got %s" % type(text_or_path).__name__)
    s = text_or_path.strip()
    if os.path.exists(text_or_path):
        return text_or_path, True
    textual = any(c.isspace() for c in s) or "=" in s or s.startswith(("-", "[", "#")) or not s
    return text_or_path, not textual


def _num_gpus(num_gpus: int) -> int:
    return _count("num_gpus", num_gpus, 0, _MAX_GPUS)


def import_megatron(text_or_path: Union[str, "os.PathLike[str]"], num_gpus: int = 0) -> Tuple[str, List[Dict[str, str]]]:
    """Megatron-LM launch command or flags (text or a file) -> (job YAML, notes).

    A one-word string without '=' or a leading '-' is a path; a missing file is
    an error. num_gpus: 0 (the input says) or 1 to 1,000,000.

    Each note is ``{"kind": "ignored" | "not modelled" | "unknown" | "assumed",
    "setting", "message"}``. The job's ``cluster:`` needs completing, e.g.
    ``estimate(yaml, set=["cluster.preset=dgx-h100"])``."""
    text, is_path = _import_arg(text_or_path)
    return _lostflops.import_("megatron", text, is_path, _num_gpus(num_gpus), "", 0, [])


def import_torchtitan(text_or_path: Union[str, "os.PathLike[str]"], num_gpus: int = 0) -> Tuple[str, List[Dict[str, str]]]:
    """torchtitan job config (TOML text or a file) -> (job YAML, notes); see import_megatron."""
    text, is_path = _import_arg(text_or_path)
    return _lostflops.import_("torchtitan", text, is_path, _num_gpus(num_gpus), "", 0, [])


def import_maxtext(text_or_path: Union[str, "os.PathLike[str]"], tpu: str, slices: int = 0,
                   set: Optional[Sequence[str]] = None) -> Tuple[str, List[Dict[str, str]]]:
    """MaxText config (YAML text or a file) on a TPU slice type (``"v5p-128"``)
    -> (job YAML, notes): ``lostflops import maxtext FILE --tpu T [--slices N]
    [--set KEY=VALUE]...``; see import_megatron."""
    text, is_path = _import_arg(text_or_path)
    return _lostflops.import_("maxtext", text, is_path, 0, tpu, _count("slices", slices, 0, _MAX_SLICES),
                              _strings("set", set))


def _export(framework: str, job: Job, set: Optional[Sequence[str]], best: bool, calibration: Optional[str]) -> str:
    text, is_text = _job_arg(job)
    out, notes = _lostflops.export(framework, text, is_text, _strings("set", set), _flag("best", best),
                                   calibration or "")
    # What the command line writes to stderr (what is not modelled, the
    # framework --best priced the plan under) arrives as warnings.
    for n in notes:
        warnings.warn(f"lostflops: {n['kind']}: {n['setting']}: {n['message']}", stacklevel=3)
    return out


def export_megatron(job: Job = None, set: Optional[Sequence[str]] = None, best: bool = False,
                    calibration: Optional[str] = None) -> str:
    """The job's plan as a Megatron-LM launch command (``lostflops export megatron [--best]``;
    best: the search's best plan the job's Megatron stack launches)."""
    return _export("megatron", job, set, best, calibration)


def export_torchtitan(job: Job = None, set: Optional[Sequence[str]] = None, best: bool = False,
                      calibration: Optional[str] = None) -> str:
    """The job's plan as a torchtitan TOML job config (``lostflops export torchtitan [--best]``)."""
    return _export("torchtitan", job, set, best, calibration)


def export_maxtext(job: Job = None, set: Optional[Sequence[str]] = None, best: bool = False,
                   calibration: Optional[str] = None) -> str:
    """The job's plan as MaxText config keys (``lostflops export maxtext [--best]``)."""
    return _export("maxtext", job, set, best, calibration)
