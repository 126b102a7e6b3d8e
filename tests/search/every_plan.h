// Helper of the search tests: every plan of a job searched (two threads, every
// plan kept and exact), its counts checked to add up.
#pragma once

#include <gtest/gtest.h>

#include "lostflops/search.h"

namespace lostflops::test {

inline SearchResult search_every_plan(const SearchJob& sj) {
    SearchOptions o;
    o.fix = plan_fix_from(sj);
    o.threads = 2;
    SearchResult r = search_plans(sj.job, default_calibration(), o);
    EXPECT_EQ(r.counts.enumerated,
              r.counts.pruned_divisibility + r.counts.pruned_memory + r.counts.evaluated + r.counts.skipped);
    return r;
}

}  // namespace lostflops::test
