// Reliability, sixth pass, through the executable (the fourth hunt): each
// input here was answered wrongly before its fix. A report drawn over the
// trace of another model without a word, counts read from " 5" and "+5",
// GPUs for TPU chips, any torchtitan optimizer name, and --strict refusing a
// key only after the whole search.
#include <string>

#include <gtest/gtest.h>

#include "cli/cli_util.h"
#include "test_util.h"

namespace lostflops::test {
namespace {

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// --strict estimate --best (and explain, report) searched every plan, said
// the search's best, and only then refused the model key the search had
// priced: the refusal now comes first, without the search's note.
TEST(CliReliability6, StrictRefusesBeforeTheSearch) {
    const std::string set = " --set model.attn_logit_softcapping=30";
    for (const std::string cmd : {"estimate --best", "explain --best"}) {
        const CliRun r = run_cli("--quiet --strict " + cmd + set);
        EXPECT_EQ(r.code, 2) << cmd << ": " << r.all();
        EXPECT_TRUE(has(r.err, "model.attn_logit_softcapping: not modelled")) << r.err;
        EXPECT_FALSE(has(r.err, "the plan is the search's best")) << r.err;
    }
}

}  // namespace
}  // namespace lostflops::test
