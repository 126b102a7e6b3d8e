// Reliability, fourth pass, through the executable (import / export round
// trips, every subcommand's --format json): each input here was answered
// wrongly before its fix: a JSON output without the warnings its text
// printed, an export --best error naming a stack the user did not export to,
// an export --best that refused the plan it had picked.
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "cli/cli_util.h"
#include "test_util.h"

namespace {

using lostflops::test::CliRun;
using lostflops::test::run_cli;
using lostflops::test::source_path;

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// goodput printed the job's warnings on stderr (here the 126 layers over
// pp x vpp = 32 stages) but its JSON had no `warnings`, which estimate's has.
TEST(CliReliability4, GoodputJsonCarriesTheWarnings) {
    const std::string job = source_path("examples/llama3.1-405b-16384xh100-goodput.yaml");
    const CliRun r = run_cli("--quiet goodput --format json " + job);
    ASSERT_EQ(r.code, 0) << r.all();
    EXPECT_TRUE(has(r.err, "warning: parallel.vpp:")) << r.err;
    const auto j = nlohmann::json::parse(r.out);
    ASSERT_TRUE(j.contains("warnings")) << r.out.substr(0, 400);
    bool vpp = false;
    for (const auto& w : j["warnings"]) vpp = vpp || w.at("key") == "parallel.vpp";
    EXPECT_TRUE(vpp) << j["warnings"].dump();
    // A plan that does not fit: warned on stderr, and so in the JSON.
    const CliRun tight = run_cli("--quiet goodput --format json --set parallel.recompute_layers=null "
                                 "--set parallel.recompute=none " + job);
    ASSERT_EQ(tight.code, 1) << tight.all();
    EXPECT_TRUE(has(tight.err, "does not fit")) << tight.err;
    EXPECT_TRUE(has(tight.out, "\"key\": \"memory\"")) << tight.out.substr(0, 400);
}

// `export maxtext --best` on a GPU job where no plan fits said "no plan that
// megatron-core can launch fits": the job's own stack, not MaxText.
TEST(CliReliability4, ExportMaxTextBestNoPlanFitsNamesMaxText) {
    const CliRun r = run_cli("--quiet export maxtext --best " + source_path("examples/gpt3-175b-8xa100.yaml"));
    EXPECT_EQ(r.code, 1) << r.all();
    EXPECT_TRUE(has(r.err, "parallel: no plan that MaxText can launch fits in GPU memory")) << r.err;
    EXPECT_FALSE(has(r.err, "megatron-core")) << r.err;
    // export megatron --best still names its stack.
    const CliRun m = run_cli("--quiet export megatron --best " + source_path("examples/gpt3-175b-8xa100.yaml"));
    EXPECT_EQ(m.code, 1) << m.all();
    EXPECT_TRUE(has(m.err, "no plan that megatron-core can launch fits")) << m.err;
}

// `export maxtext --best` took the search's first plan and then refused it
// (exit 2): on the 80-layer Llama 3 70B the best is pp 2 x vpp 14, which
// MaxText's stages x num_pipeline_repeats cannot split. It now writes the
// first plan of the ranking MaxText takes (pp 2 x vpp 20: 2 layers a
// chunk) and says which rank it is and why the better ones are not. When
// none of the plans that fit is one (the GB200 NVL72 job, all 24 tried: its
// data axis of 4 straddles slices of 72), exit 1, "does not fit"; when none
// of the 1,000 best is (the 405B on 16,384 H100: 126 layers split by no
// stages x repeats among them), exit 2: a plan further down may be one.
TEST(CliReliability4, ExportMaxTextBestWritesAPlanMaxTextTakes) {
    const CliRun r = run_cli("--quiet export maxtext --best " + source_path("examples/llama3-70b-64xmi300x.yaml"));
    ASSERT_EQ(r.code, 0) << r.all();
    EXPECT_TRUE(has(r.out, "num_layers_per_pipeline_stage: 2\nnum_pipeline_repeats: 20\n")) << r.out;
    EXPECT_TRUE(has(r.err, "the plan is rank 2 of the search")) << r.err;
    EXPECT_TRUE(has(r.err, "MaxText cannot write the 1 before it (the best, tp 8, cp 1, pp 2 (vpp 14)")) << r.err;
    const CliRun none =
        run_cli("--quiet export maxtext --best " + source_path("examples/llama3.1-405b-256xgb200-nvl72.yaml"));
    EXPECT_EQ(none.code, 1) << none.all();
    EXPECT_TRUE(has(none.err, "no plan that fits (under megatron-core's launch rules, 24 of them) is one MaxText can "
                              "write")) << none.err;
    EXPECT_TRUE(has(none.err, "not a MaxText mesh")) << none.err;
    const CliRun first1000 =
        run_cli("--quiet export maxtext --best " + source_path("examples/llama3.1-405b-16384xh100-search.yaml"));
    EXPECT_EQ(first1000.code, 2) << first1000.all();
    EXPECT_TRUE(has(first1000.err, "none of the 1000 best plans that fit (under megatron-core's launch rules) is one "
                                   "MaxText can write")) << first1000.err;
    EXPECT_TRUE(has(first1000.err, "a plan further down the ranking may be")) << first1000.err;
}

// explain said none of the job's warnings: not a model key it does not
// model (here logit soft-capping), not a setting that does nothing (zero 3 on
// one data-parallel rank), on stderr or in its JSON; estimate says both.
// Now both, as estimate words them; --strict refuses the key, as estimate
// does; report lists them in its HTML.
TEST(CliReliability4, ExplainSaysTheJobsWarnings) {
    const std::string set = " --set model.attn_logit_softcapping=30 --set parallel.zero=3 --set cluster.num_gpus=32";
    const CliRun e = run_cli("--quiet estimate" + set);
    const CliRun x = run_cli("--quiet explain --format json" + set);
    ASSERT_EQ(x.code, 0) << x.all();
    for (const std::string line : {"warning: not modelled: attn_logit_softcapping", "warning: parallel.zero: zero: 3"}) {
        EXPECT_TRUE(has(e.err, line)) << e.err;
        EXPECT_TRUE(has(x.err, line)) << x.err;
    }
    const auto j = nlohmann::json::parse(x.out);
    ASSERT_TRUE(j.contains("warnings")) << x.out.substr(0, 400);
    std::string keys;
    for (const auto& w : j["warnings"]) keys += w.at("key").get<std::string>() + " ";
    EXPECT_EQ(keys, "model.attn_logit_softcapping parallel.zero ");
    const CliRun strict = run_cli("--quiet --strict explain" + set);
    EXPECT_EQ(strict.code, 2) << strict.all();
    EXPECT_TRUE(has(strict.err, "model.attn_logit_softcapping: not modelled")) << strict.err;
}

}  // namespace
