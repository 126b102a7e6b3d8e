// The generator of Kineto-shaped traces (include/lostflops/trace_synth.h)
// against the reader and the analysis: what each generated rank holds,
// counted by the generator as it writes, equals what `trace` finds in it —
// the breakdown, the categories, the launches, the steps, the collectives'
// sizes — for jobs with and without tensor parallelism, jitter and slow
// ranks; and the same spec gives the same bytes.
#include <gtest/gtest.h>

#include <cmath>
#include <map>

#include "lostflops/error.h"
#include "lostflops/trace.h"
#include "lostflops/trace_synth.h"

namespace lostflops::trace {
namespace {

void expect_near_rel(double got, double want, const std::string& what) {
    EXPECT_NEAR(got, want, 1e-6 * std::max(1.0, std::fabs(want))) << what;
}

void expect_matches_truth(const RankReport& r, const SynthTruth& t) {
    EXPECT_EQ(r.rank, t.rank);
    EXPECT_EQ(r.kernels, t.kernels);
    expect_near_rel(r.kernel_span_us, t.span_us, "span");
    expect_near_rel(r.compute_us, t.compute_us, "compute");
    expect_near_rel(r.matmul_us, t.matmul_us, "matmul");
    expect_near_rel(r.comm_us, t.comm_us, "comm");
    expect_near_rel(r.exposed_comm_us, t.exposed_comm_us, "exposed comm");
    expect_near_rel(r.idle_us, t.idle_us, "idle");
    EXPECT_EQ(r.launches.launch_bound, t.launch_bound);
    EXPECT_EQ(r.launches.launched, t.kernels);  // every kernel has its launch
    std::map<std::string, CategoryTotal> cats;
    for (const auto& c : r.categories) cats[c.name] = c;
    ASSERT_EQ(cats.size(), t.categories.size());
    for (const auto& [name, want] : t.categories) {
        SCOPED_TRACE(name);
        ASSERT_TRUE(cats.count(name));
        EXPECT_EQ(cats[name].count, want.count);
        expect_near_rel(cats[name].time_us, want.time_us, "category time");
    }
    ASSERT_EQ(r.iterations.size(), t.step_numbers.size());
    for (size_t i = 0; i < r.iterations.size(); ++i) {
        EXPECT_EQ(r.iterations[i].number, t.step_numbers[i]);
        expect_near_rel(r.iterations[i].cpu_us, t.step_us[i], "step");
        ASSERT_TRUE(r.iterations[i].first_comm_start_us.has_value());
        EXPECT_DOUBLE_EQ(*r.iterations[i].first_comm_start_us, t.first_comm_start_us[i]);
    }
}

TEST(TraceSynth, AnalysisFindsWhatTheGeneratorWrote) {
    SynthSpec plain;
    SynthSpec tp = plain;
    tp.ranks = 16;
    tp.tp = 8;
    tp.slow_rank = 3;
    tp.slow_node = 1;
    SynthSpec jitter = tp;
    jitter.jitter_pct = 5;
    jitter.steps = 5;
    jitter.layers = 2;
    for (const SynthSpec& s : {plain, tp, jitter}) {
        const SynthJob job(s);
        for (const int rank : {0, 3, s.ranks - 1}) {
            SCOPED_TRACE("tp " + std::to_string(s.tp) + " rank " + std::to_string(rank));
            SynthTruth t;
            const std::string text = job.trace(rank, &t);
            const TraceData d = read_trace_bytes(text, synth_file_name(rank));
            EXPECT_TRUE(d.warnings.empty()) << d.warnings.front();
            EXPECT_EQ(d.world_size.value_or(-1), s.ranks);
            expect_matches_truth(analyze(d), t);
        }
    }
}

// Sizes: every NCCL kernel records its message; bytes = elements x 2 (bf16).
TEST(TraceSynth, CollectiveSizesAreRead) {
    SynthSpec s;
    s.ranks = 16;
    s.tp = 8;
    SynthTruth t;
    const RankReport r = analyze(read_trace_bytes(synth_trace(s, 5, &t), "r5"));
    ASSERT_EQ(r.collectives.size(), 1u);
    const CollectiveStats& c = r.collectives[0];
    EXPECT_EQ(c.collective, "all_reduce");
    EXPECT_EQ(c.calls, t.categories["comm:all_reduce"].count);
    EXPECT_EQ(c.group_size, 8);  // the largest group seen: TP 8, DP 2
    // Per step: 2 TP all-reduces per layer forward, 1 backward, of 8192 x 4096;
    // the bucket (25e6) and the final all-reduce (15e6).
    const double per_step = 3.0 * s.layers * 8192 * 4096 + 25e6 + 15e6;
    EXPECT_DOUBLE_EQ(c.bytes, 2 * per_step * s.steps);
}

TEST(TraceSynth, SameSpecSameBytesAndBadSpecsAreNamed) {
    SynthSpec s;
    s.ranks = 32;
    s.jitter_pct = 3;
    s.seed = 7;
    EXPECT_EQ(synth_trace(s, 9), synth_trace(s, 9));
    s.seed = 8;
    SynthSpec s7 = s;
    s7.seed = 7;
    EXPECT_NE(synth_trace(s, 9), synth_trace(s7, 9));
    const auto key_of = [](SynthSpec bad) {
        try {
            SynthJob job(bad);
        } catch (const InputError& e) {
            return e.key();
        }
        return std::string();
    };
    SynthSpec b;
    b.tp = 3;
    EXPECT_EQ(key_of(b), "--tp");
    b = SynthSpec{};
    b.slow_rank = 8;
    EXPECT_EQ(key_of(b), "--slow-rank");
    b = SynthSpec{};
    b.jitter_pct = std::nan("");
    EXPECT_EQ(key_of(b), "--jitter-pct");
    b = SynthSpec{};
    b.ranks = 0;
    EXPECT_EQ(key_of(b), "--ranks");
}

}  // namespace
}  // namespace lostflops::trace
