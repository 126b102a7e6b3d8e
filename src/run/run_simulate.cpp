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
// recovery waits for the earliest returns. When a recovery ends before the
// next failure, what is left of that gap is the gap to the next failure
// (the exponential is memoryless), so a failure costs one draw.
//
// Random numbers: xoshiro256** (Blackman and Vigna, "Scrambled linear
// pseudorandom number generators", ACM TOMS 47(4), 2021; prng.di.unimi.it),
// its state filled from the seed by SplitMix64 as the authors advise.
// Samples go in blocks of kBlockSamples; block b draws from the stream b
// jumps of 2^128 steps ahead (the authors' jump polynomial), so the blocks'
// streams never overlap and sample i always draws the same numbers. Our own
// inverse CDF turns a draw x into a gap: u = (x >> 11 + 0.5) / 2^53 and
// gap = -M ln u (not std::exponential_distribution, whose algorithm differs
// between standard libraries). Worker threads take whole blocks and write
// each sample's figures at its index; sums run in index order afterwards, so
// the figures for a seed are the same whatever the thread count. Percentiles
// interpolate linearly between order statistics (Hyndman and Fan 1996,
// definition 7, numpy's default).
#include <algorithm>
#include <array>
#include <atomic>
#include <bit>
#include <cmath>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "lostflops/error.h"
#include "lostflops/run_cost.h"

namespace lostflops {

namespace {

constexpr size_t kBlockSamples = 4096;  // samples per random stream
// The work of a simulation is one iteration per run and per failure: runs x
// (1 + expected failures a run) at most this many (about 10^8 a second on
// one core, measured on this project's machine: 100 runs of 1.6 M failures in 2 s).
constexpr double kMaxSimulatedEvents = 5e8;

// The q-quantile of `v` (reordered: order statistics by selection, not a full sort).
double percentile(std::vector<double>& v, double q) {
    if (v.empty()) return 0;
    const double at = q * static_cast<double>(v.size() - 1);
    const auto lo = static_cast<size_t>(std::floor(at));
    const auto nth = v.begin() + static_cast<std::ptrdiff_t>(lo);
    std::nth_element(v.begin(), nth, v.end());
    const double a = *nth;
    const double b = lo + 1 < v.size() ? *std::min_element(nth + 1, v.end()) : a;
    return a + (at - static_cast<double>(lo)) * (b - a);
}

// xoshiro256** (see the top of the file).
class Xoshiro256 {
public:
    using State = std::array<uint64_t, 4>;

    // The state SplitMix64 fills from `seed` (Steele, Lea and Flood 2014).
    static State seeded(uint64_t seed) {
        State s;
        for (uint64_t& w : s) {
            seed += 0x9e3779b97f4a7c15;
            uint64_t z = seed;
            z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9;
            z = (z ^ (z >> 27)) * 0x94d049bb133111eb;
            w = z ^ (z >> 31);
        }
        return s;
    }

    void set(const State& s) { s_ = s; }
    const State& state() const { return s_; }

    uint64_t operator()() {
        const uint64_t out = std::rotl(s_[1] * 5, 7) * 9;
        const uint64_t t = s_[1] << 17;
        s_[2] ^= s_[0];
        s_[3] ^= s_[1];
        s_[1] ^= s_[2];
        s_[0] ^= s_[3];
        s_[2] ^= t;
        s_[3] = std::rotl(s_[3], 45);
        return out;
    }

    // Advances the state by 2^128 steps.
    void jump() {
        static constexpr uint64_t kJump[] = {0x180ec6d33cfd0aba, 0xd5a61266f0c9392c, 0xa9582618e03fc9aa,
                                             0x39abdc4529b1661c};
        State j{0, 0, 0, 0};
        for (const uint64_t word : kJump) {
            for (int b = 0; b < 64; ++b) {
                if (word & (uint64_t{1} << b))
                    for (int k = 0; k < 4; ++k) j[static_cast<size_t>(k)] ^= s_[static_cast<size_t>(k)];
                (*this)();
            }
        }
        s_ = j;
    }

private:
    State s_{};
};

class Sampler {
public:
    Sampler(const RunInputs& in, double interval_s)
        : in_(in), mtbf_s_(in.failures_per_s > 0 ? 1 / in.failures_per_s : 0) {
        tau_ = interval_s;
        cycle_ = tau_ + in.checkpoint_block_s;
        const double work = static_cast<double>(in.steps) * (in.step_time_s + in.data_stall_s);
        full_ = std::floor(work / tau_);
        rest_ = work - full_ * tau_;
        last_ = rest_ < 1e-9 * tau_ ? 0 : rest_ + in.checkpoint_block_s;
        restart_s_ = in.restart_overhead_s + in.checkpoint_read_s;
        persist_s_ = in.checkpoint_persist_s;
        repairs_s_ = in.node_repair_s;
    }

    void start_block(const Xoshiro256::State& stream) { rng_.set(stream); }

