"""The commands on a job (estimate, search, explain, report, goodput) and
validate and list: each returns what the command line's ``--format json``
prints, as a dict (report: the HTML text)."""
from __future__ import annotations

import json
import os
import warnings
from typing import Any, Dict, Optional, Sequence, Union

from . import _lostflops
from ._args import _MAX_SIMULATE, Job, _count, _flag, _job_arg, _job_file, _sizes, _strings

def _noted(result):
    """The text of a (text, notes) pair; the notes (what the command line
    writes on stderr: the plan the search chose for a job without one) as
    warnings."""
    text, notes = result
    for n in notes:
        warnings.warn(f"lostflops: {n['kind']}: {n['setting']}: {n['message']}", stacklevel=3)
    return text


def estimate(job: Job = None, set: Optional[Sequence[str]] = None, calibration: Optional[str] = None,
             schedule: str = "closed", advice: Union[bool, str] = "if_cheap", best: bool = False) -> Dict[str, Any]:
    """Estimate one job: the dict ``lostflops estimate [--best] --format json`` prints.

    job: path, dict, YAML/JSON text, or None (the built-in default job).
    set: overrides ``["section.key=value", ...]`` as ``--set``.
    calibration: a calibration profile path (default: the built-in one).
    schedule: ``"closed"`` (default) or ``"simulate"``.
    advice: when the plan does not fit, the changes that would make it fit.
    ``"if_cheap"`` (the default, as ``lostflops estimate``): its searches of
    the nearest fitting plan and the fewest GPUs only when provably cheap;
    True (``estimate --advice``): those searches to the end (a search of
    every plan, up to a second on large jobs); False: no advice at all
    (``memory["fits"]`` and ``memory["verdict"]`` still say whether and why).
    With ``training.train_tokens`` the dict has the whole run under ``"run"``.
    best: the search's best plan of the job (``--best``: its parallel keys
    kept, its framework's rules) instead of its own; a job without a
    ``parallel:`` section is searched anyway. The plan searched arrives as a
    warning, as the command line's note on stderr.
    """
    text, is_text = _job_arg(job)
    mode = {False: "none", True: "full", "if_cheap": "if_cheap"}.get(advice) if isinstance(advice, (bool, str)) else None
    if mode is None:
        raise ValueError("advice: expected False, 'if_cheap' or True, got %r" % (advice,))
    return json.loads(_noted(_lostflops.estimate(text, is_text, _strings("set", set), calibration or "", schedule,
                                                 mode, _flag("best", best))))


def search(job: Job = None, set: Optional[Sequence[str]] = None, fix: Optional[Sequence[str]] = None,
           by: str = "throughput", top: int = 5, calibration: Optional[str] = None,
           gpus: Optional[Sequence[int]] = None, min_gpus: bool = False,
           gpu_hour_price: Optional[float] = None) -> Dict[str, Any]:
    """Search every parallel plan of a job: the dict of
    ``lostflops search --format json --top TOP`` (``top=0``: every evaluated
    plan, as ``--top all``; default 5 as the command line).

    Keys under the job's ``parallel:`` are fixed, as are ``fix`` (``["tp=8", "zero=1"]``);
    by: ``throughput``, ``time-to-train``, ``cost`` or ``memory``. With
    ``time-to-train`` or ``cost`` and ``training.train_tokens`` the first
    plans are re-ranked by the whole run (``run_rescored_plans``, ``run``).
    gpu_hour_price: ``--gpu-hour-price`` (the run's price too).
    gpus: ``--gpus`` sizes (a list of GPU counts); min_gpus: ``--min-gpus``;
    either gives the sweep's dict ``{"schema_version", "sweep": [...]}``.
    """
    if isinstance(top, bool):
        raise ValueError("top: expected a count >= 0, got %r" % (top,))
    _count("top", top, 0, 2 ** 63 - 1)
    sizes = _sizes(gpus)
    if gpus is not None and not sizes:
        raise ValueError("gpus: expected a non-empty list of GPU counts")
    if sizes and min_gpus:
        raise ValueError("gpus and min_gpus: give one (the command line's --gpus and --min-gpus exclude each other)")
    text, is_text = _job_arg(job)
    return json.loads(_lostflops.search(text, is_text, _strings("set", set), _strings("fix", fix), by, top,
                                        calibration or "", sizes, _flag("min_gpus", min_gpus),
                                        float(gpu_hour_price or 0)))


def explain(job: Job = None, set: Optional[Sequence[str]] = None, calibration: Optional[str] = None,
            best: bool = False) -> Dict[str, Any]:
    """The MFU waterfall and the three biggest levers: ``lostflops explain [--best] --format json``
    (best: of the search's best plan, as estimate)."""
    return json.loads(_noted(_lostflops.explain(_job_file(job), _strings("set", set), calibration or "",
                                                _flag("best", best))))


def report(job: Job = None, set: Optional[Sequence[str]] = None, calibration: Optional[str] = None,
           gpus: Optional[Sequence[int]] = None, best: bool = False) -> str:
    """The self-contained HTML report ``lostflops report -o FILE`` writes, as text
    (gpus: ``--gpus``, the scaling curve's GPU counts; best: ``--best``, of the
    search's best plan, as estimate)."""
    return _noted(_lostflops.report(_job_file(job), _strings("set", set), calibration or "", _sizes(gpus),
                                    _flag("best", best)))


def goodput(job: Job = None, set: Optional[Sequence[str]] = None, calibration: Optional[str] = None,
            simulate: int = 0, seed: int = 0, best: bool = False) -> Dict[str, Any]:
    """The whole run (failures, checkpoints, restarts, data stalls, time to
    train, GPU-hours, cost, energy): ``lostflops goodput --format json
    [--simulate N --seed S] [--best]`` (best: of the search's best plan, as
    estimate). Needs ``training.train_tokens``."""
    _count("simulate", simulate, 0, _MAX_SIMULATE)
    if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed < 2 ** 64:
        raise ValueError("seed: expected an integer from 0 to 2^64 - 1, got %r" % (seed,))
    text, is_text = _job_arg(job)
    return json.loads(_noted(_lostflops.goodput(text, is_text, _strings("set", set), calibration or "", simulate,
                                                seed, _flag("best", best))))


def validate(table: Union[str, "os.PathLike[str]"], calibration: Optional[str] = None,
             fit_on: Optional[Sequence[str]] = None) -> Dict[str, Any]:
    """Published vs predicted runs, in sample and leave-one-source-out:
    ``lostflops validate TABLE --format json [--fit-on T]...``."""
    return json.loads(_lostflops.validate(os.fspath(table), calibration or "", _strings("fit_on", fit_on)))


def catalog(kind: str) -> Dict[str, Any]:
    """What a built-in catalog holds: ``lostflops list KIND --format json``;
    kind: ``gpus``, ``models``, ``clusters`` or ``frameworks``."""
    return json.loads(_lostflops.catalog(kind))
