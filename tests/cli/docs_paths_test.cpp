// The docs name what exists (issue 40): every path of this project named in
// README.md, ARCHITECTURE.md, docs/*.md or a comment of src/ and include/
// (a word starting src/, include/, tests/, data/, scripts/, examples/, docs/,
// bench/, fuzz/, python/ or cmake/) is a file or folder of the checkout, or a
// glob (`job-h200-*.yaml`) that matches one, or a placeholder (`NAME.json`,
// `data/measured/GPU/`); paths of other projects named in citations are
// listed in tests/data/docs_external_paths.txt. Every file name of a source
// that ARCHITECTURE.md names (`trace_cluster_skew.cpp`) exists under src/,
// include/ or tests/.
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "cli/docs_files.h"
#include "test_util.h"

namespace lostflops {
namespace {

namespace fs = std::filesystem;

using test::slurp;

bool path_char(char c) {
    return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_' || c == '.' || c == '/' || c == '-' || c == '+';
}

// Only the comment lines of a C++ file.
std::string comments(const std::string& text) {
    std::string out;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);) {
        const size_t at = line.find("//");
        if (at != std::string::npos) out += line.substr(at) + "\n";
    }
    return out;
}

// A segment in capitals (NAME, GPU, MODEL_SIZE) is a placeholder.
bool placeholder(const std::string& p) {
    size_t at = 0;
    while (at < p.size()) {
        const size_t slash = std::min(p.find('/', at), p.size());
        std::string seg = p.substr(at, slash - at);
        seg = seg.substr(0, seg.find('.'));
        const bool caps = seg.size() >= 2 && std::all_of(seg.begin(), seg.end(), [](char c) {
            return std::isupper(static_cast<unsigned char>(c)) != 0 || c == '_' || std::isdigit(static_cast<unsigned char>(c)) != 0;
        });
        if (caps) return true;
        at = slash + 1;
    }
    return false;
}

// `prefix*suffix...` in `dir`: some entry starts with the prefix's file part.
bool glob_matches(const fs::path& root, const std::string& prefix) {
    const fs::path p = root / prefix;
    const fs::path dir = p.parent_path();
    if (!fs::is_directory(dir)) return false;
    const std::string start = p.filename().string();
    for (const auto& e : fs::directory_iterator(dir))
        if (e.path().filename().string().rfind(start, 0) == 0) return true;
    return false;
}

TEST(DocsPaths, EveryProjectPathNamedExists) {
    const fs::path root = test::source_path("");
    std::set<std::string> external;
    {
        std::istringstream in(slurp(root / "tests/data/docs_external_paths.txt"));
        for (std::string line; std::getline(in, line);) {
            line = line.substr(0, line.find('#'));
            while (!line.empty() && std::isspace(static_cast<unsigned char>(line.back())) != 0) line.pop_back();
            if (!line.empty()) external.insert(line);
        }
    }
    const std::vector<fs::path> files = test::doc_files(root);
    const char* roots[] = {"src/", "include/", "tests/", "data/", "scripts/", "examples/", "docs/",
                           "bench/", "fuzz/", "python/", "cmake/"};
    std::set<std::string> used_external;
    int checked = 0;
    for (const fs::path& f : files) {
        const std::string raw = slurp(f);
        const bool cpp = f.extension() != ".md";
        const std::string text = cpp ? comments(raw) : raw;
        for (const char* r : roots) {
            for (size_t at = text.find(r); at != std::string::npos; at = text.find(r, at + 1)) {
                if (at > 0 && (path_char(text[at - 1]) || text[at - 1] == '$')) continue;
                size_t end = at;
                while (end < text.size() && path_char(text[end])) ++end;
                std::string p = text.substr(at, end - at);
                while (!p.empty() && (p.back() == '.' || p.back() == '-' || p.back() == '/')) p.pop_back();
                if (p.find('/') == std::string::npos || placeholder(p)) continue;
                if (end < text.size() && (text[end] == '*' || text[end] == '{' || text[end] == '<')) {
                    if (external.count(p) > 0) used_external.insert(p);
                    EXPECT_TRUE(glob_matches(root, text.substr(at, end - at)) || external.count(p) > 0)
                        << fs::relative(f, root).string() << " names " << text.substr(at, end - at) << "* (no match)";
                    ++checked;
                    continue;
                }
                ++checked;
                if (fs::exists(root / p) || fs::exists(root / "include" / p)) continue;
                if (external.count(p) > 0) {
                    used_external.insert(p);
                    continue;
                }
                ADD_FAILURE() << fs::relative(f, root).string() << " names " << p
                              << ", which does not exist (another project's path? list it in "
                                 "tests/data/docs_external_paths.txt)";
            }
        }
    }
    EXPECT_GT(checked, 500);
    // The list holds no stale entry.
    for (const std::string& e : external)
        EXPECT_TRUE(used_external.count(e) > 0) << "tests/data/docs_external_paths.txt: " << e << " is named nowhere";
}

TEST(DocsPaths, ArchitectureNamesSourcesThatExist) {
    const fs::path root = test::source_path("");
    std::set<std::string> names;
    for (const char* dir : {"src", "include", "tests", "python", "bench", "fuzz"})
        for (const auto& e : fs::recursive_directory_iterator(root / dir)) names.insert(e.path().filename().string());
    const std::string text = slurp(root / "ARCHITECTURE.md");
    int checked = 0;
    for (size_t at = text.find('`'); at != std::string::npos; at = text.find('`', at + 1)) {
        const size_t end = text.find('`', at + 1);
        if (end == std::string::npos) break;
        const std::string word = text.substr(at + 1, end - at - 1);
        at = end;
        const bool source = word.size() > 4 && (word.ends_with(".cpp") || word.ends_with(".h")) &&
                            word.find_first_of(" */{") == std::string::npos;
        if (!source) continue;
        ++checked;
        EXPECT_TRUE(names.count(word) > 0) << "ARCHITECTURE.md names `" << word << "`, which is no file of the project";
    }
    EXPECT_GT(checked, 20);
}

}  // namespace
}  // namespace lostflops
