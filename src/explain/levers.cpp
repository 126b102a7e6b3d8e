// The levers: single changes of the plan or the hardware, each evaluated by
// estimate() on the changed job, ranked by the MFU after the change.
//
// A change is a list of `--set` overrides added after the job's own and
// loaded exactly as `lostflops estimate --set ...` loads them (load_job with
// every check of job/validate.cpp), so mfu_after is what estimate prints for
// the same arguments. Candidates (each only where it applies): tp doubled
// within a node or halved, each other pipeline schedule, pp doubled or halved (with vpp kept, or 1), dp
// following from the GPU count; vpp doubled, halved or 1; every other ZeRO
// stage; every other recompute mode; the micro-batch doubled or halved;
// sequence parallelism, TP comm overlap and DP overlap toggled; a 2x faster
// inter-node network (same latency); the catalog GPU of the same architecture
// with the next larger memory; fp8 when the GPU has fp8 tensor cores; for a
// mixture-of-experts model, ep doubled or halved (dp kept), etp 1 or tp, each
// other token dispatcher and the dispatch / combine overlap toggled
// (moe_candidates below); for the eager PyTorch stacks torch.compile, CUDA
// graphs, the fused AdamW and no KV cache in training (use_cache=False).
// Kept: those that load, fit in memory and raise the MFU; ties by name.
#include <algorithm>
#include <optional>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "lostflops/pipeline_schedules.h"
#include "lostflops/catalog.h"
#include "lostflops/error.h"
#include "lostflops/explain.h"
#include "lostflops/framework_rules.h"
#include "lostflops/job.h"
#include "lostflops/report.h"
#include "explain/lever_candidates.h"

