// Rotary on the share of q and k a model rotates (Model::rotary_share): what
// the model reader sets from a config's keys and family (job/model_read.cpp,
// job/model_families.h), and what the eager transformers stack then prices
// for it (workload/layer_work.cpp, eager_traffic.cpp, host_ops_hf.cpp), by
// hand on a GPT-NeoX-shaped layer.
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "lostflops/job.h"
#include "test_util.h"
#include "workload/host_ops.h"
#include "workload/layer_work.h"

namespace lostflops {
namespace {

namespace fs = std::filesystem;

// A GPT-NeoX layer (LayerNorm, dense GELU MLP, fused q/k/v) of h 2,048 and
// 16 heads of 128 on one H200, one sequence of 1,024 tokens, framework hf
// (fp32 weights, bf16 autocast), not compiled; then `sets`. Rotary over all
// of q and k: (16 + 16) x 128 = 4,096 elements a token, 4,194,304 a layer.
Job neox(std::vector<std::string> sets) {
    std::vector<std::string> all = {
        "model.model_type=gpt_neox", "model.num_hidden_layers=4", "model.intermediate_size=8192",
        "cluster.gpu=h200-sxm", "cluster.num_gpus=1", "cluster.gpus_per_node=1", "training.seq_length=1024",
        "training.global_batch_size=1", "training.micro_batch_size=1", "training.framework=hf",
        "training.optimizer_kernel=fused", "parallel.tp=1", "parallel.pp=1", "parallel.zero=0",
        "parallel.recompute=none"};
    all.insert(all.end(), sets.begin(), sets.end());
    return parse_job(test::small_job_text(), "neox.yaml", all);
}
constexpr double kQk = 1024.0 * 4096;

double share_of(std::vector<std::string> sets) { return neox(std::move(sets)).model.rotary_share; }

// What GPT-NeoX's quarter share costs with `set` beyond a quarter of the
// full rotary's cost: bytes a layer forward and backward, and kernels beyond
// the full rotary's.
struct PartialExtra {
    double fwd_bytes, bwd_bytes, fwd_kernels, bwd_kernels;
};
PartialExtra partial_extra(const std::string& set) {
    const Job full = neox({"model.rotary_pct=1", set}), none = neox({"model.rotary_pct=0", set}), part = neox({set});
    const LayerWork f = layer_work(full.model, full.training, full.plan);
    const LayerWork n = layer_work(none.model, none.training, none.plan);
    const LayerWork p = layer_work(part.model, part.training, part.plan);
    return {(p.mem_bytes_fwd - n.mem_bytes_fwd) - 0.25 * (f.mem_bytes_fwd - n.mem_bytes_fwd),
            (p.mem_bytes_bwd - n.mem_bytes_bwd) - 0.25 * (f.mem_bytes_bwd - n.mem_bytes_bwd),
            p.kernels_fwd - f.kernels_fwd, p.kernels_bwd - f.kernels_bwd};
}

TEST(RotaryShare, ReadFromTheConfigOrItsFamily) {
    EXPECT_DOUBLE_EQ(share_of({}), 0.25);  // GPTNeoXConfig rotary_pct default
    EXPECT_DOUBLE_EQ(share_of({"model.rotary_pct=1.0"}), 1.0);
    EXPECT_DOUBLE_EQ(share_of({"model.partial_rotary_factor=0.5", "model.rotary_pct=0.25"}), 0.5);
    EXPECT_DOUBLE_EQ(share_of({"model.model_type=gptj", "model.rotary_dim=32"}), 0.25);  // 32 of 128
    EXPECT_DOUBLE_EQ(share_of({"model.model_type=gptj"}), 0.5);                         // GPTJConfig 64 of 128
    EXPECT_DOUBLE_EQ(share_of({"model.model_type=phi"}), 0.5);                          // PhiConfig default
    EXPECT_DOUBLE_EQ(share_of({"model.model_type=llama"}), 1.0);
    EXPECT_DOUBLE_EQ(share_of({"model.model_type=bloom"}), 0.0);                         // ALiBi
    EXPECT_DOUBLE_EQ(share_of({"model.model_type=falcon", "model.alibi=true"}), 0.0);
    EXPECT_DOUBLE_EQ(share_of({"model.model_type=falcon"}), 1.0);
    EXPECT_DOUBLE_EQ(share_of({"model.model_type=gpt2"}), 0.0);                          // learned positions
    EXPECT_DOUBLE_EQ(share_of({"model.model_type=null"}), -1.0);                         // hand-written: not said
    // transformers 5's saved configs nest it in rope_parameters.
    EXPECT_DOUBLE_EQ(share_of({"model.rope_parameters={rope_type: default, partial_rotary_factor: 0.4}"}), 0.4);
    EXPECT_DOUBLE_EQ(share_of({"model.rope_parameters={partial_rotary_factor: 0.4}", "model.rotary_pct=0.5"}), 0.4);
    // Both given: the outer is read, and a nested one that disagrees is said.
    const auto nested_note = [](const Job& j) {
        for (const auto& w : model_warnings(j.model))
            if (w.key == "model.rope_parameters.partial_rotary_factor") return w.message;
        return std::string();
    };
    const Job both = neox({"model.partial_rotary_factor=0.5", "model.rope_parameters={partial_rotary_factor: 0.4}"});
    EXPECT_DOUBLE_EQ(both.model.rotary_share, 0.5);
    EXPECT_NE(nested_note(both).find("0.4 disagrees with partial_rotary_factor 0.5"), std::string::npos)
        << nested_note(both);
    const Job agree = neox({"model.partial_rotary_factor=0.4", "model.rope_parameters={partial_rotary_factor: 0.4}"});
    EXPECT_EQ(nested_note(agree), "");
    EXPECT_NE(test::error_of([] { neox({"model.rotary_dim=256"}); }).find("rotary_dim: 256 exceeds the head's 128"),
              std::string::npos);
    EXPECT_NE(test::error_of([] { neox({"model.rotary_pct=1.5"}); }).find("rotary_pct"), std::string::npos);
    // An error names the key where the config has it.
    EXPECT_NE(test::error_of([] { neox({"model.rope_parameters={partial_rotary_factor: 2}"}); })
                  .find("model.rope_parameters.partial_rotary_factor: 2 is out of range"),
              std::string::npos);
}

TEST(RotaryShare, EagerStackPricesTheRotatedShare) {
    const Job full = neox({"model.rotary_pct=1"}), none = neox({"model.rotary_pct=0"});
    const Job part = neox({});  // 0.25
    const LayerWork f = layer_work(full.model, full.training, full.plan);
    const LayerWork n = layer_work(none.model, none.training, none.plan);
    const LayerWork p = layer_work(part.model, part.training, part.plan);
    // Full rotary over none, forward: the fused kernel's 4 bytes an element,
    // the eager stack's 16 more, autocast's 36 - 20 (a two-matrix GELU layer
    // now has them, as a gated one always had): 36 x 4,194,304 bytes;
    // kernels: 1 fused + 4 eager + 5 transformers' + 2 casts of q and k.
    EXPECT_NEAR(f.mem_bytes_fwd - n.mem_bytes_fwd, 36 * kQk, 1);
    EXPECT_DOUBLE_EQ(f.kernels_fwd - n.kernels_fwd, 12);
    // A quarter: 36 bytes on a quarter of the elements, and the cat of the
    // two parts of q and k: under autocast it reads the fp32 quarter and the
    // bf16 rest and writes all in fp32 (4 x 0.25 + 2 x 0.75 + 4 = 6.5 bytes
    // on all), and SDPA's cast to bf16 takes the unrotated rest too (6 x
    // 0.75 = 4.5): 11 bytes; CUDA's cat copies its two inputs of two dtypes
    // a kernel each: 4 kernels for q and k; backward the two slices' gradients
    // and their sum (14 bytes, 10 kernels), the cast's upcast of the rest's
    // gradient and the engine's cast of it back to bf16 (12 x 0.75 = 9
    // bytes, 2 kernels).
    EXPECT_NEAR(p.mem_bytes_fwd - n.mem_bytes_fwd, 36 * 0.25 * kQk + 11 * kQk, 1);
    EXPECT_NEAR(p.eager_fwd.strided - n.eager_fwd.strided, 18 * 0.25 * kQk + 6.5 * kQk, 1);
    EXPECT_NEAR((p.mem_bytes_bwd - n.mem_bytes_bwd) - 0.25 * (f.mem_bytes_bwd - n.mem_bytes_bwd), 23 * kQk, 1);
    EXPECT_DOUBLE_EQ(p.kernels_fwd - f.kernels_fwd, 4);
    EXPECT_DOUBLE_EQ(p.kernels_bwd - f.kernels_bwd, 12);
    // Backward classes: the cast's upcast of the rest (6 x 0.75) over a
    // quarter of the full rotary's; the slices' copies (4) and the engine's
    // cast off the strided slice (6 x 0.75) over a quarter of its strided.
    EXPECT_NEAR(p.eager_bwd.upcast - n.eager_bwd.upcast - 0.25 * (f.eager_bwd.upcast - n.eager_bwd.upcast),
                4.5 * kQk, 1);
    EXPECT_NEAR(p.eager_bwd.strided - n.eager_bwd.strided - 0.25 * (f.eager_bwd.strided - n.eager_bwd.strided),
                8.5 * kQk, 1);
    // FSDP2's bf16 parameters (no autocast): the cat reads and writes bf16,
    // 4 bytes on all forward, 14 backward, 2 and 10 kernels; fp32 training:
    // the same tensors at 4 bytes an element, 8 and 28.
    const PartialExtra bf16 = partial_extra("parallel.zero=3"), fp32 = partial_extra("training.precision=fp32");
    EXPECT_NEAR(bf16.fwd_bytes, 4 * kQk, 1);
    EXPECT_NEAR(bf16.bwd_bytes, 14 * kQk, 1);
    EXPECT_DOUBLE_EQ(bf16.fwd_kernels, 2);
    EXPECT_DOUBLE_EQ(bf16.bwd_kernels, 10);
    EXPECT_NEAR(fp32.fwd_bytes, 8 * kQk, 1);
    EXPECT_NEAR(fp32.bwd_bytes, 28 * kQk, 1);
    // The host: apply_rotary_pos_emb's 16 operators, and the partial one's
    // four slices and two cats.
    const HostOps hf = host_ops(full.model, full.training, full.plan);
    const HostOps hn = host_ops(none.model, none.training, none.plan);
    const HostOps hp = host_ops(part.model, part.training, part.plan);
    EXPECT_DOUBLE_EQ(hf.layer_fwd - hn.layer_fwd, 16);
    EXPECT_DOUBLE_EQ(hp.layer_fwd - hf.layer_fwd, 6);
    // Compiled, rotary is one pointwise chain: two kernels forward, three
    // backward, where the model rotates.
    const Job cf = neox({"model.rotary_pct=1", "training.compile=true"});
    const Job cn = neox({"model.rotary_pct=0", "training.compile=true"});
    const HostOps hcf = host_ops(cf.model, cf.training, cf.plan), hcn = host_ops(cn.model, cn.training, cn.plan);
    EXPECT_DOUBLE_EQ(hcf.layer_fwd - hcn.layer_fwd, 2);
    EXPECT_DOUBLE_EQ(hcf.layer_bwd - hcn.layer_bwd, 3);
}

TEST(RotaryShare, UnsaidShareIsTheGatedReading) {
    // Without model_type: a gated (Llama-like) layer rotates all of q and k,
    // a two-matrix (GPT-3-like) one nothing, as before the share existed; the
    // share said outright is taken.
    const Job llama = neox({"model.model_type=null", "model.hidden_act=silu"});
    const Job said = neox({"model.model_type=null", "model.hidden_act=silu", "model.partial_rotary_factor=1"});
    const Job gpt = neox({"model.model_type=null"});
    const Job gpt_said = neox({"model.model_type=null", "model.partial_rotary_factor=0"});
    EXPECT_DOUBLE_EQ(layer_work(llama.model, llama.training, llama.plan).mem_bytes_fwd,
                     layer_work(said.model, said.training, said.plan).mem_bytes_fwd);
    EXPECT_DOUBLE_EQ(layer_work(gpt.model, gpt.training, gpt.plan).mem_bytes_fwd,
                     layer_work(gpt_said.model, gpt_said.training, gpt_said.plan).mem_bytes_fwd);
    // The same shape, then (an export read back without the share is the
    // model it was); another share is not.
    EXPECT_TRUE(llama.model.same_shape(said.model));
    EXPECT_TRUE(gpt.model.same_shape(gpt_said.model));
    const Job half = neox({"model.model_type=null", "model.hidden_act=silu", "model.partial_rotary_factor=0.5"});
    EXPECT_FALSE(llama.model.same_shape(half.model));
}

TEST(RotaryShare, Hub2Configs) {
    // The real config.json files (shared/realworld/hf/hub2): each family's key
    // or default.
    const fs::path dir = test::source_path("../shared/realworld/hf/hub2");
    if (!fs::exists(dir)) GTEST_SKIP() << "shared/realworld/hf/hub2 not present";
    const std::vector<std::pair<std::string, double>> want = {
        {"gpt_neox-pythia-12b-deduped.json", 0.25},       // rotary_pct / partial_rotary_factor 0.25
        {"gpt_neox-RedPajama-INCITE-3B-v1.json", 1.0},    // rotary_pct 1.0
        {"gptj-gpt-j-6b.json", 0.25},                     // rotary_dim 64 of 256
        {"phi-phi-2.json", 0.4},                          // partial_rotary_factor
        {"stablelm-stablelm-3b-4e1t.json", 0.25},
        {"phi3-Phi-4-mini-instruct.json", 0.75},
        {"bloom-bloom-560m.json", 0.0},                   // ALiBi
        {"falcon-falcon-40b-instruct.json", 1.0},         // alibi false
        {"gpt2-gpt2.json", 0.0},                          // learned positions
        {"jamba-AI21-Jamba-1.5-Mini.json", 0.0},          // no positions in attention
        {"llama-Llama-3.1-8B.json", 1.0}};
    for (const auto& [file, share] : want) {
        const std::string text = "model: {hf_config: " + (dir / file).string() + "}\n"
                                 "cluster: {gpu: h100-sxm, num_gpus: 8}\n"
                                 "training: {seq_length: 2048, global_batch_size: 8, micro_batch_size: 1}\n"
                                 "parallel: {tp: 1, pp: 1}\n";
        EXPECT_DOUBLE_EQ(parse_job(text, "hub2.yaml").model.rotary_share, share) << file;
    }
}

}  // namespace
}  // namespace lostflops
