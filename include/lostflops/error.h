// Error type of the whole library.
//
// Contract: the library never prints, exits or aborts. Anything wrong with the
// user's input (a job file, a trace, a benchmark output, a table) is thrown as
// InputError naming the file, the key or line, and what was expected; the CLI
// catches it, prints what() and exits with code 2 (1 for NoPlanFits, below).
// Bugs are not InputErrors.
#pragma once

#include <stdexcept>
#include <string>

namespace lostflops {

class InputError : public std::runtime_error {
public:
    // file: path as the user gave it ("--set EXPR" for command-line overrides);
    // key: dotted key ("parallel.tp") or "line N"; may be empty.
    InputError(std::string file, std::string key, const std::string& message)
        : std::runtime_error(compose(file, key, message)),
          file_(std::move(file)),
          key_(std::move(key)),
          message_(message) {}

    const std::string& file() const { return file_; }
    const std::string& key() const { return key_; }
    // What was wrong and what was expected, without file and key.
    const std::string& message() const { return message_; }

private:
    static std::string compose(const std::string& file, const std::string& key,
                               const std::string& message) {
        std::string out = file.empty() ? std::string("input") : file;
        if (!key.empty()) out += ": " + key;
        return out + ": " + message;
    }
    std::string file_;
    std::string key_;
    std::string message_;
};

// A job that leaves its plan to the search (no `parallel:` section, or
// `--best`) on GPUs where no plan its stack can launch fits in memory: the
// input is sound, the answer is "does not fit". The CLI exits 1 for it, as
// `search` does when no plan fits; callers that catch InputError still see it.
class NoPlanFits : public InputError {
public:
    using InputError::InputError;
};

}  // namespace lostflops
