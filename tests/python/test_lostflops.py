"""Tests of the Python module (python/lostflops): every function is called,
its result is held against the command line's JSON for the same input, and
bad input raises LostflopsError naming the key. Run by ctest with Debian's
python3 and unittest:

    PYTHONPATH=build/python LOSTFLOPS_BINARY=build/lostflops python3 -m unittest discover -s tests/python
"""
import json
import warnings
import os
import subprocess
import tempfile
import unittest

import lostflops

SOURCE = os.environ.get("LOSTFLOPS_SOURCE_DIR", os.path.join(os.path.dirname(__file__), "..", ".."))
BINARY = os.environ.get("LOSTFLOPS_BINARY", os.path.join(SOURCE, "build", "lostflops"))


def src(rel):
    return os.path.join(SOURCE, rel)


def cli_json(*args, expect=(0,)):
    """The command line's JSON for the same input (the tests may run it; the module never does)."""
    p = subprocess.run([BINARY, *args], capture_output=True, text=True, check=False)
    if p.returncode not in expect:
        raise AssertionError("%s: exit %d: %s" % (args, p.returncode, p.stderr))
    return json.loads(p.stdout)


def drop_keys(value, names):
    """value without the keys in `names` at any depth (timings that differ run to run)."""
    if isinstance(value, dict):
        return {k: drop_keys(v, names) for k, v in value.items() if k not in names}
    if isinstance(value, list):
        return [drop_keys(v, names) for v in value]
    return value


RUN = src("data/published/runs/megatron24-h100-gpt-70b.json")


class Estimate(unittest.TestCase):
    def test_equals_cli_json_for_files_the_default_and_overrides(self):
        cases = [
            ([RUN], RUN, []),
            ([RUN, "--set", "parallel.pp=4", "--set", "parallel.tp=4"], RUN, ["parallel.pp=4", "parallel.tp=4"]),
            ([], None, []),
        ]
        for args, job, sets in cases:
            with self.subTest(args=args):
                self.assertEqual(lostflops.estimate(job, set=sets), cli_json("estimate", "--format", "json", *args))

    def test_a_plan_that_does_not_fit_carries_the_advice_only_when_asked(self):
        job = src("examples/gpt3-175b-8xa100.yaml")
        r = lostflops.estimate(job, advice=True)
        self.assertFalse(r["memory"]["fits"])
        self.assertIn("advice", r)
        self.assertIn("nearest_fitting_plan", r)
        self.assertIn("min_gpus_to_fit", r)
        self.assertEqual(r, cli_json("estimate", "--format", "json", "--advice", job, expect=(1,)))
        # The default is the command line's (its advice searches only when cheap).
        self.assertEqual(lostflops.estimate(job), cli_json("estimate", "--format", "json", job, expect=(1,)))
        # advice=False: no advice is computed; the verdict is there.
        plain = lostflops.estimate(job, advice=False)
        self.assertFalse(plain["memory"]["fits"])
        self.assertIn("verdict", plain["memory"])
        for key in ("advice", "nearest_fitting_plan", "min_gpus_to_fit"):
            self.assertNotIn(key, plain)
        self.assertEqual(plain, {k: v for k, v in r.items() if k not in ("advice", "nearest_fitting_plan",
                                                                          "min_gpus_to_fit")})

    def test_a_job_without_a_plan_is_searched_as_the_command_line_searches_it(self):
        # estimate and export search a job without a parallel section (as
        # --best), the note the command line writes on stderr a warning.
        with open(RUN) as f:
            job = json.load(f)
        del job["parallel"]
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "noplan.json")
            with open(path, "w") as f:
                json.dump(job, f)
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                r = lostflops.estimate(path)
                text = lostflops.export_megatron(path)
            self.assertEqual(r, cli_json("estimate", "--format", "json", path))
            p = subprocess.run([BINARY, "export", "megatron", path], capture_output=True, text=True, check=True)
            self.assertEqual(text, p.stdout)
            said = [str(w.message) for w in caught]
            self.assertTrue(any("the job has no parallel section" in m and "search's best" in m for m in said), said)
            self.assertTrue(any("export megatron exports the best plan" in m for m in said), said)
            # best=True searches a job that has a plan, as --best.
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                best = lostflops.estimate(RUN, best=True)
            self.assertEqual(best, cli_json("estimate", "--format", "json", "--best", RUN))

    def test_a_dict_is_the_same_job_as_its_file(self):
        with open(RUN) as f:
            job = json.load(f)
        from_dict = lostflops.estimate(job)
        from_file = lostflops.estimate(RUN)
        self.assertEqual(from_dict["job"]["file"], "<dict>")
        self.assertEqual(drop_keys(from_dict, {"file"}), drop_keys(from_file, {"file"}))
        self.assertGreater(from_dict["step_time_s"], 0)

    def test_simulated_schedule(self):
        r = lostflops.estimate(RUN, schedule="simulate")
        self.assertEqual(r, cli_json("estimate", "--format", "json", "--schedule", "simulate", RUN))

    def test_a_bad_job_raises_with_the_key_named(self):
        with open(RUN) as f:
            job = json.load(f)
        job["parallel"]["tp"] = 3
        with self.assertRaises(lostflops.LostflopsError) as ctx:
            lostflops.estimate(job)
        self.assertIsInstance(ctx.exception, ValueError)
        self.assertEqual(ctx.exception.key, "parallel.tp")
        self.assertEqual(ctx.exception.file, "<dict>")
        self.assertIn("parallel.tp", str(ctx.exception))
        with self.assertRaises(lostflops.LostflopsError) as ctx:
            lostflops.estimate(RUN, set=["training.precision=fp64"])
        self.assertEqual(ctx.exception.key, "training.precision")
        self.assertTrue(ctx.exception.file.startswith("--set"))
        with self.assertRaises(lostflops.LostflopsError) as ctx:
            lostflops.estimate(src("no/such/job.yaml"))
        self.assertIn("no/such/job.yaml", ctx.exception.file)
        with self.assertRaises(TypeError):
            lostflops.estimate(RUN, set="parallel.tp=4")


