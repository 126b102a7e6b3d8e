// The passes of a pipeline phase (estimate/phase_passes.h): every pass by
// the pass rule (stage_pass.cpp) at its place in the layout, its distinct
// passes timed once each; or, for a uniform model on the default split, the
// closed form's fast path: a pass away from the embedding and the output
// layer depends only on its layer count, which takes two values, so a phase
// costs O(pp), not O(pp * vpp). DualPipe's F&B pairs: DeepSeek-V3 report
// sec. 3.2.1.
#include "estimate/phase_passes.h"

#include <algorithm>

#include "job/stage_layout.h"
#include "schedule/pipeline_detail.h"

namespace lostflops::phase {

namespace {

// A DualPipe rank's F&B pairs hide each pass's expert all-to-all behind the
// other's work (DeepSeek-V3 report sec. 3.2.1): F0 with B1, F1 with B0; the
// mean saving of its two pairings.
double dual_saved_s(const StagePass (&sps)[2], double hide_share) {
    double saved = 0;
    for (int j = 0; j < 2; ++j) {
        const PassTime& f = sps[j].f;
        const PassTime& b = sps[1 - j].b;
        const double fc = std::min(f.ep_comm_s * hide_share, f.total_s()),
                     bc = std::min(b.ep_comm_s * hide_share, b.total_s());
        saved += 0.5 * (std::min(fc, b.total_s() - bc) + std::min(bc, f.total_s() - fc));
    }
    return saved;
}

}  // namespace

// Several kinds, a custom layout, MTP modules or a schedule beyond the 1F1B
// family: every (rank, chunk) pass by the pass rule, at its place in the
// layout (layout_position), O(pp * chunks * kinds); the distinct passes are
// timed once each (StagePassMemo).
PhasePasses every_pass(const Job& job, const PassSetup& s, const PhaseMode& mode, PhaseBuffers& buf,
                       PipelinePhase& ph) {
    const ParallelPlan& p = job.plan;
    const int stages = p.pp, n = mode.chunks;
    PipelineInput& in = buf.in;
    PhasePasses out;
    double fwd_sum = 0, wgrad_sum = 0;
    if (mode.dual) buf.saved_s.assign(static_cast<size_t>(stages), 0.0);
    buf.memo.clear();
    for (int r = 0; r < stages; ++r) {
        PassTime rank_pass;
        double t = 0;
        StagePass sps[2];
        for (int c = 0; c < n; ++c) {
            const LayoutPosition lp = layout_position(p, r, c);
            const StagePass& sp = buf.memo.get(job, s, lp.rank, lp.chunk);
            out.values_ok &= plausible(sp.f.total_s()) && plausible(sp.b.total_s());
            const double f_s = sp.f.total_s(), b_s = sp.b.total_s();
            const size_t at = static_cast<size_t>(r * n + c);
            if (mode.simulate) {
                in.fwd_s[at] = f_s;
                in.bwd_s[at] = b_s;
                if (!mode.family) {
                    in.wgrad_s[at] = std::min(b_s, sp.wgrad_s);
                    in.fwd_comm_s[at] = sp.f.ep_comm_s * mode.hide_share;
                    in.bwd_comm_s[at] = sp.b.ep_comm_s * mode.hide_share;
                }
            }
            if (mode.dual) sps[c] = sp;
            fwd_sum += f_s;
            wgrad_sum += std::min(b_s, sp.wgrad_s);
            rank_pass += sp.f;
            rank_pass += sp.b;
            t += f_s + b_s;
            if (c == 0) buf.chunk0_s[static_cast<size_t>(r)] = f_s + b_s;
            if (r == 0) {
                ph.first_rank_fwd_s += f_s;
                ph.first_rank_bwd_s += b_s;
            }
            // dualpipe's chunk 1 is another rank's chunk 0: count each stage once.
            if (!(schedule_info(mode.sched).two_directions && c == 1)) ph.recomputed_layers += sp.redone;
        }
        buf.rank_s[static_cast<size_t>(r)] = t;
        if (mode.dual) buf.saved_s[static_cast<size_t>(r)] = dual_saved_s(sps, mode.hide_share);
        if (rank_pass.total_s() > out.worst_total && mode.dual)
            out.extra.hidden_s = buf.saved_s[static_cast<size_t>(r)] *
                                 dual_overlapped_pairs(mode.sched, stages, in.micro_batches, r);
        out.offer_worst(rank_pass);
    }
    out.extra.fwd_mean_s = fwd_sum / (static_cast<double>(stages) * n);
    out.extra.wgrad_mean_s = wgrad_sum / (static_cast<double>(stages) * n);
    if (mode.dual) out.extra.saved_s = buf.saved_s.data();
    return out;
}

namespace {

// A uniform model on the default split (1F1B family, no MTP): a pass away
// from the embedding and the output layer depends only on its layer count,
// which takes two values (layers_on), each timed once; which virtual stages
// hold the fewer layers is closed form (the first ceil(missing/2) and the last
// floor(missing/2) in model order), so a rank's count of them costs O(1).
class UniformSplit {
public:
    UniformSplit(const Job& job, const PassSetup& s, bool& values_ok) : job_(job), s_(s), values_ok_(values_ok) {
        const int stages = job.plan.pp;
        chunks_ = job.plan.vpp;
        const int virtual_stages = stages * chunks_;
        base_ = job.model.layers / virtual_stages;
        const int missing = virtual_stages - job.model.layers % virtual_stages;
        light_head_ = (missing + 1) / 2;
        const int light_tail = missing / 2;
        // For 0 <= r < stages and L = a*stages + b >= 0, the chunk count
        // ceil((L - r) / stages), or 0 when r >= L, is a + (r < b): one
        // division per phase, none per rank.
        from_ = virtual_stages - light_tail;  // first light virtual stage of the tail
        head_a_ = light_head_ / stages, head_b_ = light_head_ % stages;
        from_a_ = from_ / stages, from_b_ = from_ % stages;
        // Thread-local, reset by layer count: zeroing two cells on every
        // call was a tenth of a search's time in this function.
        cells_[0].layers = cells_[1].layers = -1;
    }
    struct Cell {
        int layers = -1;
        PassTime f, b, both;
        double f_s = 0, b_s = 0;
        double redone = 0;
    };
    int base() const { return base_; }
    int chunks() const { return chunks_; }
    // Chunks of rank r with base() layers.
    int light_on_rank(int r) const {
        const int head = head_a_ + (r < head_b_ ? 1 : 0);     // chunks c with c*stages + r < light_head
        const int first_c = from_a_ + (r < from_b_ ? 1 : 0);  // first chunk c with c*stages + r >= from
        const int tail = std::max(0, chunks_ - first_c);
        return head + tail;
    }
    // Layers on rank r's chunk 0 (virtual stage r), as layers_on gives them.
    int chunk0_layers(int r) const { return base_ + (r < light_head_ || r >= from_ ? 0 : 1); }
    // A pass of n layers with the embedding (first) or the output layer (last).
    void pass_of(int n, bool first, bool last, PassTime& f, PassTime& b, double& redone) {
        const StagePass sp = stage_pass_uniform(job_, s_, n, first, last, 0);
        f = sp.f;
        b = sp.b;
        redone = sp.redone;
        values_ok_ &= plausible(f.total_s()) && plausible(b.total_s());
    }
    // The pass of n layers away from both ends.
    const Cell& cell_of(int n) {
        Cell& cell = cells_[n == base_ ? 0 : 1];
        if (cell.layers != n) {
            cell.layers = n;
            pass_of(n, false, false, cell.f, cell.b, cell.redone);
            cell.both = cell.f;
            cell.both += cell.b;
            cell.f_s = cell.f.total_s();
            cell.b_s = cell.b.total_s();
        }
        return cell;
    }
    // The cell of n layers once cell_of(n) has been called in this phase.
    const Cell& computed_cell(int n) const { return cells_[n == base_ ? 0 : 1]; }

private:
    static thread_local Cell cells_[2];
    const Job& job_;
    const PassSetup& s_;
    bool& values_ok_;
    int chunks_ = 1, base_ = 0, light_head_ = 0, from_ = 0, head_a_ = 0, head_b_ = 0, from_a_ = 0, from_b_ = 0;
};

thread_local UniformSplit::Cell UniformSplit::cells_[2];

// Writes rank r's cells into the simulation's passes (skipping the chunks
// with the embedding or the output layer, written on their own).
void simulated_cells(const Job& job, UniformSplit& u, int r, bool skip_first, bool skip_last, PipelineInput& in) {
    const int chunks = u.chunks();
    for (int c = 0; c < chunks; ++c) {
        if ((skip_first && c == 0) || (skip_last && c == chunks - 1)) continue;
        const UniformSplit::Cell& cell = u.cell_of(layers_on(job, r, c));
        in.fwd_s[static_cast<size_t>(r * chunks + c)] = cell.f_s;
        in.bwd_s[static_cast<size_t>(r * chunks + c)] = cell.b_s;
    }
}

}  // namespace

// The passes of a uniform model on the default split, O(pp). A rank holding
// neither the embedding nor the output layer depends only on its count of
// light chunks, which takes at most three values: such a rank's sum is
// computed once per count (the same operations, so the same bits) and, being
// no larger than the first rank with that count, cannot become the worst.
PhasePasses uniform_passes(const Job& job, const PassSetup& s, const PhaseMode& mode, PhaseBuffers& buf,
                           PipelinePhase& ph) {
    const int stages = job.plan.pp;
    PipelineInput& in = buf.in;
    PhasePasses out;
    UniformSplit u(job, s, out.values_ok);
    const int chunks = u.chunks(), base = u.base();
    struct Seen {
        int light = -1;
        double t = 0;
    } seen[4];
    int n_seen = 0;
    for (int r = 0; r < stages; ++r) {
        int light = u.light_on_rank(r), heavy = chunks - light;
        const bool middle = r != 0 && r != stages - 1;
        if (middle) {
            const Seen* hit = nullptr;
            for (int i = 0; i < n_seen; ++i)
                if (seen[i].light == light) hit = &seen[i];
            if (hit != nullptr) {
                // The rank seen had the same light and heavy chunks, so it
                // computed the cell of each count > 0 (chunk 0's among them).
                for (int slot = 0; slot < 2; ++slot) {
                    const int count = slot == 0 ? light : heavy;
                    if (count > 0) ph.recomputed_layers += count * u.computed_cell(base + slot).redone;
                }
                const UniformSplit::Cell& cell = u.computed_cell(u.chunk0_layers(r));
                buf.chunk0_s[static_cast<size_t>(r)] = cell.f_s + cell.b_s;
                if (mode.simulate) simulated_cells(job, u, r, false, false, in);
                buf.rank_s[static_cast<size_t>(r)] = hit->t;
                continue;
            }
        }
        PassTime rank_pass;
        double t = 0;  // the rank's fwd + bwd per micro-batch
        // The embedding's pass (rank 0, chunk 0) and the output layer's (last
        // rank, last chunk) are computed on their own.
        const auto special = [&](int c, bool first, bool last) {
            const int n = layers_on(job, r, c);
            (n == base ? light : heavy) -= 1;
            PassTime f, b;
            double redone = 0;
            u.pass_of(n, first, last, f, b, redone);
            ph.recomputed_layers += redone;
            const double f_s = f.total_s(), b_s = b.total_s();
            if (mode.simulate) {
                in.fwd_s[static_cast<size_t>(r * chunks + c)] = f_s;
                in.bwd_s[static_cast<size_t>(r * chunks + c)] = b_s;
            }
            rank_pass += f;
            rank_pass += b;
            t += f_s + b_s;
            if (c == 0) buf.chunk0_s[static_cast<size_t>(r)] = f_s + b_s;
            if (r == 0) {
                ph.first_rank_fwd_s += f_s;
                ph.first_rank_bwd_s += b_s;
            }
        };
        const bool has_first = r == 0, has_last = r == stages - 1;
        if (has_first) special(0, true, has_last && chunks == 1);
        if (has_last && !(has_first && chunks == 1)) special(chunks - 1, false, true);
        for (int slot = 0; slot < 2; ++slot) {
            const int count = slot == 0 ? light : heavy;
            if (count <= 0) continue;
            const UniformSplit::Cell& cell = u.cell_of(base + slot);
            rank_pass += cell.both.scaled(count);
            t += count * (cell.f_s + cell.b_s);
            ph.recomputed_layers += count * cell.redone;
            if (r == 0) {
                ph.first_rank_fwd_s += count * cell.f_s;
                ph.first_rank_bwd_s += count * cell.b_s;
            }
        }
        if (!has_first && !(has_last && chunks == 1)) {
            const UniformSplit::Cell& cell = u.cell_of(u.chunk0_layers(r));
            buf.chunk0_s[static_cast<size_t>(r)] = cell.f_s + cell.b_s;
        }
        if (mode.simulate) simulated_cells(job, u, r, has_first, has_last, in);
        buf.rank_s[static_cast<size_t>(r)] = t;
        if (middle && n_seen < 4) seen[n_seen++] = {light, t};
        out.offer_worst(rank_pass);
    }
    return out;
}

}  // namespace lostflops::phase
