// Shared by the libFuzzer targets: an invariant that failed is a finding
// (abort, so libFuzzer saves the input), with what was expected on stderr.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <string>

#include "job/yaml_document.h"

namespace lostflops::fuzz {

[[noreturn]] inline void finding(const std::string& what) {
    std::fprintf(stderr, "fuzz invariant failed: %s\n", what.c_str());
    std::abort();
}

inline void require(bool ok, const std::string& what) {
    if (!ok) finding(what);
}

// Text a writer of lostflops produced (an imported job, an exported launch
// file): valid YAML when `yaml`, and no control character but a line break
// (one injected into a comment or a value would change what the file says).
inline void check_written_text(const std::string& text, const char* what, bool yaml) {
    for (char c : text)
        require(c == '\n' || (static_cast<unsigned char>(c) >= 0x20 && c != 0x7f),
                std::string(what) + ": a control character in the output");
    if (!yaml) return;
    try {
        (void)load_yaml_document(text, what);
    } catch (const std::exception& e) {
        finding(std::string(what) + " is not YAML: " + e.what());
    }
}

}  // namespace lostflops::fuzz
