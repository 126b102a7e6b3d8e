// Helpers shared by the calibrate tests: sample paths and temporary files.
#pragma once

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <unistd.h>

namespace lostflops::test {

inline std::string calibrate_data(const std::string& name) {
    return std::string(LOSTFLOPS_SOURCE_DIR) + "/tests/data/calibrate/" + name;
}

inline std::string read_text(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream buf;
    buf << in.rdbuf();
    return buf.str();
}

// A path in the temporary folder no other call of this process gets.
inline std::string unique_temp_path(const std::string& stem) {
    static int counter = 0;
    return (std::filesystem::temp_directory_path() /
            (stem + "_" + std::to_string(::getpid()) + "_" + std::to_string(counter++)))
        .string();
}

// A file in the temporary folder, removed when the object goes out of scope.
class TempFile {
public:
    TempFile(const std::string& stem, const std::string& content) : path_(unique_temp_path(stem)) {
        std::ofstream(path_, std::ios::binary) << content;
    }
    ~TempFile() {
        std::error_code ec;
        std::filesystem::remove(path_, ec);
    }
    TempFile(const TempFile&) = delete;
    TempFile& operator=(const TempFile&) = delete;
    const std::string& path() const { return path_; }

private:
    std::string path_;
};

}  // namespace lostflops::test
