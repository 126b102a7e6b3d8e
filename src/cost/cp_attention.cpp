// Context-parallel attention by variant (cost/cp_attention.h states the
// formulas). Ring attention: Liu et al. 2023 "Ring Attention with Blockwise
// Transformers"; its load-balanced causal form and the step order: Transformer
// Engine transformer_engine/pytorch/attention/dot_product_attention/
// context_parallel.py (AttnFuncWithCPAndKVP2P forward and backward, the
// p2p_comm_buffers of K/V and dK/dV); the all-gather form:
// AttnFuncWithCPAndKVAllGather; all-to-all: AttnFuncWithCPAndQKVOA2A and
// Jacobs et al. 2023 "DeepSpeed Ulysses". Exposure of hidden traffic: the
// NCCL kernels take SMs from the compute they overlap (calibration
// overlap_slowdown, as for tensor-parallel overlap).
#include "cost/cp_attention.h"

#include <algorithm>

namespace lostflops {

CpPlacement cp_placement(const GroupPlacement& cp_group) {
    CpPlacement at;
    at.group = cp_group;
    // Ranks step in lockstep: the slowest neighbour pair sets the ring's pace.
    at.hop.size = 2;
    at.hop.nodes = cp_group.nodes > 1 ? 2 : 1;
    at.hop.per_node = cp_group.nodes > 1 ? 1 : 2;
    at.hop.links = 1;
    return at;
}

namespace {

double seconds(double flops, double rate) { return flops > 0 && rate > 0 ? flops / rate : 0.0; }

}  // namespace

CpAttentionTime cp_attention_time(const CpAttentionWork& w, const CpAttentionRates& r, const CommModel& cm,
                                  const CpPlacement& at, double slowdown) {
    CpAttentionTime t;
    const double c = w.cp;
    const double step_f = w.flops_fwd / c, step_b = 2.5 * w.flops_fwd / c;
    const auto part = [slowdown](double comm, double compute) {
        const double hidden = std::min(comm, compute);
        return comm - hidden + slowdown * hidden;
    };
    switch (w.type) {
        case CpCommType::p2p: {
            const double diag_f = seconds(step_f, r.diag_fwd), off_f = seconds(step_f, r.off_fwd);
            const double diag_b = seconds(step_b, r.diag_bwd), off_b = seconds(step_b, r.off_bwd);
            t.fwd_s = diag_f + (c - 1) * off_f;
            t.bwd_s = diag_b + (c - 1) * off_b;
            const double one = collective_time_s(cm, Collective::send_recv, at.hop, w.kv_bytes);
            const double two = collective_time_s(cm, Collective::send_recv, at.hop, 2 * w.kv_bytes);
            // Forward: the block of step i+1 travels during step i (i = 0..c-2).
            t.comm_fwd_s = part(one, diag_f) + (c - 2) * part(one, off_f);
            // Backward: K/V under step 0, K/V + dK/dV under steps 1..c-2, dK/dV under step c-1.
            t.comm_bwd_s = part(one, diag_b) + (c - 2) * part(two, off_b) + part(one, off_b);
            t.extra_kernels_fwd = 2 * (w.cp - 1);
            t.extra_kernels_bwd = 2 * (w.cp - 1);
            t.extra_bytes_fwd = (c - 1) * 3 * w.out_bytes;
            t.extra_bytes_bwd = (c - 1) * 3 * (w.out_bytes + w.kv_bytes);
            break;
        }
        case CpCommType::allgather: {
            t.fwd_s = seconds(w.flops_fwd, r.whole_fwd);
            t.bwd_s = seconds(2.5 * w.flops_fwd, r.whole_bwd);
            // nccl-tests convention: the full gathered buffer, c blocks.
            const double gathered = c * w.kv_bytes;
            const double ag = collective_time_s(cm, Collective::all_gather, at.group, gathered);
            t.comm_fwd_s = ag;
            t.comm_bwd_s = ag + collective_time_s(cm, Collective::reduce_scatter, at.group, gathered);
            break;
        }
        case CpCommType::a2a: {
            t.fwd_s = seconds(w.flops_fwd, r.whole_fwd);
            t.bwd_s = seconds(2.5 * w.flops_fwd, r.whole_bwd);
            // One all-to-all per tensor: Q, K, V in, the output back (TE
            // flash_attn_a2a_communicate issues one all_to_all_single each).
            const double in = collective_time_s(cm, Collective::all_to_all, at.group, w.qkv_bytes) +
                              2 * collective_latency_s(cm, Collective::all_to_all, at.group);
            const double out = collective_time_s(cm, Collective::all_to_all, at.group, w.out_bytes);
            t.comm_fwd_s = in + out;
            t.comm_bwd_s = in + out;  // dO in; dQ, dK, dV back
            break;
        }
    }
    return t;
}

}  // namespace lostflops
