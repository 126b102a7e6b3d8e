// The eager stack's slower elementwise paths (framework hf under bf16
// autocast): the bytes workload/eager_traffic.cpp and head_work.cpp put in
// each class for a Llama-3.2-1B layer and head, and the time
// cost/device_time.cpp charges for them on an H200, against hand counts.
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "cost/device_time.h"
#include "lostflops/calibration.h"
#include "lostflops/catalog.h"
#include "lostflops/job.h"
#include "test_util.h"
#include "workload/eager_ledger.h"
#include "workload/host_ops.h"
#include "workload/layer_work.h"

namespace lostflops {
namespace {

// Llama-3.2-1B's shape (shared/reference/h200 runs) at 2 x 4096 tokens.
Job llama1b(std::vector<std::string> sets = {}) { return test::h200_llama1b(4096, std::move(sets)); }

TEST(EagerClasses, LlamaLayerBytesByHand) {
    const Job job = llama1b();
    const LayerWork w = layer_work(job.model, job.training, job.plan);
    // 8,192 tokens x h 2,048 = 16,777,216 elements; rotary over q and k:
    // (32 + 8) x 64 = 2,560 per token = 20,971,520.
    const double th = 8192.0 * 2048, rope = 8192.0 * 2560;
    // Two RMSNorms: 16 bytes per element forward (x * rsqrt, weight * x),
    // 28 backward; rotary's grad * cos and grad * sin in fp32, 16 backward.
    EXPECT_DOUBLE_EQ(w.eager_fwd.broadcast, 2 * 16 * th);              // 536,870,912
    EXPECT_DOUBLE_EQ(w.eager_bwd.broadcast, 2 * 28 * th + 16 * rope);  // 1,275,068,416
    // Rotary: 6 + 2 + 6 + 4 (the cat) bytes per element forward; backward
    // the neg 2, the slices' copies 4, the accumulate 6, the transposed copy 4.
    EXPECT_DOUBLE_EQ(w.eager_fwd.strided, 18 * rope);  // 377,487,360
    EXPECT_DOUBLE_EQ(w.eager_bwd.strided, 16 * rope);  // 335,544,320
    EXPECT_DOUBLE_EQ(w.eager_fwd.upcast, 0);
    // Backward upcasts: the weights' gradients (q 4,194,304 + k, v 1,048,576
    // each + o 4,194,304 + gate, up, down 16,777,216 each = 60,817,408; the
    // norms' 4,096 weights too, an over-count of 24 KB), the five linear
    // inputs' casts (q, k, v, gate, up) and SDPA's casts of q and k, 6 bytes each.
    ASSERT_DOUBLE_EQ(w.params, 60817408.0 + 4096);
    EXPECT_DOUBLE_EQ(w.eager_bwd.upcast, 6 * (60817408.0 + 4096) + 5 * 6 * th + 6 * rope);  // 994,967,552
    // The classes are a part of the bytes, not more of them.
    EXPECT_LT(w.eager_fwd.broadcast + w.eager_fwd.strided, w.mem_bytes_fwd);
    EXPECT_LT(w.eager_bwd.upcast + w.eager_bwd.broadcast + w.eager_bwd.strided, w.mem_bytes_bwd);
}

TEST(EagerClasses, LlamaHeadBytesByHand) {
    const Job job = llama1b();
    const HeadWork w = head_work(job.model, job.training, job.plan);
    const double tokens = 8192, v = 128256, h = 2048, out = v * h;  // 262,668,288 output weights
    EXPECT_DOUBLE_EQ(w.loss_eager_fwd.upcast, 6 * tokens * v);  // logits.float(): 6,304,038,912
    EXPECT_DOUBLE_EQ(w.loss_eager_bwd.upcast, 6 * out + 6 * tokens * h);
    EXPECT_DOUBLE_EQ(w.loss_eager_fwd.broadcast, 16 * tokens * h);
    // The embedding's backward: its own scatter-add (4 per token element),
    // the fp32 zero fill (4 per weight) and, tied, the add into the output
    // layer's gradient (12).
    EXPECT_DOUBLE_EQ(w.embed_bytes_bwd, 4 * tokens * h + 16 * out);
    // Untied: no add.
    const Job untied = llama1b({"model.tie_word_embeddings=false"});
    EXPECT_DOUBLE_EQ(head_work(untied.model, untied.training, untied.plan).embed_bytes_bwd, 4 * tokens * h + 4 * out);
    // FSDP2 (zero 3, bf16 weights) has no autocast: its own count
    // (fsdp2_bf16_test.cpp), not this one.
    const Job fsdp2 = llama1b({"parallel.zero=3"});
    const HeadWork f = head_work(fsdp2.model, fsdp2.training, fsdp2.plan);
    EXPECT_DOUBLE_EQ(f.loss_eager_fwd.broadcast, 8 * tokens * h);
}

TEST(EagerClasses, H200RatesAndGapByHand) {
    const Calibration cal = default_calibration();
    const Job job = llama1b();
    const Gpu gpu = *find_gpu("h200-sxm");
    const DeviceModel d = make_device_model(gpu, Precision::bf16, cal, device_use(job));
    // 4,800 GB/s x 0.411 = 1,972.8 GB/s: 1 GB of upcasts takes 506.894 us
    // against 270.898 us at memory_bound (4,800 x 0.769 = 3,691.2 GB/s).
    EXPECT_NEAR(eager_class_extra_s(d, 1e9, 0, 0), 1e9 / 1972.8e9 - 1e9 / 3691.2e9, 1e-12);  // 235.996 us
    EXPECT_NEAR(eager_class_extra_s(d, 0, 1e9, 0), 1e9 / 2361.6e9 - 1e9 / 3691.2e9, 1e-12);  // 152.54 us
    EXPECT_NEAR(eager_class_extra_s(d, 0, 0, 1e9), 1e9 / 1142.4e9 - 1e9 / 3691.2e9, 1e-12);  // 604.46 us
    EXPECT_DOUBLE_EQ(d.kernel_overhead_s, 2e-6);
    // Compiled: the queued gap (Inductor's kernels), no class rates; another
    // framework: the fitted per-kernel overhead.
    const Job compiled = llama1b({"training.compile=true"});
    const DeviceModel c = make_device_model(gpu, Precision::bf16, cal, device_use(compiled));
    EXPECT_DOUBLE_EQ(c.kernel_overhead_s, 2e-6);
    EXPECT_DOUBLE_EQ(eager_class_extra_s(c, 1e9, 1e9, 1e9), 0);
    const Job titan = llama1b({"training.framework=fsdp"});
    const DeviceModel t = make_device_model(gpu, Precision::bf16, cal, device_use(titan));
    EXPECT_DOUBLE_EQ(t.kernel_overhead_s, cal.kernel_overhead_us * 1e-6);
    EXPECT_DOUBLE_EQ(eager_class_extra_s(t, 1e9, 1e9, 1e9), 0);
}

// A Llama layer's kernels as the H200 traces run them (eager_traffic.cpp
// add_hf_eager_kernels; per layer, by the launching thread: 49.4 forward and
// 96.1 backward on the Qwen2.5-0.5B autocast trace, 58.7 and 103.1 on the 1B
// FSDP2 trace, cuBLAS's memsets out). The stack's counts: norms 2, residual
// adds 2, activation 1, rotary 1, their eager chains 2 x 5 + 4 + 1 = 21, the
// 4 GEMM shapes and the attention kernel: 26 forward, 52 backward.
TEST(EagerClasses, LlamaLayerKernelsAsTheTraces) {
    const Job autocast = llama1b();
    const LayerWork a = layer_work(autocast.model, autocast.training, autocast.plan);
    // Autocast: 5 input casts, SDPA's 2, 7 weight casts; then a GEMM a linear
    // (7 against 4 shapes: 3), rotary's 5 more: 26 + 14 + 8 = 48. Backward:
    // 52 + 2 x 7 + 7, then 6 GEMMs, rotary's 10, cuDNN's 3: 92.
    EXPECT_DOUBLE_EQ(a.kernels_fwd, 48);
    EXPECT_DOUBLE_EQ(a.kernels_bwd, 92);
    // FSDP2: the bf16 norms' 3 more each, a cast and a copy of 9 tensors (7
    // linears, 2 norms): 26 + 6 + 18 + 8 = 58; backward 52 + 12 + 3 gradient
    // sums + 20 + 19 = 106.
    const Job fsdp2 = llama1b({"parallel.zero=3", "training.optimizer_kernel=foreach"});
    const LayerWork f = layer_work(fsdp2.model, fsdp2.training, fsdp2.plan);
    EXPECT_DOUBLE_EQ(f.kernels_fwd, 58);
    EXPECT_DOUBLE_EQ(f.kernels_bwd, 106);
    // Within 5 % of the traces' layers.
    EXPECT_NEAR(a.kernels_fwd + a.kernels_bwd, 49.4 + 96.1, 0.05 * (49.4 + 96.1));
    EXPECT_NEAR(f.kernels_fwd + f.kernels_bwd, 58.7 + 103.1, 0.05 * (58.7 + 103.1));
}

// A GPT-2 layer under autocast (learned positions, LayerNorm, gelu_new,
// dropout 0.1 by GPT2Config's default): against the fsdp stack's counts
// (one LayerNorm kernel of 4 bytes per element, no rotary), the fp32
// LayerNorm reads and writes 8, the two casts (c_attn's and c_fc's input) 6
// each, the residual adds 10 for 6, each block's dropout a kernel of 5 bytes
// each way, gelu_new's chain 68 for 4 per FFN element, the weight casts 6
// per parameter; no rotary.
TEST(EagerClasses, GptLayerHasNoRotary) {
    const auto job_of = [](const std::string& framework) {
        return parse_job("model: {model_type: gpt2, n_layer: 2, n_embd: 256, n_head: 4, vocab_size: 1000,\n"
                         "  n_positions: 1024, activation_function: gelu_new}\n"
                         "cluster: {gpu: h200-sxm, num_gpus: 1}\n"
                         "training: {seq_length: 512, global_batch_size: 1, micro_batch_size: 1, framework: " +
                             framework + "}\n"
                             "parallel: {zero: 0, recompute: none}\n",
                         "gpt2.yaml");
    };
    const Job hf = job_of("hf"), titan = job_of("fsdp");
    const LayerWork a = layer_work(hf.model, hf.training, hf.plan);
    const LayerWork b = layer_work(titan.model, titan.training, titan.plan);
    const double th = 512.0 * 256, tf = 512.0 * 1024;
    const double act = th * (2 * (8 - 4) + 2 * 6 + 2 * (10 - 6)) + tf * (68 - 4);
    EXPECT_NEAR(a.mem_bytes_fwd - b.mem_bytes_fwd, act + th * 2 * 5 + 6 * a.params, 1);
    EXPECT_NEAR(a.mem_bytes_bwd - b.mem_bytes_bwd, 2 * act + th * 2 * 5 + 6 * a.params, 1);
    EXPECT_DOUBLE_EQ(a.eager_fwd.strided + a.eager_bwd.strided + a.eager_fwd.broadcast, 0);
    // The final LayerNorm: in fp32 under autocast (8 bytes per element
    // forward, 16 backward), in bf16 under FSDP2 (4, 8); an RMSNorm 28 and
    // 56, 36 and 92 (the rest of the head does not depend on the norm).
    const auto head_of = [&](const std::string& norm, int zero) {
        const Job j = parse_job("model: {model_type: " + norm + ", num_hidden_layers: 2, hidden_size: 256,\n"
                                "  num_attention_heads: 4, intermediate_size: 1024, vocab_size: 1000}\n"
                                "cluster: {gpu: h200-sxm, num_gpus: 1}\n"
                                "training: {seq_length: 512, global_batch_size: 1, micro_batch_size: 1, framework: hf}\n"
                                "parallel: {zero: " + std::to_string(zero) + ", recompute: none}\n",
                                "head.yaml");
        return head_work(j.model, j.training, j.plan);
    };
    const HeadWork ln = head_of("gpt_neox", 0), rms = head_of("llama", 0);
    EXPECT_NEAR(ln.loss_bytes_fwd - rms.loss_bytes_fwd, th * (8 - 28), 1);
    EXPECT_NEAR(ln.loss_bytes_bwd - rms.loss_bytes_bwd, th * (16 - 56), 1);
    const HeadWork ln3 = head_of("gpt_neox", 3), rms3 = head_of("llama", 3);
    EXPECT_NEAR(ln3.loss_bytes_fwd - rms3.loss_bytes_fwd, th * (4 - 36), 1);
    EXPECT_NEAR(ln3.loss_bytes_bwd - rms3.loss_bytes_bwd, th * (8 - 92), 1);
}

TEST(EagerClasses, BloomAttentionKeepsItsScores) {
    // transformers' BloomAttention has no SDPA path (baddbmm with the ALiBi
    // bias, fp32 softmax, bmm): under framework hf the whole square of scores
    // is computed and kept, 40 bytes per score element forward (layer_work.cpp);
    // other stacks run BLOOM's shape as they run any attention.
    const auto job_of = [](const std::string& framework, const std::string& sets) {
        return parse_job("model: {model_type: bloom, n_layer: 2, hidden_size: 256, n_head: 4, vocab_size: 1000}\n"
                         "cluster: {gpu: h200-sxm, num_gpus: 1}\n"
                         "training: {seq_length: 512, global_batch_size: 1, micro_batch_size: 1, framework: " +
                             framework + sets + "}\n"
                             "parallel: {zero: 0, recompute: none}\n",
                         "bloom.yaml");
    };
    const Job hf = job_of("hf", ""), titan = job_of("fsdp", ""), compiled = job_of("hf", ", compile: true");
    const LayerWork a = layer_work(hf.model, hf.training, hf.plan);
    const double scores = 4.0 * 512 * 512;  // heads x s x s
    EXPECT_TRUE(a.unfused);
    EXPECT_DOUBLE_EQ(a.attention_flops_fwd, 4.0 * scores * 64);  // the whole square, head dim 64
    EXPECT_DOUBLE_EQ(a.mem_bytes_attention_fwd, 40 * scores);
    EXPECT_FALSE(layer_work(titan.model, titan.training, titan.plan).unfused);
    // Compiled, Inductor fuses the chain between the GEMMs: the fused count.
    const LayerWork c = layer_work(compiled.model, compiled.training, compiled.plan);
    EXPECT_TRUE(c.unfused);
    EXPECT_DOUBLE_EQ(c.mem_bytes_attention_fwd, 9 * scores);
    // The host: LayerNorm 1 x 2, residual adds 2, BloomAttention's 24
    // operators, the MLP's linear, bloom_gelu_forward's composite 8, linear.
    EXPECT_DOUBLE_EQ(host_ops(hf.model, hf.training, hf.plan).layer_fwd, 2 + 2 + 24 + 10);
    // Memory: each score element keeps softmax's fp32 output and the bf16
    // probabilities, 6 bytes, 4 x 512 of them a token (the whole square);
    // compiled, the first matmul's bf16 scores (2); 4 in fp32 training.
    const auto saved_scores = [](const Job& j) {
        const EagerLayerLedger l = eager_layer_ledger(j.model, j.model.layer(0), j.training, j.plan);
        for (int i = 0; i < l.count; ++i)
            if (const std::string what = l.entries[static_cast<size_t>(i)].what;
                what.find("attention scores") == 0)
                return l.entries[static_cast<size_t>(i)].bytes_per_token;
        return 0.0;
    };
    EXPECT_DOUBLE_EQ(saved_scores(hf), 6.0 * 4 * 512);
    EXPECT_DOUBLE_EQ(saved_scores(compiled), 2.0 * 4 * 512);
    const Job fp32 = job_of("hf", ", precision: fp32");
    EXPECT_DOUBLE_EQ(saved_scores(fp32), 4.0 * 4 * 512);
    // Llama-3.2-1B's layer (32 heads and 8 key/value heads of 64) asking for
    // eager attention: its matmuls keep query and key and value repeated to
    // all 32 heads, and the output projection its input, 2 x (2 x 2,048 +
    // 2 x 2,048) bytes a token where SDPA's keeps 2 x (2,048 + 2 x 512 +
    // 2,048) + 4 x 32; and 6 x 32 x 1,024 of scores.
    const auto entry = [](const Job& j, const std::string& prefix) {
        const EagerLayerLedger l = eager_layer_ledger(j.model, j.model.layer(0), j.training, j.plan);
        for (int i = 0; i < l.count; ++i)
            if (std::string(l.entries[static_cast<size_t>(i)].what).find(prefix) == 0)
                return l.entries[static_cast<size_t>(i)].bytes_per_token;
        return 0.0;
    };
    const Job sdpa = test::h200_llama1b(1024), llama_eager = test::h200_llama1b(1024, {"model.attn_implementation=eager"});
    EXPECT_DOUBLE_EQ(entry(llama_eager, "eager attention"), 2.0 * (2 * 2048 + 2 * 2048));
    EXPECT_DOUBLE_EQ(entry(llama_eager, "SDPA"), 0.0);
    EXPECT_DOUBLE_EQ(entry(sdpa, "SDPA"), 2.0 * (2048 + 2 * 512 + 2048) + 4 * 32);
    EXPECT_DOUBLE_EQ(saved_scores(llama_eager), 6.0 * 32 * 1024);
    // GPT-J's attention has no SDPA path either (GPTJAttention._attn).
    const Job gptj = parse_job("model: {model_type: gptj, n_layer: 2, n_embd: 256, n_head: 4, vocab_size: 1000}\n"
                               "cluster: {gpu: h200-sxm, num_gpus: 1}\n"
                               "training: {seq_length: 512, global_batch_size: 1, micro_batch_size: 1, framework: hf}\n"
                               "parallel: {zero: 0, recompute: none}\n",
                               "gptj.yaml");
    EXPECT_TRUE(layer_work(gptj.model, gptj.training, gptj.plan).unfused);
    EXPECT_DOUBLE_EQ(saved_scores(gptj), 6.0 * 4 * 512);
}

// A Qwen3-MoE-like layer (hidden 256, 8 experts of width 128) under autocast:
// each routed copy costs transformers 5.17's grouped_mm experts block in
// fp32, 52 bytes per copy element of h and 52 per element of f forward
// (eager_traffic.cpp), against 8 + 10 on the bf16 eager stacks.
Job moe_layer(int top_k, const std::string& framework) {
    return parse_job("model: {model_type: qwen3_moe, num_hidden_layers: 1, hidden_size: 256,\n"
                     "  num_attention_heads: 4, num_key_value_heads: 4, head_dim: 64, num_experts: 8,\n"
                     "  num_experts_per_tok: " + std::to_string(top_k) + ", moe_intermediate_size: 128,\n"
                     "  intermediate_size: 512, vocab_size: 1000}\n"
                     "cluster: {gpu: h200-sxm, num_gpus: 1}\n"
                     "training: {seq_length: 1024, global_batch_size: 1, micro_batch_size: 1, framework: " +
                         framework + "}\n"
                     "parallel: {zero: 0, recompute: none}\n",
                     "moe.yaml");
}

LayerWork moe_work(int top_k, const std::string& framework) {
    const Job j = moe_layer(top_k, framework);
    return layer_work(j.model, j.model.kind(0), j.training, j.plan);
}

TEST(EagerClasses, MoeRoutedCopiesByHand) {
    // Top 4 against top 2 over 1,024 tokens: 2,048 more routed copies of
    // h 256 and f 128. Forward 2,048 x 52 x (256 + 128) = 40,894,464 bytes
    // (router, casts and the token terms do not depend on top_k); backward
    // 88 per h and 84 per f: 2,048 x (22,528 + 10,752) = 68,157,440.
    const LayerWork a = moe_work(2, "hf"), b = moe_work(4, "hf");
    const double copies = 2048, h = 256, f = 128;
    EXPECT_DOUBLE_EQ(b.mem_bytes_fwd - a.mem_bytes_fwd, copies * 52 * (h + f));
    EXPECT_DOUBLE_EQ(b.mem_bytes_bwd - a.mem_bytes_bwd, copies * (88 * h + 84 * f));
    // Fills, SiLU and product on the broadcast path: 16 per h, 36 per f
    // (14,680,064) forward, 20 and 52 backward (24,117,248); the routing
    // multiply on the strided one: 8 per h (4,194,304) each way.
    EXPECT_DOUBLE_EQ(b.eager_fwd.broadcast - a.eager_fwd.broadcast, copies * (16 * h + 36 * f));
    EXPECT_DOUBLE_EQ(b.eager_bwd.broadcast - a.eager_bwd.broadcast, copies * (20 * h + 52 * f));
    EXPECT_DOUBLE_EQ(b.eager_fwd.strided - a.eager_fwd.strided, copies * 8 * h);
    EXPECT_DOUBLE_EQ(b.eager_bwd.strided - a.eager_bwd.strided, copies * 8 * h);
    // Another framework (bf16 eager, Megatron-style permutation): 8 + 10 only.
    const LayerWork c = moe_work(2, "fsdp"), d = moe_work(4, "fsdp");
    EXPECT_DOUBLE_EQ(d.mem_bytes_fwd - c.mem_bytes_fwd, copies * (8 * h + 10 * f));
    EXPECT_DOUBLE_EQ(d.eager_fwd.strided - c.eager_fwd.strided, 0);
}

}  // namespace
}  // namespace lostflops
