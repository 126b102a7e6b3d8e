// Calibration profile I/O: each class of bad input named in the error
// (file, key or line), refused before it is read when it cannot be a profile.
#include <algorithm>
#include <cmath>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "calibrate/calibrate_test_util.h"
#include "calibrate/calibration_fields.h"
#include "lostflops/calibration.h"
#include "lostflops/accelerator.h"
#include "lostflops/catalog.h"
#include "lostflops/error.h"

namespace lostflops {
namespace {

using test::TempFile;

// The InputError thrown by parsing `text`, or a failure if none is thrown.
std::string error_of(const std::string& text) {
    try {
        parse_calibration_text(text, "bad.yaml");
    } catch (const InputError& e) {
        EXPECT_EQ(e.file(), "bad.yaml");
        return e.what();
    }
    ADD_FAILURE() << "no InputError for:\n" << text;
    return "";
}

TEST(CalibrationIo, UnknownKeysAreErrors) {
    EXPECT_NE(error_of("gemm_k_halff: 64\n").find("gemm_k_halff: unknown key"), std::string::npos);
    EXPECT_NE(error_of("devices:\n  hopper:\n    gemm_maxx: 0.7\n").find("devices.hopper.gemm_maxx: unknown key"),
              std::string::npos);
    EXPECT_NE(error_of("devices:\n  hopper:\n    gemm_max: {bf15: 0.7}\n").find("devices.hopper.gemm_max.bf15"),
              std::string::npos);
    EXPECT_NE(error_of("devices:\n  hopper:\n    attention_kernel: {torchtitan: fa2}\n")
                  .find("devices.hopper.attention_kernel.torchtitan"),
              std::string::npos);
    // The old per-architecture sections are gone: a typo-like error, not a silent default.
    EXPECT_NE(error_of("hopper:\n  gemm_max: 0.7\n").find("hopper: unknown key"), std::string::npos);
    EXPECT_NE(error_of("nccl:\n  - {op: all_reduce, scope: intra_node, ranks: 8, points: [[8, 1, 2]], "
                       "color: red}\n")
                  .find("nccl[0].color: unknown key"),
              std::string::npos);
}

TEST(CalibrationIo, WrongTypesAreErrors) {
    EXPECT_NE(error_of("kernel_overhead_us: fast\n").find("kernel_overhead_us"), std::string::npos);
    EXPECT_NE(error_of("devices:\n  hopper: 0.7\n").find("devices.hopper"), std::string::npos);
    EXPECT_NE(error_of("devices:\n  hopper:\n    gemm_max: [0.7]\n").find("devices.hopper.gemm_max"),
              std::string::npos);
    EXPECT_NE(error_of("devices:\n  hopper:\n    attention_kernel: {fsdp: fa9}\n")
                  .find("devices.hopper.attention_kernel.fsdp"),
              std::string::npos);
    EXPECT_NE(error_of("devices:\n  hopper:\n    attention: [[fa2, up, 0, 128, 1024, 0.3]]\n")
                  .find("devices.hopper.attention[0][1]"),
              std::string::npos);
    EXPECT_NE(error_of("p2p_eff: 0.8x\n").find("p2p_eff"), std::string::npos);
    EXPECT_NE(error_of("p2p_eff: .nan\n").find("p2p_eff"), std::string::npos);
    EXPECT_NE(error_of("p2p_eff:\n").find("p2p_eff"), std::string::npos);
    EXPECT_NE(error_of("nccl: {op: all_reduce}\n").find("nccl"), std::string::npos);
    EXPECT_NE(error_of("nccl:\n  - {op: allreduce, scope: intra_node, ranks: 8, points: [[8, 1]]}\n")
                  .find("nccl[0].op"),
              std::string::npos);
    EXPECT_NE(error_of("nccl:\n  - {op: all_reduce, scope: intra_node, ranks: 2.5, points: [[8, 1]]}\n")
                  .find("nccl[0].ranks"),
              std::string::npos);
}

TEST(CalibrationIo, OutOfRangeValuesAreErrors) {
    EXPECT_NE(error_of("kernel_overhead_us: -1\n").find("kernel_overhead_us: -1 is out of range; expected 0 to 10000"),
              std::string::npos);
    EXPECT_NE(error_of("bus_eff_intra: 1.2\n").find("bus_eff_intra: 1.2 is not an efficiency in [0.01, 1]"),
              std::string::npos);
    EXPECT_NE(error_of("devices:\n  ampere:\n    memory_bound: 0\n").find("devices.ampere.memory_bound"),
              std::string::npos);
    EXPECT_NE(error_of("devices:\n  ampere:\n    gemm_max: {bf16: 1.5}\n").find("devices.ampere.gemm_max.bf16"),
              std::string::npos);
    // A new family must give everything; an architecture belongs to one family.
    EXPECT_NE(error_of("devices:\n  tpu2:\n    archs: [tpu_v5e]\n").find("devices.tpu2.gemm_max: missing"),
              std::string::npos);
    EXPECT_NE(error_of("devices:\n  ampere:\n    archs: [ampere, hopper]\n").find("listed by two families"),
              std::string::npos);
    EXPECT_NE(error_of("nccl:\n  - {op: all_reduce, scope: inter_node, ranks: 16, nodes: 2, points: [[8, 1]]}\n")
                  .find("nccl[0].ranks_per_node: missing"),
              std::string::npos);
    EXPECT_NE(error_of("nccl:\n  - {op: all_reduce, scope: inter_node, ranks: 16, ranks_per_node: 4, nodes: 2, "
                       "points: [[8, 1]]}\n")
                  .find("nccl[0].nodes"),
              std::string::npos);
    EXPECT_NE(error_of("nccl:\n  - {op: all_reduce, scope: intra_node, ranks: 16, ranks_per_node: 8, nodes: 2, "
                       "points: [[8, 1]]}\n")
                  .find("scope"),
              std::string::npos);
    EXPECT_NE(error_of("dp_overlap: -0.1\n").find("dp_overlap"), std::string::npos);
    EXPECT_NO_THROW(parse_calibration_text("dp_overlap: 0\n", "ok.yaml"));
    EXPECT_NE(error_of("nccl:\n  - {op: all_reduce, scope: intra_node, ranks: 8, "
                       "points: [[1024, 1, 2], [512, 2, 3]]}\n")
                  .find("nccl[0].points[1]: sizes must be strictly increasing"),
              std::string::npos);
    EXPECT_NE(error_of("nccl:\n  - {op: all_reduce, scope: intra_node, ranks: 8, points: [[8, -1, 2]]}\n")
                  .find("nccl[0].points[0]"),
              std::string::npos);
    EXPECT_NE(error_of("nccl:\n  - {op: send_recv, scope: inter_node, ranks: 2, points: [[8, 1]]}\n"
                       "  - {op: send_recv, scope: inter_node, ranks: 2, points: [[16, 1]]}\n")
                  .find("nccl[1]"),
              std::string::npos);
}

TEST(CalibrationIo, EmptyBinaryAndBrokenFilesAreErrors) {
    EXPECT_NE(error_of("").find("empty"), std::string::npos);
    EXPECT_NE(error_of("# only a comment\n\n").find("empty"), std::string::npos);
    EXPECT_NE(error_of(std::string("p2p_eff: 0.8\n\0\x01\x02", 16)).find("binary"), std::string::npos);
    EXPECT_NE(error_of("\x7f" "ELF\x02\x01\x01").find("binary"), std::string::npos);
    const std::string broken = error_of("p2p_eff: 0.8\ndevices: [1, 2\ndp_overlap: 0.5\n");
    EXPECT_NE(broken.find("line "), std::string::npos) << broken;
    EXPECT_NE(error_of("- 1\n- 2\n").find("mapping"), std::string::npos);
    EXPECT_NE(error_of("just a sentence\n").find("mapping"), std::string::npos);
}

TEST(CalibrationIo, MissingFileIsAnError) {
    EXPECT_THROW(load_calibration("/nonexistent/dir/cal.yaml"), InputError);
    EXPECT_THROW(load_calibration(std::string(LOSTFLOPS_SOURCE_DIR) + "/data"), InputError);
}

TEST(CalibrationIo, RepeatedKeysAreErrorsNamingBothLines) {
    // YAML keys are unique; yaml-cpp would hand both to the reader, the last one winning.
    const std::string top = error_of("p2p_eff: 0.8\ndp_overlap: 0.5\np2p_eff: 0.9\n");
    EXPECT_NE(top.find("p2p_eff"), std::string::npos) << top;
    EXPECT_NE(top.find("line 1"), std::string::npos) << top;
    EXPECT_NE(top.find("line 3"), std::string::npos) << top;
    const std::string nested = error_of("devices:\n  hopper:\n    memory_bound: 0.5\n    memory_bound: 0.6\n");
    EXPECT_NE(nested.find("memory_bound"), std::string::npos) << nested;
    const std::string curve =
        error_of("nccl:\n  - {op: all_reduce, op: all_gather, scope: intra_node, ranks: 8, points: [[8, 1]]}\n");
    EXPECT_NE(curve.find("nccl[0].op"), std::string::npos) << curve;
}

TEST(CalibrationIo, NumbersOutsideADoubleSayOutOfRange) {
    // A subnormal efficiency would pass "> 0" and make every kernel take forever.
    EXPECT_NE(error_of("p2p_eff: 5e-324\n").find("out of range"), std::string::npos);
    EXPECT_NE(error_of("kernel_overhead_us: 1e400\n").find("out of range"), std::string::npos);
    EXPECT_NE(error_of("kernel_overhead_us: .inf\n").find("infinite"), std::string::npos);
}

TEST(CalibrationIo, FactorsWithinPlausibleRanges) {
    // Positive but absurd: an efficiency of 1e-300 or a 1e300 us launch cost
    // would print a 300-digit step time.
    EXPECT_NE(error_of("p2p_eff: 1e-300\n").find("not an efficiency in [0.01, 1]"), std::string::npos);
    EXPECT_NE(error_of("devices:\n  hopper:\n    gemm_max: {fp8_tensor: 0.001}\n")
                  .find("devices.hopper.gemm_max.fp8_tensor"),
              std::string::npos);
    EXPECT_NE(error_of("kernel_overhead_us: 1e300\n").find("expected 0 to 10000"), std::string::npos);
    EXPECT_NE(error_of("memory_reserved_bytes: 1e13\n").find("out of range"), std::string::npos);
    EXPECT_NO_THROW(parse_calibration_text("kernel_overhead_us: 10000\np2p_eff: 0.01\n", "ok.yaml"));
}

TEST(CalibrationIo, CurvePointsWithinPlausibleRanges) {
    const std::string head = "nccl:\n  - {op: all_reduce, scope: intra_node, ranks: 8, points: ";
    EXPECT_NE(error_of(head + "[[1e300, 100, 5]]}\n").find("nccl[0].points[0][0]"), std::string::npos);
    EXPECT_NE(error_of(head + "[[1024, 1e300, 5]]}\n").find("nccl[0].points[0][1]"), std::string::npos);
    EXPECT_NE(error_of(head + "[[1024, 100, 1e300]]}\n").find("nccl[0].points[0]"), std::string::npos);
    // A busbw so small that the derived time is absurd.
    EXPECT_NE(error_of(head + "[[1e9, 1e-300]]}\n").find("out of range"), std::string::npos);
}

TEST(CalibrationIo, DeepNestingIsAnError) {
    const std::string deep = "nccl: " + std::string(100000, '[') + std::string(100000, ']') + "\n";
    EXPECT_NE(error_of(deep).find("nesting deeper than"), std::string::npos);
}

TEST(CalibrationIo, DevicesAndHugeFilesAreRefusedWithoutReadingThem) {
    try {
        load_calibration("/dev/zero");  // would be read forever
        ADD_FAILURE() << "no error for /dev/zero";
    } catch (const InputError& e) {
        EXPECT_NE(e.message().find("device"), std::string::npos) << e.what();
    }
    // A valid profile padded with a comment past the size limit.
    TempFile big("big.yaml", "p2p_eff: 0.8\n# " + std::string(5u << 20, 'x') + "\n");
    try {
        load_calibration(big.path());
        ADD_FAILURE() << "no error for a 5 MiB profile";
    } catch (const InputError& e) {
        EXPECT_EQ(e.file(), big.path());
        EXPECT_NE(e.message().find("more than"), std::string::npos) << e.what();
    }
}

}  // namespace
}  // namespace lostflops
