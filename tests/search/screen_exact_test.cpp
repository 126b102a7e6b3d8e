// The search's screen (issue 37, one pipeline truth): interleaving with
// uneven chunks is priced in the search by a lower bound of its makespan and
// exactly wherever a listing looks (search/screen_exact.h). On a job whose
// layouts hold such plans, a listing's search (sort_top 5, the shape ranks)
// against the same search with every plan exact (sort_top 0): the same first
// plans with estimate()'s steps to the bit, the same best plan of each shape
// and the same ranks; and the screen did keep bounds (it was exercised). The
// same with the floor (search/step_floor.h): keeping 64 plans, the listing
// skips the layouts whose floor ranks after them, and lists the same.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "lostflops/calibration.h"
#include "lostflops/estimate.h"
#include "lostflops/search.h"
#include "lostflops/job.h"
#include "search/knobs.h"

namespace lostflops {
namespace {

// 30 layers: pp 4 x vpp 2 and the like split unevenly within a rank.
const char* kJob =
    "model:\n  num_hidden_layers: 30\n  hidden_size: 2048\n  num_attention_heads: 16\n  intermediate_size: 8192\n"
    "  vocab_size: 32000\n"
    "cluster:\n  gpu: h100-sxm\n  num_gpus: 16\n  gpus_per_node: 8\n  intra_node: {bandwidth_GBps: 450, latency_us: 2}\n"
    "  inter_node: {bandwidth_GBps: 50, latency_us: 5}\n"
    "training:\n  seq_length: 4096\n  global_batch_size: 64\n  framework: megatron-core\n";

size_t rank_in(const SearchResult& r, const RankedPlan& p) {
    return 1 + static_cast<size_t>(std::count_if(r.ranked.begin(), r.ranked.end(), [&](const RankedPlan& q) {
               return ranks_before(q, p, RankBy::throughput);
           }));
}

struct Screened {
    size_t bounds = 0;     // plans kept with the screen's bound
    int64_t skipped = 0;   // plans of layouts skipped by their floor
};

// A listing's search (sort_top 5, shape ranks 5) keeping `keep` plans a worker
// against the exact search.
Screened check_listing(const SearchJob& sj, const SearchResult& exact, size_t keep) {
    const Calibration cal = default_calibration();
    SearchOptions o;
    o.fix = plan_fix_from(sj);
    o.threads = 1;
    o.sort_top = 5;
    o.keep_best = keep;
    o.shape_ranks = 5;
    const SearchResult screened = search_plans(sj.job, cal, o);
    EXPECT_GE(screened.sorted, 5u);
    // The skipped plans are the rest of those that fit or not.
    const SearchCounts& c = screened.counts;
    EXPECT_EQ(c.enumerated, exact.counts.enumerated);
    EXPECT_EQ(c.layouts, exact.counts.layouts);
    EXPECT_EQ(c.enumerated, c.pruned_divisibility + c.pruned_memory + c.evaluated + c.skipped);
    EXPECT_EQ(c.pruned_memory + c.evaluated + c.skipped, exact.counts.pruned_memory + exact.counts.evaluated);
    for (size_t i = 0; i < screened.sorted && i < exact.ranked.size(); ++i) {
        const RankedPlan& p = screened.ranked[i];
        EXPECT_FALSE(search::is_bound(p)) << "listed plan " << i << " carries the screen's bound";
        EXPECT_EQ(p.order, exact.ranked[i].order) << "rank " << i + 1;
        EXPECT_EQ(p.step_time_s, exact.ranked[i].step_time_s) << "rank " << i + 1;
        const PlanScore s = plan_score(sj.job, screened, p);
        EXPECT_EQ(estimate(job_with_plan(sj.job, s), cal).step_time_s, p.step_time_s) << plan_words(s);
    }
    const size_t shapes = std::min<size_t>(5, screened.other_shapes.size());
    EXPECT_GT(shapes, 0u);
    for (size_t i = 0; i < shapes && i < exact.other_shapes.size(); ++i) {
        const RankedPlan& p = screened.other_shapes[i];
        EXPECT_FALSE(search::is_bound(p));
        EXPECT_EQ(p.order, exact.other_shapes[i].order) << "shape " << i;
        EXPECT_EQ(p.step_time_s, exact.other_shapes[i].step_time_s) << "shape " << i;
        // The listing's rank: counted by a second search when a dropped plan ranks before the shape.
        const size_t rank = i < screened.other_shape_ranks.size() ? screened.other_shape_ranks[i] : rank_in(screened, p);
        EXPECT_EQ(rank, rank_in(exact, p)) << "shape " << i;
    }
    return {static_cast<size_t>(std::count_if(screened.ranked.begin(), screened.ranked.end(), search::is_bound)),
            c.skipped};
}

TEST(SearchScreen, ListedPlansAreExactAndMatchTheExactSearch) {
    const SearchJob sj = parse_search_job(kJob, "screen.yaml", {}, SearchJobPlan::fixed_where_given);
    SearchOptions o;
    o.fix = plan_fix_from(sj);
    o.threads = 1;
    const SearchResult exact = search_plans(sj.job, default_calibration(), o);  // sort_top 0: every plan exact
    // Every plan kept: the bounds past the listed shapes stay bounds, no layout is skipped.
    const Screened all = check_listing(sj, exact, size_t{1} << 20);
    EXPECT_GT(all.bounds, 0u) << "no plan was screened: the test exercises nothing";
    EXPECT_EQ(all.skipped, 0);
    // 64 kept: layouts skipped by their floor; the shapes' ranks come from the counting search.
    EXPECT_GT(check_listing(sj, exact, 64).skipped, 0) << "no layout was skipped: the floor is not exercised";
}

}  // namespace
}  // namespace lostflops