class Search(unittest.TestCase):
    JOB = src("tests/data/trace/job-gpt3-125m-16xa100.yaml")

    def test_equals_cli_json(self):
        got = lostflops.search(self.JOB, fix=["tp=2"], top=3)
        want = cli_json("search", "--format", "json", "--top", "3", "--fix", "tp=2", self.JOB)
        timings = {"wall_s", "search_wall_s", "elapsed_s"}
        self.assertEqual(drop_keys(got, timings), drop_keys(want, timings))
        self.assertGreater(len(got["plans"]), 0)

    def test_top_zero_is_every_plan_as_the_cli_top_all(self):
        got = lostflops.search(self.JOB, fix=["tp=2"], top=0)
        want = cli_json("search", "--format", "json", "--top", "all", "--fix", "tp=2", self.JOB)
        timings = {"wall_s", "search_wall_s", "elapsed_s"}
        self.assertEqual(drop_keys(got, timings), drop_keys(want, timings))
        self.assertEqual(len(got["plans"]), got["evaluated"])

    def test_bad_fix_raises_with_the_key_named(self):
        with self.assertRaises(lostflops.LostflopsError) as ctx:
            lostflops.search(self.JOB, fix=["tp=abc"])
        self.assertIn("tp", str(ctx.exception))
        with self.assertRaises(lostflops.LostflopsError):
            lostflops.search(self.JOB, by="speed")


class Trace(unittest.TestCase):
    def test_equals_cli_json(self):
        with tempfile.TemporaryDirectory() as d:
            subprocess.run([BINARY, "trace", "synth", d, "--ranks", "2", "--rank", "1"], check=True,
                           capture_output=True)
            path = os.path.join(d, "rank00001.json")
            self.assertEqual(lostflops.trace(path), cli_json("trace", "--format", "json", path))

    def test_a_bad_trace_raises_with_the_file_named(self):
        with tempfile.NamedTemporaryFile("w", suffix=".json") as f:
            f.write("{not json")
            f.flush()
            with self.assertRaises(lostflops.LostflopsError) as ctx:
                lostflops.trace(f.name)
            self.assertEqual(ctx.exception.file, f.name)


def synth(d, *args):
    subprocess.run([BINARY, "trace", "synth", d, "--tp", "8", "--layers", "2", *args], check=True, capture_output=True)


