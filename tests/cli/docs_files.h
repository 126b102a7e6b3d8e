// The files the docs tests read (docs_paths_test.cpp, docs_commands_test.cpp):
// README.md, ARCHITECTURE.md, docs/*.md, and every .h and .cpp of src/ and
// include/ (whose comments name paths and commands too).
#pragma once

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace lostflops::test {

inline std::string slurp(const std::filesystem::path& p) {
    std::ifstream in(p, std::ios::binary);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

inline std::vector<std::filesystem::path> doc_files(const std::filesystem::path& root) {
    namespace fs = std::filesystem;
    std::vector<fs::path> files = {root / "README.md", root / "ARCHITECTURE.md"};
    for (const auto& e : fs::directory_iterator(root / "docs"))
        if (e.path().extension() == ".md") files.push_back(e.path());
    for (const char* dir : {"src", "include"})
        for (const auto& e : fs::recursive_directory_iterator(root / dir))
            if (e.path().extension() == ".h" || e.path().extension() == ".cpp") files.push_back(e.path());
    return files;
}

}  // namespace lostflops::test
