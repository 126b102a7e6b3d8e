// The report's four charts as SVG elements (explain/svg.h), from values
// computed elsewhere: the MFU waterfall, the roofline, the pipeline timeline
// of one step and the memory per pipeline rank. Colours are CSS classes that
// html_report.cpp's stylesheet defines for light, dark and print. Internal.
#pragma once

#include <string>
#include <vector>

#include "explain/report_data.h"
#include "lostflops/explain.h"

namespace lostflops {

std::string waterfall_svg(const Explanation& x);
std::string roofline_svg(const Roofline& r);
// The first `window_s` seconds of the step (the whole step when window_s <= 0
// or beyond it), as the SVG element `id`.
std::string timeline_svg(const StepTimeline& t, double window_s, const std::string& id, const std::string& title);
std::string memory_svg(const std::vector<Memory>& ranks);
// Allocated memory over the step per rank (at most 8 ranks drawn: the first,
// the last and those between at even steps), the usable line, and a measured
// timeline over them when given (allocated solid, reserved dashed).
std::string memory_time_svg(const std::vector<MemoryCurve>& curves, double usable_bytes, double step_s,
                            const MeasuredMemory& measured = {});
std::string scaling_svg(const std::vector<ScalingPoint>& points, int job_gpus, double job_tokens_per_s_per_gpu);

// The report pages' stylesheet (light, dark and print; html_report.cpp).
const char* report_css();
// `table` (a <table> element) in a container that scrolls sideways when the
// page is narrower than the table, so that the page itself never does; a
// keyboard-focusable region named by the table's caption (html_report.cpp).
std::string scroll_table(const std::string& table);

// Round step for about `target` ticks over `range` (1, 2 or 5 times a power of
// ten); always positive: 1 for a range that is not positive, the range itself
// for one too small to divide. Throws std::invalid_argument for an infinite
// range, which no step could walk (charts loop from 0 to their maximum by it).
double nice_step(double range, int target);

}  // namespace lostflops
