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

from typing import Dict

from ._lostflops import LostflopsError
from ._args import Job
from ._jobs import catalog, estimate, explain, goodput, report, search, validate
from ._traces import merge_summaries, trace, trace_diff, trace_merge, trace_summaries, trace_synth
from ._calibrate import calibrate_components, calibrate_nccl, calibrate_residuals, calibrate_runs
from ._interop import (export_maxtext, export_megatron, export_torchtitan, import_maxtext, import_megatron,
                       import_torchtitan)
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
