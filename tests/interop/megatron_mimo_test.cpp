// Megatron-LM's MIMO trainer (examples/mimo/train.py; src/interop/
// megatron_mimo.h): the language model is the --model-provider's, not the
// script's model flags; the sequence is --total-seq-length (default 512).
// Scripts written for these tests in the shape of examples/mimo/scripts/.
#include <algorithm>

#include <gtest/gtest.h>

#include "lostflops/error.h"
#include "lostflops/interop.h"
#include "lostflops/job.h"

namespace lostflops::test {
namespace {

// Model flags that disagree with every provider, as the MIMO scripts pass
// them ("TODO: these are not used").
std::string script(const std::string& mimo_flags) {
    return "#!/bin/bash\nGPUS=2\nARGS=(\n  --micro-batch-size 4 --global-batch-size 128 --bf16\n"
           "  --tensor-model-parallel-size 1 --context-parallel-size 2\n"
           "  --num-layers 7 --hidden-size 96 --num-attention-heads 3 --encoder-seq-length 4096\n"
           "  --tokenizer-type HuggingFaceTokenizer --tokenizer-model 'llava-hf/llava-1.5-7b-hf'\n" +
           mimo_flags + "\n)\ntorchrun --nproc_per_node $GPUS --nnodes 1 examples/mimo/train.py ${ARGS[@]}\n";
}

Job job_of(const std::string& mimo_flags, std::vector<ImportNote>* notes = nullptr) {
    const ImportResult r = import_megatron(script(mimo_flags), "run.sh");
    if (notes) *notes = r.notes;
    return parse_job(r.job_yaml, "imported", {"cluster.preset=dgx-h100"});
}

TEST(MegatronMimo, TheProvidersLanguageModelAndSequence) {
    std::vector<ImportNote> notes;
    const Job j = job_of("  --model-provider llava_vlm --total-seq-length 2048 --dataset-provider llava_vlm", &notes);
    // Vicuna-7B (examples/mimo/configs/llava_vlm.py) with the provider's 32,256 rows.
    EXPECT_EQ(j.model.layers, 32);
    EXPECT_EQ(j.model.hidden, 4096);
    EXPECT_EQ(j.model.vocab, 32256);
    EXPECT_EQ(j.model.kind(0).mlp.ffn, 11008);
    EXPECT_EQ(j.model.kind(0).mlp.kind, MlpKind::gated);
    EXPECT_EQ(j.training.seq_length, 2048);
    EXPECT_EQ(j.training.global_batch, 128);
    EXPECT_EQ(j.plan.cp, 2);
    // train.py's own flags are read, not reported unknown; the provider is said.
    for (const ImportNote& n : notes) EXPECT_NE(n.kind, NoteKind::unknown) << n.setting << ": " << n.message;
    EXPECT_TRUE(std::any_of(notes.begin(), notes.end(), [](const ImportNote& n) {
        return n.setting == "--model-provider" && n.message.find("configs/llava_vlm.py") != std::string::npos;
    }));
}

TEST(MegatronMimo, DefaultsAreTrainPys) {
    // No --model-provider: mock (1 layer, hidden 128, vocab 50,304); no
    // --total-seq-length: 512.
    const Job j = job_of("");
    EXPECT_EQ(j.model.layers, 1);
    EXPECT_EQ(j.model.hidden, 128);
    EXPECT_EQ(j.model.vocab, 50304);
    EXPECT_EQ(j.model.kind(0).mlp.ffn, 512);
    EXPECT_EQ(j.training.seq_length, 512);
    // The last of a repeated flag counts, as argparse takes it.
    EXPECT_EQ(job_of("  --model-provider mock --model-provider=llava_avlm --total-seq-length 1024").model.layers, 32);
}

TEST(MegatronMimo, AnUnknownProviderOrAnUnknowableValueIsRefused) {
    try {
        job_of("  --model-provider nemotron_moe_vlm");
        FAIL() << "accepted a provider train.py does not have";
    } catch (const InputError& e) {
        EXPECT_NE(std::string(e.what()).find("--model-provider"), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find("llava_vlm"), std::string::npos) << e.what();
    }
    EXPECT_THROW(job_of("  --total-seq-length $1"), InputError);  // an argument not given
    EXPECT_THROW(job_of("  --total-seq-length 0"), InputError);
    // Another program keeps the flags' model.
    const ImportResult r = import_megatron(
        "torchrun --nproc_per_node 8 pretrain_gpt.py --num-layers 7 --hidden-size 96 --num-attention-heads 3 "
        "--seq-length 256 --micro-batch-size 1 --global-batch-size 8 --vocab-size 1000 --bf16",
        "t.sh");
    EXPECT_EQ(parse_job(r.job_yaml, "imported", {"cluster.preset=dgx-h100"}).model.layers, 7);
}

}  // namespace
}  // namespace lostflops::test
