// Finding the training command among the commands a launch script runs
// (launch_command.h) and counting its processes from the launchers' options:
// torchrun (torch/distributed/run.py: --nnodes "N" or "MIN:MAX", default 1;
// --nproc-per-node / --nproc_per_node, default 1; both spellings of every
// option), python -m torch.distributed.launch (the same options), deepspeed
// (deepspeed/launcher/runner.py: --num_nodes, --num_gpus), srun and sbatch
// (Slurm srun(1) / sbatch(1): -N/--nodes, -n/--ntasks, --ntasks-per-node,
// --gpus-per-node, --gres=gpu:N; command-line options override #SBATCH
// lines), mpirun (-np / -n).
#include "interop/launch_command.h"

#include <set>

#include "interop/job_draft.h"
#include "lostflops/error.h"

namespace lostflops::interop {

namespace {

std::string base_name(const std::string& p) {
    const auto slash = p.rfind('/');
    return slash == std::string::npos ? p : p.substr(slash + 1);
}

bool is_python(const std::string& base) {
    if (base.rfind("python", 0) != 0) return false;
    for (size_t i = 6; i < base.size(); ++i)
        if (!std::isdigit(static_cast<unsigned char>(base[i])) && base[i] != '.') return false;
    return true;
}

// An option word: its name and the value given with it, if any.
struct Option {
    std::string name;
    std::optional<ShellField> value;
};

// Options of a launcher from words[i]: advances i past them. `takes_value`
// says whether an option without "=" takes the next word.
template <typename TakesValue>
std::vector<Option> options(const std::vector<ShellField>& w, size_t& i, TakesValue takes_value) {
    std::vector<Option> out;
    while (i < w.size() && w[i].text.size() > 1 && w[i].text[0] == '-') {
        const std::string& o = w[i].text;
        if (o == "--") {
            ++i;
            break;
        }
        Option opt;
        const auto eq = o.find('=');
        if (eq != std::string::npos && o.compare(0, 2, "--") == 0) {
            opt.name = o.substr(0, eq);
            opt.value = ShellField{o.substr(eq + 1), w[i].unknown, w[i].line};
        } else {
            opt.name = o;
            if (takes_value(o) && i + 1 < w.size()) opt.value = w[++i];
        }
        out.push_back(std::move(opt));
        ++i;
    }
    return out;
}

bool same(const std::string& a, const char* b) {
    // torchrun accepts --nproc-per-node and --nproc_per_node alike.
    std::string x = a, y = b;
    for (auto& c : x)
        if (c == '_') c = '-';
    for (auto& c : y)
        if (c == '_') c = '-';
    return x == y;
}

struct Count {
    std::optional<int> value;
    std::string text;      // as written
    std::string unknown;   // why not known
};

Count count_of(const std::optional<ShellField>& v, bool range_max = false) {
    Count c;
    if (!v) return c;
    c.text = v->text;
    if (!v->known()) {
        c.unknown = v->unknown;
        return c;
    }
    std::string t = v->text;
    if (range_max && t.find(':') != std::string::npos) t = t.substr(t.find(':') + 1);
    try {
        size_t used = 0;
        const long n = std::stol(t, &used);
        if (used == t.size() && n >= 1 && n < (1L << 31)) c.value = static_cast<int>(n);
        else c.unknown = "'" + v->text + "', not a positive number";
    } catch (const std::exception&) {
        c.unknown = "'" + v->text + "', not a number";
    }
    return c;
}

// Slurm's allocation from sbatch / #SBATCH / srun options.
struct Slurm {
    Count nodes, ntasks, per_node, gpus_per_node;
    std::string from;
    void read(const std::vector<Option>& opts, const std::string& who) {
        for (const auto& o : opts) {
            if (o.name == "-N" || o.name == "--nodes") nodes = count_of(o.value, true), from = who;
            else if (o.name == "-n" || o.name == "--ntasks") ntasks = count_of(o.value), from = who;
            else if (o.name == "--ntasks-per-node") per_node = count_of(o.value), from = who;
            else if (o.name == "--gpus-per-node") gpus_per_node = count_of(o.value);
            else if (o.name == "--gres" && o.value && o.value->text.rfind("gpu:", 0) == 0) {
                ShellField f = *o.value;
                f.text = f.text.substr(f.text.rfind(':') + 1);
                gpus_per_node = count_of(f);
            }
        }
    }
};

bool slurm_value(const std::string& o) {
    static const std::set<std::string> kFlags = {
        "-l", "--label", "-v", "--verbose", "-Q", "--quiet", "-u", "--unbuffered", "-O", "--overcommit", "-K",
        "--kill-on-bad-exit", "-k", "--no-kill", "-Z", "--no-allocate", "-E", "--preserve-env", "-H", "--hold", "-I",
        "--immediate", "-s", "--oversubscribe", "-X", "--disable-status", "--exclusive", "--pty", "--multi-prog",
        "--exact", "--overlap", "--container-remap-root", "--no-container-remap-root", "--container-mount-home",
        "--no-container-mount-home", "--container-writable", "--container-readonly", "--no-container-entrypoint",
        "--parsable", "--requeue", "--no-requeue", "--test-only", "--contiguous", "--spread-job", "--use-min-nodes",
        "-W", "--wait", "--reboot", "--get-user-env", "--ignore-pbs"};
    return kFlags.count(o) == 0 && !(o.size() > 2 && o[1] != '-');  // -N2: the value is attached
}

std::vector<Option> attached(std::vector<Option> opts) {
    for (auto& o : opts)
        if (!o.value && o.name.size() > 2 && o.name[1] != '-') {
            o.value = ShellField{o.name.substr(2), "", 0};
            o.name = o.name.substr(0, 2);
        }
    return opts;
}

struct Found {
    LaunchCommand launch;
    const ShellCommand* cmd = nullptr;
};

// The launchers before word `end` of a wrapper or the command: Slurm's
// options, mpirun's task count.
void read_prefix(const std::vector<ShellField>& words, size_t end, Slurm& slurm, std::optional<int>& mpi_tasks) {
    for (size_t k = 0; k < end; ++k) {
        const std::string b = base_name(words[k].text);
        if (b == "sbatch" || b == "srun" || b == "salloc") {
            size_t i = k + 1;
            slurm.read(attached(options(words, i, slurm_value)), b);
            k = i - 1;
        } else if (b == "mpirun" || b == "mpiexec") {
            size_t i = k + 1;
            const auto opts = options(words, i, [](const std::string& o) {
                return o == "-np" || o == "-n" || o == "--np" || o == "-x" || o == "-H" || o == "--host" ||
                       o == "--hostfile" || o == "-hostfile" || o == "--map-by" || o == "--bind-to" || o == "-N" ||
                       o == "--npernode" || o == "-ppn" || o == "--mca" || o == "-mca" || o == "-wdir";
            });
            for (const auto& o : opts)
                if ((o.name == "-np" || o.name == "-n" || o.name == "--np") && count_of(o.value).value)
                    mpi_tasks = count_of(o.value).value;
            k = i - 1;
        }
    }
}

// Python's own options from word i: they end at -m MODULE, -c CODE or the
// script. False for `python -c CODE` (no program).
bool read_python_options(const std::vector<ShellField>& w, size_t& i, LaunchCommand& L, bool& distributed,
                         bool& module) {
    while (i < w.size() && w[i].text.size() > 1 && w[i].text[0] == '-') {
        const std::string& o = w[i].text;
        if (o == "-c") return false;
        if (o == "-m" && i + 1 < w.size()) {
            const std::string m = w[i + 1].text;
            i += 2;
            if (m == "torch.distributed.run" || m == "torch.distributed.launch") distributed = true;
            else L.program = m, module = true;
            break;
        }
        i += (o == "-W" || o == "-X") ? 2 : 1;
    }
    return true;
}

// torchrun (or python -m torch.distributed.run): --nnodes x --nproc-per-node,
// the Slurm allocation's nodes when --nnodes is not a number.
void torchrun_gpus(LaunchCommand& L, const std::vector<Option>& dist, const Slurm& slurm, const std::string& launcher,
                   const std::string& source) {
    Count nnodes, nproc;
    for (const auto& o : dist) {
        if (same(o.name, "--nnodes")) nnodes = count_of(o.value, true);
        if (same(o.name, "--nproc-per-node")) nproc = count_of(o.value);
    }
    if (nnodes.unknown.empty() && nnodes.text.find(':') != std::string::npos)
        L.notes.emplace_back("--nnodes", "elastic range " + nnodes.text + ": the largest, " +
                                              std::to_string(*nnodes.value) + " nodes, assumed");
    if (!nnodes.unknown.empty() && slurm.nodes.value) {
        L.notes.emplace_back("--nnodes", "torchrun's --nnodes is " + nnodes.unknown + "; the " + slurm.from +
                                              " allocation's " + std::to_string(*slurm.nodes.value) + " nodes taken");
        nnodes = slurm.nodes;
    }
    if (!nproc.unknown.empty()) {
        L.gpus_unknown = launcher + "'s --nproc-per-node is " + nproc.unknown;
        return;
    }
    if (!nnodes.unknown.empty()) {
        L.gpus_unknown = launcher + "'s --nnodes is " + nnodes.unknown;
        return;
    }
    const int nodes = nnodes.value.value_or(1), per = nproc.value.value_or(1);
    L.gpus_per_node = per;
    L.gpus_from = launcher + " --nnodes " + std::to_string(nodes) + (nnodes.value ? "" : " (its default)") +
                  " x --nproc-per-node " + std::to_string(per) + (nproc.value ? "" : " (its default)");
    L.num_gpus = static_cast<int>(gpu_count({nodes, per}, source, "--nnodes", L.gpus_from));
}

// deepspeed: --num_nodes x --num_gpus.
void deepspeed_gpus(LaunchCommand& L, const std::vector<Option>& dist, const std::string& source) {
    Count nodes, gpus;
    for (const auto& o : dist) {
        if (o.name == "--num_nodes") nodes = count_of(o.value);
        if (o.name == "--num_gpus" || o.name == "--num-gpus") gpus = count_of(o.value);
    }
    if (!gpus.value) {
        L.gpus_unknown = "deepspeed without --num_gpus uses every GPU of each node";
        return;
    }
    L.gpus_per_node = *gpus.value;
    L.gpus_from = "deepspeed --num_nodes " + std::to_string(nodes.value.value_or(1)) + " x --num_gpus " +
                  std::to_string(*gpus.value);
    L.num_gpus =
        static_cast<int>(gpu_count({nodes.value.value_or(1), *gpus.value}, source, "--num_nodes", L.gpus_from));
}

// No distributed launcher: mpirun's -np, else the Slurm allocation's tasks
// (`b` the program's runner, for the message when neither says).
void allocation_gpus(LaunchCommand& L, std::optional<int> mpi_tasks, const Slurm& slurm, const std::string& b,
                     const std::string& source) {
    if (mpi_tasks) {
        L.gpus_from = "mpirun -np " + std::to_string(*mpi_tasks);
        L.num_gpus = static_cast<int>(gpu_count({*mpi_tasks}, source, "-np", L.gpus_from));
    } else if (slurm.ntasks.value) {
        L.gpus_per_node = slurm.per_node.value;
        L.gpus_from = slurm.from + " --ntasks " + std::to_string(*slurm.ntasks.value);
        L.num_gpus = static_cast<int>(gpu_count({*slurm.ntasks.value}, source, "--ntasks", L.gpus_from));
    } else if (slurm.nodes.value && slurm.per_node.value) {
        L.gpus_per_node = slurm.per_node.value;
        L.gpus_from = "Slurm --nodes " + std::to_string(*slurm.nodes.value) + " x --ntasks-per-node " +
                      std::to_string(*slurm.per_node.value);
        L.num_gpus = static_cast<int>(
            gpu_count({*slurm.nodes.value, *slurm.per_node.value}, source, "--nodes", L.gpus_from));
    } else {
        const Count& missing = !slurm.nodes.unknown.empty() ? slurm.nodes : slurm.per_node;
        L.gpus_unknown = missing.unknown.empty()
                             ? "`" + b + " " + L.program + "` starts one process; the launcher around the script is not in it"
                             : "the Slurm allocation is " + missing.unknown;
    }
}

// The launch in one command, if it runs a Python program. Throws
// InputError(source, the launcher's option, ...) when it starts more GPUs than
// a job file may hold (gpu_count).
std::optional<Found> launch_in(const ShellCommand& c, const std::string& source) {
    const auto& w = c.words;
    Slurm slurm;
    for (const auto& wrapper : c.wrappers)  // #SBATCH lines first: the command line overrides them
        if (!wrapper.empty() && wrapper[0].text == "#SBATCH") {
            size_t i = 1;
            slurm.read(attached(options(wrapper, i, slurm_value)), "#SBATCH");
        }
    std::optional<int> mpi_tasks;
    for (const auto& wrapper : c.wrappers)
        if (!wrapper.empty() && wrapper[0].text != "#SBATCH") read_prefix(wrapper, wrapper.size(), slurm, mpi_tasks);

    for (size_t k = 0; k < w.size(); ++k) {
        const std::string b = base_name(w[k].text);
        const bool torchrun = b == "torchrun";
        const bool deepspeed = b == "deepspeed";
        if (!torchrun && !deepspeed && !is_python(b)) continue;
        read_prefix(w, k, slurm, mpi_tasks);
        Found f;
        LaunchCommand& L = f.launch;
        L.file = c.file;
        L.line = c.line;
        size_t i = k + 1;
        bool distributed = torchrun;
        bool module = false;
        std::vector<Option> dist;
        if (is_python(b) && !read_python_options(w, i, L, distributed, module)) return std::nullopt;  // python -c CODE
        if (distributed || deepspeed) {
            dist = options(w, i, [](const std::string& o) {
                static const std::set<std::string> kFlags = {"--standalone", "--module", "-m", "--no-python",
                                                             "--no_python", "--run-path", "--run_path",
                                                             "--virtual-local-rank", "--use-env", "--use_env",
                                                             "--force_multi", "--no_local_rank", "--elastic_training",
                                                             "--bind_cores_to_rank", "--autotuning", "--no_ssh"};
                return kFlags.count(o) == 0;
            });
            for (const auto& o : dist)
                if (o.name == "-m" || o.name == "--module") module = true;
        }
        if (L.program.empty()) {
            if (i >= w.size()) return std::nullopt;
            L.program = w[i].text;
            L.module = module;
            ++i;
        } else {
            L.module = true;
        }
        L.args.assign(w.begin() + static_cast<std::ptrdiff_t>(i), w.end());

        if (distributed) torchrun_gpus(L, dist, slurm, torchrun ? "torchrun" : "torch.distributed", source);
        else if (deepspeed) deepspeed_gpus(L, dist, source);
        else allocation_gpus(L, mpi_tasks, slurm, b, source);
        if (!L.gpus_per_node && slurm.gpus_per_node.value) L.gpus_per_node = slurm.gpus_per_node.value;
        f.cmd = &c;
        return f;
    }
    return std::nullopt;
}

bool training_entry(const std::string& program) {
    const std::string b = base_name(program);
    for (const char* p : {"pretrain", "train", "finetune", "fine_tune", "sft"})
        if (b.rfind(p, 0) == 0) return true;
    return b.find("train") != std::string::npos;
}

std::string args_text(const LaunchCommand& l) {
    std::string s = l.program;
    for (const auto& a : l.args) s += " " + a.text;
    return s;
}

}  // namespace

std::optional<LaunchCommand> find_launch(const ShellRun& run, const std::string& source) {
    std::vector<Found> all;
    for (const auto& c : run.commands)
        if (auto f = launch_in(c, source)) all.push_back(std::move(*f));
    if (all.empty()) return std::nullopt;
    std::vector<Found> training;
    for (auto& f : all)
        if (training_entry(f.launch.program)) training.push_back(f);
    std::vector<Found>& pool = training.empty() ? all : training;
    std::vector<const Found*> certain;
    for (const auto& f : pool)
        if (f.cmd->uncertain.empty()) certain.push_back(&f);
    const auto where = [&](const Found& f) {
        return (f.launch.file == source ? "" : f.launch.file + " ") + "line " + std::to_string(f.launch.line);
    };
    if (certain.empty()) {
        const Found& f = pool.back();
        throw InputError(source, "line " + std::to_string(f.launch.line),
                         "cannot evaluate: the training command (" + where(f) + ") runs only under " +
                             f.cmd->uncertain);
    }
    for (const auto* f : certain)
        if (args_text(f->launch) != args_text(certain.front()->launch))
            throw InputError(source, "line " + std::to_string(f->launch.line),
                             "the script runs different training commands (" + where(*certain.front()) + " and " +
                                 where(*f) + "); lostflops imports one: give the one you mean");
    return certain.back()->launch;
}

}  // namespace lostflops::interop
