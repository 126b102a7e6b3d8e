// The folders of src/ are layers (issue 40, "Rooms"): a folder includes the
// headers of its own folder and of folders below it, never of one above it or
// of a peer, so no two folders include each other. The order is declared once,
// in tests/data/folder_layers.txt (ARCHITECTURE.md says the same): its
// [layers] lines, lowest first, folders of one line being peers; its
// [headers] lines name the folder that implements each public header of
// include/lostflops/ ("-" for one that no folder implements), so that an
// include of "lostflops/nccl_curve.h" counts as an include of that folder.
// Every .cpp and .h under src/ and every owned public header is read; each
// `#include "folder/..."` of another folder of src/ and each
// `#include "lostflops/..."` of a header owned by another folder is an edge.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "test_util.h"

namespace lostflops {
namespace {

namespace fs = std::filesystem;

struct LayerTable {
    std::map<std::string, int> layer;          // folder -> line of [layers], 0 lowest
    std::map<std::string, std::string> owner;  // public header -> folder, or "-"
};

std::vector<std::string> words(const std::string& line) {
    std::istringstream in(line);
    std::vector<std::string> out;
    for (std::string w; in >> w;) out.push_back(w);
    return out;
}

LayerTable read_table(const fs::path& path) {
    LayerTable t;
    std::ifstream in(path);
    EXPECT_TRUE(in.good()) << path.string() << " cannot be read";
    std::string section;
    int n = 0;
    for (std::string line; std::getline(in, line);) {
        line = line.substr(0, line.find('#'));
        const auto w = words(line);
        if (w.empty()) continue;
        if (w[0].front() == '[') {
            section = w[0];
            continue;
        }
        if (section == "[layers]") {
            for (const auto& f : w) EXPECT_TRUE(t.layer.emplace(f, n).second) << "folder_layers.txt: " << f << " twice";
            ++n;
        } else if (section == "[headers]") {
            EXPECT_TRUE(w[0].ends_with(":")) << "folder_layers.txt: '" << line << "' is not 'folder: header.h ...'";
            const std::string folder = w[0].substr(0, w[0].size() - 1);
            for (size_t i = 1; i < w.size(); ++i)
                EXPECT_TRUE(t.owner.emplace(w[i], folder).second) << "folder_layers.txt: " << w[i] << " twice";
        } else {
            ADD_FAILURE() << "folder_layers.txt: '" << line << "' outside [layers] and [headers]";
        }
    }
    return t;
}

// One include of another folder: where it is and what it names.
struct Edge {
    std::string from, to, where, header;
};

// The folder an include line names, or "" (a system header, its own folder's
// private header without a folder, a generated one, an unowned public one).
std::string target(const std::string& line, const LayerTable& t, std::string& header) {
    size_t at = line.find_first_not_of(" \t");
    if (at == std::string::npos || line[at] != '#') return "";
    at = line.find_first_not_of(" \t", at + 1);
    if (at == std::string::npos || line.compare(at, 7, "include") != 0) return "";
    const size_t open = line.find('"', at);
    const size_t close = open == std::string::npos ? open : line.find('"', open + 1);
    if (close == std::string::npos) return "";
    header = line.substr(open + 1, close - open - 1);
    const size_t slash = header.find('/');
    if (slash == std::string::npos) return "";
    const std::string dir = header.substr(0, slash);
    if (dir == "lostflops") {
        const auto o = t.owner.find(header.substr(slash + 1));
        return o == t.owner.end() || o->second == "-" ? "" : o->second;
    }
    return t.layer.count(dir) > 0 ? dir : "";
}

std::vector<Edge> edges(const fs::path& root, const LayerTable& t) {
    std::vector<std::pair<std::string, fs::path>> files;  // (folder, file)
    for (const auto& d : fs::directory_iterator(root / "src")) {
        if (!d.is_directory()) continue;
        for (const auto& e : fs::recursive_directory_iterator(d.path()))
            if (e.path().extension() == ".cpp" || e.path().extension() == ".h")
                files.emplace_back(d.path().filename().string(), e.path());
    }
    for (const auto& [h, folder] : t.owner)
        if (folder != "-") files.emplace_back(folder, root / "include/lostflops" / h);
    std::vector<Edge> out;
    for (const auto& [folder, path] : files) {
        std::ifstream in(path);
        int n = 0;
        for (std::string line; std::getline(in, line);) {
            ++n;
            std::string header;
            const std::string to = target(line, t, header);
            if (to.empty() || to == folder) continue;
            out.push_back({folder, to, fs::relative(path, root).string() + ":" + std::to_string(n), header});
        }
    }
    return out;
}

TEST(FolderLayers, TableNamesEveryFolderAndPublicHeader) {
    const fs::path root = test::source_path("");
    const LayerTable t = read_table(root / "tests/data/folder_layers.txt");
    std::set<std::string> folders;
    for (const auto& d : fs::directory_iterator(root / "src"))
        if (d.is_directory()) folders.insert(d.path().filename().string());
    for (const auto& f : folders)
        EXPECT_TRUE(t.layer.count(f) > 0) << "src/" << f << "/ has no line in tests/data/folder_layers.txt [layers]";
    for (const auto& [f, n] : t.layer)
        EXPECT_TRUE(folders.count(f) > 0) << "folder_layers.txt names src/" << f << "/, which does not exist";
    std::set<std::string> headers;
    for (const auto& e : fs::directory_iterator(root / "include/lostflops"))
        if (e.path().extension() == ".h") headers.insert(e.path().filename().string());
    for (const auto& h : headers)
        EXPECT_TRUE(t.owner.count(h) > 0) << "include/lostflops/" << h
                                          << " has no owner in tests/data/folder_layers.txt [headers]";
    for (const auto& [h, folder] : t.owner) {
        EXPECT_TRUE(headers.count(h) > 0) << "folder_layers.txt names include/lostflops/" << h << ", which does not exist";
        EXPECT_TRUE(folder == "-" || t.layer.count(folder) > 0) << "folder_layers.txt: " << h << "'s owner " << folder
                                                                << " is no folder of [layers]";
    }
    EXPECT_GE(t.layer.size(), 10u);
}

TEST(FolderLayers, NoIncludeGoesUpOrSideways) {
    const fs::path root = test::source_path("");
    const LayerTable t = read_table(root / "tests/data/folder_layers.txt");
    const auto all = edges(root, t);
    for (const Edge& e : all) {
        const auto from = t.layer.find(e.from);
        if (from == t.layer.end()) continue;  // reported by the test above
        const auto to = t.layer.find(e.to);
        if (to == t.layer.end() || to->second < from->second) continue;  // no layer: reported above
        ADD_FAILURE() << e.where << ": " << e.from << "/ includes \"" << e.header << "\" of " << e.to << "/, which is "
                      << (to->second == from->second ? "its peer" : "above it") << " in tests/data/folder_layers.txt";
    }
    EXPECT_GT(all.size(), 200u);  // the reading works: 311 such includes when this test was written
}

TEST(FolderLayers, NoTwoFoldersIncludeEachOther) {
    const fs::path root = test::source_path("");
    const LayerTable t = read_table(root / "tests/data/folder_layers.txt");
    std::map<std::pair<std::string, std::string>, std::string> first;  // (from, to) -> where
    for (const Edge& e : edges(root, t)) first.emplace(std::make_pair(e.from, e.to), e.where);
    for (const auto& [ft, where] : first) {
        if (ft.first > ft.second) continue;
        const auto back = first.find({ft.second, ft.first});
        if (back != first.end())
            ADD_FAILURE() << ft.first << "/ and " << ft.second << "/ include each other: " << where << " and "
                          << back->second;
    }
}

}  // namespace
}  // namespace lostflops
