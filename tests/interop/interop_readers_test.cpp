// The readers under the importers: the TOML subset, and bad input naming the
// flag, key or line.
#include <fstream>
#include <random>
#include <sstream>

#include <gtest/gtest.h>

#include "interop/toml_subset.h"
#include "lostflops/error.h"
#include "lostflops/interop.h"
#include "lostflops/job.h"
#include "test_util.h"

namespace lostflops::test {
namespace {

std::string key_of_megatron_error(const std::string& flags) {
    try {
        import_megatron(flags, "flags");
    } catch (const InputError& e) {
        EXPECT_EQ(e.file(), "flags");
        return e.key();
    }
    return "(no error)";
}

const std::string kBase =
    "--num-layers 2 --hidden-size 64 --num-attention-heads 4 --seq-length 128 --micro-batch-size 1 "
    "--global-batch-size 8 ";

TEST(InteropReaders, BadMegatronFlagsNameTheFlag) {
    EXPECT_EQ(key_of_megatron_error(kBase + "--bf16 --tensor-model-parallel-size"), "--tensor-model-parallel-size");
    EXPECT_EQ(key_of_megatron_error(kBase + "--bf16 --tensor-model-parallel-size --sequence-parallel"),
              "--tensor-model-parallel-size");
    EXPECT_EQ(key_of_megatron_error(kBase + "--bf16 --ffn-hidden-size=abc"), "--ffn-hidden-size");
    EXPECT_EQ(key_of_megatron_error(kBase + "--bf16 --pipeline-model-parallel-size 0"), "--pipeline-model-parallel-size");
    EXPECT_EQ(key_of_megatron_error(kBase + "--bf16 --fp16"), "--fp16");
    EXPECT_EQ(key_of_megatron_error(kBase), "(no error)");  // fp32: Megatron's default precision
    EXPECT_EQ(key_of_megatron_error(kBase + "--bf16 --sequence-parallel=yes"), "--sequence-parallel");
    EXPECT_EQ(key_of_megatron_error(kBase + "--bf16 --num-layers abc"), "--num-layers");  // the last one counts
    EXPECT_EQ(key_of_megatron_error(kBase + "--bf16 --recompute-granularity full"), "--recompute-granularity");
    EXPECT_EQ(key_of_megatron_error(kBase + "--bf16 --recompute-granularity partial"), "--recompute-granularity");
    EXPECT_EQ(key_of_megatron_error(kBase + "--bf16 --pipeline-model-parallel-size 2 "
                                            "--num-layers-per-virtual-pipeline-stage 1 "
                                            "--virtual-pipeline-model-parallel-size 2"),
              "--virtual-pipeline-model-parallel-size");
    EXPECT_EQ(key_of_megatron_error(kBase + "--bf16 --use-legacy-models --use-mcore-models"), "--use-legacy-models");
    EXPECT_EQ(key_of_megatron_error("--hidden-size 64 --bf16"), "--num-layers");
    EXPECT_EQ(key_of_megatron_error("torchrun pretrain_gpt.py " + kBase + "--bf16 --recompute-activations "
                                    "--recompute-method uniform"),
              "--recompute-method");  // selective takes no method
    EXPECT_EQ(key_of_megatron_error("torchrun pretrain_t5.py " + kBase + "--bf16"), "line 1");
    EXPECT_EQ(key_of_megatron_error("N=$(nproc)\ntorchrun pretrain_gpt.py " + kBase + "--bf16 --hidden-size $N"),
              "--hidden-size");  // cannot evaluate: a command substitution
    EXPECT_EQ(key_of_megatron_error("echo start\nexit 1\ntorchrun pretrain_gpt.py " + kBase + "--bf16"), "line 2");
}

std::string key_of_toml_error(const std::string& toml) {
    try {
        ImportOptions o;
        o.num_gpus = 8;
        import_torchtitan(toml, "t.toml", o);
    } catch (const InputError& e) {
        return e.key();
    }
    return "(no error)";
}

TEST(InteropReaders, TomlSubsetIsStrict) {
    const auto t = interop::parse_toml_subset(
        "top = 1\n[a]\nx = \"s\\\"q\"  # c\ny = 'lit'\nz = [1, 2.5, true, \"w\",]\nn = 1_000\nf = -3e2\n", "t");
    EXPECT_EQ(std::get<int64_t>(t.at("top").v), 1);
    EXPECT_EQ(std::get<std::string>(t.at("a.x").v), "s\"q");
    EXPECT_EQ(std::get<std::string>(t.at("a.y").v), "lit");
    EXPECT_EQ(std::get<std::vector<interop::TomlValue>>(t.at("a.z").v).size(), 4u);
    EXPECT_EQ(std::get<int64_t>(t.at("a.n").v), 1000);
    EXPECT_EQ(std::get<double>(t.at("a.f").v), -300.0);
    for (const char* bad : {"[a]\n[a]\n", "x = 1\nx = 2\n", "x = {a = 1}\n", "x = \"open\n", "x = 1__0\n",
                            "x = 1 2\n", "x = 1979-05-27\n", "[[a]]\n", "x = [1,\n2]\n", "= 1\n"})
        EXPECT_THROW(interop::parse_toml_subset(bad, "t"), InputError) << bad;
}

TEST(InteropReaders, BadTorchtitanConfigsNameTheKey) {
    const std::string model = "[model]\nname = \"llama3\"\nflavor = \"8B\"\n";
    EXPECT_EQ(key_of_toml_error(model + "[parallelism]\ntensor_parallel_degree = \"two\"\n"),
              "parallelism.tensor_parallel_degree");
    EXPECT_EQ(key_of_toml_error(model + "[parallelism]\ntensor_parallel_degree = 3\n"),
              "parallelism.data_parallel_shard_degree");  // 8 GPUs are not a multiple of 3
    EXPECT_EQ(key_of_toml_error("[model]\nname = \"llama3\"\nflavor = \"debugmodel\"\n"), "model.flavor");
    EXPECT_EQ(key_of_toml_error(model + "[activation_checkpoint]\nmode = \"some\"\n"), "activation_checkpoint.mode");
    EXPECT_EQ(key_of_toml_error(model + "[training]\ntensor_parallel_degree = 2\n[parallelism]\ntensor_parallel_degree = 2\n"),
              "training.tensor_parallel_degree");
    EXPECT_EQ(key_of_toml_error(model + "[training]\nmixed_precision_param = \"float64\"\n"),
              "training.mixed_precision_param");
    EXPECT_EQ(key_of_toml_error(model + "[activation_checkpoint]\nmode = \"selective\"\nselective_ac_option = \"x\"\n"),
              "activation_checkpoint.selective_ac_option");
    try {
        import_torchtitan(model, "t.toml");  // shard degree -1 and no GPU count
        FAIL();
    } catch (const InputError& e) {
        EXPECT_EQ(e.key(), "parallelism.data_parallel_shard_degree");
    }
}

// torchtitan's 2025 configs wrote model.converters as a comma-separated
// string (converters = "float8", torchtitan's train_configs/llama3_405b.toml
// of that time): read as its list, as torchtitan's string_list reads it.
TEST(InteropReaders, TorchtitanConvertersMayBeACommaSeparatedString) {
    const std::string model = "[model]\nname = \"llama3\"\nflavor = \"8B\"\n";
    ImportOptions o;
    o.num_gpus = 8;
    for (const char* conv : {"\"float8\"", "[\"float8\"]", "\" float8 ,\""}) {
        const ImportResult r = import_torchtitan(model + "converters = " + conv + "\n", "t.toml", o);
        EXPECT_EQ(parse_job(r.job_yaml, "t.yaml", {"cluster.gpu=h100-sxm"}).training.precision, Precision::fp8) << conv;
    }
    const ImportResult two = import_torchtitan(model + "converters = \"float8,mx\"\n", "t.toml", o);
    bool mx = false;
    for (const auto& n : two.notes)
        mx |= n.setting == "model.converters" && n.message.find("float8 and mx") != std::string::npos;
    EXPECT_TRUE(mx);
    EXPECT_EQ(key_of_toml_error(model + "converters = 8\n"), "model.converters");
    EXPECT_EQ(key_of_toml_error(model + "converters = [8]\n"), "model.converters");
}

// float8.recipe_name: torchao's tensorwise dynamic scaling when absent;
// rowwise_with_gw_hp is rowwise, said; a recipe with float8 off is said.
TEST(InteropReaders, TorchtitanFloat8RecipeIsRead) {
    const std::string model = "[model]\nname = \"llama3\"\nflavor = \"8B\"\nconverters = [\"float8\"]\n";
    ImportOptions o;
    o.num_gpus = 8;
    const auto recipe = [&](const std::string& extra) {
        const ImportResult r = import_torchtitan(model + extra, "t.toml", o);
        return parse_job(r.job_yaml, "t.yaml", {"cluster.gpu=h100-sxm"}).training.fp8_recipe;
    };
    EXPECT_EQ(recipe(""), Fp8Recipe::tensorwise);
    EXPECT_EQ(recipe("[float8]\nrecipe_name = \"rowwise\"\n"), Fp8Recipe::rowwise);
    const ImportResult gw = import_torchtitan(model + "[float8]\nrecipe_name = \"rowwise_with_gw_hp\"\n", "t.toml", o);
    bool said = false;
    for (const auto& n : gw.notes) said |= n.setting == "float8.recipe_name" && n.kind == NoteKind::not_modelled;
    EXPECT_TRUE(said);
    EXPECT_EQ(key_of_toml_error(model + "[float8]\nrecipe_name = \"blockwise\"\n"), "float8.recipe_name");
}

// torchtitan's mx converter (MXLinear): an mxfp8 recipe is fp8_recipe mxfp8,
// read back from the export; an emulated or fp4 recipe is noted and the
// job stays 16-bit.
TEST(InteropReaders, TorchtitanMxConverterIsMxfp8) {
    const std::string model = "[activation_checkpoint]\nmode = \"none\"\n"
                              "[model]\nname = \"llama3\"\nflavor = \"8B\"\nconverters = [\"mx\"]\n";
    ImportOptions o;
    o.num_gpus = 8;
    const auto job = [&](const std::string& extra) {
        return parse_job(import_torchtitan(model + extra, "t.toml", o).job_yaml, "t.yaml", {"cluster.gpu=b200"});
    };
    for (const char* extra : {"", "[mx]\nrecipe_name = \"mxfp8_cublas\"\n"}) {
        const Job j = job(extra);
        EXPECT_EQ(j.training.precision, Precision::fp8) << extra;
        EXPECT_EQ(j.training.fp8_recipe, Fp8Recipe::mxfp8) << extra;
    }
    const ImportResult fp4 = import_torchtitan(model + "[mx]\nrecipe_name = \"mxfp4_cutlass\"\n", "t.toml", o);
    bool said = false;
    for (const auto& n : fp4.notes) said |= n.setting == "mx.recipe_name" && n.kind == NoteKind::not_modelled;
    EXPECT_TRUE(said);
    EXPECT_EQ(job("[mx]\nrecipe_name = \"mxfp8_emulated\"\n").training.precision, Precision::bf16);
    // A name torchao does not know is refused, naming the key; [mx] without
    // the converter is said to do nothing.
    EXPECT_EQ(key_of_toml_error(model + "[mx]\nrecipe_name = \"fp8_fast\"\n"), "mx.recipe_name");
    const std::string no_mx = "[activation_checkpoint]\nmode = \"none\"\n[model]\nname = \"llama3\"\nflavor = \"8B\"\n"
                              "[mx]\nrecipe_name = \"mxfp8_cublas\"\n";
    bool ignored = false;
    for (const auto& n : import_torchtitan(no_mx, "t.toml", o).notes)
        ignored |= n.setting == "mx.recipe_name" && n.kind == NoteKind::ignored;
    EXPECT_TRUE(ignored);
    // The export writes the mx converter back, and it reads as it was.
    const Job mx = job("");
    const std::string exported = export_torchtitan(mx).text;
    EXPECT_NE(exported.find("converters = [\"mx\"]"), std::string::npos) << exported;
    EXPECT_EQ(parse_job(import_torchtitan(exported, "e.toml", o).job_yaml, "e.yaml", {"cluster.gpu=b200"})
                  .training.fp8_recipe,
              Fp8Recipe::mxfp8);
}

// Seeded random mutation of real inputs (as job/job_fuzz_test does for job
// files): every result is a job file that loads, or an InputError; nothing
// else escapes, and with `make sanitize` nothing reads out of bounds.
TEST(InteropReaders, MutatedInputsGiveAJobOrAnInputError) {
    const auto read = [](const std::string& rel) {
        std::ifstream in(source_path(rel));
        std::stringstream ss;
        ss << in.rdbuf();
        return ss.str();
    };
    const std::string seeds[] = {read("tests/data/interop/megatron/narayanan21-t1-gpt-145.6b.sh"),
                                 read("tests/data/interop/megatron/megatron24-h100-gpt-462b.sh"),
                                 read("tests/data/interop/torchtitan/torchtitan24-a100-llama3-8b-selective.toml")};
    const std::string alphabet = "-=\\\"' \n#[]{},.0123456789abcdefxyz_()";
    std::mt19937 rng(12);
    int loaded = 0, errors = 0;
    for (int i = 0; i < 3000; ++i) {
        const int which = i % 3;
        std::string text = seeds[which];
        const int edits = 1 + static_cast<int>(rng() % 6);
        for (int e = 0; e < edits && !text.empty(); ++e) {
            const size_t at = rng() % text.size();
            switch (rng() % 3) {
                case 0: text.erase(at, 1 + rng() % 12); break;
                case 1: text.insert(at, 1, alphabet[rng() % alphabet.size()]); break;
                default: text[at] = alphabet[rng() % alphabet.size()];
            }
        }
        try {
            ImportOptions o;
            o.num_gpus = which == 2 ? 64 : 0;
            const ImportResult r = which == 2 ? import_torchtitan(text, "fuzz", o) : import_megatron(text, "fuzz", o);
            parse_job(r.job_yaml, "fuzz", {"cluster.preset=dgx-a100"});
            ++loaded;
        } catch (const InputError&) {
            ++errors;
        }
    }
    EXPECT_GT(loaded, 0);
    EXPECT_GT(errors, 0);
}

}  // namespace
}  // namespace lostflops::test
