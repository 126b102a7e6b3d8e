// Megatron flags as current Megatron-Core reads them (src/interop/
// megatron_args.h, megatron_plan.h): argparse's last-value-wins, the
// recompute flags of each era, Megatron-Core as the default model, the
// ZeRO stage of each sharding flag, and every flag read, documented as
// cost-free, or reported. Flag lines written for these tests.
#include <gtest/gtest.h>

#include "lostflops/error.h"
#include "lostflops/interop.h"
#include "lostflops/job.h"
#include "test_util.h"
#include "workload/layer_work.h"

namespace lostflops::test {
namespace {

const std::string kLaunch =
    "torchrun --nproc_per_node 8 pretrain_gpt.py --num-layers 8 --hidden-size 1024 --num-attention-heads 16 "
    "--seq-length 2048 --micro-batch-size 1 --global-batch-size 64 --vocab-size 32000 --bf16 ";

Job job_of(const std::string& flags, std::vector<ImportNote>* notes = nullptr) {
    const ImportResult r = import_megatron(kLaunch + flags, "t.sh");
    if (notes) *notes = r.notes;
    return parse_job(r.job_yaml, "imported", {"cluster.preset=dgx-h100"});
}

const ImportNote* note(const std::vector<ImportNote>& notes, const std::string& setting) {
    for (const auto& n : notes)
        if (n.setting == setting) return &n;
    return nullptr;
}

TEST(MegatronSemantics, TheLastValueOfARepeatedFlagCounts) {
    std::vector<ImportNote> notes;
    const Job j = job_of("--tensor-model-parallel-size 2 --tensor-model-parallel-size=4", &notes);
    EXPECT_EQ(j.plan.tp, 4);
    ASSERT_TRUE(note(notes, "--tensor-model-parallel-size"));
    EXPECT_EQ(note(notes, "--tensor-model-parallel-size")->kind, NoteKind::assumed);
    // A negative number is a value, not a flag; nargs '+' takes every value.
    EXPECT_NO_THROW(job_of("--init-method-std -0.02 --recompute-modules mlp moe --lr 1e-4"));
    EXPECT_FALSE(note(notes, "mlp"));
}

// --num-workers is the data loader's workers (docs/data-loader.md), 0 too;
// without it the job keeps Megatron's own default, 2.
TEST(MegatronSemantics, NumWorkersAreTheDataLoaders) {
    EXPECT_EQ(job_of("--num-workers 0").training.data_loader_workers, 0);
    EXPECT_FALSE(job_of("--num-workers 0").training.data_loader_workers_auto);
    EXPECT_EQ(job_of("--num-workers 8").training.data_loader_workers, 8);
    EXPECT_EQ(job_of("").training.data_loader_workers, 2);
    EXPECT_TRUE(job_of("").training.data_loader_workers_auto);
    EXPECT_THROW(job_of("--num-workers -1"), InputError);
    // export writes them back when the job gives them, else leaves Megatron's default.
    EXPECT_NE(export_megatron(job_of("--num-workers 0")).text.find("--num-workers 0"), std::string::npos);
    EXPECT_EQ(export_megatron(job_of("")).text.find("--num-workers"), std::string::npos);
}

TEST(MegatronSemantics, RecomputeByEra) {
    // Since Aug 2021 (Megatron-LM c1e0689d) the method alone turns on full recompute.
    const Job uniform = job_of("--activations-checkpoint-method uniform");
    EXPECT_EQ(uniform.plan.recompute, Recompute::full);
    EXPECT_EQ(uniform.training.framework, Framework::megatron_lm);
    const Job block = job_of("--activations-checkpoint-method block --activations-checkpoint-num-layers 2");
    EXPECT_EQ(block.plan.recompute_layers, 2);
    EXPECT_EQ(job_of("--checkpoint-activations").plan.recompute, Recompute::full);
    EXPECT_EQ(job_of("--recompute-activations --recompute-granularity selective").plan.recompute, Recompute::selective);
    std::vector<ImportNote> notes;
    EXPECT_EQ(job_of("--recompute-granularity full --recompute-activations", &notes).plan.recompute,
              Recompute::selective);  // --recompute-activations overrides, as validate_args does
    EXPECT_TRUE(note(notes, "--recompute-activations"));
    // ... and then a method is refused, as validate_args asserts for selective.
    EXPECT_THROW(job_of("--recompute-granularity full --recompute-method uniform --recompute-activations"), InputError);
    EXPECT_THROW(job_of("--recompute-granularity full"), InputError);
    EXPECT_THROW(job_of("--recompute-granularity selective --recompute-method block"), InputError);
}

TEST(MegatronSemantics, MegatronCoreUnlessALegacyFlag) {
    const Job core = job_of("");
    EXPECT_EQ(core.training.framework, Framework::megatron_core);
    EXPECT_EQ(core.training.attention, AttentionKernel::flash);
    EXPECT_EQ(job_of("--use-legacy-models").training.framework, Framework::megatron_lm);
    EXPECT_EQ(job_of("--DDP-impl local").training.framework, Framework::megatron_lm);
    EXPECT_EQ(job_of("--attention-backend unfused").training.attention, AttentionKernel::unfused);
    EXPECT_EQ(job_of("--attention-backend fused").training.attention, AttentionKernel::flash);
    const Job local = job_of("--transformer-impl local");
    EXPECT_EQ(local.training.framework, Framework::megatron_core);
    EXPECT_EQ(local.training.attention, AttentionKernel::unfused);
    EXPECT_THROW(job_of("--attention-backend fast"), InputError);
}

TEST(MegatronSemantics, ShardingFlags) {
    EXPECT_EQ(job_of("--use-distributed-optimizer").plan.zero, 1);
    EXPECT_EQ(job_of("--use-megatron-fsdp").plan.zero, 3);  // optim_grads_params by default
    EXPECT_EQ(job_of("--use-megatron-fsdp --data-parallel-sharding-strategy optim_grads").plan.zero, 2);
    EXPECT_EQ(job_of("--use-megatron-fsdp --use-distributed-optimizer --data-parallel-sharding-strategy optim").plan.zero, 1);
    EXPECT_EQ(job_of("--use-torch-fsdp2").plan.zero, 3);
    EXPECT_THROW(job_of("--data-parallel-sharding-strategy optim"), InputError);
    EXPECT_FALSE(job_of("--grad-reduce-in-bf16").plan.grad_fp32);
    EXPECT_TRUE(job_of("").plan.grad_fp32);
}

TEST(MegatronSemantics, VocabularyAndVirtualStages) {
    EXPECT_EQ(job_of("--padded-vocab-size 32768").model.vocab, 32768);
    EXPECT_EQ(job_of("--tensor-model-parallel-size 2").model.vocab, 32000);  // a multiple of 128 x 2 already
    EXPECT_EQ(job_of("--make-vocab-size-divisible-by 1000").model.vocab, 32000);
    EXPECT_EQ(job_of("--make-vocab-size-divisible-by 3000").model.vocab, 33000);
    EXPECT_EQ(job_of("--pipeline-model-parallel-size 2 --num-virtual-stages-per-pipeline-rank 2").plan.vpp, 2);
    EXPECT_EQ(job_of("--pipeline-model-parallel-size 2 --num-layers-per-virtual-pipeline-stage 2").plan.vpp, 2);
    EXPECT_THROW(job_of("--pipeline-model-parallel-size 2 --num-layers-per-virtual-pipeline-stage 2 "
                        "--num-virtual-stages-per-pipeline-rank 4"),
                 InputError);
    // A Llama 3.x tokenizer not in the table of named models: the Llama 3 tokenizer's rows.
    const std::string no_vocab = "torchrun --nproc_per_node 8 pretrain_gpt.py --num-layers 8 --hidden-size 1024 "
                                 "--num-attention-heads 16 --seq-length 2048 --micro-batch-size 1 "
                                 "--global-batch-size 64 --bf16 --tokenizer-type HuggingFaceTokenizer ";
    const auto vocab_of = [&](const std::string& model) {
        return parse_job(import_megatron(no_vocab + "--tokenizer-model " + model, "t.sh").job_yaml, "i",
                         {"cluster.preset=dgx-h100"})
            .model.vocab;
    };
    EXPECT_EQ(vocab_of("meta-llama/Llama-3.3-70B-Instruct"), 128256);
    const Job sft = parse_job(import_megatron(no_vocab + "--tokenizer-type SFTTokenizer --tokenizer-model "
                                                         "meta-llama/Llama-3.1-8B-Instruct", "t.sh").job_yaml,
                              "i", {"cluster.preset=dgx-h100"});
    EXPECT_EQ(sft.model.vocab, 128256);  // SFTTokenizer wraps the HuggingFace tokenizer it names
    EXPECT_THROW(vocab_of("some-org/unknown-model"), InputError);  // no vocabulary: said, not guessed
}

TEST(MegatronSemantics, EveryFlagIsReadDocumentedOrReported) {
    std::vector<ImportNote> notes;
    const Job j = job_of("--attention-output-gate --kv-channels 128 --lr 1e-4 --fp8-param-gather "
                         "--num-layer 8 --frobnicate --q-lora-rank 64",
                         &notes);
    ASSERT_TRUE(note(notes, "--attention-output-gate"));
    EXPECT_EQ(note(notes, "--attention-output-gate")->kind, NoteKind::not_modelled);
    EXPECT_NE(note(notes, "--attention-output-gate")->message.find("not modelled yet"), std::string::npos);
    EXPECT_EQ(j.model.kind(0).attention.head_dim, 128);  // --kv-channels: 128 x 16 heads != hidden 1024
    EXPECT_EQ(note(notes, "--q-lora-rank")->kind, NoteKind::ignored);  // without --multi-latent-attention
    EXPECT_EQ(note(notes, "--lr")->kind, NoteKind::ignored);
    EXPECT_EQ(note(notes, "--fp8-param-gather")->kind, NoteKind::not_modelled);
    ASSERT_TRUE(note(notes, "--num-layer 8"));
    EXPECT_NE(note(notes, "--num-layer 8")->message.find("did you mean --num-layers?"), std::string::npos);
    EXPECT_EQ(note(notes, "--frobnicate")->kind, NoteKind::unknown);
    ImportOptions strict;
    strict.strict = true;
    EXPECT_THROW(import_megatron(kLaunch + "--fp8-param-gather", "t.sh", strict), InputError);
    EXPECT_NO_THROW(import_megatron(kLaunch + "--lr 1e-4", "t.sh", strict));
}

// --fp8-recipe is training.fp8_recipe (Megatron's default delayed when
// absent); custom is said and priced as delayed; without --fp8-format fp8 is
// off and the recipe is said to be ignored. The export writes it back.
TEST(MegatronSemantics, Fp8RecipeIsRead) {
    std::vector<ImportNote> notes;
    const std::string fp8 = "--fp8-format hybrid ";
    EXPECT_EQ(job_of(fp8).training.fp8_recipe, Fp8Recipe::delayed);
    const Job t = job_of(fp8 + "--fp8-recipe tensorwise", &notes);
    EXPECT_EQ(t.training.fp8_recipe, Fp8Recipe::tensorwise);
    EXPECT_EQ(job_of(fp8 + "--fp8-recipe mxfp8").training.fp8_recipe, Fp8Recipe::mxfp8);
    EXPECT_EQ(job_of(fp8 + "--fp8-recipe custom", &notes).training.fp8_recipe, Fp8Recipe::delayed);
    ASSERT_TRUE(note(notes, "--fp8-recipe"));
    EXPECT_EQ(note(notes, "--fp8-recipe")->kind, NoteKind::not_modelled);
    EXPECT_EQ(job_of("--fp8-recipe blockwise", &notes).training.precision, Precision::bf16);
    ASSERT_TRUE(note(notes, "--fp8-recipe"));
    EXPECT_EQ(note(notes, "--fp8-recipe")->kind, NoteKind::ignored);
    EXPECT_THROW(import_megatron(kLaunch + fp8 + "--fp8-recipe rowwize", "t.sh"), InputError);
    const ExportResult back = export_megatron(t);
    EXPECT_NE(back.text.find("--fp8-recipe tensorwise"), std::string::npos) << back.text;
}

TEST(MegatronSemantics, HiddenDropoutIsTheBlockDropout) {
    // --hidden-dropout (Megatron's default 0.1) is the dropout after each
    // block: at 0 the GELU layer of kLaunch saves no masks, 1 byte per
    // element of each of its two blocks' outputs: 2 x 2,048 tokens x 1,024.
    std::vector<ImportNote> notes;
    const Job off = job_of("--hidden-dropout 0.0", &notes);
    EXPECT_FALSE(note(notes, "--hidden-dropout"));  // read, not an ignored flag
    const Job on = job_of("--hidden-dropout 0.1");
    EXPECT_EQ(off.model.block_dropout, 0);
    EXPECT_EQ(on.model.block_dropout, 1);
    EXPECT_EQ(job_of("").model.block_dropout, -1);  // unsaid: on, as Megatron's default
    const double saved_on = layer_work(on.model, on.training, on.plan).activation_bytes;
    const double saved_off = layer_work(off.model, off.training, off.plan).activation_bytes;
    EXPECT_DOUBLE_EQ(saved_on - saved_off, 2.0 * 2048 * 1024);
    for (const char* bad : {"1.5", "-0.1", "x", "nan", "0.1x"})
        EXPECT_THROW(job_of(std::string("--hidden-dropout ") + bad), InputError) << bad;
}

TEST(MegatronSemantics, ExportTellsMegatronNoHiddenDropoutWhereThePriceHasNone) {
    const auto exported = [](const Job& j) { return export_megatron(j).text; };
    const auto back = [](const std::string& text) {
        return parse_job(import_megatron(text, "exported.sh").job_yaml, "back", {"cluster.preset=dgx-h100"});
    };
    // A GELU MLP at Megatron's default dropout is priced with its masks: the default stays.
    EXPECT_EQ(exported(job_of("")).find("--hidden-dropout"), std::string::npos);
    // A gated MLP is priced without block dropout; Megatron would run 0.1 unless told.
    const std::string swiglu = exported(job_of("--swiglu"));
    EXPECT_NE(swiglu.find("--hidden-dropout 0"), std::string::npos);
    // The dropout said off comes back off.
    const std::string off = exported(job_of("--hidden-dropout 0"));
    EXPECT_NE(off.find("--hidden-dropout 0"), std::string::npos);
    EXPECT_EQ(back(off).model.block_dropout, 0);
}

TEST(MegatronSemantics, RotaryIsThePositionEmbeddingTypesShare) {
    // --position-embedding-type rope rotates --rotary-percent of each head
    // where that is a part; none nothing; all of it and learned_absolute
    // (Megatron's default) leave a model without model_type to its reading
    // (-1: the GELU layer of kLaunch none, a --swiglu one all; the published
    // GELU runs with rope are priced so, megatron_model.cpp).
    std::vector<ImportNote> notes;
    EXPECT_DOUBLE_EQ(job_of("--position-embedding-type rope --rotary-percent 0.5", &notes).model.rotary_share, 0.5);
    EXPECT_FALSE(note(notes, "--rotary-percent"));  // read, not an ignored flag
    EXPECT_DOUBLE_EQ(job_of("--use-rotary-position-embeddings --rotary-percent 0.25").model.rotary_share, 0.25);
    // The legacy flag wins over the type, as Megatron's validate_args sets it.
    std::vector<ImportNote> legacy;
    EXPECT_DOUBLE_EQ(job_of("--position-embedding-type learned_absolute --use-rotary-position-embeddings "
                            "--rotary-percent 0.5", &legacy).model.rotary_share, 0.5);
    EXPECT_FALSE(note(legacy, "--rotary-percent"));
    EXPECT_THROW(job_of("--position-embedding-type learnedd --use-rotary-position-embeddings"), InputError);
    EXPECT_DOUBLE_EQ(job_of("--position-embedding-type rope").model.rotary_share, -1.0);
    EXPECT_DOUBLE_EQ(job_of("--position-embedding-type rope --rotary-percent 1.0").model.rotary_share, -1.0);
    EXPECT_DOUBLE_EQ(job_of("--position-embedding-type learned_absolute --rotary-percent 0.5").model.rotary_share, -1.0);
    EXPECT_DOUBLE_EQ(job_of("--position-embedding-type none --swiglu").model.rotary_share, 0.0);
    EXPECT_DOUBLE_EQ(job_of("").model.rotary_share, -1.0);
    for (const char* bad : {"--position-embedding-type rope --rotary-percent 1.5",
                            "--position-embedding-type rope --rotary-percent x", "--position-embedding-type rotary"})
        EXPECT_THROW(job_of(bad), InputError) << bad;
    EXPECT_NE(test::error_of([] { job_of("--position-embedding-type ropee"); }).find("did you mean `rope`"),
              std::string::npos);
    // --rotary-percent without a rotary type does nothing in Megatron: said.
    for (const char* unused : {"--rotary-percent 0.5", "--position-embedding-type learned_absolute --rotary-percent 0.5",
                               "--position-embedding-type none --rotary-percent 0.5"}) {
        std::vector<ImportNote> said;
        job_of(unused, &said);
        const ImportNote* n = note(said, "--rotary-percent");
        ASSERT_NE(n, nullptr) << unused;
        EXPECT_EQ(n->kind, NoteKind::ignored) << unused;
    }
    // The share of the GELU layer's 16 + 16 heads of 64 over 2,048 tokens:
    // the fused rotary kernel reads and writes 2 + 2 bytes per element.
    const Job half = job_of("--position-embedding-type rope --rotary-percent 0.5");
    const Job none = job_of("");
    const double rope = 2048.0 * 32 * 64 * 0.5;
    EXPECT_NEAR(layer_work(half.model, half.training, half.plan).mem_bytes_fwd -
                    layer_work(none.model, none.training, none.plan).mem_bytes_fwd,
                4 * rope, 1);
}

TEST(MegatronSemantics, ExportTellsMegatronWhereTheModelRotates) {
    const auto exported = [](const Job& j) { return export_megatron(j).text; };
    const auto back = [](const std::string& text) {
        return parse_job(import_megatron(text, "exported.sh").job_yaml, "back", {"cluster.preset=dgx-h100"});
    };
    // Megatron's default is learned absolute positions: a rotating model is
    // told rope, and its share; one that does not is left to the default.
    const std::string swiglu = exported(job_of("--swiglu"));
    EXPECT_NE(swiglu.find("--position-embedding-type rope"), std::string::npos);
    EXPECT_EQ(swiglu.find("--rotary-percent"), std::string::npos);
    const std::string part = exported(job_of("--position-embedding-type rope --rotary-percent 0.25"));
    EXPECT_NE(part.find("--rotary-percent 0.25"), std::string::npos);
    EXPECT_DOUBLE_EQ(back(part).model.rotary_share, 0.25);
    EXPECT_EQ(exported(job_of("")).find("--position-embedding-type rope"), std::string::npos);
    // A gated model said not to rotate is told none, and comes back so.
    const std::string nope = exported(job_of("--position-embedding-type none --swiglu"));
    EXPECT_NE(nope.find("--position-embedding-type none"), std::string::npos);
    EXPECT_DOUBLE_EQ(back(nope).model.rotary_share, 0.0);
}

TEST(MegatronSemantics, CiModelConfig) {
    // The format of Megatron's tests/functional_tests/test_cases/*/*/model_config.yaml.
    const std::string yaml =
        "ENV_VARS:\n  CUDA_DEVICE_MAX_CONNECTIONS: 1\n"
        "MODEL_ARGS:\n  --num-layers: 12\n  --hidden-size: 512\n  --num-attention-heads: 8\n"
        "  --seq-length: 1024\n  --micro-batch-size: 4\n  --global-batch-size: 32\n"
        "  --tensor-model-parallel-size: 2\n  --pipeline-model-parallel-size: 2\n  --bf16: true\n"
        "  --use-distributed-optimizer: true\n  --data-path: ${DATA_PATH}/text\n  --vocab-file: ''\n"
        "  --recompute-modules: [mlp, moe]\n  --ckpt-format: torch_dist\n"
        "TEST_TYPE: regular\n";
    ImportOptions o;
    o.num_gpus = 8;
    const ImportResult r = import_megatron(yaml, "model_config.yaml", o);
    const Job j = parse_job(r.job_yaml, "imported", {"cluster.preset=dgx-h100"});
    EXPECT_EQ(j.model.layers, 12);
    EXPECT_EQ(j.plan.tp, 2);
    EXPECT_EQ(j.plan.pp, 2);
    EXPECT_EQ(j.plan.dp, 2);
    EXPECT_EQ(j.plan.zero, 1);
    EXPECT_EQ(j.model.vocab, 50432);  // pretrain_gpt.py's GPT-2 tokenizer, padded for tp 2
    EXPECT_TRUE(note(r.notes, "--recompute-modules"));
    EXPECT_THROW(import_megatron("MODEL_ARGS: [1, 2]\n", "bad.yaml"), InputError);
    // A key given twice: yaml-cpp kept both and the walk read both, so
    // `--sequence-parallel: true` then `false` imported sequence parallelism
    // without a word (PyYAML, as Megatron's CI reads it, keeps the last); a
    // second MODEL_ARGS was dropped. Now refused, naming the key and lines.
    std::string sp = yaml;
    sp.insert(sp.find("  --bf16: true\n"), "  --sequence-parallel: true\n  --sequence-parallel: false\n");
    for (const std::string& twice : {sp, yaml + "MODEL_ARGS:\n  --num-layers: 99\n"}) {
        try {
            (void)import_megatron(twice, "model_config.yaml", o);
            ADD_FAILURE() << "imported: " << twice;
        } catch (const InputError& e) {
            EXPECT_NE(std::string(e.message()).find("duplicate key"), std::string::npos) << e.what();
        }
    }
    // Twice with one value: PyYAML keeps it, and so does the import.
    std::string same = yaml;
    same.insert(same.find("  --bf16: true\n"), "  --bf16: true\n");
    EXPECT_NO_THROW((void)import_megatron(same, "model_config.yaml", o));
}

// Found by fuzz_megatron in CI: a first YAML document that is a scalar made
// yaml-cpp throw from a subscript (exit 3, "internal error"); it is bad input.
TEST(MegatronCiConfig, FirstDocumentNotAMappingIsBadInput) {
    for (const char* text : {"a\n---\nMODEL_ARGS:\n  --num-layers: 2\n", "- 1\nMODEL_ARGS:\n", "7\nMODEL_ARGS:\n"}) {
        try {
            (void)import_megatron(text, "model_config.yaml");
            ADD_FAILURE() << "accepted: " << text;
        } catch (const InputError& e) {
            EXPECT_NE(std::string(e.what()).find("model_config.yaml"), std::string::npos) << e.what();
        }
    }
}

}  // namespace
}  // namespace lostflops::test