class TraceSummaries(unittest.TestCase):
    def test_local_threads_merge_as_the_cli(self):
        with tempfile.TemporaryDirectory() as d:
            synth(d, "--ranks", "32", "--slow-rank", "5", "--jitter-pct", "2")
            summaries = lostflops.trace_summaries(d)
            self.assertEqual(len(summaries), 32)
            self.assertEqual(summaries[3]["format"], "lostflops-trace-summary")
            self.assertEqual([s["ranks"][0]["rank"] for s in summaries], list(range(32)))
            merged = lostflops.merge_summaries(summaries)
            cli = cli_json("trace", "--format", "json", d)
            self.assertEqual(merged["cluster"]["totals"], cli["cluster"]["totals"])
            self.assertEqual(merged["cluster"]["slow_ranks"], cli["cluster"]["slow_ranks"])
            self.assertEqual(merged["cluster"]["slow_ranks"][0]["rank"], 5)
            with self.assertRaises(lostflops.LostflopsError):  # a rank twice
                lostflops.merge_summaries(summaries + summaries[:1])

    def test_dask_local_cluster_names_the_slow_rank_and_the_slow_node(self):
        try:
            from dask.distributed import Client, LocalCluster
        except ImportError:
            self.skipTest("dask.distributed is not installed (Debian: python3-distributed)")
        with tempfile.TemporaryDirectory() as d:
            synth(d, "--ranks", "256", "--slow-rank", "77", "--slow-node", "20", "--jitter-pct", "2")
            with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster, \
                    Client(cluster) as client:
                summaries = lostflops.trace_summaries(d, client=client)
            self.assertEqual(len(summaries), 256)
            merged = lostflops.merge_summaries(summaries)
            slow = merged["cluster"]["slow_ranks"]
            self.assertEqual(slow[0]["rank"], 77)
            # Only rank 77 and the ranks of the slow node (160-167) may be listed.
            self.assertTrue({s["rank"] for s in slow} <= {77} | set(range(160, 168)), slow)
            nodes = merged["cluster"]["slow_nodes"]
            self.assertEqual([n["node"] for n in nodes], ["node 20"])


class ImportExport(unittest.TestCase):
    def test_export_equals_cli_and_imports_back(self):
        text = lostflops.export_megatron(RUN)
        p = subprocess.run([BINARY, "export", "megatron", RUN], capture_output=True, text=True, check=True)
        self.assertEqual(text, p.stdout)
        job_yaml, notes = lostflops.import_megatron(text)
        self.assertEqual([n for n in notes if n["kind"] != "ignored"], [])
        with open(RUN) as f:
            cluster = json.dumps(json.load(f)["cluster"])
        self.assertEqual(lostflops.estimate(job_yaml, set=["cluster=" + cluster])["step_time_s"],
                         lostflops.estimate(RUN)["step_time_s"])

    def test_torchtitan_pair(self):
        run = src("data/published/runs/torchtitan24-a100-llama3-8b-selective.json")
        toml = lostflops.export_torchtitan(run)
        job_yaml, notes = lostflops.import_torchtitan(toml)
        self.assertIn("preset: llama3-8b", job_yaml)
        config = src("tests/data/interop/torchtitan/torchtitan24-a100-llama3-8b-selective.toml")
        with self.assertRaises(lostflops.LostflopsError) as ctx:
            lostflops.import_torchtitan(config)  # shard degree -1 and no GPU count
        self.assertEqual(ctx.exception.key, "parallelism.data_parallel_shard_degree")
        job_yaml, notes = lostflops.import_torchtitan(config, num_gpus=64)
        self.assertTrue(any(n["kind"] == "ignored" for n in notes))

    def test_export_best_says_the_framework_that_priced_it(self):
        # A Megatron job's torchtitan --best is searched under fsdp; the CLI's stderr note is a warning here.
        run = src("data/published/runs/torchtitan24-a100-llama3-8b-selective.json")
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            lostflops.export_torchtitan(run, set=["parallel=null", "training.framework=megatron-core"], best=True)
        self.assertTrue(any("priced under training.framework fsdp" in str(w.message) for w in caught), [str(w.message) for w in caught])

    def test_bad_flags_raise_with_the_flag_named(self):
        with self.assertRaises(lostflops.LostflopsError) as ctx:
            lostflops.import_megatron("--num-layers 2 --hidden-size")
        self.assertEqual(ctx.exception.key, "--hidden-size")


