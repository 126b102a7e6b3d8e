// The table of layer kinds (job/layer_kinds.h) is the one home of a mixer:
// every MixerKind must have its row, in order, with every function of its
// file (src/job/mixers/<name>.cpp), and each file must agree with itself: on
// one GPU a mixer holds all its parameters and its GEMMs are its GEMM
// weights; split over TP its GEMMs and weights shrink. A kind added to the
// enum without a row fails here (the switch below names every kind, so
// -Wswitch names one it lacks), as does a row without a sample kind here.
#include <gtest/gtest.h>

#include <filesystem>
#include <optional>
#include <set>
#include <string>

#include "job/layer_kinds.h"
#include "workload/flops.h"

namespace lostflops {
namespace {

// Every enumerator (a switch without default: -Wswitch names one left out).
bool listed(MixerKind k) {
    switch (k) {
        case MixerKind::attention:
        case MixerKind::mla:
        case MixerKind::mamba2:
        case MixerKind::mamba1:
        case MixerKind::gated_deltanet:
        case MixerKind::lightning:
        case MixerKind::none: return true;
    }
    return false;
}

// A complete layer of each kind, shapes chosen small and distinct.
std::optional<LayerKind> sample(MixerKind m) {
    LayerKind k;
    k.mixer = m;
    k.mlp = Mlp{.kind = MlpKind::gated, .ffn = 256};
    Attention& a = k.attention;
    LinearMixer& l = k.linear;
    switch (m) {
        case MixerKind::attention: a = {.heads = 8, .kv_heads = 2, .head_dim = 16, .v_head_dim = 16}; break;
        case MixerKind::mla:
            a = {.heads = 8, .kv_heads = 8, .head_dim = 24, .v_head_dim = 16, .q_lora_rank = 32, .kv_lora_rank = 16,
                 .qk_rope_head_dim = 8};
            break;
        case MixerKind::mamba2:
            l = {.heads = 8, .head_dim = 16, .groups = 2, .state_dim = 16, .conv_kernel = 4, .chunk = 32};
            break;
        case MixerKind::mamba1:
            l = {.heads = 256, .head_dim = 1, .groups = 1, .state_dim = 8, .conv_kernel = 4, .chunk = 32, .dt_rank = 8};
            break;
        case MixerKind::gated_deltanet:
            l = {.heads = 8, .head_dim = 16, .groups = 4, .state_dim = 16, .conv_kernel = 4, .chunk = 32};
            break;
        case MixerKind::lightning: l = {.heads = 8, .head_dim = 16, .groups = 8, .state_dim = 16, .chunk = 32}; break;
        case MixerKind::none: break;
    }
    return k;
}

constexpr double kHidden = 128;

TEST(LayerKinds, EveryKindHasItsRowWithEveryFunction) {
    size_t kinds = 0;
    for (int i = 0; i < 256; ++i) {
        const MixerKind k = static_cast<MixerKind>(i);
        if (!listed(k)) continue;
        ++kinds;
        ASSERT_LT(static_cast<size_t>(i), kMixerRows.size()) << "kind " << i << " has no row in job/layer_kinds.h";
        const MixerRow& row = kMixerRows[static_cast<size_t>(i)];
        EXPECT_EQ(row.kind, k) << "row " << i << " is another kind's";
        ASSERT_NE(row.name, nullptr);
        EXPECT_EQ(std::string(to_string(k)), row.name);
        EXPECT_NE(row.needs, nullptr);
        EXPECT_NE(row.source, nullptr);
        ASSERT_NE(row.fns, nullptr) << row.name;
        const MixerFns& f = *row.fns;
        EXPECT_TRUE(f.count && f.core_flops && f.on_rank && f.problem && f.tp_problem && f.shape_text)
            << row.name << " lacks a function of its file (src/job/mixers/)";
        // A softmax kind is priced by its attention fields; the linear ones
        // by their own (LayerKind::has_attention reads the trait).
        const std::optional<LayerKind> kind = sample(k);
        ASSERT_TRUE(kind.has_value()) << "no sample layer of " << row.name << " in this test";
        EXPECT_EQ(kind->has_attention(), row.softmax);
        EXPECT_TRUE(f.problem(*kind).key.empty()) << row.name << ": " << f.problem(*kind).message;
        EXPECT_TRUE(kind_problem(*kind, 128).key.empty()) << row.name;
    }
    EXPECT_EQ(kinds, kMixerRows.size()) << "a row for a kind the enum does not have";
}

// What a GPU holds of a mixer and the GEMMs it runs, under tp t.
MixerOnRank on(const LayerKind& k, double t) {
    MixerOnRank o;
    mixer_fns(k.mixer).on_rank(k, MixerRank{.t = t, .c = 1, .tokens = 64, .h = kHidden, .el = 2}, o);
    return o;
}

double gemm_weights(const MixerOnRank& o) {
    double w = 0;
    for (int i = 0; i < o.gemm_count; ++i) w += o.gemms[static_cast<size_t>(i)][0] * o.gemms[static_cast<size_t>(i)][1];
    return w;
}

TEST(LayerKinds, OnOneGpuAMixerHoldsItsParametersAndRunsItsGemmWeights) {
    for (const MixerRow& row : kMixerRows) {
        const LayerKind k = *sample(row.kind);
        const MixerCount c = row.fns->count(k, kHidden);
        const MixerOnRank one = on(k, 1);
        EXPECT_DOUBLE_EQ(one.params, c.gemm + c.other) << row.name;
        EXPECT_DOUBLE_EQ(gemm_weights(one), c.gemm) << row.name;
        EXPECT_DOUBLE_EQ(mixer_params(k, static_cast<int64_t>(kHidden)), c.gemm + c.other) << row.name;
        if (row.kind == MixerKind::none) {
            EXPECT_EQ(one.gemm_count, 0);
            EXPECT_EQ(c.gemm + c.other, 0);
            EXPECT_EQ(row.fns->core_flops(k, 1024, true), 0);
            continue;
        }
        EXPECT_GT(c.gemm, 0) << row.name;
        EXPECT_GT(row.fns->core_flops(k, 1024, true), 0) << row.name;
        EXPECT_EQ(one.core_kernels, 1) << row.name;
        EXPECT_NE(row.fns->shape_text(k), "") << row.name;
        // Split over tp 2 (each sample divides): fewer weights and GEMM
        // FLOPs, never less than half of them.
        EXPECT_TRUE(row.fns->tp_problem(k, 2).empty()) << row.name;
        const MixerOnRank two = on(k, 2);
        EXPECT_LT(two.params, one.params) << row.name;
        EXPECT_GE(two.params, one.params / 2) << row.name;
        EXPECT_LT(gemm_weights(two), gemm_weights(one)) << row.name;
        EXPECT_GE(gemm_weights(two), gemm_weights(one) / 2) << row.name;
        EXPECT_GT(one.saved_split + one.saved_on_rank_bytes, 0) << row.name;
    }
}

// The traits the generic code reads, as the kinds are: softmax kinds only
// price context parallelism; only MLA has Megatron-Core's mla_up_proj, and
// its GEMMs are among its own.
TEST(LayerKinds, TraitsAgreeWithTheFiles) {
    for (const MixerRow& row : kMixerRows) {
        const MixerOnRank o = on(*sample(row.kind), 2);
        if (row.softmax) {
            EXPECT_TRUE(row.cp_modelled) << row.name;
        } else {
            EXPECT_EQ(o.cp_ring_bytes + o.cp_qkv_bytes + o.cp_out_bytes, 0) << row.name;
        }
        EXPECT_EQ(row.up_proj_module, o.up_proj_gemms != 0) << row.name;
        EXPECT_LT(o.up_proj_gemms, 1u << o.gemm_count) << row.name;
        EXPECT_EQ(row.megatron == MegatronMixer::none, row.kind == MixerKind::none) << row.name;
    }
}

// The build lists a mixer's source by its value of MixerKind
// (src/job/CMakeLists.txt reads the enum), so the file must carry the row's
// name; a file of mixers/ no value names would not be built at all.
TEST(LayerKinds, EveryMixerFileIsAKind) {
    namespace fs = std::filesystem;
    const fs::path dir = fs::path(LOSTFLOPS_SOURCE_DIR) / "src" / "job" / "mixers";
    ASSERT_TRUE(fs::is_directory(dir)) << dir;
    std::set<std::string> names;
    for (const MixerRow& row : kMixerRows) names.insert(row.name);
    std::set<std::string> files;
    for (const fs::directory_entry& e : fs::directory_iterator(dir))
        if (e.path().extension() == ".cpp") files.insert(e.path().stem().string());
    files.erase("mixer_parts");  // shared helpers (mixer_parts.h), listed by hand
    EXPECT_EQ(files, names);
}

}  // namespace
}  // namespace lostflops
