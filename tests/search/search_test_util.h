// Helpers of the search tests: a tiny dense job (256 hidden, 2 heads) as
// YAML, read as a search job, searched with the default calibration.
#pragma once

#include <string>
#include <vector>

#include "lostflops/search.h"
#include "search/knobs.h"

namespace lostflops::test {

inline std::string tiny_job(int gpus, int layers, int64_t batch, const std::string& gpu = "h100-sxm") {
    return "model:\n  num_hidden_layers: " + std::to_string(layers) +
           "\n  hidden_size: 256\n  num_attention_heads: 2\n  intermediate_size: 1024\n  vocab_size: 1000\n"
           "cluster:\n  gpu: " + gpu + "\n  num_gpus: " + std::to_string(gpus) +
           "\n  gpus_per_node: 8\n  intra_node: {bandwidth_GBps: 450, latency_us: 2}\n"
           "  inter_node: {bandwidth_GBps: 50, latency_us: 5}\n"
           "training:\n  seq_length: 1024\n  global_batch_size: " + std::to_string(batch) +
           "\n  framework: megatron-core\n";
}

inline SearchJob load(const std::string& text, const std::vector<std::string>& set = {}) {
    return parse_search_job(text, "test.yaml", set, SearchJobPlan::fixed_where_given);
}

inline SearchResult run(const SearchJob& sj, int threads = 1, RankBy by = RankBy::throughput) {
    SearchOptions o;
    o.fix = plan_fix_from(sj);
    o.threads = threads;
    o.by = by;
    return search_plans(sj.job, default_calibration(), o);
}

}  // namespace lostflops::test
