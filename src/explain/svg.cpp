// Minimal SVG 1.1 writer (W3C SVG 1.1, sec. 9 basic shapes, 10 text) with
// the accessibility pattern of W3C "SVG Accessibility API Mappings": role="img",
// aria-labelledby pointing at the chart's <title> and <desc>. Numbers are
// written with two decimals, so the same input gives the same bytes.
#include "explain/svg.h"

#include <fmt/format.h>

namespace lostflops {

std::string xml_escape(const std::string& s) {
    std::string out;
    out.reserve(s.size());
    for (const char c : s) {
        switch (c) {
            case '&': out += "&amp;"; break;
            case '<': out += "&lt;"; break;
            case '>': out += "&gt;"; break;
            case '"': out += "&quot;"; break;
            case '\'': out += "&#39;"; break;
            default: out += c;
        }
    }
    return out;
}

namespace {

std::string tip_of(const std::string& tip) {
    return tip.empty() ? std::string() : "<title>" + xml_escape(tip) + "</title>";
}

}  // namespace

Svg::Svg(std::string id, double width, double height, const std::string& title, const std::string& desc)
    : id_(std::move(id)), width_(width), height_(height) {
    head_ = fmt::format("<title id=\"{0}-title\">{1}</title><desc id=\"{0}-desc\">{2}</desc>", id_, xml_escape(title),
                        xml_escape(desc));
}

void Svg::rect(double x, double y, double w, double h, const std::string& cls, const std::string& tip) {
    const std::string t = tip_of(tip);
    body_ += fmt::format("<rect class=\"{}\" x=\"{:.2f}\" y=\"{:.2f}\" width=\"{:.2f}\" height=\"{:.2f}\"", cls, x, y,
                         w < 0 ? 0.0 : w, h < 0 ? 0.0 : h);
    body_ += t.empty() ? "/>" : ">" + t + "</rect>";
}

void Svg::line(double x1, double y1, double x2, double y2, const std::string& cls) {
    body_ += fmt::format("<line class=\"{}\" x1=\"{:.2f}\" y1=\"{:.2f}\" x2=\"{:.2f}\" y2=\"{:.2f}\"/>", cls, x1, y1, x2,
                         y2);
}

void Svg::circle(double cx, double cy, double r, const std::string& cls, const std::string& tip) {
    const std::string t = tip_of(tip);
    body_ += fmt::format("<circle class=\"{}\" cx=\"{:.2f}\" cy=\"{:.2f}\" r=\"{:.2f}\"", cls, cx, cy, r);
    body_ += t.empty() ? "/>" : ">" + t + "</circle>";
}

void Svg::polyline(const std::vector<std::pair<double, double>>& points, const std::string& cls) {
    std::string pts;
    for (const auto& [x, y] : points) pts += fmt::format("{}{:.2f},{:.2f}", pts.empty() ? "" : " ", x, y);
    body_ += fmt::format("<polyline class=\"{}\" points=\"{}\"/>", cls, pts);
}

void Svg::text(double x, double y, const std::string& s, const std::string& cls, Anchor a) {
    const char* anchor = a == Anchor::start ? "start" : a == Anchor::middle ? "middle" : "end";
    body_ += fmt::format("<text class=\"{}\" x=\"{:.2f}\" y=\"{:.2f}\" text-anchor=\"{}\">{}</text>", cls, x, y, anchor,
                         xml_escape(s));
}

std::string Svg::str() const {
    return fmt::format("<svg xmlns=\"http://www.w3.org/2000/svg\" id=\"{0}\" class=\"chart\" role=\"img\" "
                       "aria-labelledby=\"{0}-title {0}-desc\" viewBox=\"0 0 {1:.0f} {2:.0f}\" width=\"{1:.0f}\" "
                       "height=\"{2:.0f}\" preserveAspectRatio=\"xMinYMin meet\">{3}{4}</svg>",
                       id_, width_, height_, head_, body_);
}

}  // namespace lostflops