class Hostile(unittest.TestCase):
    """Issue 20 item 13: inputs the module took quietly."""

    def test_an_empty_job_path_is_an_error_not_the_default_job(self):
        with self.assertRaises(lostflops.LostflopsError) as ctx:
            lostflops.estimate("")
        self.assertIn("empty file name", str(ctx.exception))
        self.assertEqual(lostflops.estimate(None)["job"]["name"], lostflops.estimate()["job"]["name"])

    def test_a_missing_path_to_import_is_an_error_not_text(self):
        for fn in (lostflops.import_megatron, lostflops.import_torchtitan):
            with self.assertRaises(lostflops.LostflopsError) as ctx:
                fn("/nonexistent/dir/run.sh")
            self.assertIn("no such file", str(ctx.exception))
        # A path-like object too, and flags given as text still import.
        with self.assertRaises(lostflops.LostflopsError):
            lostflops.import_torchtitan(__import__("pathlib").Path("/nonexistent.toml"))
        with self.assertRaises(lostflops.LostflopsError) as ctx:
            lostflops.import_megatron("--num-layers 2 --hidden-size")
        self.assertEqual(ctx.exception.key, "--hidden-size")

    def test_counts_out_of_range(self):
        with self.assertRaises(lostflops.LostflopsError) as ctx:
            lostflops.import_megatron("--num-layers 2", num_gpus=-1)
        self.assertEqual(ctx.exception.file, "num_gpus")
        with self.assertRaises(TypeError):
            lostflops.import_megatron("--num-layers 2", num_gpus=True)
        with self.assertRaises(ValueError):
            lostflops.search(top=True)
        # Issue 36 item 16: beyond 64 bits, pybind11 alone said "incompatible function arguments".
        for call, name, bound in ((lambda: lostflops.search(top=10 ** 30), "top", "to 9223372036854775807"),
                                  (lambda: lostflops.goodput(simulate=10 ** 30), "simulate", "to 10000000"),
                                  (lambda: lostflops.search(gpus=[2 ** 40]), "gpus", "from 1 to 1000000"),
                                  (lambda: lostflops.search(gpus=list(range(1, 100))), "gpus (sizes in the list)",
                                   "to 64")):
            with self.assertRaises(lostflops.LostflopsError) as ctx:
                call()
            self.assertEqual(ctx.exception.file, name)
            self.assertIn(bound, str(ctx.exception))

    def test_flags_are_true_or_false_and_slices_say_their_name(self):
        # The fourth hunt: bool() made best="no" the --best search; import_maxtext's
        # slices=-1 was refused as "num_gpus: -1".
        for call in (lambda: lostflops.export_megatron(best="no"), lambda: lostflops.search(min_gpus="no"),
                     lambda: lostflops.trace([], hta_compatible="no")):
            with self.assertRaises(TypeError) as ctx:
                call()
            self.assertIn("expected True or False, got str", str(ctx.exception))
        with self.assertRaises(lostflops.LostflopsError) as ctx:
            lostflops.import_maxtext("model_name: llama2-7b", "v5e-256", slices=-1)
        self.assertEqual(ctx.exception.file, "slices")
        self.assertIn("from 0 to 65536", str(ctx.exception))

    def test_text_and_dict_jobs_are_bounded(self):
        job = json.loads(open(src("data/published/runs/megatron24-h100-gpt-70b.json")).read())
        job["run"] = {"x": list(range(2_000_000))}
        with self.assertRaises(lostflops.LostflopsError) as ctx:
            lostflops.estimate(job)
        self.assertIn("bytes", str(ctx.exception))
        with self.assertRaises(lostflops.LostflopsError):
            lostflops.estimate("model: {}\n" + "#" * (1 << 20))

    def test_ctrl_c_stops_a_long_search(self):
        """SIGINT from another process during a search of every plan (seconds
        long) stops it: the handler runs while the search's worker threads are
        still alive (inside the search), not after it returned."""
        import signal
        tasks_before = len(os.listdir("/proc/self/task"))
        seen = []

        def handler(signum, frame):
            seen.append(len(os.listdir("/proc/self/task")))
            raise KeyboardInterrupt

        old = signal.signal(signal.SIGINT, handler)
        killer = subprocess.Popen(["sh", "-c", "sleep 0.5; kill -INT %d" % os.getpid()])
        try:
            with self.assertRaises(KeyboardInterrupt):
                lostflops.search(src("examples/llama3.1-405b-16384xh100-search.yaml"), top=0)
        finally:
            killer.wait()
            signal.signal(signal.SIGINT, old)
        self.assertEqual(len(seen), 1)
        # top=0 streams the ranking chunk by chunk and joins its workers between
        # chunks, so a signal may land while no worker is alive: at least as
        # many threads as before is all the count can show.
        self.assertGreaterEqual(seen[0], tasks_before)


class Frames(unittest.TestCase):
    def test_frames_with_pandas_or_a_clear_import_error(self):
        est = [lostflops.estimate(RUN), lostflops.estimate(RUN, set=["parallel.pp=4"])]
        ranking = lostflops.search(Search.JOB, fix=["tp=2"], top=3)
        try:
            import pandas  # noqa: F401
        except ImportError:
            with self.assertRaises(ImportError):
                lostflops.breakdown_frame(est)
            with self.assertRaises(ImportError):
                lostflops.ranking_frame(ranking)
            return
        df = lostflops.breakdown_frame(est)
        self.assertEqual(len(df), 2)
        self.assertIn("pp_bubble_s", df.columns)
        self.assertEqual(len(lostflops.ranking_frame(ranking)), len(ranking["plans"]))


if __name__ == "__main__":
    unittest.main()
