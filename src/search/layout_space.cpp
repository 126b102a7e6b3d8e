// The layout space of a search (search/layout_space.h): the shapes from
// enumerate_shapes are cut into consecutive chunks that worker threads take
// from a shared counter; each chunk's valid layouts and plan counts are kept
// apart and joined in chunk order, so the layouts come out in enumeration
// order and the counts (integers) are the same for any thread count.
#include "search/layout_space.h"

#include <algorithm>
#include <atomic>
#include <thread>

#include "search/knobs.h"

namespace lostflops::search {

int64_t PlanCounter::range(const Layout& l, int vpp_last) {
    if (l.tp != tp_ || l.cp != cp_ || l.pp != pp_) {
        tp_ = l.tp;
        cp_ = l.cp;
        pp_ = l.pp;
        sums_.clear();
    }
    const auto plans_of = [&](const Layout& at) {
        job_.plan.schedule = base_schedule_;  // a schedule twin's is its own (apply_layout)
        job_.plan.schedule_given = base_schedule_given_;
        job_.plan.first_stage_layers = base_first_;  // a stage variant's are its own
        job_.plan.last_stage_layers = base_last_;
        apply_layout(job_.plan, at);
        job_.training.micro_batch = at.micro_batch;
        return knob_set(job_, fix_).count();
    };
    // A stage variant's layers are those of its vpp alone (enumerate.cpp
    // stage_variants visits each, never a run of them): counted as it is.
    if (l.stage_variant() && vpp_last == l.vpp) return plans_of(l);
    auto it = std::find_if(sums_.begin(), sums_.end(), [&](const Sums& s) {
        return s.ep == l.ep && s.etp == l.etp && s.a2a == l.a2a_overlap && s.schedule == l.schedule;
    });
    if (it == sums_.end()) it = sums_.insert(sums_.end(), Sums{l.ep, l.etp, l.a2a_overlap, l.schedule, {0}});
    std::vector<int64_t>& sum = it->sum;
    while (static_cast<int>(sum.size()) <= vpp_last) {
        Layout at = l;
        at.vpp = static_cast<int>(sum.size());
        sum.push_back(sum.back() + plans_of(at));
    }
    return sum[static_cast<size_t>(vpp_last)] - sum[static_cast<size_t>(l.vpp - 1)];
}

namespace {

constexpr size_t kShapesPerChunk = 64;

struct Chunk {
    std::vector<Layout> layouts;
    int64_t plans = 0, rejected_plans = 0;
};

}  // namespace

LayoutSpace layout_space(const Job& job, const PlanFix& fix, const LayoutFix& layout_fix, unsigned threads) {
    const std::vector<Shape> shapes = enumerate_shapes(job, layout_fix);
    const size_t n_chunks = (shapes.size() + kShapesPerChunk - 1) / kShapesPerChunk;
    std::vector<Chunk> chunks(n_chunks);
    std::atomic<size_t> next{0};
    const auto work = [&] {
        PlanCounter count(job, fix);
        for (size_t c; (c = next.fetch_add(1)) < n_chunks;) {
            Chunk& out = chunks[c];
            const size_t end = std::min(shapes.size(), (c + 1) * kShapesPerChunk);
            for (size_t i = c * kShapesPerChunk; i < end; ++i)
                enumerate_shape(
                    job, shapes[i],
                    [&](const Layout& l) {
                        out.layouts.push_back(l);
                        out.plans += count(l);
                    },
                    [&](const RejectedRun& r) { out.rejected_plans += count(r); }, layout_fix);
        }
    };
    threads = static_cast<unsigned>(std::clamp<size_t>(threads, 1, std::max<size_t>(1, n_chunks)));
    std::vector<std::thread> pool;
    for (unsigned t = 1; t < threads; ++t) pool.emplace_back(work);
    work();
    for (auto& th : pool) th.join();
    LayoutSpace space;
    size_t n = 0;
    for (const Chunk& c : chunks) n += c.layouts.size();
    space.layouts.reserve(n);
    for (Chunk& c : chunks) {
        space.layouts.insert(space.layouts.end(), c.layouts.begin(), c.layouts.end());
        std::vector<Layout>().swap(c.layouts);
        space.plans += c.plans;
        space.rejected_plans += c.rejected_plans;
    }
    return space;
}

}  // namespace lostflops::search
