// Tests of the pipeline schedules: Megatron-LM's per-rank op order, the
// discrete-event simulation, and the closed form (Narayanan et al. 2021 bubble
// (p-1)/m and (p-1)/(v*m)), which the simulation judges.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <stdexcept>
#include <string>

#include "lostflops/pipeline.h"

namespace lostflops {
namespace {

// Per-rank totals t_f, t_b split evenly over v chunks; the first virtual stage is
// `first_extra` slower (embedding), the last `last_extra` slower (logits).
PipelineInput make_input(int p, int v, int m, double t_f, double t_b, double first_extra = 0,
                         double last_extra = 0, double p2p_s = 0) {
    PipelineInput in;
    in.stages = p;
    in.chunks = v;
    in.micro_batches = m;
    in.p2p_s = p2p_s;
    for (int r = 0; r < p; ++r) {
        for (int c = 0; c < v; ++c) {
            double scale = 1;
            const int s = c * p + r;
            if (s == 0) scale += first_extra;
            if (s == p * v - 1) scale += last_extra;
            in.fwd_s.push_back(t_f / v * scale);
            in.bwd_s.push_back(t_b / v * scale);
        }
    }
    return in;
}

double rel_diff(double a, double b) { return std::fabs(a - b) / std::max(std::fabs(b), 1e-300); }

std::string cfg(int p, int v, int m) {
    return "p=" + std::to_string(p) + " v=" + std::to_string(v) + " m=" + std::to_string(m);
}

TEST(PipelineTest, UniformSimulationEqualsNarayananFormula) {
    for (int p : {1, 2, 4, 8}) {
        for (int v : {1, 2, 4}) {
            for (int mult : {1, 2, 8}) {
                const int m = mult * p;
                const double t_f = 1.0, t_b = 2.0;
                const auto in = make_input(p, v, m, t_f, t_b);
                const double expected = (m + (p - 1.0) / v) * (t_f + t_b);
                const auto sim = pipeline_simulate(in);
                const auto cf = pipeline_closed_form(in);
                EXPECT_LT(rel_diff(sim.makespan_s, expected), 1e-9) << cfg(p, v, m);
                EXPECT_LT(rel_diff(cf.makespan_s, sim.makespan_s), 1e-9) << cfg(p, v, m);
                EXPECT_LT(rel_diff(sim.busy_max_s, m * (t_f + t_b)), 1e-9) << cfg(p, v, m);
            }
        }
    }
}

TEST(PipelineTest, UniformHoldsForOtherBackwardRatios) {
    for (double t_b : {0.5, 1.0, 3.0}) {
        for (int v : {1, 3}) {
            const int p = 4, m = 12;
            const auto in = make_input(p, v, m, 1.0, t_b);
            EXPECT_LT(rel_diff(pipeline_simulate(in).makespan_s,
                               pipeline_closed_form(in).makespan_s),
                      1e-9)
                << cfg(p, v, m) << " t_b=" << t_b;
        }
    }
}

TEST(PipelineTest, BubbleFractionIsNarayanan) {
    for (int p : {2, 4, 8}) {
        for (int v : {1, 2, 4}) {
            for (int mult : {1, 4}) {
                const int m = mult * p;
                const auto in = make_input(p, v, m, 1.0, 2.0);
                const double expected = (p - 1.0) / (v * m);
                for (const auto& r : {pipeline_simulate(in), pipeline_closed_form(in)}) {
                    EXPECT_NEAR(r.bubble_s / r.busy_max_s, expected, 1e-9) << cfg(p, v, m);
                    EXPECT_NEAR(r.makespan_s - r.busy_max_s, r.bubble_s, 1e-12);
                }
            }
        }
    }
}

TEST(PipelineTest, SingleStageIsSerial) {
    for (int v : {1, 3}) {
        for (int m : {1, 5, 16}) {
            const auto in = make_input(1, v, m, 0.7, 1.3, 0.1, 0.3, 0.5);
            double per_mb = 0;
            for (int c = 0; c < v; ++c) per_mb += in.fwd_s[c] + in.bwd_s[c];
            EXPECT_LT(rel_diff(pipeline_simulate(in).makespan_s, m * per_mb), 1e-12);
            EXPECT_LT(rel_diff(pipeline_closed_form(in).makespan_s, m * per_mb), 1e-12);
            EXPECT_NEAR(pipeline_simulate(in).bubble_s, 0, 1e-9);
        }
    }
}

TEST(PipelineTest, NonInterleavedRankOrder) {
    const int p = 4, m = 8;
    const auto ops = pipeline_rank_order(p, 1, m, 0);
    ASSERT_EQ(ops.size(), 16u);
    // 3 warm-up forwards, then F B alternating, then 3 cool-down backwards.
    for (int i = 0; i < 3; ++i) {
        EXPECT_TRUE(ops[i].forward);
        EXPECT_EQ(ops[i].micro_batch, i);
    }
    EXPECT_TRUE(ops[3].forward);
    EXPECT_EQ(ops[3].micro_batch, 3);
    EXPECT_FALSE(ops[4].forward);
    EXPECT_EQ(ops[4].micro_batch, 0);
    for (int i = 13; i < 16; ++i) EXPECT_FALSE(ops[i].forward);
    EXPECT_EQ(ops[15].micro_batch, 7);
    for (int r = 0; r < p; ++r) EXPECT_EQ(pipeline_warmup_ops(p, 1, m, r), p - r - 1);
    // The last rank alternates from the start.
    const auto last = pipeline_rank_order(p, 1, m, p - 1);
    EXPECT_TRUE(last[0].forward);
    EXPECT_FALSE(last[1].forward);
    EXPECT_EQ(last[1].micro_batch, 0);
    // Fewer micro-batches than stages: warm-up capped at m.
    EXPECT_EQ(pipeline_warmup_ops(8, 1, 3, 0), 3);
}

TEST(PipelineTest, InterleavedWarmupAndChunkOrder) {
    const int p = 4, v = 2, m = 8;
    for (int r = 0; r < p; ++r) {
        const int expected = std::min((p - r - 1) * 2 + (v - 1) * p, m * v);
        EXPECT_EQ(pipeline_warmup_ops(p, v, m, r), expected) << "rank " << r;
        const auto ops = pipeline_rank_order(p, v, m, r);
        int leading_forwards = 0;
        while (leading_forwards < static_cast<int>(ops.size()) && ops[leading_forwards].forward) {
            ++leading_forwards;
        }
        EXPECT_EQ(leading_forwards, expected + 1) << "warm-up then the first steady forward";
    }
    EXPECT_EQ(pipeline_warmup_ops(p, v, m, 0), 10);
    EXPECT_EQ(pipeline_warmup_ops(p, v, 4, 0), 8);  // capped at m*v
    // Forward micro-steps: chunk 0 for micro-batches 0..3, chunk 1 for 0..3, chunk 0 for 4..7.
    const auto ops = pipeline_rank_order(p, v, m, 0);
    EXPECT_EQ(ops[3].chunk, 0);
    EXPECT_EQ(ops[3].micro_batch, 3);
    EXPECT_EQ(ops[4].chunk, 1);
    EXPECT_EQ(ops[4].micro_batch, 0);
    EXPECT_EQ(ops[8].chunk, 0);
    EXPECT_EQ(ops[8].micro_batch, 4);
    // First backward: last chunk, micro-batch 0.
    const int first_bwd = pipeline_warmup_ops(p, v, m, 0) + 1;
    EXPECT_FALSE(ops[first_bwd].forward);
    EXPECT_EQ(ops[first_bwd].chunk, v - 1);
    EXPECT_EQ(ops[first_bwd].micro_batch, 0);
    // Every (micro-batch, chunk) appears once forward and once backward, forward first.
    for (int r = 0; r < p; ++r) {
        std::vector<int> seen_f(m * v, -1), seen_b(m * v, -1);
        const auto order = pipeline_rank_order(p, v, m, r);
        for (int i = 0; i < static_cast<int>(order.size()); ++i) {
            auto& seen = order[i].forward ? seen_f : seen_b;
            const int key = order[i].micro_batch * v + order[i].chunk;
            EXPECT_EQ(seen[key], -1);
            seen[key] = i;
        }
        for (int key = 0; key < m * v; ++key) {
            EXPECT_GE(seen_f[key], 0);
            EXPECT_GT(seen_b[key], seen_f[key]);
        }
    }
}

// Uneven stages: first virtual stage +10 % (embedding), last +30 % (logits).
void expect_uneven_close(double p2p_fraction, double tolerance, double* worst,
                         std::string* worst_cfg) {
    for (int p : {2, 4, 8, 16, 32}) {
        for (int v : {1, 2, 3, 4}) {
            for (int mult : {1, 2, 4, 8}) {
                const int m = mult * p;
                const double t_f = 1.0, t_b = 2.0;
                const double chunk_s = (t_f + t_b) / v;
                const auto in = make_input(p, v, m, t_f, t_b, 0.10, 0.30, p2p_fraction * chunk_s);
                const double sim = pipeline_simulate(in).makespan_s;
                const double cf = pipeline_closed_form(in).makespan_s;
                const double diff = rel_diff(cf, sim);
                EXPECT_LT(diff, tolerance) << cfg(p, v, m) << " p2p/chunk=" << p2p_fraction;
                if (diff > *worst) {
                    *worst = diff;
                    *worst_cfg = cfg(p, v, m);
                }
            }
        }
    }
}

TEST(PipelineTest, UnevenStagesClosedFormWithin3Percent) {
    double worst = 0;
    std::string where;
    expect_uneven_close(0.0, 0.03, &worst, &where);
    RecordProperty("worst_gap", std::to_string(worst) + " at " + where);
}

TEST(PipelineTest, UnevenStagesWithP2pWithin5Percent) {
    double worst = 0;
    std::string where;
    for (double f : {0.02, 0.05, 0.1, 0.2}) expect_uneven_close(f, 0.05, &worst, &where);
    RecordProperty("worst_gap", std::to_string(worst) + " at " + where);
}

TEST(PipelineTest, P2pOnlyAddsTime) {
    const auto base = make_input(8, 1, 32, 1.0, 2.0, 0.1, 0.3);
    auto with = base;
    with.p2p_s = 0.05;
    EXPECT_GT(pipeline_simulate(with).makespan_s, pipeline_simulate(base).makespan_s);
    EXPECT_GT(pipeline_closed_form(with).makespan_s, pipeline_closed_form(base).makespan_s);
    // At least the first micro-batch's forward and the last one's backward hops.
    EXPECT_GE(pipeline_simulate(with).makespan_s,
              pipeline_simulate(base).makespan_s + 2 * 7 * 0.05 - 1e-9);
}

TEST(PipelineTest, RandomStagesNonInterleavedClosedFormTracksSimulation) {
    std::mt19937 rng(20240601);
    std::uniform_real_distribution<double> scale(0.8, 1.2);
    for (int trial = 0; trial < 50; ++trial) {
        const int p = 2 + static_cast<int>(rng() % 12);
        const int m = p * (1 + static_cast<int>(rng() % 4)) + static_cast<int>(rng() % 3);
        PipelineInput in;
        in.stages = p;
        in.micro_batches = m;
        for (int r = 0; r < p; ++r) {
            const double x = scale(rng);
            in.fwd_s.push_back(x);
            in.bwd_s.push_back(2 * x * scale(rng));
        }
        const double sim = pipeline_simulate(in).makespan_s;
        EXPECT_LT(rel_diff(pipeline_closed_form(in).makespan_s, sim), 0.02) << cfg(p, 1, m);
        EXPECT_GE(sim, pipeline_simulate(in).busy_max_s);
    }
}

TEST(PipelineTest, PublishedConfigurationsAgreeWithClosedForm) {
    struct Config {
        int p, v, m;
    };
    // Large pipelines: p = 64 with m = 512; interleaved p = 35, v = 3; p = 8, v = 3.
    for (const Config c : {Config{64, 1, 512}, Config{35, 3, 280}, Config{8, 3, 64}}) {
        const auto in = make_input(c.p, c.v, c.m, 1.0, 2.0);
        const auto sim = pipeline_simulate(in);
        const auto cf = pipeline_closed_form(in);
        EXPECT_LT(rel_diff(cf.makespan_s, sim.makespan_s), 1e-9) << cfg(c.p, c.v, c.m);
        EXPECT_NEAR(sim.bubble_s / sim.busy_max_s, (c.p - 1.0) / (c.v * c.m), 1e-9);
    }
}

TEST(PipelineTest, RejectsBrokenPreconditions) {
    auto ok = make_input(4, 2, 8, 1.0, 2.0);
    EXPECT_NO_THROW(pipeline_simulate(ok));
    auto bad_m = make_input(4, 2, 6, 1.0, 2.0);  // interleaved needs m % p == 0
    EXPECT_THROW(pipeline_simulate(bad_m), std::invalid_argument);
    EXPECT_THROW(pipeline_closed_form(bad_m), std::invalid_argument);
    EXPECT_NO_THROW(pipeline_simulate(make_input(4, 1, 6, 1.0, 2.0)));  // fine for v = 1
    auto short_vec = ok;
    short_vec.bwd_s.pop_back();
    EXPECT_THROW(pipeline_closed_form(short_vec), std::invalid_argument);
    auto negative = ok;
    negative.fwd_s[3] = -1;
    EXPECT_THROW(pipeline_simulate(negative), std::invalid_argument);
    auto nan_p2p = ok;
    nan_p2p.p2p_s = std::nan("");
    EXPECT_THROW(pipeline_closed_form(nan_p2p), std::invalid_argument);
    auto zero_stages = ok;
    zero_stages.stages = 0;
    EXPECT_THROW(pipeline_simulate(zero_stages), std::invalid_argument);
    EXPECT_THROW(pipeline_rank_order(4, 1, 8, 4), std::invalid_argument);
    EXPECT_THROW(pipeline_rank_op(4, 1, 8, 0, 16), std::invalid_argument);
}

TEST(PipelineTest, ZeroTimesAreHandled) {
    const auto in = make_input(4, 2, 8, 0.0, 0.0);
    EXPECT_EQ(pipeline_simulate(in).makespan_s, 0.0);
    EXPECT_EQ(pipeline_closed_form(in).makespan_s, 0.0);
}

}  // namespace
}  // namespace lostflops
