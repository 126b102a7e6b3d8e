"""Every entrance gives the same answer (issue 26): each command of the command
line, run as a subprocess with ``--format json`` (or, for a command without
JSON, the YAML, CSV, HTML or trace files it writes), and its Python function
(``lostflops.COMMANDS``) on the same inputs give equal dicts (or equal text).

The commands are read from the command line's own ``--help`` (every leaf
subcommand, and a parent that runs by itself such as ``trace``), so a new
``src/cli/cmd_*.cpp`` without a Python twin and a case here fails
``test_every_command_gives_the_same_answer_both_ways``. Run by ctest (test
``python_module``) or:

    PYTHONPATH=build/python LOSTFLOPS_BINARY=build/lostflops python3 -m unittest tests.python.test_parity -v
"""
import json
import os
import re
import shutil
import subprocess
import tempfile
import unittest
import warnings

import lostflops

SOURCE = os.path.abspath(os.environ.get("LOSTFLOPS_SOURCE_DIR",
                                        os.path.join(os.path.dirname(__file__), "..", "..")))
BINARY = os.path.abspath(os.environ.get("LOSTFLOPS_BINARY", os.path.join(SOURCE, "build", "lostflops")))

# Timings and the job's own file name differ from run to run; nothing else may.
TIMINGS = {"wall_s", "search_wall_s", "elapsed_s"}


def src(rel):
    return os.path.join(SOURCE, rel)


def run_cli(args, expect=(0,)):
    """stdout of the command line, run from the repository root (profiles name
    their fit tables from there)."""
    p = subprocess.run([BINARY, *args], capture_output=True, text=True, check=False, cwd=SOURCE)
    if p.returncode not in expect:
        raise AssertionError("lostflops %s: exit %d: %s" % (" ".join(args), p.returncode, p.stderr))
    return p.stdout


def cli_commands(path=()):
    """The command line's commands from its --help: each leaf subcommand and
    each parent whose usage does not require a subcommand (`trace FILES`)."""
    text = run_cli([*path, "--help"])
    usage = next(l for l in text.splitlines() if l.startswith("Usage:"))
    subs = []
    if "Subcommands:" in text:
        block = text.split("Subcommands:", 1)[1]
        for line in block.splitlines()[1:] if block.startswith("\n") else block.splitlines():
            if not line.strip():
                break
            m = re.match(r"^  (\S+)", line)
            if m:
                subs.append(m.group(1))
    out = []
    if path and not usage.rstrip().endswith(" SUBCOMMAND"):
        out.append(" ".join(path))
    for s in subs:
        out.extend(cli_commands((*path, s)))
    return out


def drop_keys(value, names):
    if isinstance(value, dict):
        return {k: drop_keys(v, names) for k, v in value.items() if k not in names}
    if isinstance(value, list):
        return [drop_keys(v, names) for v in value]
    return value


def read(path):
    with open(path, encoding="utf-8") as f:
        return f.read()


RUN = src("data/published/runs/megatron24-h100-gpt-70b.json")
SMALL = src("tests/data/trace/job-gpt3-125m-16xa100.yaml")
TPU = src("tests/data/tpu/llama2-7b-v5e-256.yaml")
DSV3 = src("examples/deepseek-v3-2048xh800-goodput.yaml")
NCCL = src("tests/data/calibrate/all_reduce_h100_8gpu_new.txt")
TOKENS = "training.train_tokens=1e11"


