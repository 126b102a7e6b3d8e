// The pass rule (estimate_parts.h stage_pass): the forward and backward of
// one virtual stage for one micro-batch are each layer kind's layer time
// times its layers on the stage (the first recompute_layers of them with the
// plan's recompute, the rest plain; Megatron-LM's block method), plus the
// embedding, the output layer and loss and the MTP modules on the stages that
// hold them, plus the schedule's host work per pass, bound by the host
// (Megatron-LM synchronises at every pipeline send/receive). Also the
// pipeline's p2p transfer (Narayanan et al. 2021, sec. 4.1) and the memo of
// passes a phase shares (StagePassMemo).
#include <algorithm>

#include "estimate/estimate_parts.h"
#include "job/stage_layout.h"

namespace lostflops {

namespace {

// A micro-batch after the step's first issues its embedding's operators
// before the check (LayerTime::pre_sync_host_s) once the host is done with
// the one before, while the GPU may still run that one's backward: the
// check's copy waits for the GPU either way, so those operators cost the
// GPU only what outlasts its tail, max(0, p - (GPU end - host end)). The
// pass times hold the mean micro-batch: (m - 1) / m of the saving. Not
// where a layer synchronises as well (expert loops: the host's end is
// inside their stretches).
void hide_next_embedding(const PassSetup& s, int64_t m, PassTime& f, const PassTime& b) {
    const double embed_wait = s.embed.fwd.sync_s;
    if (b.sync_s > 0 || f.sync_s > embed_wait) return;
    const double host_end = f.cpu_s + b.cpu_s;
    const double gpu_end = f.total_s() - embed_wait + b.total_s();
    const double hidden = std::min(s.embed.pre_sync_host_s, std::max(0.0, gpu_end - host_end));
    f.sync_s -= hidden * static_cast<double>(m - 1) / static_cast<double>(m);
}

void finish_pass(const Job& job, const PassSetup& s, bool embedding, bool loss, int mtp, StagePass& out) {
    PassTime& f = out.f;
    PassTime& b = out.b;
    if (embedding) {
        f += s.embed.fwd;
        b += s.embed.bwd;
        out.wgrad_s += s.embed.wgrad_s;
    }
    // Framework hf without a pipeline binds the host in order (below): the
    // output layer and loss, the forward's last piece, apart.
    const bool in_order = job.training.framework == Framework::hf && job.plan.pp == 1;
    PassTime head;
    if (loss) {
        (in_order ? head : f) += s.head.fwd;
        b += s.head.bwd;
        out.wgrad_s += s.head.wgrad_s;
    }
    if (mtp > 0) {
        f += s.mtp.fwd.scaled(mtp);
        b += s.mtp.bwd.scaled(mtp);
        out.wgrad_s += s.mtp.wgrad_s * mtp;
    }
    // The schedule's own host work per pass, then the GPU waits for
    // whichever of GPU and CPU is slower. Megatron-LM synchronises the
    // device at every pipeline send/receive (p2p_communication.py,
    // torch.cuda.synchronize() after batch_isend_irecv), so with
    // pp > 1 each pass is bound on its own; without a pipeline
    // nothing synchronises between passes and the host runs ahead
    // through a GPU-bound backward into the next forward, so forward
    // and backward are bound together.
    f.cpu_s += s.ho.microbatch_fwd * s.ctx.host_op_s;
    b.cpu_s += s.ho.microbatch_bwd * s.ctx.host_op_s + s.ctx.host_backward_call_s;
    const int64_t m = std::max<int64_t>(1, job.plan.micro_batches(job.training));
    if (s.ctx.host_step_s > 0) b.cpu_s += s.ctx.host_step_s / static_cast<double>(m);
    // The model's first layer is on the stage that holds the embedding.
    const double lead = embedding && job.training.framework == Framework::hf ? s.first_lead_wait_s : 0.0;
    if (job.plan.pp > 1) {
        f.bind_host();
        b.bind_host();
    } else if (s.ho.forward_syncs > 0) {
        // Each forward starts at a synchronisation (host_time.cpp): nothing
        // runs ahead into it, its first layer waits for the host
        // (LayerTime::lead_wait_s), and the backward comes after it.
        PassTime::bind_host_in_order(f, b, lead, &head);
        if (embedding && m > 1) hide_next_embedding(s, m, f, b);
    } else if (job.training.framework == Framework::hf) {
        // Without the check only the step's first micro-batch starts with no
        // lead (framework hf's loop synchronises every step); the others may
        // be issued while the one before runs its backward. The first's
        // extra wait, once a step, spread over the micro-batches' passes.
        // The step's first starts at the embedding: its operators before the
        // first layer's stretch, on an idle GPU (max(0, h_e - g_e + lead),
        // the flow shop's deficit with the embedding as its first piece).
        const double first_lead = embedding ? std::max(0.0, s.embed.fwd.cpu_s - s.embed.fwd.gpu_s() + lead) : 0.0;
        PassTime f1 = f, b1 = b;
        PassTime::bind_host_in_order(f1, b1, first_lead, &head);
        f += head;
        PassTime::bind_host_together(b, &f);
        const double extra = f1.total_s() + b1.total_s() - (f.total_s() + b.total_s());
        if (extra > 0) b.host_wait_s += extra / static_cast<double>(m);
    } else {
        PassTime::bind_host_together(b, &f);
    }
}

// The pass of a stage of several kinds: `counts(k, n, r)` gives kind k's
// layers on the stage (n) and those of them full recompute redoes (r).
template <class Counts>
StagePass stack_pass(const Job& job, const PassSetup& s, const VirtualStage& vs, int redo, Counts counts) {
    const bool full = job.plan.recompute == Recompute::full;
    StagePass out;
    out.layers = vs.layers;
    for (size_t k = 0; k < s.kind_time.size(); ++k) {
        int n = 0, r = 0;
        counts(static_cast<int>(k), n, r);
        if (n == 0) continue;
        const KindTime& t = s.kind_time[k];
        out.f += t.layer.fwd.scaled(n);
        out.wgrad_s += t.layer.wgrad_s * n;
        out.b += t.layer.bwd.scaled(r);
        if (r < n) out.b += t.layer_plain.bwd.scaled(n - r);
    }
    out.redone = full ? redo : vs.layers;
    finish_pass(job, s, vs.embedding, vs.loss, vs.mtp, out);
    return out;
}

}  // namespace

double p2p_time_s(const PlanContext& ctx, const Job& job) {
    if (job.plan.pp == 1) return 0;
    const ParallelPlan& p = job.plan;
    const double tokens = static_cast<double>(job.training.micro_batch) * job.training.seq_length / p.cp;
    // Megatron sends the sequence-parallel shard, or scatters the replicated
    // activation over the TP ranks and gathers it on NVLink (Narayanan et al.
    // 2021, sec. 4.1 "scatter/gather communication optimization").
    const double bytes = tokens * job.model.hidden * tensor_bytes(job.training.precision) / p.tp;
    // The slowest boundary sets the pace: any stage boundary across nodes.
    const Link& link = ctx.pp_link.nodes > 1 ? ctx.comm.inter : ctx.comm.intra;
    return link.latency_us * 1e-6 + bytes / (link.bandwidth_GBps * 1e9 * ctx.comm.cal->p2p_eff);
}

StagePass stage_pass_uniform(const Job& job, const PassSetup& s, int layers_n, bool embedding, bool loss, int mtp) {
    const ParallelPlan& p = job.plan;
    StagePass out;
    out.layers = layers_n;
    const double layers = layers_n;
    // Layers whose backward carries the plan's recompute (all of them
    // unless recompute_layers limits full recompute).
    const double redone = p.recompute == Recompute::full ? recomputed_of(p, layers_n) : layers;
    out.f = s.layer.fwd.scaled(layers);
    out.b = s.layer.bwd.scaled(redone);
    if (redone < layers) out.b += s.layer_plain.bwd.scaled(layers - redone);
    out.redone = redone;
    out.wgrad_s = s.layer.wgrad_s * layers;
    finish_pass(job, s, embedding, loss, mtp, out);
    return out;
}

StagePass stage_pass(const Job& job, const PassSetup& s, int rank, int chunk) {
    const VirtualStage vs = virtual_stage(job, rank, chunk);
    if (s.kind_time.empty()) return stage_pass_uniform(job, s, vs.layers, vs.embedding, vs.loss, vs.mtp);
    const LayerStack& st = *job.model.stack;
    const bool full = job.plan.recompute == Recompute::full;
    const int redo = recomputed_of(job.plan, vs.layers);
    return stack_pass(job, s, vs, redo, [&](int kind, int& n, int& r) {
        n = st.count_in(kind, vs.first, vs.first + vs.layers);
        r = n == 0 || !full ? n : st.count_in(kind, vs.first, vs.first + redo);
    });
}

bool StagePassMemo::Key::operator==(const Key& o) const {
    if (vs.layers != o.vs.layers || vs.embedding != o.vs.embedding || vs.loss != o.vs.loss || vs.mtp != o.vs.mtp ||
        redo != o.redo || kinds != o.kinds)
        return false;
    for (int k = 0; k < kinds; ++k)
        if (n[k] != o.n[k] || r[k] != o.r[k]) return false;
    return true;
}

const StagePass& StagePassMemo::get(const Job& job, const PassSetup& s, int rank, int chunk) {
    if (s.kind_time.size() > kKinds) {  // not memoised: the rule itself
        scratch_ = stage_pass(job, s, rank, chunk);
        return scratch_;
    }
    const VirtualStage at = virtual_stage(job, rank, chunk);
    Key key;
    key.vs = at;
    key.vs.first = 0;  // a pass depends on where it starts only through the counts below
    key.redo = recomputed_of(job.plan, at.layers);
    key.kinds = static_cast<int>(s.kind_time.size());
    if (key.kinds > 0) {
        const LayerStack& st = *job.model.stack;
        const bool full = job.plan.recompute == Recompute::full;
        for (int k = 0; k < key.kinds; ++k) {
            const int n = st.count_in(k, at.first, at.first + at.layers);
            key.n[k] = n;
            key.r[k] = n == 0 || !full ? n : st.count_in(k, at.first, at.first + key.redo);
        }
    }
    for (int i = 0; i < used_; ++i)
        if (keys_[i] == key) return passes_[i];
    const int i = used_ < kEntries ? used_++ : next_;
    next_ = (i + 1) % kEntries;
    keys_[i] = key;
    passes_[i] = key.kinds == 0
                     ? stage_pass_uniform(job, s, key.vs.layers, key.vs.embedding, key.vs.loss, key.vs.mtp)
                     : stack_pass(job, s, key.vs, key.redo, [&key](int kind, int& n, int& r) {
                           n = key.n[kind];
                           r = key.r[kind];
                       });
    return passes_[i];
}

}  // namespace lostflops
