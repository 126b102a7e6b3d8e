"""lostflops: step time, memory and MFU of LLM training jobs, from Python.

The functions call the same C++ library as the ``lostflops`` command (no
subprocess) and return what its ``--format json`` prints, as dicts:

    >>> import lostflops
    >>> r = lostflops.estimate("data/published/runs/megatron24-h100-gpt-70b.json", set=["parallel.pp=4"])
    >>> r["step_time_s"], r["mfu"]

A job is a path to a job file, a dict with the job file's sections (README
"Job file"), a YAML/JSON string of one, or None for the built-in default job.
Bad input raises :class:`LostflopsError` (a ``ValueError``) whose ``file`` and
``key`` name what was wrong, as the command line's messages do.
"""
from __future__ import annotations

import json
import os
from typing import Any, Dict, Iterable, List, Optional, Sequence, Tuple, Union

from . import _lostflops
from ._lostflops import LostflopsError
from ._frames import breakdown_frame, ranking_frame

__all__ = [
    "LostflopsError",
    "estimate",
    "search",
    "trace",
    "trace_summaries",
    "merge_summaries",
    "import_megatron",
    "import_torchtitan",
    "export_megatron",
    "export_torchtitan",
    "breakdown_frame",
    "ranking_frame",
]

Job = Union[None, str, "os.PathLike[str]", Dict[str, Any]]


def _job_arg(job: Job) -> Tuple[str, bool]:
    """(text or path, is_text) for the C++ side."""
    if job is None:
        return "", False
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


def estimate(job: Job = None, set: Optional[Sequence[str]] = None, calibration: Optional[str] = None,
             schedule: str = "closed", advice: bool = False) -> Dict[str, Any]:
    """Estimate one job: the dict ``lostflops estimate --format json`` prints.

    job: path, dict, YAML/JSON text, or None (the built-in default job).
    set: overrides ``["section.key=value", ...]`` as ``--set``.
    calibration: a calibration profile path (default: the built-in one).
    schedule: ``"closed"`` (default) or ``"simulate"``.
    advice: when the plan does not fit, add the advice of ``estimate --advice``
    (the changes that would make it fit, the nearest fitting plan and the
    fewest GPUs: a search of every plan, up to a second on large jobs). False
    (the default): no advice is computed; ``memory["fits"]`` and
    ``memory["verdict"]`` still say whether and why it does not fit.
    """
    text, is_text = _job_arg(job)
    return json.loads(_lostflops.estimate(text, is_text, _strings("set", set), calibration or "", schedule,
                                          bool(advice)))


def search(job: Job = None, set: Optional[Sequence[str]] = None, fix: Optional[Sequence[str]] = None,
           by: str = "throughput", top: int = 10, calibration: Optional[str] = None) -> Dict[str, Any]:
    """Search every parallel plan of a job: the dict of
    ``lostflops search --format json --top TOP`` (``top=0``: every evaluated plan).

    Keys under the job's ``parallel:`` are fixed, as are ``fix`` (``["tp=8", "zero=1"]``);
    by: ``throughput``, ``time-to-train``, ``cost`` or ``memory``.
    """
    if not isinstance(top, int) or top < 0:
        raise ValueError("top: expected a count >= 0, got %r" % (top,))
    text, is_text = _job_arg(job)
    return json.loads(_lostflops.search(text, is_text, _strings("set", set), _strings("fix", fix), by, top,
                                        calibration or ""))


def trace(path: Union[str, "os.PathLike[str]", Sequence[Union[str, "os.PathLike[str]"]]],
          hta_compatible: bool = False) -> Dict[str, Any]:
    """Measured breakdown of PyTorch profiler (Kineto) traces, one file per rank:
    the dict of ``lostflops trace --format json FILE...``."""
    paths = [path] if isinstance(path, (str, os.PathLike)) else list(path)
    return json.loads(_lostflops.trace([os.fspath(p) for p in paths], bool(hta_compatible)))


def _summary_of(path: str, hta_compatible: bool) -> str:
    # Module level, so that Dask pickles it by name and its workers import lostflops.
    return _lostflops.trace_summary(path, hta_compatible)


