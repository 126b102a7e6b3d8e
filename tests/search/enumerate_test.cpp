// The layout enumerator against the plan checks it encodes: on small jobs
// whose layouts can be counted by hand, every combination of tp, cp, pp, vpp,
// ep and micro-batch size is put through validate_job, and the accepted set
// must be exactly the enumerated one, in a fixed order.
#include <set>
#include <tuple>
#include <vector>

#include <gtest/gtest.h>

#include "lostflops/error.h"
#include "search/enumerate.h"
#include "job/validate.h"
#include "test_util.h"

namespace lostflops::search {
namespace {

using Key = std::tuple<int, int, int, int, int, int, int64_t, int, int>;  // tp cp pp dp vpp ep mb etp dispatcher

Key key_of(const Layout& l) {
    return {l.tp, l.cp, l.pp, l.dp, l.vpp, l.ep, l.micro_batch, l.etp, static_cast<int>(l.dispatcher)};
}

std::vector<Key> enumerated(const Job& job) {
    std::vector<Key> out;
    const LayoutCounts c = enumerate_layouts(job, [&](const Layout& l) { out.push_back(key_of(l)); });
    EXPECT_EQ(c.valid, static_cast<int64_t>(out.size()));
    return out;
}

// Every combination up to the GPU count, layer count and batch, checked by
// validate_job; for MoE models etp 1 or tp (the search's space; Megatron-Core
// allows other etp too), the dispatcher alltoall (search_plans chooses it).
std::set<Key> brute_force(const Job& job) {
    std::set<Key> ok;
    const int gpus = job.cluster.num_gpus;
    const int max_ep = job.model.is_moe() ? job.model.max_experts() : 1;
    for (int tp = 1; tp <= gpus; ++tp)
        for (int cp = 1; cp <= gpus; ++cp)
            for (int pp = 1; pp <= gpus; ++pp) {
                if (gpus % (tp * cp * pp) != 0) continue;  // dp = gpus / (tp*cp*pp) must be whole
                for (int vpp = 1; vpp <= job.model.layers; ++vpp)
                    for (int ep = 1; ep <= max_ep; ++ep)
                        for (int etp = 1; etp <= (job.model.is_moe() ? tp : 1); ++etp)
                            for (int d = 0; d < 1; ++d)
                                for (int64_t mb = 1; mb <= job.training.global_batch; ++mb) {
                                    if (etp != 1 && etp != tp) continue;
                                    Layout l{tp, cp, pp, gpus / (tp * cp * pp), vpp, ep, mb};
                                    l.etp = etp;
                                    l.dispatcher = static_cast<MoeDispatcher>(d);
                                    try {
                                        validate_job(with_layout(job, l));
                                        ok.insert(key_of(l));
                                    } catch (const InputError&) {
                                    }
                                }
            }
    return ok;
}

Job small_job(const std::vector<std::string>& overrides) {
    // The job's own plan only has to load; the enumerator ignores it.
    std::vector<std::string> all = {"parallel.sequence_parallel=false"};
    all.insert(all.end(), overrides.begin(), overrides.end());
    return parse_job(test::small_job_text(), "small.yaml", all);
}

TEST(EnumerateLayouts, DenseModelMatchesThePlanChecksExactly) {
    // 8 layers, 8 heads (2 kv), 16 GPUs, 8 sequences of 64 tokens.
    const Job job = small_job({"model.num_hidden_layers=8", "model.hidden_size=512", "model.num_attention_heads=8",
                               "model.num_key_value_heads=2", "model.intermediate_size=1024",
                               "training.seq_length=64", "training.global_batch_size=8",
                               "training.micro_batch_size=1", "parallel.tp=8", "parallel.cp=2", "parallel.pp=1"});
    const auto got = enumerated(job);
    const std::set<Key> unique(got.begin(), got.end());
    EXPECT_EQ(unique.size(), got.size()) << "a layout was enumerated twice";
    EXPECT_EQ(unique, brute_force(job));
    // By hand for tp = 8, cp = 2 (16 GPUs: pp = dp = 1): micro-batch 1, 2, 4 or 8.
    int tp8cp2 = 0;
    for (const Key& k : got) tp8cp2 += std::get<0>(k) == 8 && std::get<1>(k) == 2;
    EXPECT_EQ(tp8cp2, 4);
}

TEST(EnumerateLayouts, MixtureOfExpertsAddsExpertGroups) {
    const Job job = small_job({"model.num_hidden_layers=4", "model.hidden_size=256", "model.num_attention_heads=4",
                               "model.intermediate_size=512", "model.num_local_experts=4",
                               "model.num_experts_per_tok=2", "cluster.num_gpus=8",
                               "training.seq_length=32", "training.global_batch_size=4",
                               "training.micro_batch_size=1", "parallel.tp=4", "parallel.pp=2"});
    const auto got = enumerated(job);
    EXPECT_EQ(std::set<Key>(got.begin(), got.end()), brute_force(job));
    bool has_ep4 = false, folded = false;
    for (const Key& k : got) {
        has_ep4 |= std::get<5>(k) == 4;
        // ep 4 with dp 1: only by folding over tp (etp 1, tp 4).
        folded |= std::get<5>(k) == 4 && std::get<3>(k) == 1 && std::get<7>(k) == 1;
    }
    EXPECT_TRUE(has_ep4);
    EXPECT_TRUE(folded);
}

TEST(EnumerateLayouts, SameJobSameOrder) {
    const Job job = small_job({"cluster.num_gpus=16", "training.global_batch_size=32"});
    EXPECT_EQ(enumerated(job), enumerated(job));
    EXPECT_FALSE(enumerated(job).empty());
}

}  // namespace
}  // namespace lostflops::search
