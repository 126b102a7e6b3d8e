"""The calibrate commands: each returns the profile (YAML) or residual table
(CSV) the command line writes."""
from __future__ import annotations

import os
from typing import Optional, Sequence, Union

from . import _lostflops
from ._args import _strings

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
