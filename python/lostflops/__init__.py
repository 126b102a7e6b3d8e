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
import operator
import os
import warnings
from typing import Any, Dict, Iterable, List, Optional, Sequence, Tuple, Union

from . import _lostflops
from ._lostflops import LostflopsError
from ._frames import breakdown_frame, ranking_frame

__all__ = [
    "LostflopsError",
    "estimate",
    "search",
    "explain",
    "report",
    "goodput",
    "validate",
    "catalog",
    "trace",
    "trace_summaries",
    "merge_summaries",
    "trace_merge",
    "trace_diff",
    "trace_synth",
    "calibrate_nccl",
    "calibrate_runs",
    "calibrate_components",
    "calibrate_residuals",
    "import_megatron",
    "import_torchtitan",
    "import_maxtext",
    "export_megatron",
    "export_torchtitan",
    "export_maxtext",
    "breakdown_frame",
    "ranking_frame",
    "COMMANDS",
]

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


def estimate(job: Job = None, set: Optional[Sequence[str]] = None, calibration: Optional[str] = None,
             schedule: str = "closed", advice: Union[bool, str] = "if_cheap") -> Dict[str, Any]:
    """Estimate one job: the dict ``lostflops estimate --format json`` prints.

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
    """
    text, is_text = _job_arg(job)
    mode = {False: "none", True: "full", "if_cheap": "if_cheap"}.get(advice) if isinstance(advice, (bool, str)) else None
    if mode is None:
        raise ValueError("advice: expected False, 'if_cheap' or True, got %r" % (advice,))
    return json.loads(_lostflops.estimate(text, is_text, _strings("set", set), calibration or "", schedule, mode))


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


def _job_file(job: Job) -> Optional[str]:
    """A path for commands that re-load the job per lever (explain, report):
    a path as it is, None for the built-in job; a dict or text is refused."""
    text, is_text = _job_arg(job)
    if is_text:
        raise TypeError("explain and report re-load the job for each lever: give a path or None, not a dict or text")
    return text


def explain(job: Job = None, set: Optional[Sequence[str]] = None, calibration: Optional[str] = None) -> Dict[str, Any]:
    """The MFU waterfall and the three biggest levers: ``lostflops explain --format json``."""
    return json.loads(_lostflops.explain(_job_file(job), _strings("set", set), calibration or ""))


def report(job: Job = None, set: Optional[Sequence[str]] = None, calibration: Optional[str] = None,
           gpus: Optional[Sequence[int]] = None) -> str:
    """The self-contained HTML report ``lostflops report -o FILE`` writes, as text
    (gpus: ``--gpus``, the scaling curve's GPU counts)."""
    return _lostflops.report(_job_file(job), _strings("set", set), calibration or "", _sizes(gpus))


def goodput(job: Job = None, set: Optional[Sequence[str]] = None, calibration: Optional[str] = None,
            simulate: int = 0, seed: int = 0) -> Dict[str, Any]:
    """The whole run (failures, checkpoints, restarts, data stalls, time to
    train, GPU-hours, cost, energy): ``lostflops goodput --format json
    [--simulate N --seed S]``. Needs ``training.train_tokens``."""
    _count("simulate", simulate, 0, _MAX_SIMULATE)
    if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed < 2 ** 64:
        raise ValueError("seed: expected an integer from 0 to 2^64 - 1, got %r" % (seed,))
    text, is_text = _job_arg(job)
    return json.loads(_lostflops.goodput(text, is_text, _strings("set", set), calibration or "", simulate, seed))


def validate(table: Union[str, "os.PathLike[str]"], calibration: Optional[str] = None,
             fit_on: Optional[Sequence[str]] = None) -> Dict[str, Any]:
    """Published vs predicted runs, in sample and leave-one-source-out:
    ``lostflops validate TABLE --format json [--fit-on T]...``."""
    return json.loads(_lostflops.validate(os.fspath(table), calibration or "", _strings("fit_on", fit_on)))


def catalog(kind: str) -> Dict[str, Any]:
    """What a built-in catalog holds: ``lostflops list KIND --format json``;
    kind: ``gpus``, ``models``, ``clusters`` or ``frameworks``."""
    return json.loads(_lostflops.catalog(kind))


def trace(path: Union[str, "os.PathLike[str]", Sequence[Union[str, "os.PathLike[str]"]]],
          hta_compatible: bool = False) -> Dict[str, Any]:
    """Measured breakdown of PyTorch profiler (Kineto) traces, one file per rank:
    the dict of ``lostflops trace --format json FILE...``."""
    paths = [path] if isinstance(path, (str, os.PathLike)) else list(path)
    return json.loads(_lostflops.trace([os.fspath(p) for p in paths], _flag("hta_compatible", hta_compatible)))


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
    hta = _flag("hta_compatible", hta_compatible)
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


