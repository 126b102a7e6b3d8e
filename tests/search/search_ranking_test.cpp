// The search's ranking: a total order that does not depend on the thread
// count; the best of each other shape; keeping only the best gives the top
// and the shape ranks of keeping all; streaming in chunks and partial depths
// give the whole ranking.
#include <algorithm>
#include <set>

#include <gtest/gtest.h>

#include "lostflops/search.h"
#include "search/search_test_util.h"

namespace lostflops {
namespace {

using test::load;
using test::run;
using test::tiny_job;

TEST(Search, RankingIsATotalOrderIndependentOfThreads) {
    const SearchJob sj = load(tiny_job(8, 6, 16));
    const SearchResult one = run(sj, 1), two = run(sj, 2), again = run(sj, 2);
    ASSERT_EQ(one.ranked.size(), two.ranked.size());
    ASSERT_GT(one.ranked.size(), 100u);
    for (size_t i = 0; i < one.ranked.size(); ++i) {
        ASSERT_EQ(one.ranked[i].order, two.ranked[i].order) << i;
        ASSERT_EQ(two.ranked[i].order, again.ranked[i].order) << i;
    }
    for (size_t i = 1; i < one.ranked.size(); ++i) {
        const RankedPlan &a = one.ranked[i - 1], &b = one.ranked[i];
        ASSERT_TRUE(a.step_time_s < b.step_time_s || (a.step_time_s == b.step_time_s && a.order < b.order));
    }
    const SearchResult mem = run(sj, 2, RankBy::memory);
    for (size_t i = 1; i < mem.ranked.size(); ++i) ASSERT_LE(mem.ranked[i - 1].peak_bytes, mem.ranked[i].peak_bytes);
}

TEST(Search, OtherShapesAreTheBestOfEachShape) {
    const SearchJob sj = load(tiny_job(8, 6, 16));
    const SearchResult r = run(sj, 2);
    ASSERT_FALSE(r.other_shapes.empty());
    const auto shape = [&](const RankedPlan& p) {
        const SearchLayout& l = r.layouts[p.order >> 32];
        return std::tuple(l.tp, l.cp, l.pp, l.ep);
    };
    std::set<std::tuple<int, int, int, int>> seen{shape(r.ranked.front())};
    for (const RankedPlan& p : r.ranked) {
        if (seen.count(shape(p))) continue;
        seen.insert(shape(p));
        bool listed = false;
        for (const RankedPlan& o : r.other_shapes) listed |= o.order == p.order;
        EXPECT_TRUE(listed) << "first plan of a new shape missing from other_shapes";
    }
    EXPECT_EQ(seen.size(), r.other_shapes.size() + 1);
}

// Plans ranked before `p` in `r`, plus one: its rank when `r` holds every
// plan ranked before it.
size_t rank_in(const SearchResult& r, const RankedPlan& p) {
    size_t n = 1;
    for (const RankedPlan& q : r.ranked) n += ranks_before(q, p, RankBy::throughput) ? 1 : 0;
    return n;
}

TEST(Search, KeepingTheBestGivesTheTopAndTheShapeRanksOfKeepingAll) {
    // 5 layers: few enough layouts (98, with the stage layouts tried) that no
    // floor skips any (search.cpp), so every other shape's best is the same.
    const SearchJob sj = load(tiny_job(8, 5, 16));
    SearchOptions o;
    o.fix = plan_fix_from(sj);
    o.threads = 2;
    o.sort_top = 4;
    const SearchResult all = search_plans(sj.job, default_calibration(), o);
    ASSERT_GT(all.ranked.size(), 1000u);
    EXPECT_FALSE(all.first_dropped.has_value());
    // Keep 128 per worker (the first 3 other shapes rank 15, 65 and 84): most
    // plans are dropped; the first 4 and those 3 ranks must not change.
    o.keep_best = 128;
    o.shape_ranks = 3;
    const SearchResult best = search_plans(sj.job, default_calibration(), o);
    ASSERT_TRUE(best.first_dropped.has_value());
    EXPECT_LT(best.ranked.size(), all.ranked.size() / 2);
    EXPECT_EQ(best.counts.evaluated, all.counts.evaluated);
    ASSERT_EQ(best.sorted, 4u);
    for (size_t i = 0; i < 4; ++i) EXPECT_EQ(best.ranked[i].order, all.ranked[i].order) << i;
    ASSERT_EQ(best.other_shapes.size(), all.other_shapes.size());
    for (size_t i = 0; i < best.other_shapes.size(); ++i)
        EXPECT_EQ(best.other_shapes[i].order, all.other_shapes[i].order) << i;
    for (size_t i = 0; i < 3; ++i) {
        const RankedPlan& s = best.other_shapes[i];
        EXPECT_TRUE(ranks_before(s, *best.first_dropped, RankBy::throughput)) << i;
        EXPECT_EQ(rank_in(best, s), rank_in(all, s)) << i;
    }
    // Every other shape's rank asked of 1 kept plan: some rank after a dropped
    // plan, so a second search counts the plans before each; the plans kept
    // stay few.
    o.keep_best = 1;
    o.shape_ranks = all.other_shapes.size();
    for (const int threads : {1, 2}) {
        o.threads = threads;
        const SearchResult again = search_plans(sj.job, default_calibration(), o);
        ASSERT_TRUE(again.first_dropped.has_value());
        EXPECT_LT(again.ranked.size(), 100u);
        ASSERT_EQ(again.other_shape_ranks.size(), all.other_shapes.size());
        for (size_t i = 0; i < all.other_shapes.size(); ++i)
            EXPECT_EQ(again.other_shape_ranks[i], rank_in(all, all.other_shapes[i])) << i;
    }
}

TEST(Search, StreamingInChunksGivesTheWholeRanking) {
    const SearchJob sj = load(tiny_job(8, 6, 16));
    for (const RankBy by : {RankBy::throughput, RankBy::memory}) {
        const SearchResult all = run(sj, 2, by);
        ASSERT_GT(all.ranked.size(), 1000u);
        for (const int threads : {1, 2}) {
          for (const bool spans : {false, true}) {  // later passes skip layouts by the first one's spans
            SCOPED_TRACE("threads " + std::to_string(threads) + (spans ? ", spans" : ""));
            SearchOptions o;
            o.fix = plan_fix_from(sj);
            o.threads = threads;
            o.by = by;
            o.keep_best = 100;
            o.shape_ranks = 0;
            o.record_spans = spans;
            const SearchResult first = search_plans(sj.job, default_calibration(), o);
            ASSERT_TRUE(first.first_dropped.has_value());
            std::vector<uint64_t> streamed;
            size_t chunks = 0;
            for_each_ranked(sj.job, default_calibration(), o, first, 50, [&](const SearchResult& r, size_t n) {
                ++chunks;
                for (size_t i = 0; i < n; ++i) {
                    // Layout indices are the same in every pass: the same enumeration.
                    ASSERT_EQ(r.layouts.size(), all.layouts.size());
                    streamed.push_back(r.ranked[i].order);
                }
            });
            EXPECT_GT(chunks, 10u);
            ASSERT_EQ(streamed.size(), all.ranked.size());
            for (size_t i = 0; i < streamed.size(); ++i) ASSERT_EQ(streamed[i], all.ranked[i].order) << i;
          }
        }
    }
}

// The partial recompute depths (search/knobs.h): a window of kPartialDepths
// from the fewest that fit gives the same first plans as every depth (the
// union of searches with each recompute setting fixed), and the plans of a
// layout do not grow with its layers per stage.
TEST(Search, PartialDepthsGiveTheFirstPlansOfEveryDepth) {
    // 24 layers of hidden 2048, sequence 16,384 on two 40 GB GPUs: memory
    // decides how deep full recompute must go.
    const SearchJob sj = load(tiny_job(2, 24, 4, "a100-sxm-40gb"),
                              {"model.hidden_size=2048", "model.num_attention_heads=16", "model.intermediate_size=8192",
                               "model.vocab_size=32000", "training.seq_length=16384"});
    for (const int zero : {-1, 0, 3}) {  // -1: every plan; else zero fixed
        SCOPED_TRACE(zero);
        SearchOptions o;
        o.threads = 1;
        if (zero >= 0) o.fix.zero = zero;
        const SearchResult windowed = search_plans(sj.job, default_calibration(), o);
        ASSERT_GE(windowed.ranked.size(), static_cast<size_t>(search::kPartialDepths));
        std::vector<RankedPlan> every;
        for (int rc = 0; rc < 2 + 24; ++rc) {
            SearchOptions f = o;
            f.fix.recompute = rc == 0 ? Recompute::none : rc == 1 ? Recompute::selective : Recompute::full;
            if (rc >= 2) f.fix.recompute_layers = rc == 2 ? -1 : rc - 2;
            const SearchResult r = search_plans(sj.job, default_calibration(), f);
            ASSERT_EQ(r.layouts.size(), windowed.layouts.size());
            every.insert(every.end(), r.ranked.begin(), r.ranked.end());
        }
        std::sort(every.begin(), every.end(),
                  [](const RankedPlan& a, const RankedPlan& b) { return ranks_before(a, b, RankBy::throughput); });
        ASSERT_GT(every.size(), windowed.ranked.size());  // the window leaves deeper plans out
        int partial = 0;  // plans among the first that recompute part of the layers
        for (size_t i = 0; i < static_cast<size_t>(search::kPartialDepths); ++i) {
            SCOPED_TRACE(i);
            EXPECT_EQ(windowed.ranked[i].order, every[i].order);
            EXPECT_EQ(windowed.ranked[i].step_time_s, every[i].step_time_s);
            EXPECT_EQ(windowed.ranked[i].peak_bytes, every[i].peak_bytes);
            partial += ((every[i].order & 0xffffffffu) >> 3 & 0x1ffffffu) >= 3 ? 1 : 0;
        }
        if (zero >= 0) { EXPECT_GT(partial, 0); }  // the job does exercise the partial depths
    }
}

}  // namespace
}  // namespace lostflops
