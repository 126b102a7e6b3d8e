// `estimate --timeline-out`: the estimate's step as a Chrome trace
// (lostflops/timeline_trace.h), read back by the project's trace reader. The
// reader's breakdown of the file is held to the estimate's (step time and
// walls within 1 % of the step), the file to the Chrome trace format, and
// split_ranks (trace.h) to its rules.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>

#include "lostflops/calibration.h"
#include "lostflops/error.h"
#include "lostflops/estimate.h"
#include "lostflops/job.h"
#include "lostflops/timeline_trace.h"
#include "lostflops/trace.h"
#include "lostflops/trace_compare.h"
#include "test_util.h"
#include "trace/trace_test_util.h"

namespace lostflops::trace {
namespace {

std::vector<RankReport> read_back(const std::string& text) {
    std::vector<RankReport> out;
    for (const TraceData& d : split_ranks(read_trace_bytes(text, "timeline.json"))) out.push_back(analyze(d));
    return out;
}

// The step time and every wall of the comparison `trace --job` prints,
// measured from the file against the estimate, within `share` of the step.
void expect_reads_back(const Job& job, const std::string& what, double share = 0.01) {
    const Calibration cal = default_calibration();
    const Estimate e = estimate(job, cal);
    const auto ranks = read_back(timeline_trace_json(job, cal, e));
    ASSERT_EQ(ranks.size(), static_cast<std::size_t>(job.plan.pp)) << what;
    for (std::size_t r = 0; r < ranks.size(); ++r) {
        EXPECT_EQ(ranks[r].rank, static_cast<int>(r) * job.plan.tp * job.plan.cp * job.plan.dp) << what;
        EXPECT_GT(ranks[r].kernels, 0) << what;
    }
    const double peak = job.cluster.gpu.peak_tflops(job.training.precision) * 1e12;
    const JobComparison c = compare_with_estimate(ranks, e, job.cluster.num_gpus, peak, what,
                                                  job.plan.tp * job.plan.cp * job.plan.dp);
    EXPECT_EQ(c.stages, job.plan.pp) << what;
    EXPECT_EQ(c.step_source, "ProfilerStep") << what;
    EXPECT_NEAR(c.measured_step_s, e.step_time_s, 0.01 * e.step_time_s) << what;
    EXPECT_NEAR(c.measured_mfu, e.mfu, 0.01 * e.mfu) << what;
    EXPECT_TRUE(c.warnings.empty()) << what;
    for (const WallRow& w : c.walls)
        EXPECT_NEAR(w.measured_s, w.predicted_s, share * e.step_time_s) << what << ": " << w.wall;
}

TEST(TimelineTrace, DefaultJobReadsBackAsTheEstimate) {
    expect_reads_back(default_job(), "default job (tp 8, pp 4, vpp 5)");
}

TEST(TimelineTrace, OtherPlansReadBackAsTheEstimate) {
    expect_reads_back(default_job({"parallel.pp=1", "parallel.vpp=1", "parallel.dp=128"}), "no pipeline");
    expect_reads_back(default_job({"parallel.sequence_parallel=false", "parallel.zero=0"}), "all-reduce TP and DP");
    // The forward redone in backward: its memory-bound kernels drawn and read
    // back as such, not as GEMMs (Estimate::recompute_memory_bound_s).
    expect_reads_back(default_job({"parallel.pp=1", "parallel.vpp=1", "parallel.dp=128", "parallel.recompute=full"}),
                      "full recompute, no pipeline");
    // The data loader's wait (Breakdown::data_loader_s): a gap at the step's
    // end, read back as idle, so that the step is the estimate's.
    expect_reads_back(default_job({"training.data_loader_s_per_sequence=1"}), "data loader's wait");
    // Framework hf's optimizer: 480 foreach launches, whose gaps (0.96 ms,
    // Estimate::optimizer_overhead_s) are drawn as gaps and read back as
    // idle; no pipeline, so every wall to 0.05 % of the step.
    const std::string fsdp2 = lostflops::test::source_path("tests/data/trace/job-h200-llama3.2-1b-s4096-b2-fsdp2.yaml");
    expect_reads_back(load_job(fsdp2), "framework hf, FSDP2, foreach AdamW", 0.0005);
}

// The walls of the trace reader's own breakdown, rank by rank: the
// communication of the file is the estimate's exposed communication, on the
// process groups named for it.
TEST(TimelineTrace, CommunicationByGroup) {
    const Job job = default_job();
    const Calibration cal = default_calibration();
    const Estimate e = estimate(job, cal);
    const auto ranks = read_back(timeline_trace_json(job, cal, e));
    std::set<std::string> groups;
    for (const auto& r : ranks)
        for (const auto& g : r.process_groups) groups.insert(g.desc);
    EXPECT_EQ(groups, (std::set<std::string>{"tensor_parallel", "pipeline_parallel", "data_parallel"}));
    // Every rank's communication is exposed (drawn after its compute), so
    // the union of communication kernels is the exposed part.
    for (const auto& r : ranks) EXPECT_NEAR(r.exposed_comm_us, r.comm_us, 1e-6 * r.comm_us);
}

TEST(TimelineTrace, FileIsChromeTraceJson) {
    const Job job = default_job();
    const Calibration cal = default_calibration();
    const std::string text = timeline_trace_json(job, cal, estimate(job, cal));
    const auto j = nlohmann::json::parse(text);
    ASSERT_TRUE(j.contains("traceEvents") && j["traceEvents"].is_array());
    EXPECT_EQ(j["ranksByPid"], true);
    std::set<long long> pids;
    long long complete = 0;
    for (const auto& ev : j["traceEvents"]) {
        ASSERT_TRUE(ev.contains("ph") && ev["ph"].is_string());
        ASSERT_TRUE(ev.contains("pid") && ev["pid"].is_number_integer());
        ASSERT_TRUE(ev.contains("tid") && ev["tid"].is_number_integer());
        if (ev["ph"] != "X") {
            EXPECT_EQ(ev["ph"], "M");
            continue;
        }
        ++complete;
        ASSERT_TRUE(ev.contains("ts") && ev["ts"].is_number() && ev["ts"].get<double>() >= 0);
        ASSERT_TRUE(ev.contains("dur") && ev["dur"].is_number() && ev["dur"].get<double>() > 0);
        ASSERT_TRUE(ev.contains("name") && ev["name"].is_string());
        pids.insert(ev["pid"].get<long long>());
    }
    EXPECT_GT(complete, 2 * job.plan.pp * job.plan.vpp * 32);  // at least a kernel per pass
    EXPECT_EQ(pids, (std::set<long long>{0, 256, 512, 768}));
    // The project's reader takes it without a warning or a skipped event.
    const TraceData d = read_trace_bytes(text, "timeline.json");
    EXPECT_TRUE(d.warnings.empty()) << d.warnings.front();
    EXPECT_EQ(d.skipped.total(), 0u);
    EXPECT_TRUE(d.ranks_by_pid);
}

TEST(TimelineTrace, EstimateFlagWritesTheFileTraceReadsBack) {
    const std::filesystem::path dir = test::temp_dir("timeline_trace_test");
    const std::string file = (dir / "step.json").string();
    const std::string job = std::string(LOSTFLOPS_SOURCE_DIR) + "/data/jobs/default.yaml";
    const std::string est = std::string(LOSTFLOPS_BINARY) + " estimate --format json --timeline-out " + file;
    FILE* p = popen(est.c_str(), "r");
    ASSERT_NE(p, nullptr);
    std::string out;
    char buf[4096];
    for (std::size_t n; (n = std::fread(buf, 1, sizeof buf, p)) > 0;) out.append(buf, n);
    ASSERT_EQ(pclose(p), 0);
    const double step_s = nlohmann::json::parse(out)["step_time_s"].get<double>();
    const std::string tr = std::string(LOSTFLOPS_BINARY) + " trace --format json --job " + job + " " + file;
    p = popen(tr.c_str(), "r");
    ASSERT_NE(p, nullptr);
    out.clear();
    for (std::size_t n; (n = std::fread(buf, 1, sizeof buf, p)) > 0;) out.append(buf, n);
    ASSERT_EQ(pclose(p), 0) << out;
    const auto j = nlohmann::json::parse(out);
    ASSERT_EQ(j["ranks"].size(), 4u);
    const auto& cmp = j["job"];
    EXPECT_NEAR(cmp["measured_step_s"].get<double>(), step_s, 0.01 * step_s);
    for (const auto& w : cmp["walls"])
        EXPECT_NEAR(w["measured_s"].get<double>(), w["predicted_s"].get<double>(), 0.01 * step_s) << w["wall"];
}

// split_ranks: a file without ranksByPid is one rank whatever its pids; a
// pid that is not a rank is an error naming the file; ProfilerSteps of
// different pids may overlap.
std::string two_pid_trace(bool by_pid, const std::string& pid1) {
    std::ostringstream s;
    s << R"({"traceEvents":[)"
      << R"({"ph":"X","cat":"user_annotation","name":"ProfilerStep#1","pid":0,"tid":1,"ts":0,"dur":100},)"
      << R"({"ph":"X","cat":"user_annotation","name":"ProfilerStep#1","pid":)" << pid1
      << R"(,"tid":1,"ts":0,"dur":100},)"
      << R"({"ph":"X","cat":"kernel","name":"gemm_a","pid":0,"tid":7,"ts":10,"dur":50,"args":{"stream":7}},)"
      << R"({"ph":"X","cat":"kernel","name":"gemm_a","pid":)" << pid1
      << R"(,"tid":7,"ts":20,"dur":30,"args":{"stream":7}}])" << (by_pid ? R"(,"ranksByPid":true})" : "}");
    return s.str();
}

TEST(TimelineTrace, SplitRanks) {
    const auto one = split_ranks(read_trace_bytes(two_pid_trace(false, "0"), "a.json"));
    ASSERT_EQ(one.size(), 1u);
    EXPECT_EQ(one[0].gpu.size(), 2u);
    const auto two = split_ranks(read_trace_bytes(two_pid_trace(true, "3"), "b.json"));
    ASSERT_EQ(two.size(), 2u);
    EXPECT_EQ(two[0].rank, 0);
    EXPECT_EQ(two[1].rank, 3);
    EXPECT_EQ(two[1].world_size, 4);
    ASSERT_EQ(two[1].gpu.size(), 1u);
    EXPECT_EQ(two[1].gpu[0].dur_us, 30);
    EXPECT_EQ(two[1].steps.size(), 1u);
    EXPECT_EQ(analyze(two[1]).compute_us, 30);
    try {
        split_ranks(read_trace_bytes(two_pid_trace(true, "\"gpu\""), "c.json"));
        FAIL() << "a pid that is not a rank was taken";
    } catch (const InputError& e) {
        EXPECT_NE(std::string(e.what()).find("c.json"), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find("pid"), std::string::npos) << e.what();
    }
}

// Issue 36 item 6: a 940 KB file naming 10,000 pids took 3.15 GB (every
// rank copied the file's tables); the copies are bounded and the error says so.
TEST(TimelineTrace, SplitRanksBoundsTheCopies) {
    const auto trace_of = [](int pids) {
        std::string s = R"({"traceEvents":[)";
        for (int p = 0; p < pids; ++p)
            s += fmt::format(R"({}{{"ph":"X","cat":"kernel","name":"k{}","pid":{},"tid":7,"ts":10,"dur":5,"args":{{"stream":7}}}})",
                             p ? "," : "", p, p);
        return s + R"(],"ranksByPid":true})";
    };
    EXPECT_EQ(split_ranks(read_trace_bytes(trace_of(300), "small.json")).size(), 300u);
    try {
        split_ranks(read_trace_bytes(trace_of(10000), "many.json"));
        FAIL() << "10,000 pids were split";
    } catch (const InputError& e) {
        EXPECT_EQ(e.key(), "ranksByPid");
        EXPECT_NE(e.message().find("10000 ranks"), std::string::npos) << e.what();
        EXPECT_NE(e.message().find("at most 65536 ranks and 4000000 copies"), std::string::npos) << e.what();
    }
}

}  // namespace
}  // namespace lostflops::trace
