// Lightning attention (MixerKind::lightning), a linear attention (MiniMax-01
// report arXiv 2501.08313 sec. 2.2; HF modeling_minimax.py
// MiniMaxLightningAttention, block_size 256). Parameters h*3*a*d (qkv) +
// h*a*d (output gate) + a*d*h (output) + a*d (norm); core per token
// a*(4*d*d + 4*d*kb), intra-block attention over the kb keys a query sees
// within its block plus the inter-block state. On a GPU: projections split
// over heads; its activation runs over q, k and v.
#include <algorithm>

#include "job/mixers/mixer_parts.h"

namespace lostflops {

namespace {

MixerCount count(const LayerKind& k, double h) {
    MixerCount c;
    const double ad = static_cast<double>(k.linear.inner());
    c.gemm = h * 3 * ad + h * ad + ad * h;  // qkv, output gate, output
    c.other = ad;                           // norm over heads x head_dim
    return c;
}

double core_flops(const LayerKind& k, int64_t seq, bool causal) {
    const LinearMixer& l = k.linear;
    const double d = static_cast<double>(l.head_dim);
    const double block_keys = attention_keys(std::min(seq, l.chunk), 0, 0, causal);
    return l.heads * (4.0 * d * d + 4.0 * d * block_keys);
}

void on_rank(const LayerKind& k, const MixerRank& r, MixerOnRank& o) {
    const double t = r.t, h = r.h;
    const double ad = static_cast<double>(k.linear.inner());
    o.add(4 * ad / t, h);  // qkv and output gate
    o.add(h, ad / t);      // out_proj
    mixers::linear_on_rank(k, r, 3 * (ad / t), 3 * ad, 4 * ad, o);
}

KindProblem problem(const LayerKind& k) { return mixers::linear_problem(k); }

}  // namespace

const MixerFns kLightningMixer{count, core_flops, on_rank,
                               problem, mixers::heads_and_groups_tp_problem, mixers::linear_shape_text};

}  // namespace lostflops
