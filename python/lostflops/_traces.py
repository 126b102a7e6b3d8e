"""The trace commands: a measured breakdown of PyTorch profiler traces,
per-rank summaries (on local threads or a Dask client's workers) and their
cross-rank merge, two traces compared, and made-up traces with known answers."""
from __future__ import annotations

import json
import os
from typing import Any, Dict, Iterable, List, Optional, Sequence, Union

from . import _lostflops
from ._args import _count, _flag
from ._lostflops import LostflopsError

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
