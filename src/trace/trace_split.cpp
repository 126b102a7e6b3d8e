// One file, several ranks: a trace whose top-level "ranksByPid" is true
// (lostflops' own timelines, `estimate --timeline-out`) is cut into one
// TraceData per "pid" of its GPU events and step marks. The Chrome trace
// format draws one process per pid (Trace Event Format, "pid"), so such a
// file opens in Perfetto as one process per rank and reads back here as the
// same ranks.
#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "lostflops/error.h"
#include "lostflops/trace.h"

namespace lostflops::trace {

namespace {

// lostflops' timelines write one pid per pipeline rank: a few to a few
// hundred, each sharing a few hundred labels. The bounds leave room for far
// more; past them the file asks for more copies than the reader holds
// (ranks x shared tables: about 32 bytes each, 4 M of them 130 MB).
constexpr uint64_t kMaxPidRanks = 65536;
constexpr uint64_t kMaxSharedCopies = 4'000'000;
constexpr uint64_t kAlwaysSplit = 16;  // this many ranks are split whatever the tables' size

}  // namespace

std::vector<TraceData> split_ranks(TraceData&& d) {
    std::vector<TraceData> out;
    if (!d.ranks_by_pid) {
        out.push_back(std::move(d));
        return out;
    }
    std::map<int64_t, std::size_t> part_of;  // pid -> index into out, in pid order
    const auto check = [&](int64_t pid) {
        if (pid < 0 || pid > kMaxRank) {
            throw InputError(d.source, "traceEvents",
                             fmt::format("ranksByPid is true but an event's \"pid\" is {}: expected the rank, an "
                                         "integer in [0, {}]",
                                         pid == -1 ? std::string("absent or not an integer") : std::to_string(pid),
                                         kMaxRank));
        }
        part_of.emplace(pid, 0);
    };
    for (const GpuEvent& g : d.gpu) check(d.labels[g.label].pid);
    for (const StepMark& s : d.steps) check(s.pid);
    if (part_of.empty()) {
        out.push_back(std::move(d));
        return out;
    }
    // Every rank gets a copy of the file's shared tables: the copies are
    // bounded in number (ranks) and in total entries, so that a small file
    // naming many pids cannot ask for quadratic memory.
    const uint64_t shared = d.names.size() + d.labels.size() + d.groups.size() + d.cpu_launches.size() +
                            d.comm_sizes.size() + d.step_names.size();
    const uint64_t parts = part_of.size();
    const uint64_t allowed = std::max(kMaxSharedCopies, kAlwaysSplit * shared);
    if (parts > kMaxPidRanks || parts * shared > allowed)
        throw InputError(d.source, "ranksByPid",
                         fmt::format("{} ranks (pids) x {} shared names, labels, groups and launches = {} copies; at "
                                     "most {} ranks and {} copies (the larger of {} and {} x the shared entries) in "
                                     "one ranksByPid file: write one trace per rank instead",
                                     parts, shared, parts * shared, kMaxPidRanks, allowed, kMaxSharedCopies,
                                     kAlwaysSplit));
    std::vector<GpuEvent> gpu = std::move(d.gpu);
    std::vector<StepMark> steps = std::move(d.steps);
    std::vector<DeviceMemory> memory = std::move(d.memory);
    d.gpu.clear();
    d.steps.clear();
    d.memory.clear();
    d.host_op_us = {};  // not by pid (below): not copied into every part
    d.host_op_ts_us = {};
    const int world = d.world_size.value_or(static_cast<int>(part_of.rbegin()->first) + 1);
    for (auto& [pid, index] : part_of) {
        index = out.size();
        TraceData part = d;  // names, labels, groups, launches: shared by copy
        part.rank = static_cast<int>(pid);
        part.world_size = world;
        part.source = fmt::format("{} (pid {})", d.source, pid);
        // Host events are not counted by pid (lostflops' own timelines have
        // none): no rank of the file predicts a profiled step.
        part.host_events = 0;
        part.profiler_overhead_us = 0;
        if (index > 0) {  // what the file as a whole had: said once, on its first rank
            part.warnings.clear();
            part.skipped = {};
            part.duplicates = 0;
        }
        out.push_back(std::move(part));
    }
    for (const GpuEvent& g : gpu) out[part_of[d.labels[g.label].pid]].gpu.push_back(g);
    for (const StepMark& s : steps) out[part_of[s.pid]].steps.push_back(s);
    std::size_t orphans = 0;  // [memory] events of a pid that is no rank (no GPU event, no step)
    for (DeviceMemory& m : memory) {
        const auto it = part_of.find(m.pid);
        if (it == part_of.end()) ++orphans;
        else out[it->second].memory.push_back(std::move(m));
    }
    if (orphans > 0) {
        out.front().warnings.push_back(fmt::format(
            "memory-events: the [memory] events of {} (pid, device) pairs whose pid has no GPU events are left out",
            orphans));
    }
    return out;
}

}  // namespace lostflops::trace
