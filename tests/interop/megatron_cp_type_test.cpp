// Context-parallel variants and query/key norms through Megatron's and
// torchtitan's words (src/interop/megatron_plan.cpp, megatron_model.cpp,
// torchtitan_import.cpp and the exporters): --cp-comm-type and
// context_parallel_rotate_method in, parallel.cp_comm_type out and back;
// --qk-layernorm as model.qk_layernorm. Flag lines written for these tests.
#include <gtest/gtest.h>

#include "lostflops/error.h"
#include "lostflops/interop.h"
#include "lostflops/job.h"

namespace lostflops::test {
namespace {

const std::string kLaunch =
    "torchrun --nproc_per_node 8 pretrain_gpt.py --num-layers 8 --hidden-size 1024 --num-attention-heads 16 "
    "--group-query-attention --num-query-groups 8 --seq-length 8192 --micro-batch-size 1 --global-batch-size 64 "
    "--vocab-size 32000 --bf16 --context-parallel-size 2 ";

Job job_of(const std::string& flags, std::vector<ImportNote>* notes = nullptr) {
    const ImportResult r = import_megatron(kLaunch + flags, "t.sh");
    if (notes) *notes = r.notes;
    return parse_job(r.job_yaml, "imported", {"cluster.preset=dgx-h100"});
}

bool has_note(const std::vector<ImportNote>& notes, const std::string& setting, NoteKind kind) {
    for (const auto& n : notes)
        if (n.setting == setting && n.kind == kind) return true;
    return false;
}

TEST(MegatronCpType, EachVariantComesInAndGoesBack) {
    EXPECT_EQ(job_of("").plan.cp_comm_type, CpCommType::p2p);  // Megatron's default
    for (const auto& [flag, type] : {std::pair{"p2p", CpCommType::p2p}, std::pair{"allgather", CpCommType::allgather},
                                     std::pair{"a2a", CpCommType::a2a}}) {
        const Job j = job_of(std::string("--cp-comm-type ") + flag);
        EXPECT_EQ(j.plan.cp_comm_type, type) << flag;
        const ExportResult e = export_megatron(j);
        if (type != CpCommType::p2p) { EXPECT_NE(e.text.find(std::string("--cp-comm-type ") + flag), std::string::npos); }
        const Job back = parse_job(import_megatron(e.text, "exported").job_yaml, "back", {"cluster.preset=dgx-h100"});
        EXPECT_EQ(back.plan.cp_comm_type, type) << flag;
    }
}

TEST(MegatronCpType, PerLayerListsAndHierarchicalAreNoted) {
    std::vector<ImportNote> notes;
    EXPECT_EQ(job_of("--cp-comm-type a2a a2a p2p a2a a2a a2a a2a a2a", &notes).plan.cp_comm_type, CpCommType::a2a);
    EXPECT_TRUE(has_note(notes, "--cp-comm-type", NoteKind::not_modelled));
    notes.clear();
    EXPECT_EQ(job_of("--cp-comm-type a2a+p2p", &notes).plan.cp_comm_type, CpCommType::p2p);
    EXPECT_TRUE(has_note(notes, "--cp-comm-type", NoteKind::not_modelled));
    EXPECT_THROW(job_of("--cp-comm-type ring"), InputError);
}

TEST(MegatronCpType, UlyssesNeedsTheLocalHeadsOverCp) {
    // 8 KV heads over tp 2 are 4 per rank: cp 8 cannot scatter them.
    const Job j = parse_job(import_megatron(kLaunch + "--cp-comm-type a2a --tensor-model-parallel-size 2",
                                            "t.sh").job_yaml,
                            "imported", {"cluster.preset=dgx-h100", "parallel.cp=8", "cluster.num_gpus=16"});
    EXPECT_THROW(export_megatron(j), InputError);
}

TEST(MegatronQkNorm, QkLayernormIsAModelSetting) {
    std::vector<ImportNote> notes;
    const Job j = job_of("--qk-layernorm", &notes);
    EXPECT_TRUE(j.model.kind(0).attention.qk_norm);
    EXPECT_FALSE(has_note(notes, "--qk-layernorm", NoteKind::not_modelled));
    EXPECT_FALSE(job_of("").model.kind(0).attention.qk_norm);
    const ExportResult e = export_megatron(j);
    EXPECT_NE(e.text.find("--qk-layernorm"), std::string::npos);
}

}  // namespace
}  // namespace lostflops::test
