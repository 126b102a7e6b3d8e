// Seeded Monte Carlo of a whole run (run_cost.h simulate_run), event-driven:
// one iteration per failure, never per step.
//
// Each sample starts at the last durable checkpoint, draws the gap to the
// next failure of the job (exponential with mean M = 1 / failures_per_s, the
// whole job's rate, so "failures drawn per GPU" is the superposition of the
// GPUs' independent Poisson processes), and either finishes the remaining
// cycles of interval + checkpoint block within it or fails: the cycles whose
// checkpoint was taken count as done, except that an async checkpoint whose
// background write (checkpoint_persist_s) has not finished at the failure is
// not durable, rolling back one cycle more. A recovery (restart overhead +
// checkpoint read + the wait for a spare node) follows; a failure during it
// starts it again. With node_repair_s > 0 every failure takes a node out for
// that long; while more nodes are in repair than there are spares the
// recovery waits for the earliest returns.
//
// Random numbers: std::mt19937_64 (its output is fixed by the C++ standard,
// [rand.predef]) through our own inverse CDF, u = (x >> 11 + 0.5) / 2^53 and
// gap = -M ln u, not std::exponential_distribution, whose algorithm differs
// between standard libraries. Percentiles interpolate linearly between order
// statistics (Hyndman and Fan 1996, definition 7, numpy's default).
#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "lostflops/run_cost.h"

namespace lostflops {

namespace {

double percentile(const std::vector<double>& sorted, double q) {
    if (sorted.empty()) return 0;
    const double at = q * static_cast<double>(sorted.size() - 1);
    const auto lo = static_cast<size_t>(std::floor(at));
    const size_t hi = std::min(lo + 1, sorted.size() - 1);
    return sorted[lo] + (at - static_cast<double>(lo)) * (sorted[hi] - sorted[lo]);
}

class Sampler {
public:
    Sampler(const RunInputs& in, double interval_s, uint64_t seed)
        : in_(in), rng_(seed), mtbf_s_(in.failures_per_s > 0 ? 1 / in.failures_per_s : 0) {
        tau_ = interval_s;
        cycle_ = tau_ + in.checkpoint_block_s;
        const double work = static_cast<double>(in.steps) * (in.step_time_s + in.data_stall_s);
        full_ = std::floor(work / tau_);
        rest_ = work - full_ * tau_;
        last_ = rest_ < 1e-9 * tau_ ? 0 : rest_ + in.checkpoint_block_s;
    }

    // Wall time of one run; `failures` gets its failure count.
    double run(double& failures) {
        failures = 0;
        repairs_.clear();
        double t = 0;
        double done = 0;  // durable whole cycles
        for (;;) {
            const double remaining = (full_ - done) * cycle_ + last_;
            const double gap = mtbf_s_ > 0 ? draw_gap() : INFINITY;
            if (gap >= remaining) return t + remaining;
            const double taken = std::min(std::floor(gap / cycle_), full_ - done);
            const double into = gap - taken * cycle_;
            double durable = taken;
            if (taken > 0 && into < in_.checkpoint_persist_s) durable -= 1;
            done += durable;
            t += gap;
            failures += 1;
            // Recovery: the wait for a spare node (no running node to fail),
            // then the restart, which a failure starts again.
            for (;;) {
                t += spare_wait(t);
                const double d = in_.restart_overhead_s + in_.checkpoint_read_s;
                const double g = draw_gap();
                if (g >= d) {
                    t += d;
                    break;
                }
                t += g;
                failures += 1;
            }
        }
    }

private:
    double draw_gap() {
        const uint64_t x = rng_();
        const double u = (static_cast<double>(x >> 11) + 0.5) * 0x1p-53;
        return -mtbf_s_ * std::log(u);
    }

    // A failure at `t` takes a node out for node_repair_s; the wait until
    // enough nodes (spares included) are back.
    double spare_wait(double t) {
        if (in_.node_repair_s <= 0) return 0;
        repairs_.erase(std::remove_if(repairs_.begin(), repairs_.end(), [t](double r) { return r <= t; }),
                       repairs_.end());
        repairs_.push_back(t + in_.node_repair_s);
        const long need = static_cast<long>(repairs_.size()) - in_.spare_nodes;
        if (need <= 0) return 0;
        std::vector<double> sorted = repairs_;
        std::nth_element(sorted.begin(), sorted.begin() + (need - 1), sorted.end());
        return sorted[static_cast<size_t>(need - 1)] - t;
    }

    const RunInputs& in_;
    std::mt19937_64 rng_;
    double mtbf_s_;
    double tau_ = 0, cycle_ = 0, full_ = 0, rest_ = 0, last_ = 0;
    std::vector<double> repairs_;
};

}  // namespace

RunSimulation simulate_run(const RunInputs& in, double interval_s, int samples, uint64_t seed) {
    RunSimulation out;
    out.samples = samples;
    out.seed = seed;
    out.interval_s = interval_s;
    if (samples <= 0) return out;
    check_finishes(in, interval_s, "");
    Sampler sampler(in, interval_s, seed);
    const double useful_s = static_cast<double>(in.steps) * in.step_time_s;
    std::vector<double> walls, goodputs;
    walls.reserve(static_cast<size_t>(samples));
    goodputs.reserve(static_cast<size_t>(samples));
    double failures_sum = 0;
    for (int i = 0; i < samples; ++i) {
        double failures = 0;
        const double wall = sampler.run(failures);
        walls.push_back(wall);
        goodputs.push_back(useful_s / wall);
        failures_sum += failures;
    }
    double wall_sum = 0, goodput_sum = 0;
    for (size_t i = 0; i < walls.size(); ++i) {
        wall_sum += walls[i];
        goodput_sum += goodputs[i];
    }
    out.mean_wall_time_s = wall_sum / samples;
    out.mean_goodput = goodput_sum / samples;
    out.mean_failures = failures_sum / samples;
    std::sort(walls.begin(), walls.end());
    std::sort(goodputs.begin(), goodputs.end());
    out.p10_wall_time_s = percentile(walls, 0.1);
    out.p50_wall_time_s = percentile(walls, 0.5);
    out.p90_wall_time_s = percentile(walls, 0.9);
    out.p10_goodput = percentile(goodputs, 0.1);
    out.p50_goodput = percentile(goodputs, 0.5);
    out.p90_goodput = percentile(goodputs, 0.9);
    return out;
}

}  // namespace lostflops
