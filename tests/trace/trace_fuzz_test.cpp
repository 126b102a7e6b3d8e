// Seeded random mutation of generated trace bytes (byte flips, truncations,
// insertions, structural characters): the reader and the analysis either
// return or throw InputError, never crash, hang or throw anything else, and
// measured memory keeps its invariants. The
// same entry point is fuzzed with libFuzzer in fuzz/fuzz_trace.cpp.
#include <gtest/gtest.h>

#include <random>

#include "lostflops/error.h"
#include "lostflops/trace.h"
#include "lostflops/trace_summary.h"
#include "trace/trace_test_util.h"

namespace lostflops::trace {
namespace {

// The contract of fuzz/fuzz_trace.cpp: return or throw InputError; and what
// the summary of the analysis writes reads back.
void read_and_analyze(const std::string& bytes) {
    std::vector<RankReport> ranks;
    try {
        const auto d = read_trace_bytes(bytes, "fuzz");
        (void)analyze(d, {true});
        ranks.push_back(analyze(d, {false}));
    } catch (const InputError&) {
        return;
    }
    if (ranks.back().memory) test::expect_memory_invariants(*ranks.back().memory);
    assign_missing_ranks(ranks);
    EXPECT_NO_THROW(EXPECT_EQ(summary_from_json(summary_to_json(ranks), "s").size(), 1u));
}

std::string mutate(const std::string& base, std::mt19937& rng) {
    static const std::string alphabet = "{}[]\",:\\0123456789.eE-+ntfu \n\x01\x7f\xff";
    std::string s = base;
    std::uniform_int_distribution<int> op(0, 4);
    const int edits = 1 + static_cast<int>(rng() % 8);
    for (int i = 0; i < edits && !s.empty(); ++i) {
        const std::size_t at = rng() % s.size();
        switch (op(rng)) {
            case 0: s[at] = static_cast<char>(s[at] ^ (1 << (rng() % 8))); break;
            case 1: s.resize(at); break;
            case 2: s.insert(at, 1, alphabet[rng() % alphabet.size()]); break;
            case 3: s.erase(at, 1 + rng() % 16); break;
            default: s[at] = alphabet[rng() % alphabet.size()]; break;
        }
    }
    return s;
}

// A small generated trace (one step, one layer: about 30 kernels).
std::string small_trace() {
    SynthSpec s;
    s.ranks = 2;
    s.steps = 2;
    s.layers = 1;
    return synth_trace(s, 1);
}

TEST(TraceFuzz, MutatedJsonNeverCrashes) {
    const std::string base = small_trace();
    ASSERT_GT(base.size(), 1000u);
    std::mt19937 rng(20240521);
    for (int i = 0; i < 300; ++i) ASSERT_NO_FATAL_FAILURE(read_and_analyze(mutate(base, rng)));
}

// [memory] events (trace_memory.h): the hand-written memory trace mutated.
TEST(TraceFuzz, MutatedMemoryTraceNeverCrashes) {
    const std::string base = test::read_bytes(test::data_path("memory-small.json"));
    std::mt19937 rng(35);
    for (int i = 0; i < 2000; ++i) ASSERT_NO_FATAL_FAILURE(read_and_analyze(mutate(base, rng)));
}

TEST(TraceFuzz, MutatedGzipNeverCrashes) {
    const std::string gz = test::gzip_text(small_trace());
    std::mt19937 rng(7);
    for (int i = 0; i < 100; ++i) ASSERT_NO_FATAL_FAILURE(read_and_analyze(mutate(gz, rng)));
}

}  // namespace
}  // namespace lostflops::trace

namespace lostflops::trace {
namespace {

// The contract of fuzz/fuzz_trace_summary.cpp on mutated summaries: return or
// throw InputError; one that reads writes back to one that reads.
TEST(TraceFuzz, MutatedSummariesNeverCrash) {
    SynthSpec s;
    s.ranks = 3;
    s.tp = 1;
    const SynthJob job(s);
    std::vector<RankReport> ranks;
    for (int r = 0; r < 3; ++r) ranks.push_back(analyze(read_trace_bytes(job.trace(r), "r")));
    const std::string base = summary_to_json(ranks);
    std::mt19937 rng(31);
    int read = 0;
    for (int i = 0; i < 2000; ++i) {
        const std::string m = mutate(base, rng);
        std::vector<RankReport> got;
        try {
            got = summary_from_json(m, "m");
        } catch (const InputError&) {
            continue;
        }
        ++read;
        EXPECT_NO_THROW(EXPECT_EQ(summary_from_json(summary_to_json(got), "again").size(), got.size()));
    }
    EXPECT_GT(read, 0);
}

}  // namespace
}  // namespace lostflops::trace
