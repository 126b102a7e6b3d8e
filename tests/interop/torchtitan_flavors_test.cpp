// torchtitan's model flavours of current families (deepseek_v3, qwen3,
// llama4, gpt_oss; src/interop/torchtitan_flavors.cpp cites each): import
// gives the flavour's model, export writes the flavour back, and the
// flavours that differ from the published model (no MTP module in
// deepseek_v3; full attention in llama4 without _irope) say so. The real
// torchtitan configs of ../shared/realworld/torchtitan/ import to the same
// models (skipped, saying so, when the folder is absent).
#include <filesystem>

#include "interop/interop_util.h"
#include "interop/torchtitan_flavors.h"
#include "lostflops/interop.h"
#include "lostflops/job.h"
#include "workload/flops.h"

namespace lostflops::test {
namespace {

namespace fs = std::filesystem;

Job import_toml(const std::string& toml, int num_gpus) {
    ImportOptions o;
    o.num_gpus = num_gpus;
    const ImportResult r = import_torchtitan(toml, "t.toml", o);
    return parse_job(r.job_yaml, "imported", {"cluster.preset=dgx-h100"});
}

std::string flavor_toml(const std::string& name, const std::string& flavor, int ep) {
    return "[model]\nname = \"" + name + "\"\nflavor = \"" + flavor + "\"\n[training]\nlocal_batch_size = 1\nseq_len = 4096\n" +
           "[parallelism]\ndata_parallel_shard_degree = -1\nexpert_parallel_degree = " + std::to_string(ep) + "\n" +
           "[activation_checkpoint]\nmode = \"none\"\n";
}

struct Row {
    const char* name;
    const char* flavor;
    const char* preset;
};

const Row kModern[] = {
    {"deepseek_v3", "671B", "deepseek-v3"},   {"qwen3", "8B", "qwen3-8b"},
    {"qwen3", "32B", "qwen3-32b"},            {"qwen3", "30B-A3B", "qwen3-30b-a3b"},
    {"qwen3", "235B-A22B", "qwen3-235b-a22b"}, {"llama4", "17bx16e", "llama4-scout"},
    {"llama4", "17bx128e", "llama4-maverick"}, {"llama4", "17bx16e_irope", "llama4-scout"},
    {"llama4", "17bx128e_irope", "llama4-maverick"}, {"gpt_oss", "20b", "gpt-oss-20b"},
    {"gpt_oss", "120b", "gpt-oss-120b"},
};

TEST(TorchtitanFlavors, ImportGivesTheFlavourAndExportWritesItBack) {
    for (const Row& row : kModern) {
        SCOPED_TRACE(std::string(row.name) + " " + row.flavor);
        const auto f = interop::flavor_by_name(row.name, row.flavor);
        ASSERT_TRUE(f);
        EXPECT_EQ(f->preset, row.preset);
        const int ep = interop::flavor_shape(*f).is_moe() ? 8 : 1;
        const Job j = import_toml(flavor_toml(row.name, row.flavor, ep), 64);
        EXPECT_TRUE(j.model.same_shape(interop::flavor_shape(*f)));
        EXPECT_EQ(j.plan.ep, ep);
        // Export names the same flavour (and the expert degree); importing that gives the job back.
        const ExportResult e = export_torchtitan(j);
        EXPECT_NE(e.text.find("name = \"" + std::string(row.name) + "\""), std::string::npos) << e.text;
        EXPECT_NE(e.text.find("flavor = \"" + std::string(row.flavor) + "\""), std::string::npos) << e.text;
        const Job back = import_toml(e.text, 64);
        EXPECT_TRUE(back.model.same_shape(j.model));
        EXPECT_EQ(back.plan.ep, ep);
    }
}

TEST(TorchtitanFlavors, DifferencesFromThePublishedModelsAreKept) {
    // torchtitan's deepseek_v3 671B has no multi-token prediction module.
    const Job v3 = import_toml(flavor_toml("deepseek_v3", "671B", 8), 64);
    EXPECT_EQ(v3.model.mtp_layers, 0);
    EXPECT_EQ(count_params(v3.model).total, count_params(parse_job("model: {preset: deepseek-v3}\n"
                                                                   "cluster: {preset: dgx-h100, num_gpus: 64}\n"
                                                                   "training: {seq_length: 4096, global_batch_size: 64}\n"
                                                                   "parallel: {zero: 3}\n",
                                                                   "p.yaml")
                                                             .model)
                                                  .total);
    // ... so the published model (with its MTP module) is not that flavour.
    const Job with_mtp = parse_job("model: {preset: deepseek-v3}\ncluster: {preset: dgx-h100, num_gpus: 64}\n"
                                   "training: {seq_length: 4096, global_batch_size: 64}\nparallel: {zero: 3, ep: 8}\n",
                                   "p.yaml");
    EXPECT_FALSE(interop::flavor_of(with_mtp.model));
    // Its export says which flavour it is but for what, and the key that makes it one.
    try {
        (void)export_torchtitan(with_mtp);
        FAIL() << "exported a DeepSeek-V3 with its MTP module";
    } catch (const InputError& e) {
        EXPECT_NE(std::string(e.what()).find("the preset deepseek-v3 is torchtitan's deepseek_v3 671B but for: torchtitan's "
                                             "deepseek_v3 has no multi-token prediction module "
                                             "(model.num_nextn_predict_layers: 0)"),
                  std::string::npos)
            << e.what();
    }
    const Job other = parse_job("model: {preset: llama3-8b, num_hidden_layers: 30}\ncluster: {preset: dgx-h100, num_gpus: 8}\n"
                                "training: {seq_length: 4096, global_batch_size: 8}\nparallel: {zero: 3}\n",
                                "p.yaml");
    EXPECT_FALSE(interop::flavor_near_miss(other.model));  // no flavour but for its overrides
    // llama4 without _irope attends over the whole sequence; with it, 3 of
    // every 4 layers attend within chunks of 8192 (the published model).
    const Model full = interop::flavor_shape(*interop::flavor_by_name("llama4", "17bx16e"));
    const Model irope = interop::flavor_shape(*interop::flavor_by_name("llama4", "17bx16e_irope"));
    EXPECT_FALSE(full.same_shape(irope));
    EXPECT_EQ(count_params(full).total, count_params(irope).total);
    int chunked = 0;
    for (int i = 0; i < irope.layers; ++i) chunked += irope.layer(i).attention.chunk > 0 ? 1 : 0;
    EXPECT_EQ(chunked, 36);
    for (int i = 0; i < full.layers; ++i) EXPECT_EQ(full.layer(i).attention.chunk, 0);
    // An unknown flavour names the known ones.
    try {
        import_toml(flavor_toml("qwen3", "7B", 1), 8);
        FAIL() << "qwen3 7B imported";
    } catch (const InputError& e) {
        EXPECT_NE(std::string(e.what()).find("qwen3 8B/32B/30B-A3B/235B-A22B"), std::string::npos) << e.what();
    }
}

// The routed experts' tensor parallelism: none unless given (a job without
// etp would take tp, Megatron-Core's default); torchtitan of mid-2025's
// expert_tensor_parallel_degree, 1 or tp; no effect with ep 1.
TEST(TorchtitanFlavors, ExpertTensorParallelismIsTorchtitansNotTheJobDefault) {
    const auto toml = [](int ep, const std::string& etp) {
        return "[model]\nname = \"qwen3\"\nflavor = \"30B-A3B\"\n[training]\nlocal_batch_size = 2\nseq_len = 4096\n"
               "[parallelism]\ndata_parallel_shard_degree = 8\ntensor_parallel_degree = 2\nexpert_parallel_degree = " +
               std::to_string(ep) + "\n" + (etp.empty() ? "" : "expert_tensor_parallel_degree = " + etp + "\n");
    };
    EXPECT_EQ(import_toml(toml(4, ""), 16).plan.expert_tp(), 1);
    EXPECT_EQ(import_toml(toml(4, "1"), 16).plan.expert_tp(), 1);
    EXPECT_EQ(import_toml(toml(4, "2"), 16).plan.expert_tp(), 2);
    EXPECT_THROW(import_toml(toml(4, "3"), 16), InputError);
    const ImportResult r = import_torchtitan(toml(1, "2"), "t.toml");
    bool noted = false;
    for (const ImportNote& n : r.notes) noted |= n.setting == "parallelism.expert_tensor_parallel_degree";
    EXPECT_TRUE(noted);
}

TEST(TorchtitanFlavors, RealConfigsImportToTheirFlavours) {
    const fs::path dir = source_path("../shared/realworld/torchtitan");
    if (!fs::exists(dir)) GTEST_SKIP() << dir << " is absent (the shared folder of real inputs)";
    struct RealConfig {
        const char* file;
        const char* name;
        const char* flavor;
    };
    const RealConfig real[] = {
        {"torchtitan__models__deepseek_v3__train_configs__deepseek_v3_671b.toml", "deepseek_v3", "671B"},
        {"torchtitan__experiments__llama4__train_configs__llama4_17bx16e.toml", "llama4", "17bx16e"},
        {"torchtitan__experiments__llama4__train_configs__llama4_17bx128e.toml", "llama4", "17bx128e"},
        {"torchtitan__experiments__qwen3__train_configs__qwen3_32b.toml", "qwen3", "32B"}};
    for (const RealConfig& c : real) {
        SCOPED_TRACE(c.file);
        const Job j = import_toml(slurp((dir / c.file).string()), 256);
        EXPECT_TRUE(j.model.same_shape(interop::flavor_shape(*interop::flavor_by_name(c.name, c.flavor))));
    }
}

}  // namespace
}  // namespace lostflops::test
