// The docs name commands that exist (issue 40): every `build/lostflops WORD`
// or `` `lostflops WORD `` in README.md, ARCHITECTURE.md, docs/*.md and the
// comments of src/ and include/ names a command of the executable (its
// `--help` lists them under "Subcommands:"), and where that command has
// subcommands of its own (trace, import, export, calibrate, list), a plain
// lower-case word after it names one of them (`lostflops trace diff`; a file,
// an option or a placeholder in capitals is not such a word).
#include <gtest/gtest.h>

#include <cctype>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "cli/cli_util.h"
#include "cli/docs_files.h"
#include "test_util.h"

namespace lostflops {
namespace {

namespace fs = std::filesystem;

using test::slurp;

// The names under "Subcommands:" of `lostflops ARGS --help`.
std::set<std::string> subcommands(const std::string& args) {
    const test::CliRun r = test::run_cli(args + " --help");
    std::set<std::string> out;
    std::istringstream in(r.out);
    bool inside = false;
    for (std::string line; std::getline(in, line);) {
        if (line.rfind("Subcommands:", 0) == 0) {
            inside = true;
            continue;
        }
        if (!inside) continue;
        if (line.size() < 3 || line[0] != ' ' || line[2] == ' ') break;  // the list ends at a blank or unindented line
        std::istringstream words(line);
        std::string name;
        words >> name;
        out.insert(name);
    }
    return out;
}

bool plain_word(const std::string& w) {
    if (w.empty() || std::islower(static_cast<unsigned char>(w[0])) == 0) return false;
    for (char c : w)
        if (!(std::islower(static_cast<unsigned char>(c)) != 0 || c == '_' || c == '-')) return false;
    return true;
}

// The whitespace-free token at `at` (stopping at a backtick, quote or bracket).
std::string token_at(const std::string& text, size_t at) {
    size_t end = at;
    while (end < text.size() && std::isspace(static_cast<unsigned char>(text[end])) == 0 &&
           std::string_view("`'\")]|,;").find(text[end]) == std::string_view::npos)
        ++end;
    return text.substr(at, end - at);
}

TEST(DocsCommands, EveryCommandNamedExists) {
    const std::set<std::string> commands = subcommands("");
    ASSERT_TRUE(commands.count("estimate") && commands.count("trace")) << "lostflops --help lists no commands";
    std::map<std::string, std::set<std::string>> nested;
    for (const std::string& c : commands) {
        const std::set<std::string> sub = subcommands(c);
        if (!sub.empty()) nested[c] = sub;
    }
    EXPECT_TRUE(nested.count("import") && nested["import"].count("maxtext"));

    const fs::path root = test::source_path("");
    const std::vector<fs::path> files = test::doc_files(root);
    int checked = 0;
    for (const fs::path& f : files) {
        const std::string text = slurp(f);
        const std::string where = fs::relative(f, root).string();
        for (const char* lead : {"build/lostflops ", "`lostflops "}) {
            const std::string key = lead;
            for (size_t at = text.find(key); at != std::string::npos; at = text.find(key, at + 1)) {
                // LOSTFLOPS_BINARY=build/lostflops python3 ...: the path, not a command line.
                if (at > 0 && text[at - 1] == '=') continue;
                const std::string word = token_at(text, at + key.size());
                if (!plain_word(word)) continue;  // --help, a placeholder, a path
                ++checked;
                EXPECT_TRUE(commands.count(word) > 0) << where << " names `lostflops " << word << "`, not a command";
                const auto sub = nested.find(word);
                if (sub == nested.end()) continue;
                size_t next = at + key.size() + word.size();
                if (next >= text.size() || text[next] != ' ') continue;
                const std::string second = token_at(text, next + 1);
                if (!plain_word(second)) continue;
                EXPECT_TRUE(sub->second.count(second) > 0)
                    << where << " names `lostflops " << word << " " << second << "`, not a command";
            }
        }
    }
    EXPECT_GT(checked, 200);
}

}  // namespace
}  // namespace lostflops
