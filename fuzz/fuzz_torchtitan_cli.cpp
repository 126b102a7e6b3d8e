// libFuzzer entry point for the torchtitan launch-command reader
// (interop/torchtitan_command: the launch line through the shell evaluator,
// --module/--config or a TOML base, tyro's --section.key overrides) and the
// import on top of it. The input's first line is appended to a torchrun
// launch of torchtitan.train (so that the options are what the fuzzer
// varies), the rest of the input is script lines before it; the whole input
// is also imported as it is. Any bytes give a job file or an InputError; the
// job file must be YAML with no control characters, and, loaded, export back
// to a torchtitan TOML with none either. No file is read: the script has no
// folder (--job.config_file is refused).
// Seeds: tests/data/interop/torchtitan-cli.
#include <cstddef>
#include <cstdint>
#include <string>

#include "fuzz_check.h"
#include "lostflops/error.h"
#include "lostflops/interop.h"
#include "lostflops/job.h"

namespace {

void import_and_export(const std::string& script) {
    lostflops::ImportResult r;
    try {
        r = lostflops::import_torchtitan(script, "<fuzz>", {});
    } catch (const lostflops::InputError&) {
        return;
    }
    lostflops::fuzz::check_written_text(r.job_yaml, "import torchtitan (command line)", true);
    try {
        const lostflops::Job job = lostflops::parse_job(r.job_yaml, "<imported>", {"cluster.preset=dgx-h100"});
        lostflops::fuzz::check_written_text(lostflops::export_torchtitan(job).text, "export torchtitan", false);
    } catch (const lostflops::InputError&) {
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const std::string text(reinterpret_cast<const char*>(data), size);
    const size_t nl = text.find('\n');
    const std::string first = text.substr(0, nl);
    const std::string rest = nl == std::string::npos ? "" : text.substr(nl + 1);
    import_and_export(rest + "\ntorchrun --nproc-per-node 8 -m torchtitan.train " + first + "\n");
    import_and_export(text);
    return 0;
}
