// Progress lines on standard error (progress.h): a reporter thread wakes
// every 0.2 s on a terminal (every kPlainEvery s otherwise) and prints the
// share done and the time left by linear extrapolation of the time elapsed,
// elapsed x (1 - share) / share.
#include "cli/progress.h"

#include <unistd.h>

#include <cstdio>

#include <fmt/format.h>

namespace lostflops::cli {

bool g_quiet = false;

namespace {

constexpr auto kTtyAfter = std::chrono::seconds(1);     // quiet for work shorter than this
constexpr auto kTtyEvery = std::chrono::milliseconds(200);
constexpr auto kPlainEvery = std::chrono::seconds(5);   // not a terminal: a line this often

std::string seconds_text(double s) {
    if (s >= 120) return fmt::format("{:.0f} min", s / 60);
    return fmt::format("{:.0f} s", s);
}

}  // namespace

std::string progress_line(const std::string& what, double share, double elapsed_s) {
    if (share > 0 && share <= 1)
        return fmt::format("{}: {:.0f} %, about {} left", what, 100 * share,
                           seconds_text(elapsed_s * (1 - share) / share));
    return fmt::format("{}: {}", what, seconds_text(elapsed_s));
}

Progress::Progress(std::string what) : what_(std::move(what)), start_(std::chrono::steady_clock::now()) {
    if (g_quiet) return;
    tty_ = isatty(fileno(stderr)) != 0;
    thread_ = std::thread([this] { run(); });
}

Progress::~Progress() {
    if (!thread_.joinable()) return;
    {
        std::lock_guard<std::mutex> lock(mutex_);
        stop_ = true;
    }
    wake_.notify_all();
    thread_.join();
    if (tty_ && printed_) std::fprintf(stderr, "\r\033[K");
}

void Progress::rename(std::string what) {
    std::lock_guard<std::mutex> lock(mutex_);
    what_ = std::move(what);
}

void Progress::run() {
    std::unique_lock<std::mutex> lock(mutex_);
    const auto first = tty_ ? kTtyAfter : std::chrono::duration_cast<std::chrono::milliseconds>(kPlainEvery);
    if (wake_.wait_for(lock, first, [this] { return stop_; })) return;
    const auto every = tty_ ? kTtyEvery : std::chrono::duration_cast<std::chrono::milliseconds>(kPlainEvery);
    do {
        const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
        const std::string line = progress_line(what_, share_.load(), elapsed);
        if (tty_) std::fprintf(stderr, "\r\033[K%s", line.c_str());
        else std::fprintf(stderr, "lostflops: %s\n", line.c_str());
        std::fflush(stderr);
        printed_ = true;
    } while (!wake_.wait_for(lock, every, [this] { return stop_; }));
}

}  // namespace lostflops::cli
