// A plan's virtual stages as Megatron-LM flags (megatron_export_stages.h),
// the shortest form Megatron takes. Megatron-LM d98e8a64 (2026-08):
// arguments.py validate_args allows one of --num-layers-per-virtual-pipeline-
// stage, --num-virtual-stages-per-pipeline-rank and --pipeline-model-
// parallel-layout, and only the second beside --decoder-first/last-pipeline-
// num-layers; transformer_config.py __post_init__ (uneven PP) wants the
// first/last counts > 0, each divisible by vpp, and the other ranks' layers
// an equal whole number, also divisible by vpp; transformer_block.py
// get_num_layers_to_build gives each rank's chunks an equal share and keeps
// the embedding on the first stage, the loss and the MTP modules on the last.
// pipeline_parallel_layer_layout.py parse_str_to_list expands "(...)*N"
// groups, then "x*N" characters; validate_layer_layout wants E first, L last,
// as many m as MTP modules, after every t.
#include "interop/megatron_export_stages.h"

#include <algorithm>
#include <string>
#include <vector>

#include "job/stage_layout.h"

namespace lostflops::interop {

namespace {

std::vector<VirtualStage> stages_of(const Job& job) {
    std::vector<VirtualStage> out;
    const ParallelPlan& p = job.plan;
    for (int v = 0; v < p.pp * p.vpp; ++v) out.push_back(virtual_stage(job, v % p.pp, v / p.pp));
    return out;
}

// "x" repeated n times, or "x*n" where that is shorter.
std::string repeated(char c, int n) {
    if (n <= 0) return "";
    return n <= 2 ? std::string(static_cast<size_t>(n), c) : std::string(1, c) + "*" + std::to_string(n);
}

std::string stage_text(const VirtualStage& st) {
    return (st.embedding ? "E" : "") + repeated('t', st.layers) + repeated('m', st.mtp) + (st.loss ? "L" : "");
}

// Layers of each chunk of `rank`, or -1 when its chunks differ.
int even_chunks(const std::vector<VirtualStage>& s, int pp, int vpp, int rank) {
    const int n = s[static_cast<size_t>(rank)].layers;
    for (int c = 1; c < vpp; ++c)
        if (s[static_cast<size_t>(c * pp + rank)].layers != n) return -1;
    return n;
}

// The embedding on the first stage, the loss (and the MTP modules) on the last:
// where Megatron puts them without a layout.
bool standard_ends(const std::vector<VirtualStage>& s, int mtp_layers) {
    for (size_t v = 0; v < s.size(); ++v) {
        const bool last = v + 1 == s.size();
        if (s[v].embedding != (v == 0) || s[v].loss != last || s[v].mtp != (last ? mtp_layers : 0)) return false;
    }
    return true;
}

// --decoder-first/last-pipeline-num-layers when they say the stages; empty otherwise.
std::vector<std::string> first_last_flags(const Job& job, const std::vector<VirtualStage>& s) {
    const int pp = job.plan.pp, vpp = job.plan.vpp;
    if (pp < 2 || !standard_ends(s, job.model.mtp_layers)) return {};
    std::vector<int> rank(static_cast<size_t>(pp));
    for (int r = 0; r < pp; ++r)
        if ((rank[static_cast<size_t>(r)] = even_chunks(s, pp, vpp, r)) <= 0) return {};
    const int first = rank.front(), last = rank.back();
    const int middle = pp > 2 ? rank[1] : last;  // pp 2: the last rank takes what the first leaves
    for (int r = 1; r + 1 < pp; ++r)
        if (rank[static_cast<size_t>(r)] != middle) return {};
    std::vector<std::string> out;
    if (first != middle) out.push_back("--decoder-first-pipeline-num-layers " + std::to_string(first * vpp));
    if (pp > 2 && last != middle) out.push_back("--decoder-last-pipeline-num-layers " + std::to_string(last * vpp));
    if (!out.empty() && vpp > 1) out.push_back("--num-virtual-stages-per-pipeline-rank " + std::to_string(vpp));
    return out;
}

bool all_equal(const std::vector<VirtualStage>& s) {
    return std::all_of(s.begin(), s.end(), [&](const VirtualStage& st) { return st.layers == s.front().layers; });
}

// Megatron refuses a layout beside --hybrid-layer-pattern: the stages are '|'
// between the pattern's layers (arguments.py at d98e8a64).
void stages_into_hybrid_pattern(const std::vector<VirtualStage>& s, std::vector<std::string>& flags) {
    const std::string hybrid = "--hybrid-layer-pattern '";
    const auto h = std::find_if(flags.begin(), flags.end(), [&](const std::string& f) { return f.rfind(hybrid, 0) == 0; });
    if (h == flags.end()) return;
    const std::string layers = h->substr(hybrid.size(), h->size() - hybrid.size() - 1);
    std::string pattern;
    for (size_t v = 0; v < s.size(); ++v) {
        if (v > 0) pattern += '|';
        pattern += layers.substr(static_cast<size_t>(s[v].first), static_cast<size_t>(s[v].layers));
    }
    *h = hybrid + pattern + "'";
}

bool is_hybrid(const std::vector<std::string>& flags) {
    return std::any_of(flags.begin(), flags.end(),
                       [](const std::string& f) { return f.rfind("--hybrid-layer-pattern ", 0) == 0; });
}

}  // namespace

std::string megatron_layout_text(const Job& job) {
    const std::vector<VirtualStage> s = stages_of(job);
    std::string out;
    for (size_t v = 0; v < s.size();) {
        const std::string st = stage_text(s[v]);
        size_t run = 1;
        while (v + run < s.size() && stage_text(s[v + run]) == st) ++run;
        // The last stage ends the string without a '|': a run that reaches it
        // is the group of all but one, then the stage.
        const bool to_end = v + run == s.size();
        const size_t grouped = to_end ? run - 1 : run;
        const std::string group = "(" + st + "|)*" + std::to_string(grouped);
        std::string plain;
        for (size_t i = 0; i < grouped; ++i) plain += st + "|";
        out += grouped >= 2 && group.size() < plain.size() ? group : plain;
        if (to_end) out += st;
        v += run;
    }
    return out;
}

std::vector<std::string> megatron_stage_flags(const Job& job, std::vector<std::string>& model_flags) {
    const ParallelPlan& p = job.plan;
    const std::vector<VirtualStage> s = stages_of(job);
    const bool even = all_equal(s) && standard_ends(s, job.model.mtp_layers);
    if (is_hybrid(model_flags)) {
        if (p.pp > 1 && (p.vpp > 1 || !even)) stages_into_hybrid_pattern(s, model_flags);
        return {};
    }
    if (even) {
        if (p.vpp > 1) return {"--num-layers-per-virtual-pipeline-stage " + std::to_string(s.front().layers)};
        return {};
    }
    if (std::vector<std::string> fl = first_last_flags(job, s); !fl.empty()) return fl;
    return {"--pipeline-model-parallel-layout '" + megatron_layout_text(job) + "'"};
}

}  // namespace lostflops::interop
