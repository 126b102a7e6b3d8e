// The parts every export shares (export_launch.h): the header that tells the
// plan from the user's part, torchrun's options for the job's nodes, and the
// token budget in whole steps.
#include "interop/export_launch.h"

#include <cmath>
#include <limits>
#include <sstream>

#include <fmt/format.h>

#include "interop/job_draft.h"
#include "lostflops/error.h"
#include "job/human_format.h"

namespace lostflops::interop {

namespace {

// The c10d rendezvous port when an endpoint names none (PyTorch's elastic
// quickstart, docs/source/elastic/quickstart.rst: "If no port number is
// specified HOST_NODE_ADDR defaults to 29400"), written out so that the
// user sees where it goes.
constexpr int kRendezvousPort = 29400;

// A sentence as comment lines of at most 88 characters, "# " then "#   ".
std::string wrapped(const std::string& sentence) {
    constexpr size_t kWidth = 88;
    std::string out, line = "#";
    std::istringstream words(sentence);
    for (std::string w; words >> w;) {
        if (line.size() + 1 + w.size() > kWidth && line.size() > 4) {
            out += line + "\n";
            line = "#  ";
        }
        line += " " + w;
    }
    return out + line + "\n";
}

}  // namespace

std::string line_text(const ExportLine& l) {
    if (!l.yours.empty()) return l.text + "  " + kYours + ": " + l.yours;
    if (!l.remark.empty()) return l.text + "  # " + l.remark;
    return l.text;
}

TorchrunShape torchrun_shape(const Job& job) {
    const int gpus = job.cluster.num_gpus;
    const int per_node = std::max(1, job.cluster.gpus_per_node);
    if (gpus <= per_node) return {1, gpus};
    if (gpus % per_node != 0)
        throw InputError(job.source, "cluster.num_gpus",
                         fmt::format("{} GPUs are not whole nodes of {} (cluster.gpus_per_node): torchrun starts the "
                                     "same --nproc-per-node on every node; give a multiple of {}",
                                     gpus, per_node, per_node));
    return {gpus / per_node, per_node};
}

std::vector<ExportLine> torchrun_options(const Job& job) {
    const TorchrunShape s = torchrun_shape(job);
    if (s.nodes == 1) return {{"--standalone"}, {"--nproc-per-node " + std::to_string(s.per_node)}};
    return {{"--nnodes " + std::to_string(s.nodes)},
            {"--nproc-per-node " + std::to_string(s.per_node)},
            {"--rdzv-backend c10d"},
            {fmt::format("--rdzv-endpoint HOST:{}", kRendezvousPort),
             fmt::format("the address of one of the {} nodes, the same on all", s.nodes)}};
}

std::string torchrun_line(const Job& job) {
    std::string s = "torchrun";
    for (const ExportLine& l : torchrun_options(job)) s += " " + l.text;
    return s;
}

std::string export_header(const Job& job, const std::string& kind, const std::string& plan, const std::string& yours,
                          const std::string& defaults, const std::vector<std::string>& launch) {
    std::string nodes;
    if (kind != "maxtext")
        if (const TorchrunShape s = torchrun_shape(job); s.nodes > 1) nodes = fmt::format(", {} nodes of {}", s.nodes, s.per_node);
    // Names are user text: escaped so that a newline in one cannot end the comment.
    std::string h = "# " + comment_text(job.name) + ": " + std::to_string(job.cluster.num_gpus) + " x " +
                    comment_text(job.cluster.gpu.name) + nodes + " (lostflops export " + kind + ")\n#\n";
    h += wrapped("lostflops's plan: every line without a mark: " + plan + ", as it priced them.");
    h += wrapped("Yours: every UPPERCASE placeholder marked \"" + std::string(kYours) + "\": " + yours +
                 ". One left as it is stops the launch with an error rather than train on a default.");
    h += wrapped(defaults);
    if (!launch.empty()) h += "#\n";
    for (const std::string& l : launch) h += "# " + l + "\n";
    return h;
}

std::optional<WholeCount> whole_count(double tokens, double per_unit) {
    if (tokens <= 0 || per_unit <= 0) return std::nullopt;
    WholeCount c;
    c.exact = tokens / per_unit;
    // A quotient a rounding error (a few ulp) away from a whole number is that number.
    const double whole = std::round(c.exact);
    if (std::abs(c.exact - whole) <= 4 * std::numeric_limits<double>::epsilon() * std::max(1.0, whole)) c.exact = whole;
    c.count = static_cast<int64_t>(std::ceil(c.exact));
    return c;
}

std::string rounded_remark(const WholeCount& c, const char* unit) {
    if (!c.rounded()) return "";
    return fmt::format("training.train_tokens is {:.2f} {}: rounded up to {}", c.exact, unit, grouped(static_cast<double>(c.count)));
}

bool moe_fp8_dispatch_priced(const Job& job) {
    const ParallelPlan& p = job.plan;
    return job.model.is_moe() && p.ep > 1 && p.moe_dispatcher == MoeDispatcher::deepep && p.moe_fp8_dispatch &&
           job.training.precision == Precision::fp8;
}

}  // namespace lostflops::interop
