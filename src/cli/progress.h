// Progress on standard error for work that may take over a second (a
// search for the advice of a plan that does not fit, the scaling curve of
// `report --gpus`). On a terminal: after one second, one line rewritten in
// place ("estimate: searching the plans that fit: 42 %, about 8 s left");
// otherwise one line every kPlainEvery seconds. Nothing with --quiet
// (g_quiet). Standard output is never touched, so results stay the same.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>

namespace lostflops::cli {

// --quiet (a global flag, main.cpp): no progress lines.
extern bool g_quiet;

// The text of one progress line: `what`, then the share done and the time
// left, estimated as elapsed x (1 - share) / share, when the share is known
// (share in (0, 1]), else the time elapsed: "search: 42 %, about 8 s left",
// "search: 12 s". Times over two minutes in minutes ("about 3 min left").
std::string progress_line(const std::string& what, double share, double elapsed_s);

class Progress {
public:
    explicit Progress(std::string what);
    ~Progress();  // stops the reporter and clears a terminal's line
    Progress(const Progress&) = delete;
    Progress& operator=(const Progress&) = delete;
    // The share done, 0..1 (negative: unknown); from any thread.
    void set(double share) { share_.store(share); }
    // What the line says before the share (from any thread).
    void rename(std::string what);

private:
    void run();
    std::string what_;
    std::atomic<double> share_{-1};
    bool tty_ = false;
    bool printed_ = false;
    std::chrono::steady_clock::time_point start_;
    std::mutex mutex_;
    std::condition_variable wake_;
    bool stop_ = false;
    std::thread thread_;
};

}  // namespace lostflops::cli
