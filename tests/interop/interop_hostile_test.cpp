// Issue 20 items 2, 3 and 10 on the interop readers and writers: nested
// TOML arrays (a stack overflow at 30,000 levels), names that would inject a
// command into an exported launch script or a table into an exported TOML,
// Markdown from a job name, and GPU counts beyond the job file's range.
#include <regex>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "interop/toml_subset.h"
#include "lostflops/error.h"
#include "lostflops/explain.h"
#include "lostflops/interop.h"
#include "lostflops/job.h"
#include "test_util.h"

namespace lostflops {
namespace {

std::vector<std::string> lines_of(const std::string& text) {
    std::vector<std::string> out;
    size_t at = 0;
    while (at < text.size()) {
        const size_t nl = text.find('\n', at);
        out.push_back(text.substr(at, nl == std::string::npos ? std::string::npos : nl - at));
        if (nl == std::string::npos) break;
        at = nl + 1;
    }
    return out;
}

TEST(InteropHostile, DeepTomlArraysAreAnError) {
    const std::string deep = "[job]\na = " + std::string(30'000, '[') + std::string(30'000, ']') + "\n";
    try {
        interop::parse_toml_subset(deep, "deep.toml");
        ADD_FAILURE() << "parsed";
    } catch (const InputError& e) {
        EXPECT_EQ(e.key(), "line 2");
        EXPECT_NE(std::string(e.message()).find("nested deeper than 16"), std::string::npos) << e.what();
    }
    EXPECT_THROW(import_torchtitan(deep, "deep.toml", {}), InputError);
    // Nesting within the bound is still TOML.
    const auto t = interop::parse_toml_subset("[job]\na = [[[1, 2]], [[3]]]\n", "ok.toml");
    EXPECT_EQ(t.count("job.a"), 1u);
}

Job named(const std::string& name) {
    std::string text = test::small_job_text();
    text.replace(0, text.find('\n'), "name: \"" + name + "\"");
    return parse_job(text, "job.yaml");
}

TEST(InteropHostile, ExportedMegatronScriptRunsNoInjectedCommand) {
    const Job job = named("x\\ntouch INJECTED #\\r\\x1b[31m");
    ASSERT_NE(job.name.find('\n'), std::string::npos);
    const std::string script = export_megatron(job).text;
    // The name on one comment line; then comments, arrays of flags and the launcher only.
    const auto lines = lines_of(script);
    ASSERT_GE(lines.size(), 3u);
    EXPECT_EQ(lines[0], "#!/bin/bash");
    EXPECT_EQ(lines[1].rfind("# x\\ntouch INJECTED #\\r\\x1b[31m: ", 0), 0u) << lines[1];
    const std::regex allowed(R"((#.*|[A-Z_]+=\(|    (# )?--.*|\)|export CUDA_DEVICE_MAX_CONNECTIONS=1  #.*|)"
                             R"(torchrun "\$\{DISTRIBUTED_ARGS\[@\]\}" pretrain_gpt\.py \\|    "\$\{[A-Z_]+\[@\]\}"( \\)?|))");
    for (size_t i = 2; i < lines.size(); ++i) EXPECT_TRUE(std::regex_match(lines[i], allowed)) << lines[i];
    for (char c : script) EXPECT_TRUE(c == '\n' || static_cast<unsigned char>(c) >= 0x20) << int(c);
}

TEST(InteropHostile, ExportedTorchtitanConfigHasNoInjectedTable) {
    const Job job = parse_job(test::small_job_text() + "", "job.yaml",
                              {"name=\"x\\n[injected]\\nkey = 1 #\"", "model={preset: llama3-8b}",
                               "training.framework=fsdp", "parallel.tp=1", "parallel.pp=1"});
    ASSERT_NE(job.name.find('\n'), std::string::npos);
    const std::string toml = export_torchtitan(job).text;
    const auto table = interop::parse_toml_subset(toml, "out.toml");
    for (const auto& [key, value] : table) EXPECT_EQ(key.rfind("injected", 0), std::string::npos) << key;
    EXPECT_EQ(toml.find("\n[injected]"), std::string::npos);
}

TEST(InteropHostile, MarkdownTakesNoHtmlOrLinesFromAName) {
    Explanation x = explain(JobSource{}, default_calibration());
    x.job_name = "<script>alert(1)</script>\n# heading | cell *em* `code`";
    const std::string md = explain_markdown(x);
    const std::string first = md.substr(0, md.find('\n'));
    EXPECT_EQ(first.rfind("### Where the FLOPs go: ", 0), 0u);
    EXPECT_NE(first.find("&lt;script&gt;"), std::string::npos) << first;
    EXPECT_NE(first.find("\\# heading \\| cell \\*em\\* \\`code\\`"), std::string::npos) << first;
    EXPECT_EQ(md.find("<script>"), std::string::npos);
}

// `import megatron` with torchrun --nnodes 1000000: 8 M GPUs was written out.
TEST(InteropHostile, ImportedGpuCountsStayInTheJobRange) {
    const std::string script = "torchrun --nnodes 1000000 --nproc-per-node 8 pretrain_gpt.py --num-layers 2 "
                               "--hidden-size 64 --num-attention-heads 4 --seq-length 128 --max-position-embeddings 128 "
                               "--micro-batch-size 1 --global-batch-size 8 --vocab-size 1000\n";
    try {
        import_megatron(script, "run.sh", {});
        ADD_FAILURE() << "imported";
    } catch (const InputError& e) {
        EXPECT_EQ(e.key(), "--nnodes");
        EXPECT_NE(std::string(e.message()).find("1000000 GPUs"), std::string::npos) << e.what();
    }
    // Degrees of a torchtitan config whose product overflows 64 bits.
    const std::string toml = "[model]\nname = \"llama3\"\nflavor = \"8B\"\n[parallelism]\n"
                             "data_parallel_replicate_degree = 2000000000\ntensor_parallel_degree = 2000000000\n"
                             "pipeline_parallel_degree = 2000000000\ncontext_parallel_degree = 2000000000\n"
                             "data_parallel_shard_degree = 1\n";
    EXPECT_THROW(import_torchtitan(toml, "big.toml", {}), InputError);
}

// A flag's value the importer writes into the job file: the script's
// quoted text, with a line break and a section of its own, was written raw
// (--moe-expert-capacity-factor) and read back as the job's model.
TEST(InteropHostile, ImportedNumbersAreNumbersNotYaml) {
    const std::string base = "torchrun --nproc_per_node 8 pretrain_gpt.py --num-layers 2 --hidden-size 64 "
                             "--num-attention-heads 4 --seq-length 128 --micro-batch-size 1 --global-batch-size 8 "
                             "--vocab-size 1024 --num-experts 8 ";
    for (const char* flag : {"--moe-expert-capacity-factor", "--hidden-dropout"}) {
        try {
            import_megatron(base + flag + " '0.5\nmodel:\n  hidden_size: 2'\n", "run.sh", {});
            ADD_FAILURE() << flag << ": imported";
        } catch (const InputError& e) {
            EXPECT_EQ(e.key(), flag);
            EXPECT_NE(std::string(e.message()).find("expected a number"), std::string::npos) << e.what();
        }
    }
    const ImportResult r = import_megatron(base + "--moe-expert-capacity-factor 1.25 --hidden-dropout 0.0", "run.sh", {});
    EXPECT_NE(r.job_yaml.find("moe_capacity_factor: 1.25\n"), std::string::npos) << r.job_yaml;
    EXPECT_NE(r.job_yaml.find("hidden_dropout: 0  #"), std::string::npos) << r.job_yaml;
}

// A run's length: torchtitan's training.steps x global batch x seq_len
// overflowed 64 bits into a negative train_tokens (exit 0); steps = 0 was
// dropped without a word; Megatron's --train-samples past 2^31 (DeepSeek-V3's
// 14.8 T tokens of 4,096: 3,613,281,250, as `export megatron` writes it) was
// refused, a 64-bit count in argparse.
TEST(InteropHostile, RunLengthsPast32BitsAreReadOrRefusedNeverWrapped) {
    const std::string toml = "[model]\nname = \"llama3\"\nflavor = \"8B\"\n[parallelism]\n"
                             "data_parallel_shard_degree = 8\n[training]\nlocal_batch_size = 1\n";
    try {
        import_torchtitan(toml + "seq_len = 2147483647\nsteps = 2147483647\n", "long.toml", {});
        ADD_FAILURE() << "imported";
    } catch (const InputError& e) {
        EXPECT_EQ(e.key(), "training.steps");
        EXPECT_NE(std::string(e.message()).find("more than 1e18"), std::string::npos) << e.what();
    }
    const ImportResult zero = import_torchtitan(toml + "steps = 0\n", "zero.toml", {});
    EXPECT_EQ(zero.job_yaml.find("train_tokens"), std::string::npos) << zero.job_yaml;
    bool noted = false;
    for (const auto& n : zero.notes) noted |= n.setting == "training.steps";
    EXPECT_TRUE(noted);
    const std::string script = "torchrun --nnodes 1 --nproc-per-node 8 pretrain_gpt.py --num-layers 2 "
                               "--hidden-size 64 --num-attention-heads 4 --seq-length 4096 --max-position-embeddings 4096 "
                               "--micro-batch-size 1 --global-batch-size 8 --vocab-size 1000 --train-samples ";
    const ImportResult r = import_megatron(script + "3613281250\n", "run.sh", {});
    EXPECT_NE(r.job_yaml.find("train_tokens: 14800000000000 "), std::string::npos) << r.job_yaml;
    EXPECT_THROW(import_megatron(script + "1000000000000000000\n", "run.sh", {}), InputError);
}

}  // namespace
}  // namespace lostflops
