// The table of pipeline schedules (lostflops/pipeline_schedules.h) is the one
// home of a schedule: every row enumerated here must have its order generator
// (schedule/schedule_order.cpp), its words, its framework list consistent with
// the framework rules, and a closed-form bubble that matches the event
// simulation on uniform stages (F = B = W, no F&B saving: the point where the
// DualPipe formula is exact, schedule_closed_form.cpp). A row added without
// its order fails here (schedule_rank_order throws on an unknown schedule).
#include <gtest/gtest.h>

#include <array>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "lostflops/framework_rules.h"
#include "lostflops/job.h"
#include "lostflops/pipeline.h"
#include "lostflops/pipeline_schedules.h"

namespace lostflops {
namespace {

constexpr int kStages = 4, kMicroBatches = 16;  // m >= 2p and m % p == 0: every row's requirements

int chunks_of(const ScheduleInfo& si) { return si.chunks != 0 ? si.chunks : si.interleaves ? 2 : 1; }

PipelineInput uniform(const ScheduleInfo& si) {
    PipelineInput in;
    in.schedule = si.id;
    in.stages = kStages;
    in.chunks = chunks_of(si);
    in.micro_batches = kMicroBatches;
    const size_t n = static_cast<size_t>(in.stages) * in.chunks;
    in.fwd_s.assign(n, 1.0);
    in.bwd_s.assign(n, 2.0);  // B + W
    in.wgrad_s.assign(n, 1.0);
    return in;
}

TEST(ScheduleTable, EveryRowHasItsIdNameWordsAndSource) {
    std::set<std::string> names, words;
    for (size_t i = 0; i < kSchedules.size(); ++i) {
        const ScheduleInfo& si = kSchedules[i];
        EXPECT_EQ(static_cast<size_t>(si.id), i);
        EXPECT_EQ(&schedule_info(si.id), &si);
        for (const char* text : {si.name, si.words, si.warmup, si.inflight, si.mapping, si.bubble, si.source})
            EXPECT_NE(std::string(text), "") << si.name;
        EXPECT_TRUE(names.insert(si.name).second) << si.name;
        EXPECT_TRUE(words.insert(si.words).second) << si.words;
    }
    EXPECT_TRUE(one_f_one_b_family(kDefaultSchedule));
}

TEST(ScheduleTable, EveryScheduleHasAnOrderRunningEachPassOnce) {
    for (const ScheduleInfo& si : kSchedules) {
        const int chunks = chunks_of(si);
        for (int r = 0; r < kStages; ++r) {
            std::vector<PipelineOp> ops;
            ASSERT_NO_THROW(ops = schedule_rank_order(si.id, kStages, chunks, kMicroBatches, r)) << si.name;
            // (chunk, micro-batch) -> forwards, backwards (B, B+W or the B of an F&B), weight gradients.
            std::map<std::pair<int, int>, std::array<int, 3>> seen;
            for (const PipelineOp& op : ops) {
                std::array<int, 3>& n = seen[{op.chunk, op.micro_batch}];
                switch (op.kind) {
                    case PassKind::forward: ++n[0]; break;
                    case PassKind::backward: ++n[1], ++n[2]; break;
                    case PassKind::input_grad: ++n[1]; break;
                    case PassKind::weight_grad: ++n[2]; break;
                    case PassKind::fwd_bwd: {
                        ++n[0];
                        std::array<int, 3>& b = seen[{op.bwd_chunk, op.bwd_micro_batch}];
                        ++b[1], ++b[2];
                        break;
                    }
                }
            }
            // dualpipe: each direction carries half the micro-batches.
            const int per_chunk = si.two_directions ? kMicroBatches / 2 : kMicroBatches;
            EXPECT_EQ(seen.size(), static_cast<size_t>(chunks * per_chunk)) << si.name << " rank " << r;
            for (const auto& [key, n] : seen)
                EXPECT_EQ(n, (std::array<int, 3>{1, 1, 1})) << si.name << " rank " << r << " chunk " << key.first
                                                          << " micro-batch " << key.second;
        }
    }
}

TEST(ScheduleTable, ClosedFormBubbleMatchesTheSimulation) {
    for (const ScheduleInfo& si : kSchedules) {
        const PipelineInput in = uniform(si);
        const PipelineResult sim = pipeline_simulate(in);
        const PipelineResult closed = pipeline_closed_form(in);
        EXPECT_GT(sim.bubble_s, 0) << si.name;
        EXPECT_NEAR(closed.makespan_s, sim.makespan_s, 1e-9) << si.name;
        EXPECT_NEAR(closed.bubble_s, sim.bubble_s, 1e-9) << si.name;
    }
}

TEST(ScheduleTable, FrameworksAreTheRulesOfEachStack) {
    const Job job = default_job();  // Llama-3-70B: only the schedule rule can break below
    for (const ScheduleInfo& si : kSchedules) {
        EXPECT_EQ(si.torchtitan_name != nullptr, runs_on(si.id, LaunchStack::torchtitan)) << si.name;
        for (const LaunchStack stack : {LaunchStack::megatron_core, LaunchStack::megatron_lm, LaunchStack::torchtitan,
                                        LaunchStack::deepspeed}) {
            LaunchPlan p = launch_plan(job.plan);
            p.pp = 2;
            p.vpp = chunks_of(si);
            p.schedule = si.id;
            bool refused = false;
            for (const RuleBreak& b : rule_breaks(job.model, p, stack, false))
                refused = refused || b.rule->check == RuleCheck::schedule_runs;
            EXPECT_EQ(refused, !runs_on(si.id, stack)) << si.name << " on " << to_string(stack);
        }
    }
}

TEST(ScheduleTable, TheOneFOneBFamilyResolvesByVpp) {
    for (const ScheduleInfo& si : kSchedules) {
        ParallelPlan p;
        p.schedule = si.id;
        p.schedule_given = true;
        p.vpp = chunks_of(si);
        EXPECT_EQ(effective_schedule(p), si.id) << si.name;
        if (!one_f_one_b_family(si.id)) continue;
        EXPECT_EQ(si.order, ScheduleOrder::megatron_1f1b) << si.name;
        EXPECT_EQ(schedule_info(si.vpp_twin).vpp_twin, si.id) << si.name;
        EXPECT_NE(schedule_info(si.vpp_twin).interleaves, si.interleaves) << si.name;
    }
}

TEST(ScheduleTable, SearchTwinsRunTheirVpp) {
    for (const ScheduleInfo& si : kSchedules) {
        EXPECT_TRUE(si.search_note == nullptr || si.search_twin_vpp > 0) << si.name;
        EXPECT_TRUE(si.search_twin_vpp == 0 || si.vpp == si.search_twin_vpp) << si.name;
    }
}

}  // namespace
}  // namespace lostflops