class Parity(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="lostflops_parity_")
        cls.old_cwd = os.getcwd()
        os.chdir(SOURCE)  # as the command line runs (the profile's fit tables are named from here)
        # Two synthetic ranks (rank 1 slow) and their summaries.
        cls.traces = os.path.join(cls.tmp, "traces")
        run_cli(["trace", "synth", cls.traces, "--ranks", "2", "--tp", "2", "--layers", "2", "--slow-rank", "1"])
        cls.rank0 = os.path.join(cls.traces, "rank00000.json")
        cls.rank1 = os.path.join(cls.traces, "rank00001.json")
        cls.summaries = []
        for r in (cls.rank0, cls.rank1):
            s = os.path.join(cls.tmp, os.path.basename(r) + ".summary.json")
            run_cli(["trace", r, "--summary-out", s])
            cls.summaries.append(s)
        # A runs table of four published runs of two source families, job files beside it.
        cls.table = os.path.join(cls.tmp, "runs.csv")
        os.makedirs(os.path.join(cls.tmp, "runs"))
        names = ["narayanan21-t1-gpt-1.7b", "narayanan21-t1-gpt-3.6b", "megatron24-h100-gpt-1.7b",
                 "megatron24-h100-gpt-7.1b"]
        rows = {l.split(",", 1)[0]: l for l in read(src("data/published/published-runs.csv")).splitlines()}
        with open(cls.table, "w", encoding="utf-8") as f:
            f.write(read(src("data/published/published-runs.csv")).splitlines()[0] + "\n")
            for n in names:
                f.write(rows[n] + "\n")
                shutil.copy(src("data/published/runs/%s.json" % n), os.path.join(cls.tmp, "runs"))
        # A job without a parallel section: every command on a job searches its plan.
        cls.noplan = os.path.join(cls.tmp, "noplan.json")
        with open(RUN, encoding="utf-8") as f:
            noplan = json.load(f)
        del noplan["parallel"]
        with open(cls.noplan, "w", encoding="utf-8") as f:
            json.dump(noplan, f)
        cls.megatron_args = os.path.join(cls.tmp, "megatron.sh")
        with open(cls.megatron_args, "w", encoding="utf-8") as f:
            f.write(lostflops.export_megatron(RUN))

    @classmethod
    def tearDownClass(cls):
        os.chdir(cls.old_cwd)
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def out(self, name):
        return os.path.join(self.tmp, name)

    def cases(self):
        """command -> [(CLI arguments, the Python call, what the CLI gives)]: "json"
        (its stdout as JSON), "text" (its stdout), ("file", PATH) (the file it
        wrote) or ("dir", CLI_DIR, PY_DIR) (the files of two directories)."""
        t = self
        report_html = t.out("report.html")
        synth_cli, synth_py = t.out("synth-cli"), t.out("synth-py")
        synth = ["--ranks", "4", "--tp", "2", "--layers", "2", "--slow-rank", "3", "--jitter-pct", "2"]
        return {
            "estimate": [
                (["estimate", RUN, "--set", TOKENS, "--format", "json"],
                 lambda: lostflops.estimate(RUN, set=[TOKENS]), "json"),
                (["estimate", src("examples/gpt3-175b-8xa100.yaml"), "--format", "json"],
                 lambda: lostflops.estimate(src("examples/gpt3-175b-8xa100.yaml")), "json", (1,)),
            ],
            "search": [
                (["search", SMALL, "--set", TOKENS, "--by", "time-to-train", "--top", "3", "--fix", "tp=2",
                  "--format", "json"],
                 lambda: lostflops.search(SMALL, set=[TOKENS], by="time-to-train", top=3, fix=["tp=2"]), "json"),
                (["search", SMALL, "--set", TOKENS, "--by", "cost", "--gpu-hour-price", "5.5", "--format", "json"],
                 lambda: lostflops.search(SMALL, set=[TOKENS], by="cost", gpu_hour_price=5.5), "json"),
                (["search", SMALL, "--gpus", "8,16", "--fix", "tp=2", "--format", "json"],
                 lambda: lostflops.search(SMALL, gpus=[8, 16], fix=["tp=2"]), "json"),
            ],
            "explain": [(["explain", RUN, "--format", "json"], lambda: lostflops.explain(RUN), "json"),
                        (["explain", t.noplan, "--format", "json"], lambda: lostflops.explain(t.noplan), "json"),
                        (["explain", RUN, "--best", "--format", "json"], lambda: lostflops.explain(RUN, best=True),
                         "json")],
            "report": [(["report", RUN, "-o", report_html], lambda: lostflops.report(RUN), ("file", report_html)),
                       (["report", t.noplan, "-o", report_html], lambda: lostflops.report(t.noplan),
                        ("file", report_html)),
                       (["report", RUN, "--best", "-o", report_html], lambda: lostflops.report(RUN, best=True),
                        ("file", report_html))],
            "goodput": [
                (["goodput", RUN, "--set", TOKENS, "--simulate", "50", "--seed", "7", "--format", "json"],
                 lambda: lostflops.goodput(RUN, set=[TOKENS], simulate=50, seed=7), "json"),
                (["goodput", t.noplan, "--set", TOKENS, "--format", "json"],
                 lambda: lostflops.goodput(t.noplan, set=[TOKENS]), "json"),
                (["goodput", RUN, "--set", TOKENS, "--best", "--format", "json"],
                 lambda: lostflops.goodput(RUN, set=[TOKENS], best=True), "json"),
            ],
            "validate": [
                (["validate", t.table, "--fit-on", t.table, "--format", "json"],
                 lambda: lostflops.validate(t.table, fit_on=[t.table]), "json"),
            ],
            **{"list " + k: [(["list", k, "--format", "json"], (lambda k=k: lostflops.catalog(k)), "json")]
               for k in ("gpus", "models", "clusters", "frameworks")},
            "trace": [(["trace", t.traces, "--format", "json"], lambda: lostflops.trace([t.rank0, t.rank1]), "json")],
            "trace merge": [(["trace", "merge", *t.summaries, "--format", "json"],
                             lambda: lostflops.trace_merge(t.summaries), "json")],
            "trace diff": [(["trace", "diff", t.rank0, t.rank1, "--format", "json"],
                            lambda: lostflops.trace_diff(t.rank0, t.rank1), "json")],
            "trace synth": [(["trace", "synth", synth_cli, *synth],
                             lambda: lostflops.trace_synth(synth_py, ranks=4, tp=2, layers=2, slow_rank=3,
                                                           jitter_pct=2),
                             ("dir", synth_cli, synth_py))],
            "calibrate nccl": [(["calibrate", "nccl", NCCL], lambda: lostflops.calibrate_nccl([NCCL]), "text")],
            "calibrate runs": [(["calibrate", "runs", t.table, "--folds", "2"],
                                lambda: lostflops.calibrate_runs(t.table, folds=2), "text")],
            "calibrate components": [(["calibrate", "components"], lambda: lostflops.calibrate_components(),
                                      "text")],
            "calibrate residuals": [(["calibrate", "residuals", t.table, "--fit-on", t.table],
                                     lambda: lostflops.calibrate_residuals([t.table], fit_on=[t.table]), "text")],
            "import megatron": [(["import", "megatron", t.megatron_args],
                                 lambda: lostflops.import_megatron(t.megatron_args)[0], "text")],
            "import torchtitan": [
                (["import", "torchtitan", src("tests/data/interop/torchtitan/torchtitan24-a100-llama3-8b-selective.toml"),
                  "--num-gpus", "64"],
                 lambda: lostflops.import_torchtitan(
                     src("tests/data/interop/torchtitan/torchtitan24-a100-llama3-8b-selective.toml"), num_gpus=64)[0],
                 "text")],
            "import maxtext": [
                (["import", "maxtext", src("tests/data/interop/maxtext/llama2-70b-v5p-128.yml"), "--tpu", "v5p-128"],
                 lambda: lostflops.import_maxtext(src("tests/data/interop/maxtext/llama2-70b-v5p-128.yml"),
                                                  tpu="v5p-128")[0], "text")],
            "export megatron": [
                (["export", "megatron", RUN], lambda: lostflops.export_megatron(RUN), "text"),
                (["export", "megatron", SMALL, "--best"], lambda: lostflops.export_megatron(SMALL, best=True), "text"),
                # A job without a plan is searched, as --best.
                (["export", "megatron", t.noplan], lambda: lostflops.export_megatron(t.noplan), "text"),
            ],
            "export torchtitan": [
                (["export", "torchtitan", src("data/published/runs/torchtitan24-a100-llama3-8b-selective.json")],
                 lambda: lostflops.export_torchtitan(
                     src("data/published/runs/torchtitan24-a100-llama3-8b-selective.json")), "text"),
                (["export", "torchtitan", src("data/published/runs/torchtitan24-a100-llama3-8b-selective.json"),
                  "--best"],
                 lambda: lostflops.export_torchtitan(
                     src("data/published/runs/torchtitan24-a100-llama3-8b-selective.json"), best=True), "text"),
                # DeepSeek-V3's MTP module is torchtitan's flavour's near miss: searched and exported as the flavour.
                (["export", "torchtitan", DSV3, "--best"], lambda: lostflops.export_torchtitan(DSV3, best=True), "text"),
            ],
            "export maxtext": [(["export", "maxtext", TPU], lambda: lostflops.export_maxtext(TPU), "text"),
                               # --best: the first plan of the ranking MaxText takes (pp 2 x vpp 20, not the best's vpp 14)
                               (["export", "maxtext", src("examples/llama3-70b-64xmi300x.yaml"), "--best"],
                                lambda: lostflops.export_maxtext(src("examples/llama3-70b-64xmi300x.yaml"), best=True),
                                "text")],
        }

    def test_every_command_gives_the_same_answer_both_ways(self):
        commands = cli_commands()
        self.assertIn("estimate", commands)
        self.assertIn("trace synth", commands)
        cases = self.cases()
        # A command of the CLI without a Python twin, or without a case here, fails.
        self.assertEqual(sorted(lostflops.COMMANDS), sorted(commands),
                         "lostflops.COMMANDS must name a Python function for every command of `lostflops --help`")
        self.assertEqual(sorted(cases), sorted(commands), "every command needs a parity case here")
        for command, fn in lostflops.COMMANDS.items():
            self.assertTrue(callable(getattr(lostflops, fn, None)), "%s: lostflops.%s" % (command, fn))
        for command in commands:
            for case in cases[command]:
                args, call, kind = case[:3]
                expect = case[3] if len(case) > 3 else (0,)
                with self.subTest(command=command, args=" ".join(args)):
                    self.check(args, call, kind, expect)

    def check(self, args, call, kind, expect):
        stdout = run_cli(args, expect=expect)
        got = call()
        if kind == "json":
            want = json.loads(stdout)
            self.assertIsInstance(got, dict)
            self.assertEqual(drop_keys(got, TIMINGS), drop_keys(want, TIMINGS))
            self.assertNotIn("error", got)
        elif kind == "text":
            self.assertGreater(len(stdout), 0)
            self.assertEqual(got, stdout)
        elif kind[0] == "file":
            self.assertEqual(got, read(kind[1]))
        else:
            names = sorted(os.listdir(kind[1]))
            self.assertGreater(len(names), 0)
            self.assertEqual(sorted(os.path.basename(p) for p in got), names)
            for n in names:
                self.assertEqual(read(os.path.join(kind[2], n)), read(os.path.join(kind[1], n)), n)

    def test_the_notes_of_the_command_line_arrive_as_warnings(self):
        """What the command line writes to stderr as notes (the plan a search
        chose, the settings it changed, a plan that does not fit) arrives as
        Python warnings; a job given with its plan and best=False has none."""
        def warned(call):
            with warnings.catch_warnings(record=True) as w:
                warnings.simplefilter("always")
                call()
            return [str(x.message) for x in w]
        self.assertEqual(warned(lambda: lostflops.estimate(RUN)), [])
        self.assertEqual(warned(lambda: lostflops.export_megatron(RUN)), [])
        for call in (lambda: lostflops.estimate(RUN, best=True), lambda: lostflops.explain(RUN, best=True),
                     lambda: lostflops.report(RUN, best=True), lambda: lostflops.goodput(RUN, set=[TOKENS], best=True)):
            got = warned(call)
            self.assertTrue(any(m.startswith("lostflops: note: parallel: ") and "the search's best" in m
                                for m in got), got)
        got = warned(lambda: lostflops.export_torchtitan(DSV3, best=True))
        self.assertTrue(any(m.startswith("lostflops: note: model: ") and "but for" in m for m in got), got)
        self.assertTrue(any(m.startswith("lostflops: note: training.framework: ") for m in got), got)
        got = warned(lambda: lostflops.export_megatron(src("examples/gpt3-175b-8xa100.yaml")))
        self.assertTrue(any(m.startswith("lostflops: warning: memory: the plan exported ") for m in got), got)

    def test_the_answers_carry_what_issue_26_names(self):
        """estimate has the whole run under "run"; search by time-to-train
        carries the re-scored plans and the best plan's run; ranking_frame has
        the plan's settings as columns."""
        self.assertIn("run", lostflops.estimate(RUN, set=[TOKENS]))
        s = lostflops.search(SMALL, set=[TOKENS], by="time-to-train", top=3)
        self.assertEqual(s["run_rescored_plans"], 20)
        self.assertGreater(s["run"]["wall_time_s"], 0)
        self.assertEqual(s["ranked_by"], "time-to-train")
        # Folds given are checked as --folds is (0 is not "the default").
        with self.assertRaises(lostflops.LostflopsError) as ctx:
            lostflops.calibrate_runs(self.table, folds=0)
        self.assertEqual(ctx.exception.key, "--folds")
        try:
            import pandas  # noqa: F401
        except ImportError:
            self.skipTest("pandas is not installed (Debian: python3-pandas)")
        df = lostflops.ranking_frame(s)
        self.assertNotIn("parallel", df.columns)
        self.assertEqual(list(df["tp"]), [p["parallel"]["tp"] for p in s["plans"]])


if __name__ == "__main__":
    unittest.main()