    // Wall time of one run; `failures` gets its failure count. Whole
    // cycles left count in an integer and the time lost to each failure is
    // summed apart, so that a failure adds little to the chains of values
    // carried from one failure to the next.
    double run(double& failures) {
        int64_t count = 0;
        repairs_.clear();
        double t = 0;
        auto left = static_cast<int64_t>(full_);  // whole cycles not yet durable
        const double d = restart_s_;
        double gap = draw_gap();
        for (;;) {
            const double remaining = static_cast<double>(left) * cycle_ + last_;
            if (gap >= remaining) {
                failures = static_cast<double>(count);
                return t + remaining;
            }
            const double taken = std::min(std::floor(gap / cycle_), static_cast<double>(left));
            const double into = gap - taken * cycle_;
            // An async checkpoint still persisting at the failure is not durable.
            left -= static_cast<int64_t>(taken) - (taken > 0 && into < persist_s_ ? 1 : 0);
            ++count;
            // Recovery: the wait for a spare node (no running node to fail),
            // then the restart, which a failure starts again.
            double lost = gap;
            for (;;) {
                if (repairs_s_ > 0) lost += spare_wait(t + lost);
                const double g = draw_gap();
                if (g >= d) {
                    lost += d;
                    gap = g - d;  // the rest of this gap, memoryless
                    break;
                }
                lost += g;
                ++count;
            }
            t += lost;
        }
    }

private:
    double draw_gap() {
        if (!(mtbf_s_ > 0)) return INFINITY;
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
        sorted_.assign(repairs_.begin(), repairs_.end());
        std::nth_element(sorted_.begin(), sorted_.begin() + (need - 1), sorted_.end());
        return sorted_[static_cast<size_t>(need - 1)] - t;
    }

    const RunInputs& in_;
    Xoshiro256 rng_;
    double mtbf_s_;
    double tau_ = 0, cycle_ = 0, full_ = 0, rest_ = 0, last_ = 0;
    double restart_s_ = 0, persist_s_ = 0, repairs_s_ = 0;  // the inputs a run reads per failure
    std::vector<double> repairs_, sorted_;
};

}  // namespace

RunSimulation simulate_run(const RunInputs& in, double interval_s, int samples, uint64_t seed, int threads) {
    RunSimulation out;
    out.samples = samples;
    out.seed = seed;
    out.interval_s = interval_s;
    if (samples <= 0) return out;
    check_finishes(in, interval_s, "");
    const double failures_a_run = expected_wall_time_s(in, interval_s) * in.failures_per_s;
    if (static_cast<double>(samples) * (1 + failures_a_run) > kMaxSimulatedEvents)
        throw InputError("--simulate", "",
                         fmt::format("{} runs of about {:.4g} failures each: {:.3g} simulated events, over the bound of "
                                     "{:.0e} (runs x (1 + failures a run)); give fewer runs (at most {})",
                                     samples, failures_a_run, static_cast<double>(samples) * (1 + failures_a_run),
                                     kMaxSimulatedEvents,
                                     static_cast<long long>(kMaxSimulatedEvents / (1 + failures_a_run))));
    const auto n = static_cast<size_t>(samples);
    const double useful_s = static_cast<double>(in.steps) * in.step_time_s;
    std::vector<double> walls(n), goodputs(n);
    const size_t blocks = (n + kBlockSamples - 1) / kBlockSamples;
    unsigned workers = threads > 0 ? static_cast<unsigned>(threads) : std::thread::hardware_concurrency();
    workers = static_cast<unsigned>(std::clamp<size_t>(workers, 1, blocks));
    // Failures are whole numbers: their sum is exact in any order (< 2^53).
    std::vector<double> failures(workers, 0.0);
    // Block b's stream: b jumps from the seeded state.
    std::vector<Xoshiro256::State> streams(blocks);
    Xoshiro256 g;
    g.set(Xoshiro256::seeded(seed));
    for (size_t b = 0; b < blocks; ++b) {
        streams[b] = g.state();
        g.jump();
    }
    std::atomic<size_t> next{0};
    const auto work = [&](unsigned w) {
        Sampler sampler(in, interval_s);
        double sum = 0;
        for (size_t b; (b = next.fetch_add(1)) < blocks;) {
            sampler.start_block(streams[b]);
            const size_t end = std::min(n, (b + 1) * kBlockSamples);
            for (size_t i = b * kBlockSamples; i < end; ++i) {
                double f = 0;
                walls[i] = sampler.run(f);
                goodputs[i] = useful_s / walls[i];
                sum += f;
            }
        }
        failures[w] = sum;
    };
    std::vector<std::thread> pool;
    for (unsigned w = 1; w < workers; ++w) pool.emplace_back(work, w);
    work(0);
    for (auto& t : pool) t.join();
    double wall_sum = 0, goodput_sum = 0, failures_sum = 0;
    for (size_t i = 0; i < n; ++i) {
        wall_sum += walls[i];
        goodput_sum += goodputs[i];
    }
    for (const double f : failures) failures_sum += f;
    out.mean_wall_time_s = wall_sum / samples;
    out.mean_goodput = goodput_sum / samples;
    out.mean_failures = failures_sum / samples;
    out.p10_wall_time_s = percentile(walls, 0.1);
    out.p50_wall_time_s = percentile(walls, 0.5);
    out.p90_wall_time_s = percentile(walls, 0.9);
    out.p10_goodput = percentile(goodputs, 0.1);
    out.p50_goodput = percentile(goodputs, 0.5);
    out.p90_goodput = percentile(goodputs, 0.9);
    return out;
}

}  // namespace lostflops
