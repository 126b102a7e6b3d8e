// Context-parallel attention of one layer on one rank: the attention
// kernel's time on the split blocks and the key/value exchange, by variant
// (parallel.cp_comm_type, lostflops/spec.h CpCommType). Seconds, bytes.
//
// Every variant assumes causal load balancing as Megatron-Core and Transformer
// Engine do it (the sequence cut into 2*cp chunks, rank r holding chunks r
// and 2cp-1-r: TE get_seq_chunk_ids_for_reordering_before_attn; PyTorch's
// context_parallel does the same with its head-tail load balancer), so every
// rank has the same attention work: the causal share of its queries.
#pragma once

#include "cost/collective_time.h"
#include "lostflops/spec.h"

namespace lostflops {

// What the layer's attention moves and computes on one rank, forward.
struct CpAttentionWork {
    CpCommType type = CpCommType::p2p;
    int cp = 1;
    double flops_fwd = 0;   // the rank's causal attention FLOPs (all ring steps together)
    double kv_bytes = 0;    // K and V of the rank's own tokens (one ring block)
    double qkv_bytes = 0;   // a2a: Q, K and V of the rank's tokens, all local heads
    double out_bytes = 0;   // the attention output of the rank's tokens (a2a moves it; the ring corrects it)
};

// FLOP/s the attention kernel reaches (peak x efficiency x power) on each
// block it is called on.
struct CpAttentionRates {
    // p2p ring: step 0 is the rank's own causal diagonal (queries and keys of
    // s/cp, the causal curve); the other cp-1 steps are unmasked half blocks
    // (s/cp queries against s/(2cp) keys or the reverse), read from the
    // non-causal curve at the geometric mean of the two sides, s/(cp*sqrt 2).
    double diag_fwd = 0, diag_bwd = 0, off_fwd = 0, off_bwd = 0;
    // allgather: the local queries against the gathered keys (the causal
    // curve at s/cp, as without CP split); a2a: the whole sequence over
    // heads/cp (the causal curve at s). Both as the device model reads them.
    double whole_fwd = 0, whole_bwd = 0;
};

// Where the collectives run: the CP group, and for the ring the slowest hop
// between neighbours (between nodes when the group spans several).
struct CpPlacement {
    GroupPlacement group;
    GroupPlacement hop;
};
CpPlacement cp_placement(const GroupPlacement& cp_group);

struct CpAttentionTime {
    double fwd_s = 0, bwd_s = 0;            // attention kernels (compute)
    double comm_fwd_s = 0, comm_bwd_s = 0;  // exposed exchange, plus the slowdown of the compute it hides under
    int extra_kernels_fwd = 0, extra_kernels_bwd = 0;  // ring steps' extra kernel launches
    double extra_bytes_fwd = 0, extra_bytes_bwd = 0;    // ring steps' memory-bound corrections
};

// Formulas (cost/cp_attention.cpp): with A = flops_fwd, c = cp, backward
// 2.5x the forward FLOPs (FlashAttention-2), part(comm, compute) =
// max(0, comm - compute) + slowdown * min(comm, compute):
//   p2p       compute: A/c at the diagonal rate + (c-1) A/c at the off rate;
//             forward: c-1 block transfers, transfer i under step i's compute;
//             backward (TE AttnFuncWithCPAndKVP2P.backward): step 0 sends K/V,
//             steps 1..c-2 K/V and the accumulated dK/dV (2 blocks), step
//             c-1 the dK/dV, each under that step's compute; 2 extra kernels
//             (attention, output or gradient correction) per extra step,
//             and memory-bound corrections: forward the partial output
//             read and the output read and written (3 x out_bytes), backward
//             dQ and dK/dV accumulated (3 x (out_bytes + kv_bytes)) per extra
//             step (TE flash_attn_fwd_out_correction; dq.add_, dkv.add_).
//   allgather all-gather of K/V (c blocks) exposed before attention; backward
//             all-gathers again and reduce-scatters dK/dV, exposed
//             (TE AttnFuncWithCPAndKVAllGather).
//   a2a       all-to-all of Q, K, V (one per tensor) before and of the output
//             after, exposed, the same in backward for dO and dQ, dK, dV
//             (TE AttnFuncWithCPAndQKVOA2A; DeepSpeed DistributedAttention).
// Precondition: w.cp > 1.
CpAttentionTime cp_attention_time(const CpAttentionWork& w, const CpAttentionRates& r, const CommModel& cm,
                                  const CpPlacement& at, double slowdown);

}  // namespace lostflops
