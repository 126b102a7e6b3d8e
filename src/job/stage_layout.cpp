// Virtual stages of a plan (stage_layout.h). The default split's first layer
// of stage v: base*v plus the full (base+1) stages before it, which are the
// stages between the light head and the light tail. First/last stage counts:
// Megatron-Core's get_num_layers_to_build (transformer_block.py): the given
// ranks take their counts, the others share the rest evenly, and each rank's
// layers split evenly over its vpp chunks; chunk c of every rank comes after
// all of chunk c - 1.
#include "job/stage_layout.h"

namespace lostflops {

VirtualStage virtual_stage(const Job& job, int rank, int chunk) {
    const ParallelPlan& p = job.plan;
    const int L = job.model.layers, V = p.pp * p.vpp, v = chunk * p.pp + rank;
    VirtualStage s;
    if (p.layout) {
        const PipelineLayout::Stage& st = p.layout->stages[static_cast<size_t>(v)];
        s.first = st.first;
        s.layers = st.layers;
        s.embedding = st.embedding;
        s.loss = st.loss;
        s.mtp = p.layout->mtp_given ? st.mtp : (st.loss ? job.model.mtp_layers : 0);
        return s;
    }
    s.embedding = v == 0;
    s.loss = v == V - 1;
    s.mtp = s.loss ? job.model.mtp_layers : 0;
    if (default_split(p)) {
        const int base = L / V, rem = L % V;
        s.layers = layers_on(L, p.pp, p.vpp, rank, chunk);
        if (rem == 0) {
            s.first = base * v;
        } else {
            const int missing = V - rem;
            const int light_head = (missing + 1) / 2, from = V - missing / 2;
            s.first = base * v + std::max(0, std::min(v, from) - light_head);
        }
        return s;
    }
    const int given = (p.first_stage_layers >= 0 ? 1 : 0) + (p.last_stage_layers >= 0 ? 1 : 0);
    const int rest = L - std::max(0, p.first_stage_layers) - std::max(0, p.last_stage_layers);
    const int mid = p.pp > given ? rest / (p.pp - given) : 0;
    const auto rank_layers = [&](int r) {
        if (r == 0 && p.first_stage_layers >= 0) return p.first_stage_layers;
        if (r == p.pp - 1 && p.last_stage_layers >= 0) return p.last_stage_layers;
        return mid;
    };
    s.layers = rank_layers(rank) / p.vpp;
    const int before = rank == 0 ? 0 : rank_layers(0) + (rank - 1) * mid;  // ranks 1 .. rank-1 are middle ones
    s.first = chunk * (L / p.vpp) + before / p.vpp;
    return s;
}

int max_stage_layers(const Job& job) {
    const ParallelPlan& p = job.plan;
    if (p.layout) {
        int most = 0;
        for (const auto& st : p.layout->stages) most = std::max(most, st.layers);
        return most;
    }
    const int stages = p.pp * p.vpp;
    if (default_split(p)) return (job.model.layers + stages - 1) / stages;
    int most = virtual_stage(job, std::min(1, p.pp - 1), 0).layers;  // a middle rank's chunk
    most = std::max(most, virtual_stage(job, 0, 0).layers);
    return std::max(most, virtual_stage(job, p.pp - 1, 0).layers);
}

bool rank_chunks_uneven(const Job& job, int chunks) {
    const ParallelPlan& p = job.plan;
    if (chunks <= 1) return false;
    if (p.layout) {
        const auto& st = p.layout->stages;
        if (st.size() != static_cast<size_t>(p.pp) * static_cast<size_t>(chunks)) return false;
        for (int r = 0; r < p.pp; ++r)
            for (int c = 1; c < chunks; ++c)
                if (st[static_cast<size_t>(c * p.pp + r)].layers != st[static_cast<size_t>(r)].layers) return true;
        return false;
    }
    return default_split(p) && job.model.layers % (p.pp * chunks) != 0;
}

}  // namespace lostflops
