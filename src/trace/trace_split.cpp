// One file, several ranks: a trace whose top-level "ranksByPid" is true
// (lostflops' own timelines, `estimate --timeline-out`) is cut into one
// TraceData per "pid" of its GPU events and step marks. The Chrome trace
// format draws one process per pid (Trace Event Format, "pid"), so such a
// file opens in Perfetto as one process per rank and reads back here as the
// same ranks.
#include <fmt/format.h>

#include <map>

#include "lostflops/error.h"
#include "lostflops/trace.h"

namespace lostflops::trace {

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
    std::vector<GpuEvent> gpu = std::move(d.gpu);
    std::vector<StepMark> steps = std::move(d.steps);
    std::vector<DeviceMemory> memory = std::move(d.memory);
    d.gpu.clear();
    d.steps.clear();
    d.memory.clear();
    const int world = d.world_size.value_or(static_cast<int>(part_of.rbegin()->first) + 1);
    for (auto& [pid, index] : part_of) {
        index = out.size();
        TraceData part = d;  // names, labels, groups, launches: shared by copy
        part.rank = static_cast<int>(pid);
        part.world_size = world;
        part.source = fmt::format("{} (pid {})", d.source, pid);
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