namespace lostflops {

Job load_job_source(const JobSource& src, const std::vector<std::string>& extra) {
    std::vector<std::string> all = src.overrides;
    all.insert(all.end(), src.plan.begin(), src.plan.end());
    all.insert(all.end(), extra.begin(), extra.end());
    return src.path.empty() ? default_job(all) : load_job(src.path, all);
}

namespace {

using Candidate = LeverCandidate;

// The expert-parallel levers (README "Expert parallelism"; docs/moe.md): ep
// doubled or halved with dp kept (the loader checks that ep divides the
// experts and etp x ep divides tp x cp x dp, Megatron-Core's MoE parallel
// folding), etp 1 or tp, each other dispatcher (leaving DeepEP drops its own
// keys, moe_max_nodes and moe_fp8_dispatch, which other dispatchers refuse)
// and moe_a2a_overlap toggled where a layer pairs its all-to-all (the 1F1B
// family; DualPipe overlaps by schedule).
void moe_candidates(const Job& job, std::vector<Candidate>& out) {
    if (!job.model.is_moe()) return;
    const ParallelPlan& p = job.plan;
    out.push_back({fmt::format("ep {}", 2 * p.ep), {fmt::format("parallel.ep={}", 2 * p.ep)}});
    if (p.ep % 2 == 0) out.push_back({fmt::format("ep {}", p.ep / 2), {fmt::format("parallel.ep={}", p.ep / 2)}});
    if (p.tp > 1 && p.expert_tp() != 1) out.push_back({"etp 1", {"parallel.etp=1"}});
    if (p.tp > 1 && p.expert_tp() != p.tp)
        out.push_back({fmt::format("etp {}", p.tp), {fmt::format("parallel.etp={}", p.tp)}});
    if (p.ep * p.expert_tp() <= 1) return;  // no dispatch: the dispatcher and its overlap change nothing
    for (const MoeDispatcher d : {MoeDispatcher::alltoall, MoeDispatcher::allgather, MoeDispatcher::deepep}) {
        if (d == p.moe_dispatcher) continue;
        Candidate c{fmt::format("moe_dispatcher {}", to_string(d)),
                    {fmt::format("parallel.moe_dispatcher={}", to_string(d))}};
        if (p.moe_dispatcher == MoeDispatcher::deepep) {
            c.set.push_back("parallel.moe_max_nodes=null");
            c.set.push_back("parallel.moe_fp8_dispatch=null");
        }
        out.push_back(std::move(c));
    }
    if (standard_mapping(p))
        out.push_back({fmt::format("moe_a2a_overlap {}", p.moe_a2a_overlap ? "off" : "on"),
                       {fmt::format("parallel.moe_a2a_overlap={}", !p.moe_a2a_overlap)}});
}

std::vector<Candidate> candidates(const Job& job) {
    std::vector<Candidate> out;
    const ParallelPlan& p = job.plan;
    const Cluster& cl = job.cluster;
    const int gpn = std::min(cl.scaleup_gpus(), cl.num_gpus);  // the scale-up domain
    const auto layout = [&](int tp, int pp, int vpp) -> std::optional<Candidate> {
        const long long model_par = 1LL * tp * pp * p.cp;
        if (tp < 1 || pp < 1 || vpp < 1 || model_par > cl.num_gpus || cl.num_gpus % model_par != 0) return std::nullopt;
        const int dp = static_cast<int>(cl.num_gpus / model_par);
        Candidate c;
        std::vector<std::string> diff;
        if (tp != p.tp) diff.push_back(fmt::format("tp {}", tp));
        if (pp != p.pp) diff.push_back(fmt::format("pp {}", pp));
        if (vpp != p.vpp) diff.push_back(fmt::format("vpp {}", vpp));
        c.change = fmt::format("{} (dp {})", fmt::join(diff, ", "), dp);
        if (tp != p.tp) c.set.push_back(fmt::format("parallel.tp={}", tp));
        if (pp != p.pp) c.set.push_back(fmt::format("parallel.pp={}", pp));
        if (vpp != p.vpp) c.set.push_back(fmt::format("parallel.vpp={}", vpp));
        c.set.push_back(fmt::format("parallel.dp={}", dp));
        return c;
    };
    const auto push = [&](std::optional<Candidate> c) {
        if (c) out.push_back(std::move(*c));
    };
    if (p.tp * 2 <= gpn) push(layout(p.tp * 2, p.pp, p.vpp));
    if (p.tp % 2 == 0) push(layout(p.tp / 2, p.pp, p.vpp));
    push(layout(p.tp, p.pp * 2, p.vpp));
    if (p.vpp > 1) push(layout(p.tp, p.pp * 2, 1));
    if (p.pp % 2 == 0) {
        push(layout(p.tp, p.pp / 2, p.pp / 2 == 1 ? 1 : p.vpp));
        if (p.vpp > 1 && p.pp / 2 > 1) push(layout(p.tp, p.pp / 2, 1));
    }
    if (p.pp > 1) {
        push(layout(p.tp, p.pp, p.vpp * 2));
        if (p.vpp % 2 == 0 && p.vpp > 2) push(layout(p.tp, p.pp, p.vpp / 2));
        if (p.vpp > 1) push(layout(p.tp, p.pp, 1));
    }
    if (p.pp > 1) {  // the other pipeline schedules (lostflops/pipeline_schedules.h) at the vpp each runs
        for (const ScheduleInfo& si : kSchedules) {
            if (one_f_one_b_family(si.id) || si.id == effective_schedule(p)) continue;
            Candidate c{fmt::format("pipeline_schedule {}", si.name),
                        {fmt::format("parallel.pipeline_schedule={}", si.name)}};
            if (si.vpp != 0 && si.vpp != p.vpp) c.set.push_back(fmt::format("parallel.vpp={}", si.vpp));
            out.push_back(std::move(c));
        }
        if (!one_f_one_b_family(effective_schedule(p))) {
            const char* name = schedule_info(kDefaultSchedule).name;  // the 1F1B family at vpp 1
            out.push_back({fmt::format("pipeline_schedule {}", name),
                           {fmt::format("parallel.pipeline_schedule={}", name), "parallel.vpp=1"}});
        }
    }
    if (1LL * p.dp * p.cp > 1) {
        for (int z = 0; z <= 3; ++z)
            if (z != p.zero) out.push_back({fmt::format("zero {}", z), {fmt::format("parallel.zero={}", z)}});
        out.push_back({fmt::format("overlap_grad_reduce {}", p.overlap_grad_reduce ? "off" : "on"),
                       {fmt::format("parallel.overlap_grad_reduce={}", !p.overlap_grad_reduce)}});
    }
    for (const Recompute r : {Recompute::none, Recompute::selective, Recompute::full}) {
        if (r == p.recompute && (r != Recompute::full || p.recompute_layers < 0)) continue;
        Candidate c{fmt::format("recompute {}", to_string(r)), {fmt::format("parallel.recompute={}", to_string(r))}};
        if (p.recompute_layers >= 0) c.set.push_back("parallel.recompute_layers=null");
        out.push_back(std::move(c));
    }
    const Training& t = job.training;
    if (t.global_batch % (2LL * p.dp * t.micro_batch) == 0)
        out.push_back({fmt::format("micro_batch_size {}", 2 * t.micro_batch),
                       {fmt::format("training.micro_batch_size={}", 2 * t.micro_batch)}});
    if (t.micro_batch % 2 == 0)
        out.push_back({fmt::format("micro_batch_size {}", t.micro_batch / 2),
                       {fmt::format("training.micro_batch_size={}", t.micro_batch / 2)}});
    // One micro-batch per step (a one-GPU job, typically): a larger one
    // needs a larger global batch, the usual cure of a host-bound step.
    if (t.global_batch == static_cast<int64_t>(p.dp) * t.micro_batch)
        out.push_back({fmt::format("micro_batch_size {} (global batch {})", 2 * t.micro_batch, 2 * t.global_batch),
                       {fmt::format("training.micro_batch_size={}", 2 * t.micro_batch),
                        fmt::format("training.global_batch_size={}", 2 * t.global_batch)}});
    // The eager PyTorch stacks' host and element-wise levers.
    const bool eager = t.framework == Framework::hf || t.framework == Framework::fsdp;
    if (eager && !t.compile && !t.xla) out.push_back({"torch.compile", {"training.compile=true"}});
    // CUDA graphs as a transformers user gets them (spec.h Training::cuda_graphs).
    if (t.framework == Framework::hf && !t.cuda_graphs && !t.xla && p.zero < 3)
        out.push_back({"CUDA graphs (torch.compile mode=\"reduce-overhead\")",
                       {"training.compile=true", "training.cuda_graphs=true"}});
    if (t.optimizer_kernel == OptimizerKernel::foreach)
        out.push_back({"fused AdamW (fused=True)", {"training.optimizer_kernel=fused"}});
    // transformers' KV cache in the training forward (spec.h Training::use_cache).
    if (t.use_cache && !t.compile)
        out.push_back({"no KV cache in training (use_cache=False)", {"training.use_cache=false"}});
    // A priced data loader: twice its workers (two where it has none), the
    // DataLoader's num_workers (estimate/data_loader.cpp).
    if (t.data_loader_s_per_sequence > 0) {
        const int w = std::max(2, 2 * t.data_loader_workers);
        out.push_back({fmt::format("data_loader_workers {}", w), {fmt::format("training.data_loader_workers={}", w)}});
    }
    if (p.tp > 1) {
        out.push_back({fmt::format("sequence_parallel {}", p.sequence_parallel ? "off" : "on"),
                       {fmt::format("parallel.sequence_parallel={}", !p.sequence_parallel)}});
        out.push_back({fmt::format("tp_comm_overlap {}", p.tp_comm_overlap ? "off" : "on"),
                       {fmt::format("parallel.tp_comm_overlap={}", !p.tp_comm_overlap)}});
    }
    if (cl.num_gpus > gpn) {
        const double bw = 2 * cl.inter_node.bandwidth_GBps;
        out.push_back({fmt::format("2x faster inter-node network ({:g} GB/s per GPU)", bw),
                       {fmt::format("cluster.inter_node={{bandwidth_GBps: {}, latency_us: {}}}", bw,
                                    cl.inter_node.latency_us)}});
    }
    std::optional<Gpu> bigger;
    std::string bigger_name;
    for (const std::string& name : gpu_names()) {
        const auto g = find_gpu(name);
        if (!g || g->arch != cl.gpu.arch || g->memory_bytes <= cl.gpu.memory_bytes) continue;
        if (!bigger || g->memory_bytes < bigger->memory_bytes) {
            bigger = g;
            bigger_name = name;
        }
    }
    if (bigger)
        out.push_back({fmt::format("GPU {} ({:.0f} GiB, {:g} GB/s HBM)", bigger_name,
                                   bigger->memory_bytes / (1024.0 * 1024 * 1024), bigger->hbm_GBps),
                       {"cluster.gpu=" + bigger_name}});
    if (cl.gpu.peak_fp8_tflops > 0 && t.precision != Precision::fp8)
        out.push_back({"fp8 training", {"training.precision=fp8"}});
    // fp32 training (no --bf16): bf16 mixed precision, attention as the job's auto would pick it.
    // Under framework hf attention is the model's (hf_attention.h hf_attention_keeps_scores): the precision alone.
    if (t.precision == Precision::fp32 && cl.gpu.peak_bf16_tflops > 0)
        out.push_back(t.framework == Framework::hf
                          ? Candidate{"bf16 mixed precision", {"training.precision=bf16"}}
                          : Candidate{"bf16 mixed precision", {"training.precision=bf16", "training.attention=flash"}});
    moe_candidates(job, out);
    return out;
}

// A lever's --set arguments where the plan is the search's (JobSource::plan):
// the plan's, less the keys the change sets again, then the change's. Loaded
// after the command line's own --set, they give the lever's figures (the
// same job load_job_source(src, change) loads) without a search.
std::vector<std::string> with_plan(const std::vector<std::string>& plan, const std::vector<std::string>& change) {
    const auto key = [](const std::string& set) { return set.substr(0, set.find('=')); };
    std::vector<std::string> out;
    for (const std::string& p : plan)
        if (std::none_of(change.begin(), change.end(), [&](const std::string& c) { return key(c) == key(p); }))
            out.push_back(p);
    out.insert(out.end(), change.begin(), change.end());
    return out;
}

}  // namespace

std::vector<LeverCandidate> lever_candidates(const Job& job) { return candidates(job); }

std::optional<Job> candidate_job(const JobSource& src, const LeverCandidate& c, const Job& job) {
    try {
        Job changed = load_job_source(src, c.set);
        if (breaks_beyond(changed, job)) return std::nullopt;  // a plan the job's framework cannot launch
        return changed;
    } catch (const InputError&) {
        return std::nullopt;  // the plan the change makes is not valid for this job
    }
}

std::vector<std::string> lever_set_with_plan(const std::vector<std::string>& plan,
                                             const std::vector<std::string>& change) {
    return with_plan(plan, change);
}

std::vector<Lever> mfu_levers(const JobSource& src, const Job& job, const Calibration& cal, const Estimate& e,
                              int count) {
    std::vector<Lever> levers;
    for (Candidate& c : candidates(job)) {
        const std::optional<Job> loaded = candidate_job(src, c, job);
        if (!loaded) continue;
        const Job& changed = *loaded;
        Estimate after;
        try {
            after = estimate(changed, cal);
        } catch (const InputError&) {
            continue;  // the profile cannot price the change (fp8 on a family without fp8 GEMM measurements)
        }
        if (!after.memory.fits || !(after.mfu > e.mfu)) continue;
        levers.push_back(Lever{std::move(c.change), with_plan(src.plan, c.set), after.mfu, after.step_time_s,
                               after.tokens_per_s_per_gpu});
    }
    std::stable_sort(levers.begin(), levers.end(), [](const Lever& a, const Lever& b) {
        return a.mfu_after != b.mfu_after ? a.mfu_after > b.mfu_after : a.change < b.change;
    });
    if (count >= 0 && levers.size() > static_cast<size_t>(count)) levers.resize(static_cast<size_t>(count));
    return levers;
}

Explanation explain(const JobSource& src, const Calibration& cal) {
    const Job job = load_job_source(src);
    return explain(src, job, cal, estimate(job, cal));
}

Explanation explain(const JobSource& src, const Job& job, const Calibration& cal, const Estimate& e) {
    Explanation x;
    x.job_name = job.name;
    x.mfu = e.mfu;
    x.step_time_s = e.step_time_s;
    x.peak_tflops = job.cluster.gpu.peak_tflops(job.training.precision);
    x.ideal_s = e.model_flops_per_step / (job.cluster.num_gpus * x.peak_tflops * 1e12);
    x.fits = e.memory.fits;
    x.peak_bytes = e.memory.peak_bytes;
    x.capacity_bytes = e.memory.capacity_bytes;
    x.waterfall = mfu_waterfall(job, cal, e);
    x.levers = mfu_levers(src, job, cal, e);
    x.experts = expert_walls_view(src, job, cal, e);
    x.warnings = estimate_warnings(job, collective_curves(job, cal));
    return x;
}

}  // namespace lostflops