def _trace_files(paths: Union[str, "os.PathLike[str]", Sequence[Union[str, "os.PathLike[str]"]]]) -> List[str]:
    items = [paths] if isinstance(paths, (str, os.PathLike)) else list(paths)
    out: List[str] = []
    for p in (os.fspath(x) for x in items):
        if os.path.isdir(p):  # as the command line: its *.json and *.json.gz files, sorted by name
            out.extend(os.path.join(p, n) for n in sorted(os.listdir(p))
                       if n.endswith((".json", ".json.gz")) and os.path.isfile(os.path.join(p, n)))
        else:
            out.append(p)
    if not out:
        raise LostflopsError("no trace file given")
    return out


def trace_summaries(paths: Union[str, "os.PathLike[str]", Sequence[Union[str, "os.PathLike[str]"]]],
                    client: Any = None, hta_compatible: bool = False) -> List[Dict[str, Any]]:
    """The per-rank summary of each trace file (``lostflops trace FILE
    --summary-out``; docs/trace-summary-format.md), one dict per file, in the
    order of ``paths`` (directories give their *.json and *.json.gz files).

    With a ``dask.distributed`` ``Client`` the files are read on its workers
    (where the traces are; each worker must be able to import lostflops and
    read the paths) and only the summaries, a few KB each, come back; without
    one, on local threads (the C++ reader releases the GIL). Pass the result
    to :func:`merge_summaries`."""
    files = _trace_files(paths)
    hta = bool(hta_compatible)
    if client is not None:
        futures = client.map(_summary_of, files, [hta] * len(files), pure=False)
        texts = client.gather(futures)
    else:
        from concurrent.futures import ThreadPoolExecutor
        with ThreadPoolExecutor(max_workers=min(len(files), os.cpu_count() or 1)) as pool:
            texts = list(pool.map(lambda f: _summary_of(f, hta), files))
    return [json.loads(t) for t in texts]


def merge_summaries(summaries: Iterable[Dict[str, Any]]) -> Dict[str, Any]:
    """The cross-rank answers of ``lostflops trace merge --format json`` from
    summaries (dicts as :func:`trace_summaries` returns or read from summary
    files): the ranks and nodes that hold the others back, skew per process
    group, per-step variability and the ranked triage."""
    texts = [json.dumps(s) for s in summaries]
    return json.loads(_lostflops.merge_summaries(texts, ["summary %d" % i for i in range(len(texts))]))


def _read(text_or_path: str) -> Tuple[str, str]:
    if "\n" not in text_or_path and os.path.isfile(text_or_path):
        with open(text_or_path, encoding="utf-8") as f:
            return f.read(), text_or_path
    return text_or_path, "<text>"


def import_megatron(text_or_path: str, num_gpus: int = 0) -> Tuple[str, List[Dict[str, str]]]:
    """Megatron-LM launch command or flags (text or a file) -> (job YAML, notes).

    Each note is ``{"kind": "ignored" | "not modelled" | "unknown" | "assumed",
    "setting", "message"}``. The job's ``cluster:`` needs completing, e.g.
    ``estimate(yaml, set=["cluster.preset=dgx-h100"])``."""
    text, source = _read(text_or_path)
    return _lostflops.import_megatron(text, source, num_gpus)


def import_torchtitan(text_or_path: str, num_gpus: int = 0) -> Tuple[str, List[Dict[str, str]]]:
    """torchtitan job config (TOML text or a file) -> (job YAML, notes); see import_megatron."""
    text, source = _read(text_or_path)
    return _lostflops.import_torchtitan(text, source, num_gpus)


def export_megatron(job: Job = None, set: Optional[Sequence[str]] = None) -> str:
    """The job's plan as a Megatron-LM launch command (``lostflops export megatron``)."""
    text, is_text = _job_arg(job)
    return _lostflops.export("megatron", text, is_text, _strings("set", set))[0]


def export_torchtitan(job: Job = None, set: Optional[Sequence[str]] = None) -> str:
    """The job's plan as a torchtitan TOML job config (``lostflops export torchtitan``)."""
    text, is_text = _job_arg(job)
    return _lostflops.export("torchtitan", text, is_text, _strings("set", set))[0]
