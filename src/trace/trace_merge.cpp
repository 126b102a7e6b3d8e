// Merging summaries at scale (contract in include/lostflops/trace_merge.h):
// each file read (bounded: kMaxSummaryBytes), parsed in one SAX pass with one
// rank's tree at a time (trace_summary_read.cpp), each rank handed to the
// ClusterMerger and dropped. Files are parsed `threads` at a time, in batches
// of 2 x threads files whose ranks are then added in file order, so the
// answer and the first error reported do not depend on the thread count and
// memory holds at most one batch of parsed files.
#include "lostflops/trace_merge.h"

#include <algorithm>
#include <atomic>
#include <exception>
#include <filesystem>
#include <sstream>
#include <thread>

#include "lostflops/error.h"
#include "lostflops/trace_summary.h"
#include "job/text_input.h"

namespace lostflops::trace {
namespace {

namespace fs = std::filesystem;

bool ends_with(const std::string& s, const std::string& suffix) {
    return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

}  // namespace

std::vector<std::string> directory_files(const std::string& dir, const std::vector<std::string>& suffixes,
                                         const std::string& what) {
    std::vector<std::string> found;
    std::error_code ec;
    fs::directory_iterator it(dir, ec);
    for (; !ec && it != fs::directory_iterator(); it.increment(ec)) {
        std::error_code kind;
        const std::string name = it->path().filename().string();
        if (!it->is_regular_file(kind)) continue;
        if (std::any_of(suffixes.begin(), suffixes.end(), [&](const std::string& x) { return ends_with(name, x); }))
            found.push_back(it->path().string());
    }
    if (ec) throw InputError(dir, "", "cannot list directory: " + ec.message());
    if (found.empty()) throw InputError(dir, "", "no " + what + " in the directory");
    std::sort(found.begin(), found.end());
    return found;
}

std::vector<std::string> summary_paths(const std::vector<std::string>& inputs, const std::string& list_file) {
    std::vector<std::string> out;
    for (const auto& in : inputs) {
        std::error_code ec;
        if (in != "-" && fs::is_directory(in, ec)) {
            const auto found = directory_files(in, {".json"}, "*.json summaries");
            out.insert(out.end(), found.begin(), found.end());
        } else {
            out.push_back(in);
        }
    }
    if (!list_file.empty()) {
        // One path a line; a list of 100,000 summaries is a few MB.
        const std::string text = read_file_bounded(list_file, 64u << 20, "list of summary files");
        const fs::path base = list_file == "-" ? fs::path() : fs::path(list_file).parent_path();
        std::istringstream lines(text);
        std::string line;
        int n = 0;
        while (std::getline(lines, line)) {
            ++n;
            if (!line.empty() && line.back() == '\r') line.pop_back();
            const auto first = line.find_first_not_of(" \t");
            if (first == std::string::npos || line[first] == '#') continue;
            line = line.substr(first, line.find_last_not_of(" \t") - first + 1);
            const fs::path p(line);
            out.push_back(p.is_absolute() || base.empty() ? line : (base / p).string());
        }
    }
    if (out.empty()) throw InputError(list_file.empty() ? "trace merge" : input_name(list_file), "", "no summary files given");
    // Standard input is read once: a second '-' read it empty ("not valid JSON").
    if (std::count(out.begin(), out.end(), "-") + (list_file == "-" ? 1 : 0) > 1)
        throw InputError("-", "", "standard input given twice: it is read once; give files for the others");
    return out;
}

ClusterReport merge_summary_files(const std::vector<std::string>& paths, int gpus_per_node, unsigned threads) {
    ClusterMerger m(gpus_per_node);
    int64_t ranks = 0;
    const unsigned n = std::max(1u, threads);
    const std::size_t batch = 2 * static_cast<std::size_t>(n);
    std::vector<std::vector<RankReport>> parsed(batch);
    std::vector<std::exception_ptr> errors(batch);
    for (std::size_t first = 0; first < paths.size(); first += batch) {
        const std::size_t count = std::min(batch, paths.size() - first);
        std::atomic<std::size_t> next{0};
        const auto work = [&] {
            for (std::size_t i = next++; i < count; i = next++) {
                try {
                    parsed[i] = load_summary(paths[first + i]);
                } catch (...) {
                    errors[i] = std::current_exception();
                }
            }
        };
        std::vector<std::thread> pool;
        for (unsigned t = 1; t < std::min<std::size_t>(n, count); ++t) pool.emplace_back(work);
        work();
        for (auto& t : pool) t.join();
        for (std::size_t i = 0; i < count; ++i) {
            if (errors[i]) std::rethrow_exception(errors[i]);
            for (auto& r : parsed[i]) {
                m.add(r, input_name(paths[first + i]));
                ++ranks;
            }
            parsed[i] = {};
        }
    }
    if (ranks == 0) throw InputError(paths.empty() ? "trace merge" : paths.front(), "ranks", "the summaries hold no ranks");
    return m.finish();
}

ClusterReport merge_summary_texts(const std::vector<std::string>& texts, const std::vector<std::string>& sources,
                                  int gpus_per_node) {
    ClusterMerger m(gpus_per_node);
    int64_t ranks = 0;
    for (std::size_t i = 0; i < texts.size(); ++i) {
        const std::string source = i < sources.size() ? sources[i] : "summary " + std::to_string(i);
        read_summary(texts[i], source, [&](RankReport&& r) {
            m.add(r, source);
            ++ranks;
        });
    }
    if (ranks == 0) throw InputError("summaries", "ranks", "the summaries hold no ranks");
    return m.finish();
}

}  // namespace lostflops::trace
