// The output layer and the input embedding of one micro-batch on one GPU
// (workload/layer_work.h HeadWork): the logits GEMM, the vocab-parallel
// cross-entropy's bytes (Megatron's in fp32), the embedding's, and what the
// loss keeps for its backward, by stack: Megatron's fp32 softmax, torchtitan's
// eager fp32 loss, MaxText's custom VJP, a Hugging Face model's eager loss
// (workload/eager_ledger.h).
#include "workload/layer_work.h"

#include "workload/eager_ledger.h"

namespace lostflops {

namespace {

// Under bf16 autocast over fp32 weights (eager_ledger.h eager_autocast, not
// compiled), what the eager head does beyond the loss, read off transformers
// 5.17's LlamaForCausalLM and checked on
// shared/traces/h200/h200-llama3.2-1b-s4096-b2-autocast.json.gz (per step):
//   - the final RMSNorm runs in fp32 like a layer's (28 bytes per element
//     forward, 56 backward: workload/eager_traffic.cpp; a final LayerNorm,
//     on autocast's fp32 list, reads and writes fp32: 8 and 16), and lm_head casts
//     its fp32 output to bf16 (read 4, write 2) and, backward, the gradient
//     back (ToCopyBackward0, 6);
//   - autocast casts the fp32 output weight to bf16 every forward
//     (bfloat16_copy, 6 bytes per parameter; 360 us on the trace) and
//     backward casts its gradient back (one 801 us upcast kernel);
//   - the embedding's backward (aten::embedding_dense_backward) zero-fills
//     an fp32 [vocab, width] gradient (write 4: 225 us) and, tied, autograd
//     adds it to the output layer's gradient (read 4 + 4, write 4: 722 us).
// The slower paths among them (EagerClassBytes): logits.float() (read 2,
// write 4 per logit) and the backward casts are upcasts, the final norm's
// multiplies broadcasts (16 and 28 bytes per element, eager_traffic.cpp).
void add_autocast_head_traffic(const Model& m, double tokens, double v_local, HeadWork& w) {
    const double h = static_cast<double>(m.hidden);
    const double out_weights = v_local * static_cast<double>(m.embed_width());
    const bool rms = m.norm == NormKind::rms;
    w.loss_bytes_fwd += 6 * out_weights + tokens * h * ((rms ? 28.0 : 8.0) + 6);
    w.loss_bytes_bwd += 6 * out_weights + tokens * h * ((rms ? 56.0 : 16.0) + 6);
    w.loss_eager_fwd.upcast = 6 * tokens * v_local;
    w.loss_eager_fwd.broadcast = rms ? 16 * tokens * h : 0.0;
    w.loss_eager_bwd.upcast = 6 * out_weights + 6 * tokens * h;
    w.loss_eager_bwd.broadcast = rms ? 28 * tokens * h : 0.0;
    w.embed_bytes_bwd += out_weights * (4 + (m.tied_embeddings ? 12 : 0));
}

// Under FSDP2 with bf16 parameters (eager_ledger.h eager_fsdp2_bf16), on
// shared/traces/h200/h200-llama3.2-1b-s4096-b2-fsdp2.json.gz (per step):
//   - the final RMSNorm runs as a layer's in bf16 (workload/eager_traffic.cpp
//     add_fsdp2_bf16_traffic): 36 bytes per element forward, 92 backward,
//     upcasts 6 and 6, broadcasts 8 and 12, bf16 broadcasts 4 and 4; a
//     final LayerNorm is one kernel in bf16 (read 2, write 2) and twice
//     that backward, as a layer's (layer_work.cpp);
//   - logits.float() is an upcast (its 6 bytes per logit are in the loss's
//     count);
//   - the embedding's backward zero-fills a bf16 gradient (2 bytes per
//     weight, 155 us) and, tied, autograd adds it to the output layer's
//     (2 + 2 + 2: 355 us).
void add_fsdp2_head_traffic(const Model& m, double tokens, double v_local, HeadWork& w) {
    const double th = tokens * static_cast<double>(m.hidden);
    const double out_weights = v_local * static_cast<double>(m.embed_width());
    const bool rms = m.norm == NormKind::rms;
    w.loss_bytes_fwd += (rms ? 36.0 : 4.0) * th;
    w.loss_bytes_bwd += (rms ? 92.0 : 8.0) * th;
    w.loss_eager_fwd.upcast = 6 * tokens * v_local + (rms ? 6 * th : 0.0);
    w.loss_eager_fwd.broadcast = rms ? 8 * th : 0.0;
    w.loss_eager_fwd.strided = rms ? 4 * th : 0.0;
    w.loss_eager_bwd.upcast = rms ? 6 * th : 0.0;
    w.loss_eager_bwd.broadcast = rms ? 12 * th : 0.0;
    w.loss_eager_bwd.strided = rms ? 4 * th : 0.0;
    w.embed_bytes_bwd += out_weights * (2 + (m.tied_embeddings ? 6 : 0));
}

// FSDP2's root on one rank (eager_ledger.h fsdp2_one_rank, eager or
// compiled, as the layers' unshards in eager_traffic.cpp): the root's
// parameters (the embedding, the final norm, an untied output layer) are
// cast and copied once forward (10 bytes per parameter: two kernels, 605 us
// on the 1B FSDP2 trace) and kept for backward (the root does not reshard
// after forward), then reduced (chunk_cat 6, an upcast, and the copy 8: 497
// us for the copy).
void add_fsdp2_root_traffic(double root_params, HeadWork& w) {
    w.loss_bytes_fwd += 10.0 * root_params;
    w.loss_bytes_bwd += 14.0 * root_params;
    w.loss_eager_bwd.upcast += 6 * root_params;
}

}  // namespace

HeadWork head_work(const Model& m, const Training& tr, const ParallelPlan& p) {
    HeadWork w;
    const double t = p.tp;
    const double tokens = static_cast<double>(tr.micro_batch) * tr.seq_length / p.cp;
    const double h = static_cast<double>(m.hidden);
    const double v_local = static_cast<double>(m.vocab) / t;
    const double e = static_cast<double>(m.embed_width());
    w.logits = GemmShape{tokens, v_local, e, 1};
    if (m.embed_width() != m.hidden) w.projection = GemmShape{tokens, e, h, 1};
    // Megatron's vocab-parallel cross-entropy works in fp32: cast (read 2,
    // write 4), max and sum-exp passes (read 4 twice), loss; backward writes
    // softmax - one-hot (read 4, write 2). fp32 training: the logits' 2
    // bytes are 4 (the subtraction of the max then makes the fp32 copy).
    const double el = tensor_bytes(tr.precision);
    w.loss_bytes_fwd = tokens * v_local * (el + 4 + 4 + 4);
    w.loss_bytes_bwd = tokens * v_local * (4 + el);
    w.logits_memory_bytes = tokens * v_local * (el + 4);
    // torchtitan (framework fsdp) computes the loss eagerly in fp32:
    // cross_entropy(pred.float(), labels) (train.py at 9dec370) is
    // log_softmax + nll_loss, and the 16-bit logits are freed before backward
    // ("del pred"). At the loss's backward the fp32 log_softmax output (kept
    // for backward), its incoming gradient (nll_loss_backward writes it dense)
    // and the gradient log_softmax_backward writes are alive together: 3 x 4 bytes.
    // With tp > 1 torchtitan runs the loss under loss_parallel (vocab-sharded
    // logits, on unless training.disable_loss_parallel; train.py at 9dec370),
    // whose backward fuses the two in DTensor's handler: (grad_input +
    // torch.exp(x)) * grad_output with grad_input = zeros_like(x) (torch
    // torch/distributed/tensor/parallel/loss.py _nll_loss_and_log_softmax_backward
    // at 1963fc8, the torch of torchtitan's Dec 2024 benchmarks): x, the zeros,
    // exp(x) and their sum are alive together: 4 x 4 bytes.
    if (tr.framework == Framework::fsdp) w.logits_memory_bytes = tokens * v_local * (p.tp > 1 ? 4 + 4 + 4 + 4 : 4 + 4 + 4);
    // The 16-bit logits freed by "del pred" leave their block in the caching
    // allocator's cache; every logit tensor the backward allocates is 32-bit,
    // twice its size, so the allocator takes a new segment for the last of
    // them and the block stays reserved (blocks of separate segments never
    // merge: c10/cuda/CUDACachingAllocator.cpp, expandable_segments off by
    // default). Reserved at the loss's backward: the 16-bit logits' bytes.
    if (tr.framework == Framework::fsdp && !tr.xla && el < 4) w.logits_cached_bytes = tokens * v_local * el;
    // XLA (MaxText): the loss's custom VJP keeps the fp32 logits and
    // exp(logits - max) for its backward (max_utils.py
    // _cross_entropy_with_logits_fwd; cast_logits_to_fp32 true); the logits'
    // gradient is an elementwise chain of them, fused into the output layer's
    // backward dots (the fusion above): 2 x 4 bytes.
    if (tr.xla) w.logits_memory_bytes = tokens * v_local * (4 + 4);
    if (tr.framework == Framework::hf) {
        // transformers' ForCausalLMLoss (loss/loss_utils.py): logits.float()
        // (read 2, write 4 bytes per logit), F.cross_entropy = log_softmax
        // (its max and sum passes read 4 twice, the output written 4) and
        // nll_loss; backward nll_loss_backward writes a dense zero-filled
        // gradient (4), log_softmax_backward reads it and the saved output
        // and writes (4 + 4 + 4), and the float() cast's backward casts it
        // back (4, 2): 18 bytes forward, 22 backward (fp32 logits under
        // fp32 training: the cast copies 4 + 4). torch.compile fuses the
        // chain: the default counts above.
        if (!tr.compile) {
            w.loss_bytes_fwd = tokens * v_local * (el + 4 + 4 + 4 + 4);
            w.loss_bytes_bwd = tokens * v_local * (4 + 4 + 4 + 4 + 4 + el);
        }
        const EagerHeadLedger hl = eager_head_ledger(m, tr, p);
        w.logits_memory_bytes = tokens * hl.loss_bytes_per_token;
        // A loop that holds the model's output through the backward
        // (training.holds_outputs: `out = model(...)`, `out.loss.backward()`)
        // keeps its logits, the output layer's 16-bit output (fp32 in fp32
        // training), alive to the step's end, where they would have been freed
        // when the forward returned (transformers' CausalLMOutputWithPast holds
        // `logits`; ForCausalLMLoss upcasts a copy): estimate/memory.h ActParts::held.
        if (tr.holds_outputs) w.held_logits_bytes = tokens * v_local * el;
        w.head_saved_bytes = tokens * hl.saved_bytes_per_token;
        w.head_weight_copy_bytes = hl.weight_copy_bytes;
    }
    const bool sp = p.sequence_parallel && p.tp > 1;
    w.embed_bytes_fwd = tokens * h * el / (sp ? t : 1.0);
    w.embed_bytes_bwd = tokens * h * 4;  // fp32 scatter-add into the gradient
    if (tr.framework == Framework::hf && !tr.compile && eager_autocast(tr, p))
        add_autocast_head_traffic(m, tokens, v_local, w);
    if (p.tp > 1) w.tp_bytes = tokens * h * el;
    w.embedding_params = (static_cast<double>(m.vocab) * e + static_cast<double>(m.positions) * h +
                          (m.embed_width() != m.hidden ? e * h : 0.0)) / t;
    if (eager_fsdp2_bf16(tr, p) && !tr.xla) add_fsdp2_head_traffic(m, tokens, v_local, w);
    // One rank's root (layer_work.cpp prices the layers' unshards under the same condition).
    if (fsdp2_one_rank(tr, p))
        add_fsdp2_root_traffic(w.embedding_params + h + (m.tied_embeddings ? 0.0 : v_local * e), w);
    return w;
}

}  // namespace lostflops
