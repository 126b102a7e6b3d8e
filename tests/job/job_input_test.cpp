// Job intake defects of issue 7: repeated keys, empty --set values, the
// wording of number and nesting errors, hf_config errors named from the job,
// errors of a --set reported as the --set's, and plausible hardware ranges.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <unistd.h>

#include <fmt/format.h>

#include <gtest/gtest.h>

#include "lostflops/error.h"
#include "lostflops/job.h"
#include "job/yaml_document.h"
#include "test_util.h"

namespace lostflops {
namespace {

using test::parse_error;
using test::small_job_text;

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// The InputError of parsing the small job with `overrides`; fails the test if none.
InputError error_of(const std::string& text, const std::vector<std::string>& overrides = {}) {
    try {
        parse_job(text, "job.yaml", overrides);
    } catch (const InputError& e) {
        return e;
    }
    ADD_FAILURE() << "parsed without error";
    return InputError("", "", "");
}

// 1-based line of the n-th (0-based) occurrence of `needle` in `text`.
int line_of(const std::string& text, const std::string& needle, int n) {
    size_t pos = 0;
    for (int i = 0; i <= n; ++i) pos = text.find(needle, i == 0 ? 0 : pos + 1);
    return 1 + static_cast<int>(std::count(text.begin(), text.begin() + static_cast<long>(pos), '\n'));
}

// The small job with its model section replaced by `model` (YAML lines, indented).
std::string with_model(const std::string& model) {
    std::string text = small_job_text();
    const auto from = text.find("model:\n");
    const auto to = text.find("cluster:\n");
    return text.replace(from, to - from, "model:\n" + model);
}

// A directory of its own under the temporary folder, removed at the end.
class TempDir {
public:
    TempDir() {
        static int counter = 0;
        path_ = std::filesystem::temp_directory_path() /
                ("lostflops_job_input_" + std::to_string(::getpid()) + "_" + std::to_string(counter++));
        std::filesystem::create_directories(path_);
    }
    ~TempDir() {
        std::error_code ec;
        std::filesystem::remove_all(path_, ec);
    }
    std::string write(const std::string& name, const std::string& content) const {
        const auto p = path_ / name;
        std::ofstream(p, std::ios::binary) << content;
        return p.string();
    }

private:
    std::filesystem::path path_;
};

// --- 1. Repeated keys -------------------------------------------------------

TEST(JobInput, DuplicateKeyIsAnErrorNamingTheKeyAndBothLines) {
    std::string text = small_job_text();
    const std::string first = "  hidden_size: 2048\n";
    text.insert(text.find(first) + first.size(), "  hidden_size: 8192\n");
    const InputError e = error_of(text);
    EXPECT_EQ(e.file(), "job.yaml");
    EXPECT_EQ(e.key(), "model.hidden_size");
    EXPECT_TRUE(has(e.message(), "line " + std::to_string(line_of(text, "hidden_size:", 0)))) << e.what();
    EXPECT_TRUE(has(e.message(), "line " + std::to_string(line_of(text, "hidden_size:", 1)))) << e.what();
}

TEST(JobInput, DuplicateKeyAtTopLevelAndInJson) {
    EXPECT_TRUE(has(parse_error("name: a\n" + small_job_text()), "name")) << "top-level name given twice";
    const std::string json = R"({"model": {"preset": "llama2-7b", "preset": "llama3-8b"}})";
    EXPECT_EQ(error_of(json).key(), "model.preset");
}

TEST(JobInput, DuplicateKeyInASetValueNamesTheSet) {
    const InputError e = error_of(small_job_text(), {"model={preset: llama2-7b, preset: llama3-8b}"});
    EXPECT_TRUE(has(e.file(), "--set model=")) << e.what();
    EXPECT_EQ(e.key(), "model.preset");
}

// The small job with `json` as its config.json is refused under
// model.hf_config, its message naming the config (`at` after its path) and
// each of `parts`.
void expect_hf_config_refused(const std::string& json, const std::string& at, const std::vector<std::string>& parts) {
    TempDir dir;
    const std::string config = dir.write("config.json", json);
    const InputError e = error_of(with_model("  hf_config: " + config + "\n"));
    EXPECT_EQ(e.file(), "job.yaml");
    EXPECT_EQ(e.key(), "model.hf_config");
    EXPECT_TRUE(has(e.message(), config + at)) << e.what();
    for (const std::string& part : parts) EXPECT_TRUE(has(e.message(), part)) << e.what();
}

TEST(JobInput, DuplicateKeyInHfConfigNamesTheConfig) {
    expect_hf_config_refused("{\"num_hidden_layers\": 2, \"hidden_size\": 64,\n\"hidden_size\": 128,\n"
                             "\"num_attention_heads\": 4, \"vocab_size\": 100}\n",
                             "", {"hidden_size", "duplicate"});
}

// yaml-cpp's Load reads the first document and drops the rest silently: a
// job's second document, text after a config.json's object, a --set value's
// second document are each refused at the line where they start.
TEST(JobInput, ASecondDocumentIsRefusedNotDropped) {
    const std::string text = small_job_text();
    const std::string two = text + "---\nparallel: {tp: 8}\n";
    const InputError e = error_of(two);
    EXPECT_EQ(e.file(), "job.yaml");
    EXPECT_EQ(e.key(), "line " + std::to_string(line_of(two, "parallel: {tp: 8}", 0))) << e.what();
    EXPECT_TRUE(has(e.message(), "second YAML document")) << e.what();
    // An empty one after '---' drops nothing, and a document marker first is one document.
    EXPECT_NO_THROW(parse_job(text + "---\n", "job.yaml"));
    EXPECT_NO_THROW(parse_job("---\n" + text + "...\n", "job.yaml"));
    EXPECT_TRUE(has(error_of(text, {"parallel.tp=2\n---\n8"}).file(), "--set parallel.tp="));
    // JSON closed early: Load kept the object up to line 3 and dropped the
    // rest, where LoadAll would hand out empty documents forever (JobFuzz).
    const InputError stuck = error_of("{\"a\": \"x\",del\": {\n  \"b\": 1,\n     }\n  },\n  \"c\" \"d\": 2\n}\n");
    EXPECT_EQ(stuck.key(), "line 4") << stuck.what();
    EXPECT_TRUE(has(stuck.message(), "not a YAML document")) << stuck.what();
    const auto lines = std::count(text.begin(), text.end(), '\n');  // text ends with one
    EXPECT_EQ(error_of(text + "}\n").key(), fmt::format("line {}", lines + 1)) << "an unmatched '}'";

    expect_hf_config_refused("{\"num_hidden_layers\": 2, \"hidden_size\": 64,\n"
                             "\"num_attention_heads\": 4, \"vocab_size\": 100}\n{\"num_hidden_layers\": 4}\n",
                             ": line 3", {"second YAML document"});
}

// yaml-cpp takes a quoted string left open for the rest of the file: a job
// whose name lost its closing quote said "model: missing section", one whose
// preset did named an unknown model of 300 characters. Refused at the line
// the string opens on.
TEST(JobInput, AQuotedStringLeftOpenIsRefusedWhereItOpens) {
    const std::string text = small_job_text();
    const std::string body = text.substr(text.find('\n') + 1);  // without its name line
    const std::string open_name = "name: \"unterminated\n" + body;
    const InputError e = error_of(open_name);
    EXPECT_EQ(e.key(), "line 1") << e.what();
    EXPECT_TRUE(has(e.message(), "double-quoted string opened here is never closed")) << e.what();
    const InputError single = error_of(text + "notes: 'it''s open\n");
    EXPECT_TRUE(has(single.message(), "single-quoted string")) << single.what();
    // Closed ones, an escaped quote, '' inside single quotes, and a quote
    // inside a plain scalar or a comment are fine.
    EXPECT_NO_THROW(parse_job("name: \"a \\\" b\"\n" + body, "job.yaml"));
    EXPECT_NO_THROW(parse_job("name: 'it''s'\n" + body, "job.yaml"));
    EXPECT_NO_THROW(parse_job("name: it's \"x\n# a \"comment\n" + body, "job.yaml"));
    expect_hf_config_refused("{\"num_hidden_layers\": 2, \"hidden_size\": 64,\n\"model_type\": \"llama}\n", ": line 2",
                             {"never closed"});
}

// A --set value is text like a file (the JSON writer refused its bytes:
// an internal error, exit 3, for `estimate --format json`).
TEST(JobInput, SetValuesAreWellFormedUtf8) {
    for (const char* bad : {"name=x\xC0\xAF", "name=x\xFF", "name=\xED\xA0\x80"}) {
        const InputError e = error_of(small_job_text(), {bad});
        EXPECT_EQ(e.file(), "--set name") << e.what();
        EXPECT_TRUE(has(e.message(), "invalid UTF-8")) << e.what();
    }
    EXPECT_EQ(error_of(small_job_text(), {"na\xFFme=x"}).file(), "--set");
    EXPECT_EQ(parse_job(small_job_text(), "job.yaml", {"name=caf\xC3\xA9"}).name, "caf\xC3\xA9");
}

TEST(JobInput, AliasesAreCheckedOncePerNode) {
    // Ten levels of ten aliases each: 1e10 nodes if every alias were walked.
    std::string text = "a0: &a0 [1, 1, 1, 1, 1, 1, 1, 1, 1, 1]\n";
    for (int i = 1; i < 10; ++i) {
        text += fmt::format("a{}: &a{} [", i, i);
        for (int k = 0; k < 10; ++k) text += fmt::format("{}*a{}", k ? ", " : "", i - 1);
        text += "]\n";
    }
    EXPECT_FALSE(parse_error(text + small_job_text()).empty());
}

// --- 2. Empty --set value ---------------------------------------------------

TEST(JobInput, EmptySetValueIsAnError) {
    for (const char* expr : {"parallel.tp=", "parallel.tp=  "}) {
        const InputError e = error_of(small_job_text(), {expr});
        EXPECT_EQ(e.file(), std::string("--set ") + expr);
        EXPECT_EQ(e.key(), "parallel.tp");
        EXPECT_TRUE(has(e.message(), "value")) << e.what();
    }
    // An explicit null is the documented way back to the default.
    EXPECT_EQ(parse_job(small_job_text(), "job.yaml", {"parallel.pp=null", "parallel.tp=1"}).plan.pp, 1);
}

// A value that is all YAML comment parses as null too: "parallel.tp=#4" read
// tp as its default (1) instead of refusing (found by the hunt helper).
TEST(JobInput, CommentSetValueIsAnError) {
    for (const char* expr : {"parallel.tp=#4", "parallel.tp= # 4", "name=#run"}) {
        const InputError e = error_of(small_job_text(), {expr});
        EXPECT_EQ(e.file(), std::string("--set ") + expr);
        EXPECT_TRUE(has(e.message(), "YAML comment")) << e.what();
    }
    // Whatever else YAML reads as null is refused the same way; null written as one is not.
    for (const char* expr : {"parallel.tp=\n", "parallel.tp=\n#4", "parallel.tp=--- #4"}) {
        const InputError e = error_of(small_job_text(), {expr});
        EXPECT_EQ(e.file(), std::string("--set ") + expr);
        EXPECT_TRUE(has(e.message(), "expected a value after '='")) << e.what();
    }
    for (const char* expr : {"parallel.tp=null", "parallel.tp=~", "parallel.tp= NULL "})
        EXPECT_EQ(parse_job(small_job_text(), "job.yaml", {expr}).plan.tp, 1) << expr;  // the default
    // A comment after a value is YAML's own and leaves the value; a quoted '#' is text.
    EXPECT_EQ(parse_job(small_job_text(), "job.yaml", {"parallel.tp=4 # four"}).plan.tp, 4);
    EXPECT_EQ(parse_job(small_job_text(), "job.yaml", {"name=\"#run\""}).name, "#run");
}

// --- 3. Messages that say what is wrong ---------------------------------------

TEST(JobInput, DeepNestingSaysNesting) {
    for (int depth : {kMaxYamlDepth + 1, 100000}) {
        const std::string deep = "model: " + std::string(depth, '[') + std::string(depth, ']') + "\n";
        const InputError e = error_of(deep);
        EXPECT_TRUE(has(e.message(), "nesting deeper than " + std::to_string(kMaxYamlDepth))) << e.what();
    }
    const std::string ok = std::string(kMaxYamlDepth - 1, '[') + std::string(kMaxYamlDepth - 1, ']');
    EXPECT_FALSE(has(parse_error("x: " + ok + "\n" + small_job_text()), "nesting")) << "within the limit";
}

struct NumberCase {
    const char* expr;
    const char* says;  // must appear in the message
};

TEST(JobInput, NumberErrorsSayWhatIsWrong) {
    const NumberCase cases[] = {
        {"training.seq_length=1e30", "out of range"},           // an integer far too large
        {"training.seq_length=-5", "out of range"},             // below the smallest
        {"cluster.inter_node.latency_us=5e-324", "out of range"},  // underflows to a subnormal
        {"cluster.inter_node.latency_us=1e-400", "out of range"},  // underflows to 0
        {"cluster.inter_node.bandwidth_GBps=1e400", "out of range"},
        {"cluster.inter_node.bandwidth_GBps=.inf", "infinite"},
        {"cluster.inter_node.bandwidth_GBps=-.Inf", "infinite"},
        {"cluster.inter_node.bandwidth_GBps=inf", "infinite"},
        {"parallel.tp=.inf", "infinite"},
        {"cluster.inter_node.bandwidth_GBps=.nan", "NaN"},
        {"parallel.tp=.NaN", "NaN"},
        {"training.global_batch_size=1_000", "separator"},
        {"training.micro_batch_size=0x1p1", "expected an integer"},  // a C hex float, not YAML
        {"parallel.tp=2.5", "expected an integer"},
        {"parallel.tp=0xFFFFFFFFFFFFFFFFFFFF", "out of range"},
    };
    for (const auto& c : cases) {
        const InputError e = error_of(small_job_text(), {c.expr});
        EXPECT_TRUE(has(e.message(), c.says)) << c.expr << " -> " << e.what();
    }
    // Out of range says the range, largest included.
    EXPECT_TRUE(has(error_of(small_job_text(), {"training.seq_length=1e30"}).message(), " to ")) << "range given";
}

TEST(JobInput, YamlNumberFormsAreAccepted) {
    const Job j = parse_job(small_job_text(), "job.yaml",
                            {"parallel.tp=+2", "parallel.pp=0x2", "training.micro_batch_size=0o2",
                             "training.global_batch_size=6.4e1", "cluster.inter_node.bandwidth_GBps=2.5E+1"});
    EXPECT_EQ(j.plan.tp, 2);
    EXPECT_EQ(j.plan.pp, 2);
    EXPECT_EQ(j.training.micro_batch, 2);
    EXPECT_EQ(j.training.global_batch, 64);
    EXPECT_DOUBLE_EQ(j.cluster.inter_node.bandwidth_GBps, 25);
}

TEST(JobInput, HfConfigThatIsNotAFileNamesJobKeyAndPath) {
    for (const char* path : {"/dev/zero", "/nonexistent/dir/config.json", "/"}) {
        const InputError e = error_of(with_model(std::string("  hf_config: ") + path + "\n"));
        EXPECT_EQ(e.file(), "job.yaml");
        EXPECT_EQ(e.key(), "model.hf_config");
        EXPECT_TRUE(has(e.message(), path)) << e.what();
    }
    EXPECT_TRUE(has(error_of(with_model("  hf_config: /nonexistent/dir/config.json\n")).message(), "no such file"));
}

TEST(JobInput, HfConfigDashIsAFileNotStandardInput) {
    // "-" means standard input only for the job itself.
    const InputError e = error_of(with_model("  hf_config: \"-\"\n"));
    EXPECT_EQ(e.key(), "model.hf_config");
    EXPECT_TRUE(has(e.message(), "no such file")) << e.what();
}

TEST(JobInput, BadValueFromHfConfigNamesTheConfig) {
    TempDir dir;
    const std::string config =
        dir.write("config.json", R"({"num_hidden_layers": 2, "hidden_size": "big", "num_attention_heads": 4, "vocab_size": 100})");
    const InputError e = error_of(with_model("  hf_config: " + config + "\n"));
    EXPECT_EQ(e.key(), "model.hf_config");
    EXPECT_TRUE(has(e.message(), config + ": hidden_size")) << e.what();
    // The same key given by the job itself is the job's.
    EXPECT_EQ(error_of(with_model("  hf_config: " + config + "\n  hidden_size: big\n")).key(), "model.hidden_size");
}

// A null cluster preset is not given, as a null model preset is; it said
// "unknown cluster ''". A preset that is a list or a mapping said the same
// ("unknown model ''"): it names what it got.
TEST(JobInput, APresetIsANameOrNull) {
    EXPECT_NO_THROW(parse_job(small_job_text(), "job.yaml", {"cluster.preset=null"}));
    const InputError list = error_of(small_job_text(), {"cluster.preset=[dgx-a100]"});
    EXPECT_EQ(list.key(), "cluster.preset") << list.what();
    EXPECT_TRUE(has(list.message(), "expected a cluster's name (lostflops list clusters), got a list")) << list.what();
    const InputError map = error_of(with_model("  preset: {name: llama3-8b}\n"));
    EXPECT_EQ(map.key(), "model.preset") << map.what();
    EXPECT_TRUE(has(map.message(), "expected a model's name (lostflops list models), got a mapping")) << map.what();
}

TEST(JobInput, PresetAndHfConfigTogetherAreAnError) {
    const std::string hf = test::source_path("tests/data/job/tiny-llama/config.json");
    const InputError e = error_of(with_model("  preset: llama3-8b\n  hf_config: " + hf + "\n"));
    EXPECT_TRUE(has(e.what(), "preset") && has(e.what(), "hf_config")) << e.what();
}

// --- 4. Errors of a --set are the --set's -------------------------------------

TEST(JobInput, SetErrorsNameTheSet) {
    for (const char* expr : {"parallel.tp=abc", "parallel.tp=0", "parallel.tp=3", "parallel.tensor_parallel=2",
                             "cluster.gpu={arch: ampere}"}) {
        const InputError e = error_of(small_job_text(), {expr});
        EXPECT_EQ(e.file(), std::string("--set ") + expr) << e.what();
    }
    const InputError deep = error_of(small_job_text(), {"a.b.c.d=1"});
    EXPECT_EQ(deep.file(), "--set a.b.c.d=1");
    EXPECT_EQ(deep.key(), "a");
    const InputError section = error_of(small_job_text(), {"model={preset: llama2-7b, bogus: 1}"});
    EXPECT_EQ(section.file(), "--set model={preset: llama2-7b, bogus: 1}");
    EXPECT_EQ(section.key(), "model.bogus");
}

TEST(JobInput, FileErrorsStayTheFilesWithOverrides) {
    std::string text = small_job_text();
    text.replace(text.find("global_batch_size: 64"), 21, "global_batch_size: 60");
    const InputError e = error_of(text, {"parallel.pp=1", "parallel.tp=1"});
    EXPECT_EQ(e.file(), "job.yaml");
    EXPECT_EQ(e.key(), "training.global_batch_size");
}

// --- 5. Plausible hardware ----------------------------------------------------

std::string inline_gpu(const std::string& field, const std::string& value) {
    std::string spec = "arch: hopper, peak_tflops: {fp16: 989, bf16: 989, fp8: 1979}, memory_GB: 80, "
                       "hbm_GBps: 3350, nvlink_GBps: 450, sm_count: 132, tdp_w: 700";
    if (field.rfind("peak.", 0) == 0) {
        const std::string p = field.substr(5) + ": ";
        const auto at = spec.find(p) + p.size();
        spec.replace(at, spec.find_first_of(",}", at) - at, value);
    } else {
        const std::string p = field + ": ";
        const auto at = spec.find(p) + p.size();
        const auto end = spec.find(',', at);
        spec.replace(at, (end == std::string::npos ? spec.size() : end) - at, value);
    }
    return "cluster.gpu={" + spec + "}";
}

TEST(JobInput, InlineGpuWithinPlausibleRanges) {
    EXPECT_EQ(parse_error(small_job_text(), {inline_gpu("tdp_w", "700")}), "");
    const std::pair<const char*, const char*> absurd[] = {
        {"peak.bf16", "1e-300"}, {"peak.fp16", "1e-3"}, {"peak.fp8", "1e9"},  {"memory_GB", "1e-300"},
        {"memory_GB", "1e9"},    {"hbm_GBps", "1e-300"}, {"hbm_GBps", "1e7"}, {"nvlink_GBps", "1e-300"},
        {"tdp_w", "1e-300"},     {"tdp_w", "1e7"},       {"sm_count", "1000000"}};
    for (const auto& [field, value] : absurd) {
        const std::string msg = parse_error(small_job_text(), {inline_gpu(field, value)});
        EXPECT_TRUE(has(msg, "out of range")) << field << "=" << value << " -> " << msg;
        EXPECT_TRUE(has(msg, "cluster.gpu.")) << msg;
    }
}

TEST(JobInput, LinksWithinPlausibleRanges) {
    for (const char* expr : {"cluster.inter_node.bandwidth_GBps=0.001", "cluster.inter_node.bandwidth_GBps=1e-300",
                             "cluster.intra_node.bandwidth_GBps=1e7", "cluster.inter_node.latency_us=1e5",
                             "cluster.intra_node.latency_us=-1"}) {
        const InputError e = error_of(small_job_text(), {expr});
        EXPECT_TRUE(has(e.message(), "out of range")) << expr << " -> " << e.what();
    }
    EXPECT_EQ(parse_error(small_job_text(), {"cluster.inter_node.latency_us=0"}), "");  // an ideal link
}

// --- 6. Labels that do not claim what the job is not ---------------------------

TEST(JobInput, PresetNameOnlyWhenItsShapeIsKept) {
    const Job plain = parse_job(small_job_text(), "job.yaml", {"model={preset: llama3-8b}", "parallel.tp=1"});
    EXPECT_EQ(plain.model.name, "llama3-8b");
    const Job same = parse_job(small_job_text(), "job.yaml",
                               {"model={preset: llama3-8b, hidden_size: " + std::to_string(plain.model.hidden) + "}",
                                "parallel.tp=1"});
    EXPECT_EQ(same.model.name, "llama3-8b");  // a key restated with the preset's value changes nothing
    // The file's own keys win over a preset set on the command line: not that preset's shape.
    const Job mixed = parse_job(small_job_text(), "job.yaml", {"model.preset=llama3-70b", "parallel.tp=1"});
    EXPECT_EQ(mixed.model.hidden, 2048);
    EXPECT_NE(mixed.model.name, "llama3-70b");
    EXPECT_TRUE(has(mixed.model.name, "llama3-70b") && has(mixed.model.name, "hidden_size")) << mixed.model.name;
    // model_type picks the rules that read the rest: another family is another model.
    const Job mamba = parse_job(small_job_text(), "job.yaml",
                                {"model={preset: llama3-8b, model_type: mamba}", "parallel.tp=1"});
    EXPECT_EQ(mamba.model.name, "custom (llama3-8b preset with overrides: model_type)");
    const Job qwen3 = parse_job(small_job_text(), "job.yaml", {"model={preset: qwen3-8b, model_type: qwen3}", "parallel.tp=1"});
    EXPECT_EQ(qwen3.model.name, "qwen3-8b") << "restated with the preset's own value";
}

TEST(JobInput, HfConfigNameOnlyWhenItsShapeIsKept) {
    const std::string job = test::source_path("tests/data/job/hf_job.yaml");
    const Job plain = load_job(job);
    EXPECT_EQ(plain.model.name, "tiny-llama");
    const Job changed = load_job(job, {"model.num_hidden_layers=2"});
    EXPECT_TRUE(has(changed.model.name, "tiny-llama") && has(changed.model.name, "num_hidden_layers"))
        << changed.model.name;
}

TEST(JobInput, JobNameSaysWhenSetChangedTheModelOrCluster) {
    const Job plain = parse_job(small_job_text(), "job.yaml", {"parallel.tp=4"});
    EXPECT_EQ(plain.name, "small");  // the plan is printed on its own
    const Job model = parse_job(small_job_text(), "job.yaml", {"model={preset: llama2-7b}", "parallel.tp=1"});
    EXPECT_NE(model.name, "small");
    EXPECT_TRUE(has(model.name, "small") && has(model.name, "--set model")) << model.name;
    const Job cluster = parse_job(small_job_text(), "job.yaml", {"cluster.num_gpus=8"});
    EXPECT_TRUE(has(cluster.name, "cluster.num_gpus")) << cluster.name;
    EXPECT_EQ(parse_job(small_job_text(), "job.yaml", {"model={preset: llama2-7b}", "parallel.tp=1", "name=mine"}).name, "mine");
}

}  // namespace
}  // namespace lostflops
