// torchtitan's first / last stage less-layers (torchtitan_stages.h). Its cut
// (torchtitan distributed/pipeline_parallel.py generate_llm_fqn_per_model_part,
// b5bcd76c): with S stages and E = layers + first_less + last_less effective
// layers, stage s holds E / S (integer division) plus one for s < E mod S, the
// first stage first_less of them fewer and the last last_less fewer. So
// middle ranks of m layers and ends of m - a and m - b come from less-layers
// (a, b): E = S x m, no remainder.
#include "interop/torchtitan_stages.h"

#include <algorithm>

#include "lostflops/error.h"

namespace lostflops::interop {

StageLess torchtitan_stage_less(const Job& job) {
    const ParallelPlan& p = job.plan;
    if (p.first_stage_layers < 0 && p.last_stage_layers < 0) return {};
    const char* key = p.first_stage_layers >= 0 ? "parallel.first_stage_layers" : "parallel.last_stage_layers";
    if (p.layout || p.vpp != 1)
        throw InputError(job.source, key,
                         "torchtitan's first/last stage less-layers shorten one virtual stage each: written for one "
                         "stage a rank (vpp 1) only");
    const int given = (p.first_stage_layers >= 0 ? 1 : 0) + (p.last_stage_layers >= 0 ? 1 : 0);
    const int rest = job.model.layers - std::max(0, p.first_stage_layers) - std::max(0, p.last_stage_layers);
    int middle = p.pp > given ? rest / (p.pp - given) : 0;
    const int first = p.first_stage_layers >= 0 ? p.first_stage_layers : middle;
    const int last = p.last_stage_layers >= 0 ? p.last_stage_layers : (p.pp > given ? middle : rest);
    if (p.pp == 2) middle = std::max(first, last);
    if (first > middle || last > middle)
        throw InputError(job.source, key,
                         "torchtitan shortens the first and the last stage (less-layers): an end stage longer than the "
                         "others is not written");
    return {middle - first, middle - last};
}

FirstLast torchtitan_first_last(int64_t layers, int64_t pp, int64_t first_less, int64_t last_less) {
    FirstLast out;
    if (pp < 2) return out;
    const int64_t effective = layers + first_less + last_less;
    const int64_t per = effective / pp, extra = effective % pp;
    const auto stage = [&](int64_t s) { return per + (s < extra ? 1 : 0); };
    const int64_t first = stage(0) - first_less, last = stage(pp - 1) - last_less;
    for (int64_t s = 2; s + 1 < pp; ++s)
        if (stage(s) != stage(1)) out.ok = false;
    if (!out.ok || first < 0 || last < 0) return FirstLast{-1, -1, false};
    if (pp == 2) {
        if (first < last) out.first = static_cast<int>(first);
        if (last < first) out.last = static_cast<int>(last);
        return out;
    }
    const int64_t middle = stage(1);
    if (first != middle) out.first = static_cast<int>(first);
    if (last != middle) out.last = static_cast<int>(last);
    return out;
}

void torchtitan_stage_keys(int64_t layers, int64_t pp, int64_t first_less, int64_t last_less,
                           std::vector<DraftEntry>& parallel, std::vector<ImportNote>& notes) {
    const FirstLast fl = torchtitan_first_last(layers, pp, first_less, last_less);
    if (fl.first >= 0) add(parallel, "first_stage_layers", std::to_string(fl.first), "first_stage_less_layers");
    if (fl.last >= 0) add(parallel, "last_stage_layers", std::to_string(fl.last), "last_stage_less_layers");
    if (!fl.ok)
        notes.push_back({NoteKind::assumed, "parallelism.pipeline_parallel_first_stage_less_layers",
                         "uneven middle stages: costed with lostflops' default split"});
}

}  // namespace lostflops::interop
