// `lostflops calibrate nccl` and `calibrate runs`: the written profile loads
// back (and `estimate --calibration` accepts it); bad input exits with code 2
// and a message naming the file.
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <sys/wait.h>

#include "calibrate/calibrate_test_util.h"
#include "lostflops/calibration.h"
#include "lostflops/nccl_curve.h"
#include "lostflops/validate.h"

namespace lostflops {
namespace {

int run_cli(const std::string& args, const std::string& log) {
    const std::string cmd = std::string(LOSTFLOPS_BINARY) + " " + args + " >" + log + " 2>&1";
    const int status = std::system(cmd.c_str());
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

TEST(CalibrateCli, WritesAProfileThatLoads) {
    test::TempFile out("cal_out.yaml", "");
    test::TempFile log("cal_log.txt", "");
    const std::string args = "calibrate nccl " + test::calibrate_data("all_reduce_h100_8gpu_new.txt") + " " +
                             test::calibrate_data("all_gather_h100_2node_new.txt") + " -o " + out.path();
    ASSERT_EQ(run_cli(args, log.path()), 0) << test::read_text(log.path());
    Calibration cal = load_calibration(out.path());
    ASSERT_EQ(cal.nccl.size(), 2u);
    EXPECT_TRUE(curve_time_s(cal, Collective::all_reduce, {8, 8, 1}, 1e8));
    // The 2-node run's layout (8 ranks on each of 2 hosts) and device are recorded.
    EXPECT_TRUE(curve_time_s(cal, Collective::all_gather, {16, 8, 2}, 1e8));
    EXPECT_FALSE(curve_time_s(cal, Collective::all_gather, {16, 1, 16}, 1e8));
    EXPECT_EQ(cal.nccl[1].ranks_per_node, 8);
    EXPECT_EQ(cal.nccl[1].nodes, 2);
    EXPECT_FALSE(cal.nccl[1].gpu.empty());
    EXPECT_EQ(cal.device("hopper").gemm_max, default_calibration().device("hopper").gemm_max);
    EXPECT_NE(test::read_text(log.path()).find("busbw"), std::string::npos);

    // --base keeps the base profile's values and curves.
    test::TempFile base("cal_base.yaml", "p2p_eff: 0.5\n");
    test::TempFile out2("cal_out2.yaml", "");
    const std::string args2 = "calibrate nccl " + test::calibrate_data("reduce_scatter_a100_8gpu_old.txt") +
                              " --base " + base.path() + " -o " + out2.path();
    ASSERT_EQ(run_cli(args2, log.path()), 0) << test::read_text(log.path());
    Calibration cal2 = load_calibration(out2.path());
    EXPECT_EQ(cal2.p2p_eff, 0.5);
    ASSERT_EQ(cal2.nccl.size(), 1u);
    EXPECT_EQ(cal2.nccl[0].op, Collective::reduce_scatter);
}

TEST(CalibrateCli, BadInputExitsWithTwo) {
    test::TempFile log("cal_log.txt", "");
    test::TempFile junk("junk.txt", "not an nccl-tests output\n");
    EXPECT_EQ(run_cli("calibrate nccl " + junk.path(), log.path()), 2);
    EXPECT_NE(test::read_text(log.path()).find(junk.path()), std::string::npos);
    EXPECT_EQ(run_cli("calibrate nccl /nonexistent/file.txt", log.path()), 2);
    EXPECT_EQ(run_cli("calibrate nccl " + test::calibrate_data("all_reduce_h100_8gpu_new.txt") +
                          " --op bogus",
                      log.path()),
              2);
}

// A runs table of a few published runs (their job files copied into runs/),
// in a temporary folder removed at the end.
class RunsTable {
public:
    explicit RunsTable(const std::vector<std::string>& names) {
        namespace fs = std::filesystem;
        dir_ = fs::temp_directory_path() / ("lostflops_runs_" + std::to_string(::getpid()) + "_" +
                                            std::to_string(counter_++));
        fs::create_directories(dir_ / "runs");
        std::ofstream csv(dir_ / "table.csv", std::ios::binary);
        csv << "name,note,tokens_per_s_per_gpu\n";
        const std::vector<MeasuredRun> all =
            load_run_table(std::string(LOSTFLOPS_SOURCE_DIR) + "/data/published/published-runs.csv");
        for (const auto& n : names) {
            fs::copy_file(std::string(LOSTFLOPS_SOURCE_DIR) + "/data/published/runs/" + n + ".json",
                          dir_ / "runs" / (n + ".json"));
            for (const auto& r : all)
                if (r.name == n) csv << n << ",\"a, quoted note\"," << r.measured_tokens_per_s_per_gpu << "\n";
        }
    }
    ~RunsTable() {
        std::error_code ec;
        std::filesystem::remove_all(dir_, ec);
    }
    RunsTable(const RunsTable&) = delete;
    RunsTable& operator=(const RunsTable&) = delete;
    std::string table() const { return (dir_ / "table.csv").string(); }
    std::string job(const std::string& name) const { return (dir_ / "runs" / (name + ".json")).string(); }

private:
    static inline int counter_ = 0;
    std::filesystem::path dir_;
};

const std::vector<std::string> kFewRuns = {"narayanan21-t1-gpt-1.7b", "narayanan21-t1-gpt-3.6b",
                                           "narayanan21-t1-gpt-7.5b", "narayanan21-t1-gpt-18.4b"};

// The contract: `calibrate runs TABLE -o P` exits 0 and writes a
// profile `estimate JOB --calibration P` accepts.
TEST(CalibrateRunsCli, WritesAProfileThatEstimateAccepts) {
    RunsTable t(kFewRuns);
    test::TempFile out("cal_runs.yaml", "");
    test::TempFile log("cal_runs_log.txt", "");
    ASSERT_EQ(run_cli("calibrate runs " + t.table() + " -o " + out.path(), log.path()), 0)
        << test::read_text(log.path());
    const std::string report = test::read_text(log.path());
    for (const char* s : {"MAPE before", "MAPE after", "4-fold cross-validation", "kernel_overhead_us",
                          "overlap_slowdown", kFewRuns[2].c_str()})
        EXPECT_NE(report.find(s), std::string::npos) << s << " missing from:\n" << report;
    const Calibration cal = load_calibration(out.path());
    EXPECT_EQ(cal.device("hopper").gemm_max, default_calibration().device("hopper").gemm_max);  // never fitted
    EXPECT_EQ(run_cli("estimate " + t.job(kFewRuns[0]) + " --calibration " + out.path(), log.path()), 0)
        << test::read_text(log.path());

    // Without -o the profile goes to stdout, and --base and --folds are honoured.
    test::TempFile base("cal_runs_base.yaml", "p2p_eff: 0.5\n");
    const std::string cmd = std::string(LOSTFLOPS_BINARY) + " calibrate runs " + t.table() + " --base " +
                            base.path() + " --folds 2 >" + out.path() + " 2>" + log.path();
    ASSERT_EQ(std::system(cmd.c_str()), 0) << test::read_text(log.path());
    EXPECT_EQ(load_calibration(out.path()).p2p_eff, 0.5);
    EXPECT_NE(test::read_text(log.path()).find("2-fold cross-validation"), std::string::npos);
}

TEST(CalibrateRunsCli, BadInputExitsWithTwoAndNamesTheFile) {
    test::TempFile log("cal_runs_log.txt", "");
    auto expect_2 = [&](const std::string& args, const std::string& named) {
        EXPECT_EQ(run_cli("calibrate runs " + args, log.path()), 2) << args;
        const std::string msg = test::read_text(log.path());
        EXPECT_NE(msg.find(named), std::string::npos) << args << ": " << msg;
    };
    expect_2("/nonexistent/table.csv", "/nonexistent/table.csv");
    test::TempFile no_column("no_column.csv", "name,tokens\nnarayanan21-t1-gpt-1.7b,9287\n");
    expect_2(no_column.path(), no_column.path());
    test::TempFile header_only("header_only.csv", "name,tokens_per_s_per_gpu\n");
    expect_2(header_only.path(), header_only.path());
    test::TempFile empty("empty.csv", "");
    expect_2(empty.path(), empty.path());
    RunsTable t(kFewRuns);
    expect_2(t.table() + " --folds 0", t.table());
    expect_2(t.table() + " --folds 5", t.table());
    expect_2(t.table() + " --folds 1", "--folds");
    expect_2(t.table() + " --base /nonexistent/base.yaml", "/nonexistent/base.yaml");
}

}  // namespace
}  // namespace lostflops
