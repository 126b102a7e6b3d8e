// Reliability, fourth pass, through the executable (import / export round
// trips, every subcommand's --format json): each input here was answered
// wrongly before its fix: a JSON output without the warnings its text
// printed, an export --best error naming a stack the user did not export to.
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
TEST(CliReliability4, ExportMaxTextBestNoPlanFitsNamesNoOtherStack) {
    const CliRun r = run_cli("--quiet export maxtext --best " + source_path("examples/gpt3-175b-8xa100.yaml"));
    EXPECT_EQ(r.code, 1) << r.all();
    EXPECT_TRUE(has(r.err, "parallel: no plan fits in GPU memory")) << r.err;
    EXPECT_FALSE(has(r.err, "megatron-core")) << r.err;
    // export megatron --best still names its stack.
    const CliRun m = run_cli("--quiet export megatron --best " + source_path("examples/gpt3-175b-8xa100.yaml"));
    EXPECT_EQ(m.code, 1) << m.all();
    EXPECT_TRUE(has(m.err, "no plan that megatron-core can launch fits")) << m.err;
}

}  // namespace
