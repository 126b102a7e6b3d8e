// `lostflops calibrate nccl`: the written profile loads back with the curve;
// bad input exits with code 2 and a message naming the file.
#include <cstdio>
#include <cstdlib>
#include <string>

#include <gtest/gtest.h>
#include <sys/wait.h>

#include "calibrate/calibrate_test_util.h"
#include "lostflops/calibration.h"
#include "lostflops/nccl_curve.h"

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
    EXPECT_TRUE(curve_time_s(cal, Collective::all_reduce, LinkScope::intra_node, 1e8, 8));
    EXPECT_TRUE(curve_time_s(cal, Collective::all_gather, LinkScope::inter_node, 1e8, 16));
    EXPECT_EQ(cal.hopper.gemm_max, default_calibration().hopper.gemm_max);
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

}  // namespace
}  // namespace lostflops
