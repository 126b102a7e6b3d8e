// The scaling curve: at each GPU count, the best plan of the whole search
// (include/lostflops/search.h, ranked by tokens/s per GPU) with the job's
// model, cluster and training, its parallel section ignored, exactly as
// `lostflops search JOB --gpus LIST` ranks a job without `parallel:`.
#include "explain/report_data.h"
#include "lostflops/job.h"
#include "lostflops/search.h"

#include <fmt/format.h>

namespace lostflops {

std::vector<ScalingPoint> scaling_curve(const JobSource& src, const Calibration& cal, const std::vector<int>& gpus,
                                        const std::function<void(double)>& progress) {
    std::vector<ScalingPoint> out;
    for (size_t i = 0; i < gpus.size(); ++i) {
        const int n = gpus[i];
        std::vector<std::string> o = src.overrides;
        o.push_back(fmt::format("cluster.num_gpus={}", n));
        const SearchJob sj = src.path.empty() ? default_search_job(o)
                                              : load_search_job(src.path, o, SearchJobPlan::ignore);
        SearchOptions opt;
        opt.sort_top = 1;
        opt.keep_best = 1;  // the best plan alone (the search then screens, search/screen_exact.h)
        opt.shape_ranks = 0;
        opt.threads = 2;  // the ranking does not depend on it (search.h)
        if (progress)
            opt.progress = [&progress, i, count = static_cast<double>(gpus.size())](double share) {
                progress((static_cast<double>(i) + share) / count);
            };
        const SearchResult r = search_plans(sj.job, cal, opt);
        ScalingPoint pt;
        pt.num_gpus = n;
        if (!r.ranked.empty()) {
            pt.best = plan_score(sj.job, r, r.ranked.front());
            pt.fits = true;
        }
        out.push_back(pt);
    }
    return out;
}

std::string plan_words(const ParallelPlan& p, int64_t micro_batch) {
    return fmt::format("tp {} pp {} vpp {} dp {}{}{} zero {} recompute {} mb {}", p.tp, p.pp, p.vpp, p.dp,
                       p.cp > 1 ? fmt::format(" cp {}", p.cp) : "", p.ep > 1 ? fmt::format(" ep {}", p.ep) : "", p.zero,
                       to_string(p.recompute), micro_batch);
}

}  // namespace lostflops
