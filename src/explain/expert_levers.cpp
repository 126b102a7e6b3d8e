// Explain's expert walls: each wall of lostflops/expert_walls.h with its share
// of the step, the main walls that hold it, and its lever.
//
// A wall's lever: of the levers' candidate changes of the plan
// (explain/lever_candidates.h, the list explain's levers try, less those of
// the hardware, cluster.*, and of the precision), each loaded and estimated
// as a lever is (the --set overrides after the job's own, every check of
// load_job, the framework's rules), the one that shrinks the wall the most
// among those that fit in memory and do not lengthen the step; ties by the
// shorter step, then by name. When none does, the one that shrinks it the
// most at all is named with what keeps it from being a lever (it does not
// fit, or the step is longer). Each candidate is loaded and estimated once
// for all the walls.
#include "explain/expert_levers.h"

#include <algorithm>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "explain/lever_candidates.h"
#include "lostflops/error.h"
#include "lostflops/expert_walls.h"
#include "lostflops/framework_rules.h"
#include "lostflops/walls.h"

namespace lostflops {

namespace {

// The main walls (walls.h names) that hold some of `b`.
std::vector<std::string> holders(const Breakdown& b) {
    std::vector<std::string> out;
    for (const WallInfo& w : kWalls)
        if (b.*w.seconds > 0) out.emplace_back(w.name);
    return out;
}

struct Evaluated {
    LeverCandidate c;
    Estimate e;
    ExpertWalls walls;
};

std::vector<Evaluated> evaluate_candidates(const JobSource& src, const Job& job, const Calibration& cal) {
    std::vector<Evaluated> out;
    for (LeverCandidate& c : lever_candidates(job)) {
        const std::optional<Job> loaded = candidate_job(src, c, job);
        if (!loaded) continue;
        const Job& changed = *loaded;
        const bool hardware = std::any_of(c.set.begin(), c.set.end(), [](const std::string& x) {
            return x.rfind("cluster.", 0) == 0 || x.rfind("training.precision", 0) == 0;
        });
        if (hardware) continue;
        Evaluated ev;
        try {
            ev.e = estimate(changed, cal);
        } catch (const InputError&) {
            continue;
        }
        ev.walls = expert_walls(changed, cal);
        ev.c = std::move(c);
        out.push_back(std::move(ev));
    }
    return out;
}

// Not in this job: no shared experts, no dispatch, no expert-DP group.
bool absent(const ExpertWallRow& r) { return r.s <= 0 && r.collective_s <= 0; }

// What keeps a lever from being one outright ("" when nothing does).
std::string caveat(const ExpertWallRow& r, double step_time_s) {
    return !r.lever.fits                      ? " (does NOT fit in memory)"
           : r.lever.step_time_s > step_time_s ? " (the step is longer)"
                                               : "";
}

}  // namespace

ExpertWallsView expert_walls_view(const JobSource& src, const Job& job, const Calibration& cal, const Estimate& e) {
    ExpertWallsView v;
    const ExpertWalls walls = expert_walls(job, cal);
    if (!walls.moe) return v;
    v.moe = true;
    v.dispatcher = to_string(walls.dispatcher);
    const std::vector<Evaluated> tried = evaluate_candidates(src, job, cal);
    for (const ExpertWall& w : walls.walls) {
        ExpertWallRow row;
        row.key = key_of(w.id);
        row.name = words_of(w.id);
        row.s = w.step_s();
        row.share = e.step_time_s > 0 ? row.s / e.step_time_s : 0.0;
        row.collective_s = w.collective_s;
        row.in = holders(w.in);
        const auto pick = [&](bool usable_only) -> const Evaluated* {
            const Evaluated* best = nullptr;
            double best_s = row.s * (1 - 1e-9);  // a change must shrink the wall
            for (const Evaluated& ev : tried) {
                if (usable_only && (!ev.e.memory.fits || ev.e.step_time_s > e.step_time_s)) continue;
                const double after = ev.walls[w.id].step_s();
                const bool tie = best && after == best_s &&
                                 (ev.e.step_time_s < best->e.step_time_s ||
                                  (ev.e.step_time_s == best->e.step_time_s && ev.c.change < best->c.change));
                if (after < best_s || tie) best = &ev, best_s = after;
            }
            return best;
        };
        const Evaluated* best = pick(true);
        if (!best) best = pick(false);
        if (best) {
            row.has_lever = true;
            row.lever = {best->c.change, lever_set_with_plan(src.plan, best->c.set), best->walls[w.id].step_s(),
                         best->e.mfu, best->e.step_time_s};
            row.lever.fits = best->e.memory.fits;
        }
        v.walls.push_back(std::move(row));
    }
    return v;
}

std::string expert_walls_table(const ExpertWallsView& v, double step_time_s, double mfu) {
    if (!v.moe) return {};
    std::string out = fmt::format("\nExpert walls (dispatcher {}; seconds per step on the critical path, share of the "
                                  "step, and the main walls that hold them):\n",
                                  v.dispatcher);
    out += fmt::format("  {:<38} {:>9} {:>7} {:>12}  {}\n", "", "s/step", "step %", "collective s", "in");
    for (const ExpertWallRow& r : v.walls) {
        if (absent(r)) continue;
        const std::string coll = r.collective_s > 0 ? fmt::format("{:.4f}", r.collective_s) : "";
        out += fmt::format("  {:<38} {:>9.4f} {:>7.1f} {:>12}  {}\n", r.name, r.s, 100 * r.share, coll,
                           fmt::join(r.in, ", "));
    }
    out += "Levers of the expert walls (the change of the plan that shrinks each most, re-estimated; one that does not\n"
           "fit or lengthens the step only where no other shrinks it):\n";
    for (const ExpertWallRow& r : v.walls) {
        if (r.s <= 0) continue;
        if (!r.has_lever) {
            out += fmt::format("  {:<15} no change of the plan among the levers' candidates shrinks it\n", r.key);
            continue;
        }
        std::string set;
        for (const auto& s : r.lever.set) set += fmt::format("{}--set '{}'", set.empty() ? "" : " ", s);
        const std::string why = caveat(r, step_time_s);
        out += fmt::format("  {:<15} {:<26} {:.4f} -> {:.4f} s, step {:.3f} -> {:.3f} s, MFU {:+.1f} points{}   {}\n",
                           r.key, r.lever.change, r.s, r.lever.wall_s_after, step_time_s, r.lever.step_time_s,
                           100 * (r.lever.mfu_after - mfu), why, set);
    }
    return out;
}

std::string expert_walls_markdown(const ExpertWallsView& v, double step_time_s) {
    if (!v.moe) return {};
    std::string out = fmt::format("\n**Expert walls** (dispatcher {}):\n\n| wall | s per step | share of step | "
                                  "collectives s | in | lever | wall after |\n|---|---:|---:|---:|---|---|---:|\n",
                                  v.dispatcher);
    for (const ExpertWallRow& r : v.walls) {
        if (absent(r)) continue;
        out += fmt::format("| {} | {:.4f} | {:.1f} % | {} | {} | {} | {} |\n", r.name, r.s, 100 * r.share,
                           r.collective_s > 0 ? fmt::format("{:.4f}", r.collective_s) : "", fmt::join(r.in, ", "),
                           r.has_lever ? r.lever.change + caveat(r, step_time_s) : "",
                           r.has_lever ? fmt::format("{:.4f}", r.lever.wall_s_after) : "");
    }
    return out;
}

void add_expert_walls_json(const ExpertWallsView& v, nlohmann::json& j) {
    if (!v.moe) return;
    nlohmann::json walls = nlohmann::json::array();
    for (const ExpertWallRow& r : v.walls) {
        nlohmann::json w = {{"key", r.key},          {"name", r.name}, {"s", r.s},
                            {"share", r.share},      {"collective_s", r.collective_s},
                            {"in", r.in},            {"lever", nullptr}};
        if (r.has_lever)
            w["lever"] = {{"change", r.lever.change},
                          {"set", r.lever.set},
                          {"wall_s_after", r.lever.wall_s_after},
                          {"mfu_after", r.lever.mfu_after},
                          {"step_time_s", r.lever.step_time_s},
                          {"fits", r.lever.fits}};
        walls.push_back(std::move(w));
    }
    j["expert_walls"] = {{"dispatcher", v.dispatcher}, {"walls", std::move(walls)}};
}

}  // namespace lostflops
