"""pandas DataFrames of lostflops results, when pandas is installed."""
from __future__ import annotations

from typing import Any, Dict, Iterable


def _pandas():
    try:
        import pandas  # noqa: F401
    except ImportError as e:  # pandas is optional
        raise ImportError("lostflops DataFrames need pandas (apt-get install python3-pandas)") from e
    return pandas


def breakdown_frame(estimates: Iterable[Dict[str, Any]]):
    """One row per estimate (``lostflops.estimate`` results): the job's name,
    step time, MFU, peak memory and the breakdown's seconds by wall."""
    pd = _pandas()
    rows = []
    for e in estimates:
        row = {"job": e["job"]["name"], "step_time_s": e["step_time_s"], "mfu": e["mfu"],
               "tokens_per_s_per_gpu": e["tokens_per_s_per_gpu"], "peak_bytes": e["memory"]["peak_bytes"],
               "fits": e["memory"]["fits"]}
        row.update(e["breakdown"])
        rows.append(row)
    return pd.DataFrame(rows)


def _flat(row: Dict[str, Any]) -> Dict[str, Any]:
    """A plan with its ``parallel`` settings as columns of their own (tp, pp, zero, ...)."""
    out = {k: v for k, v in row.items() if k != "parallel"}
    for k, v in (row.get("parallel") or {}).items():
        out[k] = v
    return out


def ranking_frame(search_result: Dict[str, Any]):
    """The ranked plans of a ``lostflops.search`` result, one row per plan, the
    plan's ``parallel`` settings flattened into columns (``tp``, ``pp``, ...)."""
    pd = _pandas()
    return pd.DataFrame([_flat(p) for p in search_result.get("plans", [])])
