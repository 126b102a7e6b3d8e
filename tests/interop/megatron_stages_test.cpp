// Megatron's stage layouts (src/interop/megatron_plan.cpp, megatron_export.cpp):
// --decoder-first/last-pipeline-num-layers, --pipeline-model-parallel-layout
// and a hybrid pattern's '|' segments become parallel.first_stage_layers,
// last_stage_layers and pipeline_layout with Megatron's vpp, Megatron's
// refusals are refused, and export writes every plan's stages back so that
// import gives the same layers on every virtual stage. Flag lines written for
// these tests.
#include <gtest/gtest.h>

#include <algorithm>

#include "lostflops/error.h"
#include "lostflops/interop.h"
#include "lostflops/job.h"
#include "job/stage_layout.h"
#include "test_util.h"

namespace lostflops::test {
namespace {

const std::string kLaunch =
    "torchrun --nproc_per_node 8 --nnodes 4 pretrain_gpt.py --num-layers 30 --hidden-size 1024 "
    "--num-attention-heads 16 --seq-length 2048 --micro-batch-size 1 --global-batch-size 64 --vocab-size 32000 --bf16 ";

Job job_of(const std::string& flags, std::vector<ImportNote>* notes = nullptr) {
    const ImportResult r = import_megatron(kLaunch + flags, "t.sh");
    if (notes) *notes = r.notes;
    return parse_job(r.job_yaml, "imported", {"cluster.preset=dgx-h100"});
}

std::vector<int> stage_layers(const Job& job) {
    std::vector<int> layers;
    for (int v = 0; v < job.plan.pp * job.plan.vpp; ++v)
        layers.push_back(virtual_stage(job, v % job.plan.pp, v / job.plan.pp).layers);
    return layers;
}

TEST(MegatronStages, FirstAndLastStageLayers) {
    std::vector<ImportNote> notes;
    const Job j = job_of("--pipeline-model-parallel-size 4 --decoder-first-pipeline-num-layers 6 "
                         "--decoder-last-pipeline-num-layers 6",
                         &notes);
    EXPECT_EQ(j.plan.first_stage_layers, 6);
    EXPECT_EQ(j.plan.last_stage_layers, 6);
    EXPECT_EQ(stage_layers(j), (std::vector<int>{6, 9, 9, 6}));
    for (const auto& n : notes) EXPECT_NE(n.kind, NoteKind::not_modelled) << n.setting << ": " << n.message;
    const Job v = job_of("--pipeline-model-parallel-size 4 --decoder-first-pipeline-num-layers 4 "
                         "--num-virtual-stages-per-pipeline-rank 2 --num-layers 28");
    EXPECT_EQ(v.plan.vpp, 2);
    EXPECT_EQ(v.plan.first_stage_layers, 4);
    // Megatron asserts that uneven stages take vpp from --num-virtual-stages-per-pipeline-rank only.
    EXPECT_THROW(job_of("--pipeline-model-parallel-size 2 --decoder-first-pipeline-num-layers 4 "
                        "--num-layers-per-virtual-pipeline-stage 1"),
                 InputError);
}

TEST(MegatronStages, AnExplicitLayoutSetsVpp) {
    const Job j = job_of("--pipeline-model-parallel-size 2 --pipeline-model-parallel-layout 'Et*6|t*8|t*8|t*8L'");
    EXPECT_EQ(j.plan.vpp, 2);
    ASSERT_TRUE(j.plan.layout);
    EXPECT_EQ(stage_layers(j), (std::vector<int>{6, 8, 8, 8}));
    // 3 stages over pp 2; beside a vpp flag; a layout of 29 layers for 30.
    EXPECT_THROW(job_of("--pipeline-model-parallel-size 2 --pipeline-model-parallel-layout 'Et*10|t*10|t*10L'"), InputError);
    EXPECT_THROW(job_of("--pipeline-model-parallel-size 2 --num-virtual-stages-per-pipeline-rank 2 "
                        "--pipeline-model-parallel-layout 'Et*6|t*8|t*8|t*8L'"),
                 InputError);
    EXPECT_THROW(job_of("--pipeline-model-parallel-size 2 --pipeline-model-parallel-layout 'Et*6|t*8|t*8|t*7L'"), InputError);
}

TEST(MegatronStages, HybridPatternSegmentsAreStages) {
    const std::string hybrid = "--hybrid-layer-pattern 'M-M*|M-M-|M*M-|M-M-' --mamba-num-heads 32 --mamba-head-dim 64 "
                               "--mamba-state-dim 128 --pipeline-model-parallel-size 2 --num-layers 16 ";
    const Job j = job_of(hybrid);
    EXPECT_EQ(j.model.layers, 16);
    EXPECT_EQ(j.plan.vpp, 2);
    EXPECT_EQ(stage_layers(j), (std::vector<int>{4, 4, 4, 4}));
    EXPECT_THROW(job_of(hybrid + "--pipeline-model-parallel-layout 'Et*8|t*8L'"), InputError);
}

// export -> import: the same layers on every virtual stage, whether the plan
// gives first/last counts, a layout, or the default split's uneven stages.
TEST(MegatronStages, ExportWritesTheStagesBack) {
    const auto back = [](const Job& job) {
        const ExportResult e = export_megatron(job);
        for (const auto& n : e.notes) ADD_FAILURE() << n.setting << ": " << n.message;
        const ImportResult r = import_megatron(e.text, "exported");
        return parse_job(r.job_yaml, "round trip", {"cluster.preset=dgx-h100"});
    };
    for (const std::string& plan : {std::string("--pipeline-model-parallel-size 4 --decoder-last-pipeline-num-layers 3"),
                                    std::string("--pipeline-model-parallel-size 2 --pipeline-model-parallel-layout "
                                                "'Et*6|t*8|t*8|t*8L'"),
                                    std::string("--pipeline-model-parallel-size 4"),  // 30 layers: uneven default split
                                    std::string("--pipeline-model-parallel-size 2 --virtual-pipeline-model-parallel-size 4")}) {
        SCOPED_TRACE(plan);
        const Job job = job_of(plan);
        const Job again = back(job);
        EXPECT_EQ(again.plan.pp, job.plan.pp);
        EXPECT_EQ(again.plan.vpp, job.plan.vpp);
        EXPECT_EQ(stage_layers(again), stage_layers(job));
    }
    // A hybrid stack's uneven stages go back as '|' in its pattern (Megatron
    // refuses a layout beside it): 52 layers over pp 4 x vpp 2.
    const Job nemotron = load_job(source_path("tests/data/job/models/nemotron-h-8b.yaml"), {"parallel.pp=4", "parallel.vpp=2"});
    const ExportResult e = export_megatron(nemotron);
    EXPECT_EQ(e.text.find("--pipeline-model-parallel-layout"), std::string::npos);
    const Job hybrid = parse_job(import_megatron(e.text, "exported").job_yaml, "round trip",
                                 {"cluster.preset=dgx-h100", "cluster.num_gpus=8"});
    EXPECT_EQ(stage_layers(hybrid), stage_layers(nemotron));
    EXPECT_EQ(stage_layers(nemotron).size(), 8u);
    const std::vector<int> n = stage_layers(nemotron);
    EXPECT_NE(*std::min_element(n.begin(), n.end()), *std::max_element(n.begin(), n.end()));  // uneven indeed
}

}  // namespace
}  // namespace lostflops::test
