// What attention transformers runs for a job under framework hf: its
// scores kept in memory (attn_implementation "eager"), a fused kernel, or
// PyTorch's SDPA, and where SDPA is handed an explicit mask (a sliding
// window or chunk, or every layer under torch.compile). Predicates of the
// model and training settings (spec.h), each with the transformers code it
// follows; tests/job/hf_attention_test.cpp.
#pragma once

#include <algorithm>

#include "lostflops/spec.h"

namespace lostflops {

// Whether transformers computes the attention with its scores in memory
// under framework hf (eager PyTorch or compiled, not XLA): the model's own
// (Model::hf_eager_scores: its family, or its config's attn_implementation),
// unless training.attention says otherwise: `unfused` is
// attn_implementation="eager"; `flash` a fused kernel where transformers has
// one the job can run (Model::hf_fused: SDPA; flash_attention_2, or
// gpt-oss's sink-taking flash kernel, with 16-bit inputs; BLOOM none;
// job_warnings says when it cannot).
// from_pretrained's attn_implementation argument wins over the config's
// likewise (transformers modeling_utils.py). False under other frameworks.
inline bool hf_fused_attention_runs(const Model& m, const Training& t) {
    return m.hf_fused == Model::HfFused::sdpa ||
           ((m.hf_fused == Model::HfFused::flash_attention_2 || m.hf_fused == Model::HfFused::sink_kernels) &&
            t.precision != Precision::fp32);
}
inline bool hf_attention_keeps_scores(const Model& m, const Training& t) {
    if (t.framework != Framework::hf || t.xla) return false;
    if (!t.attention_auto && t.attention == AttentionKernel::unfused) return true;
    if (!t.attention_auto && t.attention == AttentionKernel::flash && hf_fused_attention_runs(m, t)) return false;
    return m.hf_eager_scores;
}

// Whether transformers' attention is PyTorch's SDPA (framework hf, not XLA,
// the scores not kept, the family's default kernel and no other named by
// the config): it is handed an explicit (b, 1, s, s) boolean mask wherever a
// sliding window or a chunk is no longer than the sequence
// (masking_utils.py _ignore_causal_mask_sdpa returns False unless
// kv_length < local_attention_size, and sdpa_mask builds the mask), and
// SDPA runs the whole square with it (workload/layer_work.cpp).
// Models with attention sinks (gpt-oss) have no SDPA path in transformers
// (_supports_sdpa False): not SDPA here either.
inline bool hf_sdpa_attention(const Model& m, const Training& t) {
    return t.framework == Framework::hf && !t.xla && !hf_attention_keeps_scores(m, t) &&
           m.hf_fused == Model::HfFused::sdpa && !m.hf_kernel_windows &&
           std::none_of(m.kinds().begin(), m.kinds().end(), [](const LayerKind& k) { return k.attention.sinks; });
}
// transformers' SDPA under torch.compile (framework hf) attends over the
// whole square with a boolean mask on every layer:
// masking_utils._ignore_causal_mask_sdpa is False while dynamo traces
// (docs/eager-gpu.md; data/measured/h200-steps). A kernel that takes the
// window itself gets no square mask (masking_utils.py flash_attention_mask).
inline bool masked_square_attention(const Model& m, const Training& t) {
    return t.compile && hf_sdpa_attention(m, t);
}
// Whether a layer kind's window or chunk is such a mask in an eager step
// (compiled, every layer's is: masked_square_attention).
inline bool hf_sdpa_masks_window(const Model& m, const LayerKind& k, const Training& t) {
    const bool local = (k.attention.window > 0 && k.attention.window <= t.seq_length) ||
                       (k.attention.chunk > 0 && k.attention.chunk <= t.seq_length);
    return local && k.has_attention() && !masked_square_attention(m, t) && hf_sdpa_attention(m, t);
}
inline bool hf_sdpa_masks_windows(const Model& m, const Training& t) {
    return std::any_of(m.kinds().begin(), m.kinds().end(),
                       [&](const LayerKind& k) { return hf_sdpa_masks_window(m, k, t); });
}

}  // namespace lostflops
