// Text-file intake: the path's kind from stat(2) (POSIX: S_ISREG, S_ISDIR,
// S_ISFIFO, S_ISCHR, S_ISBLK, S_ISSOCK; ELOOP for a symbolic-link loop), a read
// bounded by max_bytes whatever size the file reports (devices and /proc files
// report 0, directories report garbage), and UTF-8 validation (RFC 3629
// well-formed sequences) so a binary file is reported as such instead of
// reaching a parser.
#include "job/text_input.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <iostream>

#include <fmt/format.h>

#include "lostflops/error.h"
#include "lostflops/terminal_text.h"

namespace lostflops {

std::string input_name(const std::string& path) { return path == "-" ? kStdinName : path; }

void check_input_path(const std::string& path, const std::string& what) {
    if (path == "-") return;
    if (path.empty()) throw InputError("", "", "empty file name; expected a " + what);
    // PATH_MAX (4096 on Linux, <limits.h>): a longer name cannot be opened;
    // it is named by its start, not echoed whole (issue 20: a 4 MB string).
    constexpr std::size_t kPathMax = 4096;
    if (path.size() >= kPathMax)
        throw InputError(path.substr(0, 60) + "...", "",
                         fmt::format("a file name of {} bytes, longer than PATH_MAX ({}); expected the path of a {}",
                                     path.size(), kPathMax, what));
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0) {
        const int err = errno;
        struct stat lst {};
        if (err == ELOOP) throw InputError(path, "", "symbolic link loop; expected a " + what);
        if (err == ENOENT && ::lstat(path.c_str(), &lst) == 0 && S_ISLNK(lst.st_mode))
            throw InputError(path, "", "dangling symbolic link (its target does not exist); expected a " + what);
        if (err == ENOENT) throw InputError(path, "", "no such file; expected a " + what);
        if (err == ENOTDIR) throw InputError(path, "", "a part of the path is not a directory; expected a " + what);
        throw InputError(path, "", fmt::format("cannot open: {}", std::strerror(err)));
    }
    const auto kind = [&]() -> const char* {
        if (S_ISREG(st.st_mode)) return nullptr;
        if (S_ISDIR(st.st_mode)) return "a directory";
        if (S_ISFIFO(st.st_mode)) return "a named pipe (FIFO)";
        if (S_ISCHR(st.st_mode)) return "a character device";
        if (S_ISBLK(st.st_mode)) return "a block device";
        if (S_ISSOCK(st.st_mode)) return "a socket";
        return "not a regular file";
    }();
    if (kind)
        throw InputError(path, "", fmt::format("is {}; expected a {} (a regular file{})", kind, what,
                                               S_ISFIFO(st.st_mode) ? "; to read a pipe, give '-' where the "
                                                                      "command reads standard input" : ""));
}

std::string read_file_bounded(const std::string& path, std::size_t max_bytes, const std::string& what) {
    check_input_path(path, what);
    const std::string name = input_name(path);
    std::ifstream file;
    std::istream* in = &std::cin;
    if (path != "-") {
        file.open(path, std::ios::binary);
        if (!file) throw InputError(name, "", fmt::format("cannot open: {}", std::strerror(errno)));
        in = &file;
    }
    std::string text;
    char buf[1 << 16];
    while (*in) {
        in->read(buf, sizeof buf);
        const auto got = static_cast<std::size_t>(in->gcount());
        if (text.size() + got > max_bytes)
            throw InputError(name, "", fmt::format("more than {} bytes ({} MiB); a {} is far smaller — is this the right file?",
                                                   max_bytes, max_bytes >> 20, what));
        text.append(buf, got);
    }
    if (in->bad()) throw InputError(name, "", "read error");
    // A UTF-8 byte-order mark (U+FEFF, written by some Windows editors) is
    // not content (Unicode 15, section 23.8): dropped for every reader.
    if (text.compare(0, 3, "\xEF\xBB\xBF") == 0) text.erase(0, 3);
    return text;
}

std::string read_text_file(const std::string& path, std::size_t max_bytes, const std::string& what) {
    std::string text = read_file_bounded(path, max_bytes, what);
    check_text(text, input_name(path));
    return text;
}

void check_text(const std::string& text, const std::string& source) {
    if (text.find_first_not_of(" \t\r\n") == std::string::npos)
        throw InputError(source, "", text.empty() ? "file is empty" : "file holds only white space");
    check_text_bytes(text, source);
}

void check_text_bytes(const std::string& text, const std::string& source) {
    size_t line = 1;
    for (size_t i = 0; i < text.size();) {
        const auto c = static_cast<unsigned char>(text[i]);
        if (c == '\n') ++line;
        if (c < 0x80) {
            if (c < 0x20 && c != '\t' && c != '\n' && c != '\r')
                throw InputError(source, fmt::format("line {}", line),
                                 fmt::format("binary data (control byte 0x{:02x}); expected a text file", c));
            ++i;
            continue;
        }
        // Well-formed sequences only (utf8_length: no overlong forms, no
        // surrogates, nothing above U+10FFFF). The JSON writer refuses what
        // a lead-byte check lets through (an internal error, exit 3).
        const size_t n = utf8_length(reinterpret_cast<const unsigned char*>(text.data()) + i, text.size() - i);
        if (n == 0)
            throw InputError(source, fmt::format("line {}", line), "binary data (invalid UTF-8); expected a text file");
        i += n;
    }
}

}  // namespace lostflops
