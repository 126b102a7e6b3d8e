// Issue 36 item 7: a job's name reaches every exported file as a comment
// escaped for that file's format (interop/job_draft.h comment_text), so that
// no byte of it can end the comment: the exports are parsed back by real
// parsers (PyYAML for MaxText's YAML, tomllib for torchtitan's TOML,
// `bash -n` for Megatron's launch script; each skipped where absent) and
// hold no key, table or command the name tried to inject.
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "interop/export_util.h"
#include "interop/maxtext_export.h"
#include "lostflops/interop.h"
#include "lostflops/job.h"
#include "test_util.h"

namespace lostflops {
namespace {

using test::python_has;
using test::run_on;

// Names as an attacker or a careless user writes them: line breaks of every
// kind (LF, CR, NEL, U+2028), terminal controls, bytes that are not UTF-8.
const std::vector<std::string>& hostile_names() {
    static const std::vector<std::string> names = {
        "demo\nbase_output_directory: gs://attacker-bucket\nrun_name: injected",
        "bell\a esc\x1b[31m cr\rrun_name: cr",
        "nel\xc2\x85run_name: nel",
        "ls\xe2\x80\xa8run_name: ls\xe2\x80\xa9ps",
        "bad\xff\xfe utf8 \xc3",
        "quotes \"'#\\ :{}[] $(touch INJECTED) `id`",
        "[injected]\nkey = 1",
    };
    return names;
}

Job job_named(const std::string& name, const std::vector<std::string>& set = {}) {
    Job job = parse_job(test::small_job_text(), "job.yaml", set);
    job.name = name;
    return job;
}

TEST(ExportEscape, MaxTextYamlReadsBackWithOnlyItsOwnKeys) {
    if (!python_has("yaml")) GTEST_SKIP() << "python3 with PyYAML is not installed";
    const std::string keys_of =
        "python3 -c 'import sys, yaml; d = yaml.safe_load(open(sys.argv[1], \"rb\")); print(\" \".join(sorted(d)))' {}";
    const std::string plain = run_on(keys_of, export_maxtext(job_named("plain")).text).second;
    ASSERT_NE(plain.find("ici_tensor_parallelism"), std::string::npos) << plain;
    for (const std::string& name : hostile_names()) {
        SCOPED_TRACE(name);
        const std::string yaml = export_maxtext(job_named(name)).text;
        const auto [code, keys] = run_on(keys_of, yaml);
        EXPECT_EQ(code, 0) << keys << yaml;  // before: not YAML with ESC, BEL or CR in the name
        EXPECT_EQ(keys, plain);               // before: base_output_directory and run_name injected
    }
}

TEST(ExportEscape, TorchtitanTomlReadsBackWithOnlyItsOwnTables) {
    if (!python_has("tomllib")) GTEST_SKIP() << "python3 with tomllib (3.11+) is not installed";
    const std::vector<std::string> set = {"model={preset: llama3-8b}", "training.framework=fsdp", "parallel.tp=1",
                                          "parallel.pp=1"};
    const std::string tables_of =
        "python3 -c 'import sys, tomllib; d = tomllib.load(open(sys.argv[1], \"rb\")); "
        "print(\" \".join(sorted(k + \".\" + j for k in d for j in d[k])))' {}";
    const std::string plain = run_on(tables_of, export_torchtitan(job_named("plain", set)).text).second;
    for (const std::string& name : hostile_names()) {
        SCOPED_TRACE(name);
        const std::string toml = export_torchtitan(job_named(name, set)).text;
        const auto [code, keys] = run_on(tables_of, toml);
        EXPECT_EQ(code, 0) << keys << toml;
        EXPECT_EQ(keys, plain);
    }
}

TEST(ExportEscape, MegatronScriptParsesAsOneCommand) {
    if (!test::have_bash()) GTEST_SKIP() << "bash is not installed";
    const auto lines = [](const std::string& s) { return std::count(s.begin(), s.end(), '\n'); };
    const std::string plain = export_megatron(job_named("plain")).text;
    for (const std::string& name : hostile_names()) {
        SCOPED_TRACE(name);
        const std::string script = export_megatron(job_named(name)).text;
        const auto [code, out] = run_on("bash -n {}", script);
        EXPECT_EQ(code, 0) << out << script;
        // The name stays on its line of the header, a comment: no line more.
        EXPECT_EQ(lines(script), lines(plain)) << script;
        EXPECT_EQ(script.substr(script.find("\ntorchrun ")), plain.substr(plain.find("\ntorchrun ")));
    }
}

}  // namespace
}  // namespace lostflops
