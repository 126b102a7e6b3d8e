// Reading user files: what the path is (regular file, standard input, or
// something that cannot be read safely), a size bound enforced while reading
// (never trusting a size the file system reports), and "is this text at all".
// Shared by every parser of user input. Throws InputError; never hangs on a
// device or a named pipe, never reads more than max_bytes + 1 bytes.
#pragma once

#include <cstddef>
#include <string>

namespace lostflops {

// Size limits of the readers (bytes). Each bounds memory as well as time: the
// parsers hold a small multiple of the text (yaml-cpp nodes, nlohmann values).
inline constexpr std::size_t kMaxJobBytes = 1u << 20;          // a job or config.json: a few KB
inline constexpr std::size_t kMaxCalibrationBytes = 4u << 20;  // profile with nccl curves: tens of KB
inline constexpr std::size_t kMaxTableBytes = 4u << 20;        // run tables (CSV): a few KB
inline constexpr std::size_t kMaxBenchOutputBytes = 32u << 20; // nccl-tests logs: ~1 KB per size row
inline constexpr std::size_t kMaxSummaryBytes = 64u << 20;     // trace summaries: ~1 KB per rank

// "-" means standard input; its name in messages is this.
inline constexpr const char* kStdinName = "<stdin>";

// InputError unless `path` names something readable as a file: "-" (standard
// input) or a regular file, after following symbolic links. Says what it is
// otherwise: missing, a dangling link, a link loop, a directory, a named pipe,
// a device, a socket. `what` names the expected content ("job file").
void check_input_path(const std::string& path, const std::string& what);

// Whole file (or standard input for "-") as bytes, at most max_bytes;
// InputError naming the limit when there are more. A leading UTF-8
// byte-order mark is dropped.
std::string read_file_bounded(const std::string& path, std::size_t max_bytes, const std::string& what);

// read_file_bounded + check_text.
std::string read_text_file(const std::string& path, std::size_t max_bytes = kMaxJobBytes,
                           const std::string& what = "file");

// Name of `path` in messages: kStdinName for "-", else the path.
std::string input_name(const std::string& path);

// InputError if `text` is empty (or only whitespace) or binary (NUL bytes,
// invalid UTF-8, control characters other than tab/CR/LF).
void check_text(const std::string& text, const std::string& source);
// The bytes alone (a --set value): InputError(source, "line N") on a control
// byte or ill-formed UTF-8 (overlong, surrogate, beyond U+10FFFF).
void check_text_bytes(const std::string& text, const std::string& source);

}  // namespace lostflops