def trace_merge(paths: Union[str, "os.PathLike[str]", Sequence[Union[str, "os.PathLike[str]"]]],
                gpus_per_node: int = 0) -> Dict[str, Any]:
    """``lostflops trace merge --format json SUMMARIES...``: summary files
    (``--summary-out``) or directories of them, read one at a time."""
    items = [paths] if isinstance(paths, (str, os.PathLike)) else list(paths)
    return json.loads(_lostflops.trace_merge([os.fspath(p) for p in items], _count("gpus_per_node", gpus_per_node, 0, 1024)))


def trace_diff(a: Union[str, "os.PathLike[str]"], b: Union[str, "os.PathLike[str]"], hta_compatible: bool = False,
               threshold_pct: float = 5.0) -> Dict[str, Any]:
    """Two traces compared kernel by kernel: ``lostflops trace diff A B --format json``."""
    return json.loads(_lostflops.trace_diff(os.fspath(a), os.fspath(b), _flag("hta_compatible", hta_compatible),
                                            float(threshold_pct)))


def trace_synth(directory: Union[str, "os.PathLike[str]"], ranks: int = 8, gpus_per_node: int = 8, tp: int = 1,
                steps: int = 3, first_step: int = 10, layers: int = 4, slow_rank: int = -1,
                slow_rank_factor: float = 1.5, slow_node: int = -1, slow_node_factor: float = 1.25,
                jitter_pct: float = 0.0, seed: int = 1, rank: Optional[Sequence[int]] = None) -> List[str]:
    """``lostflops trace synth DIR``: Kineto-shaped traces of a made-up job
    with known answers, one file per rank (``rank`` : these ranks only);
    returns the paths written."""
    texts = _lostflops.trace_synth(ranks, gpus_per_node, tp, steps, first_step, layers, slow_rank, slow_rank_factor,
                                   slow_node, slow_node_factor, float(jitter_pct), seed, list(rank or []))
    d = os.fspath(directory)
    os.makedirs(d, exist_ok=True)
    written = list(rank) if rank else list(range(ranks))
    out = []
    for r, text in zip(written, texts):
        path = os.path.join(d, _lostflops.synth_file_name(r))
        with open(path, "w", encoding="utf-8", newline="") as f:
            f.write(text)
        out.append(path)
    return out


def calibrate_nccl(files: Sequence[Union[str, "os.PathLike[str]"]], base: Optional[str] = None,
                   scope: Optional[str] = None, op: Optional[str] = None, ranks: int = 0) -> str:
    """The profile (YAML) ``lostflops calibrate nccl FILE... [--base B]`` writes:
    nccl-tests outputs as bus-bandwidth curves in the base profile."""
    items = [files] if isinstance(files, (str, os.PathLike)) else list(files)
    return _lostflops.calibrate_nccl([os.fspath(f) for f in items], base or "", scope or "", op or "", ranks)


def calibrate_runs(table: Union[str, "os.PathLike[str]"], base: Optional[str] = None,
                   folds: Optional[int] = None) -> str:
    """The profile (YAML) ``lostflops calibrate runs TABLE [--base B] [--folds K]``
    writes: its fitted factors fitted to the measured runs (folds None: the
    default, min(5, runs); given: 2 to the number of runs)."""
    return _lostflops.calibrate_runs(os.fspath(table), base or "", folds)


def calibrate_components(measured: Optional[Sequence[str]] = None, gpus: Optional[Sequence[str]] = None,
                         base: Optional[str] = None) -> str:
    """The profile (YAML) ``lostflops calibrate components [--measured DIR [--gpu G]]...``
    writes: the device families fitted to the component tables."""
    return _lostflops.calibrate_components(_strings("measured", measured), _strings("gpus", gpus), base or "")


def calibrate_residuals(tables: Sequence[Union[str, "os.PathLike[str]"]], calibration: Optional[str] = None,
                        fit_on: Optional[Sequence[str]] = None) -> str:
    """The residual table (CSV) ``lostflops calibrate residuals TABLE...`` writes."""
    items = [tables] if isinstance(tables, (str, os.PathLike)) else list(tables)
    return _lostflops.calibrate_residuals([os.fspath(t) for t in items], calibration or "",
                                          _strings("fit_on", fit_on))


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


# Every command of the command line (its leaf subcommands, as `lostflops
# --help` lists them) and the function of this module that mirrors it;
# tests/python/test_parity.py holds the two to the same answer.
COMMANDS: Dict[str, str] = {
    "estimate": "estimate",
    "search": "search",
    "explain": "explain",
    "report": "report",
    "goodput": "goodput",
    "validate": "validate",
    "list gpus": "catalog",
    "list models": "catalog",
    "list clusters": "catalog",
    "list frameworks": "catalog",
    "trace": "trace",
    "trace merge": "trace_merge",
    "trace diff": "trace_diff",
    "trace synth": "trace_synth",
    "calibrate nccl": "calibrate_nccl",
    "calibrate runs": "calibrate_runs",
    "calibrate components": "calibrate_components",
    "calibrate residuals": "calibrate_residuals",
    "import megatron": "import_megatron",
    "import torchtitan": "import_torchtitan",
    "import maxtext": "import_maxtext",
    "export megatron": "export_megatron",
    "export torchtitan": "export_torchtitan",
    "export maxtext": "export_maxtext",
}
