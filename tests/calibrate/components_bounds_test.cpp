// `calibrate components` holds its measurements to what is physically
// possible (issue 36, items 1, 11 and 16): meta.json's power limit as text
// or as a number, inside [0.1, 2] x the GPU's TDP; a GEMM row no faster than
// the GPU's dense peak; a --measured path that is no folder named as such.
#include <string>

#include <gtest/gtest.h>

#include "calibrate/calibrate_test_util.h"
#include "calibrate/component_tables.h"
#include "lostflops/error.h"

namespace lostflops {
namespace {

// A measured h100-sxm folder (TDP 700 W, dense bf16 peak 989.4 TFLOP/s)
// with `power` as meta.json's nvidia_smi power.limit (JSON text) and one
// bf16 GEMM row at `tflops`.
struct Folder {
    const std::string root = test::unique_temp_path("lostflops_measured");
    const std::string path = root + "/h100-sxm";
    Folder(const Folder&) = delete;
    Folder& operator=(const Folder&) = delete;
    ~Folder() {
        std::error_code ec;
        std::filesystem::remove_all(root, ec);
    }
    explicit Folder(const std::string& power, const std::string& tflops = "578.7") {
        std::filesystem::create_directories(path);
        std::ofstream(path + "/meta.json") << R"({"gpu": "NVIDIA H100 80GB HBM3", "nvidia_smi": {"power.limit": )"
                                           << power << "}}";
        std::ofstream(path + "/gemm.csv") << "dtype,scaling,m,n,k,what,time_us,tflops\nbf16,none,8192,8192,8192,square,1,"
                                          << tflops << "\n";
    }
};

std::string error_of(const std::string& dir) {
    try {
        calib::read_measured_tables(dir);
    } catch (const InputError& e) {
        return e.what();
    }
    return "no error";
}

TEST(ComponentBounds, PowerLimitAsANumberIsWatts) {
    // Before: internal error "[json.exception.type_error.302] type must be string, but is number".
    const Folder f("700");
    const calib::ComponentTables t = calib::read_measured_tables(f.path);
    ASSERT_EQ(t.gemm.size(), 1u);
    EXPECT_EQ(t.gemm[0].power_w, 700);
    EXPECT_EQ(calib::read_measured_tables(Folder("\"650.00 W\"").path).gemm[0].power_w, 650);
    // A board that does not report it: the catalog TDP, as when the key is absent.
    EXPECT_EQ(calib::read_measured_tables(Folder("\"[N/A]\"").path).gemm[0].power_w, 700);
}

TEST(ComponentBounds, ImpossiblePowerLimitIsAnErrorNamingTheKeyAndTheBound) {
    for (const char* bad : {"0.001", "1e300", "\"nan W\"", "\"0.001 W\"", "\"700 kW\"", "\"W\"", "[700]", "true"}) {
        const std::string e = error_of(Folder(bad).path);
        EXPECT_NE(e.find("meta.json: nvidia_smi.power.limit"), std::string::npos) << bad << ": " << e;
        EXPECT_NE(e.find("expected watts"), std::string::npos) << bad << ": " << e;
    }
    EXPECT_NE(error_of(Folder("0.001").path).find("from 70 to 1400"), std::string::npos);
}

TEST(ComponentBounds, GemmRowAboveThePeakIsAnErrorNamingTheRow) {
    // 101 x the H100's dense bf16 peak: before, accepted (and the fit priced every hopper GEMM faster).
    const std::string e = error_of(Folder("700", "99929").path);
    EXPECT_NE(e.find("gemm.csv: line 2: tflops"), std::string::npos) << e;
    EXPECT_NE(e.find("peak"), std::string::npos) << e;
    EXPECT_EQ(error_of(Folder("700", "989").path), "no error");
    // The published layout too.
    const std::string head = "gpu,power_w,dtype,m,n,k,tflops,source\n";
    EXPECT_THROW(calib::parse_gemm_table(head + "h100-sxm,700,bf16,1,1,1,5000,x\n", "t.csv"), InputError);
    EXPECT_THROW(calib::parse_gemm_table(head + "h100-sxm,2,bf16,1,1,1,500,x\n", "t.csv"), InputError);
    EXPECT_THROW(calib::parse_gemm_table(head + "a100-sxm-80gb,400,fp8_tensor,1,1,1,500,x\n", "t.csv"), InputError);
    EXPECT_NO_THROW(calib::builtin_component_tables());
}

TEST(ComponentBounds, MissingFolderIsNamedAsSuch) {
    // Before: "'dir' is not a catalog GPU; name the folder after it or give --gpu".
    const std::string e = error_of("/nonexistent/dir");
    EXPECT_NE(e.find("/nonexistent/dir: no such folder"), std::string::npos) << e;
    const test::TempFile file("lostflops_notafolder", "x");
    EXPECT_NE(error_of(file.path()).find("not a folder"), std::string::npos);
}

}  // namespace
}  // namespace lostflops
