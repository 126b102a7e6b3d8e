// A small SVG writer for the report's charts: shapes with CSS classes (the
// page's stylesheet colours them, so light and dark schemes and print work),
// a <title> and <desc> for each chart (role="img", aria-labelledby) and a
// <title> tooltip per shape. Coordinates in CSS pixels of the viewBox.
#pragma once

#include <string>
#include <vector>

namespace lostflops {

// &, <, >, " and ' as entities.
std::string xml_escape(const std::string& s);

class Svg {
public:
    Svg(std::string id, double width, double height, const std::string& title, const std::string& desc);
    void rect(double x, double y, double w, double h, const std::string& cls, const std::string& tip = {});
    void line(double x1, double y1, double x2, double y2, const std::string& cls);
    void circle(double cx, double cy, double r, const std::string& cls, const std::string& tip = {});
    void polyline(const std::vector<std::pair<double, double>>& points, const std::string& cls);
    enum class Anchor { start, middle, end };
    void text(double x, double y, const std::string& s, const std::string& cls, Anchor a = Anchor::start);
    // The finished <svg> element.
    std::string str() const;

private:
    std::string id_;
    double width_, height_;
    std::string head_, body_;
};

}  // namespace lostflops
