// Helpers of the interop tests: the published runs, their clusters as a
// `--set cluster=...` override, and field-by-field job equality.
#pragma once

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "lostflops/spec.h"
#include "test_util.h"

namespace lostflops::test {

inline std::string slurp(const std::string& path) {
    std::ifstream in(path);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

// Every run file of data/published/runs, sorted by name.
inline std::vector<std::string> published_run_names() {
    std::vector<std::string> names;
    for (const auto& e : std::filesystem::directory_iterator(source_path("data/published/runs")))
        if (e.path().extension() == ".json") names.push_back(e.path().stem().string());
    std::sort(names.begin(), names.end());
    return names;
}

inline std::string run_path(const std::string& name) { return source_path("data/published/runs/" + name + ".json"); }

// "cluster={...}": the run's cluster section as a --set override.
inline std::string run_cluster_override(const std::string& name) {
    const auto j = nlohmann::json::parse(slurp(run_path(name)));
    return "cluster=" + j.at("cluster").dump();
}

inline bool is_megatron_run(const std::string& name) {
    return name.rfind("narayanan21-", 0) == 0 || name.rfind("korthikanti22-", 0) == 0 ||
           name.rfind("megatron24-", 0) == 0;
}

// Everything the estimate reads, names and sources aside.
// model_shape false: the layer kinds are not compared (LaunchBest: the plan's
// round trip, not the model's).
inline void expect_same_job(const Job& a, const Job& b, const std::string& what, bool model_shape = true) {
    SCOPED_TRACE(what);
    EXPECT_EQ(a.model.layers, b.model.layers);
    EXPECT_EQ(a.model.hidden, b.model.hidden);
    EXPECT_EQ(a.model.vocab, b.model.vocab);
    EXPECT_EQ(a.model.tied_embeddings, b.model.tied_embeddings);
    if (model_shape) { EXPECT_TRUE(a.model.same_shape(b.model)) << describe(a.model.kind(0)) << " vs " << describe(b.model.kind(0)); }
    EXPECT_EQ(a.cluster.num_gpus, b.cluster.num_gpus);
    EXPECT_EQ(a.cluster.gpu.name, b.cluster.gpu.name);
    EXPECT_EQ(a.training.seq_length, b.training.seq_length);
    EXPECT_EQ(a.training.global_batch, b.training.global_batch);
    EXPECT_EQ(a.training.micro_batch, b.training.micro_batch);
    EXPECT_EQ(a.training.precision, b.training.precision);
    EXPECT_EQ(a.training.train_tokens, b.training.train_tokens);
    EXPECT_EQ(a.training.attention, b.training.attention);
    EXPECT_EQ(a.training.causal_flops, b.training.causal_flops);
    EXPECT_EQ(a.training.framework, b.training.framework);
    const ParallelPlan& p = a.plan;
    const ParallelPlan& q = b.plan;
    EXPECT_EQ(p.tp, q.tp);
    EXPECT_EQ(p.pp, q.pp);
    EXPECT_EQ(p.dp, q.dp);
    EXPECT_EQ(p.cp, q.cp);
    EXPECT_EQ(p.ep, q.ep);
    EXPECT_EQ(p.vpp, q.vpp);
    EXPECT_EQ(p.zero, q.zero);
    EXPECT_EQ(p.sequence_parallel, q.sequence_parallel);
    EXPECT_EQ(p.recompute, q.recompute);
    EXPECT_EQ(p.recompute_layers, q.recompute_layers);
    EXPECT_EQ(p.overlap_grad_reduce, q.overlap_grad_reduce);
    EXPECT_EQ(p.tp_comm_overlap, q.tp_comm_overlap);
    EXPECT_EQ(p.grad_fp32, q.grad_fp32);
}

}  // namespace lostflops::test
