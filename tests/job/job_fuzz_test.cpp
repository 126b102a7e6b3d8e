// Seeded random mutation of valid job files (byte flips, deletions,
// insertions of YAML punctuation, truncations, duplicated spans). Every
// mutant must either parse into a job the estimator accepts or raise an
// InputError: no crash, no other exception, no hang. Runs under ASan/UBSan in
// CI; fuzz/fuzz_job.cpp is the coverage-guided libFuzzer twin.
#include <random>

#include <gtest/gtest.h>

#include "lostflops/calibration.h"
#include "lostflops/estimate.h"
#include "lostflops/job.h"
#include "job/text_input.h"
#include "test_util.h"

namespace lostflops {
namespace {

std::string mutate(std::string s, std::mt19937& rng) {
    static const std::string kTokens[] = {":", "{", "}", "[", "]", "-", "\n", " ", "\"", "'", "0", "-1",
                                          "1e308", "null", "&a", "*a", "!!binary", "#", "\t", "99999999999"};
    const int edits = 1 + static_cast<int>(rng() % 4);
    for (int e = 0; e < edits && !s.empty(); ++e) {
        const size_t pos = rng() % s.size();
        switch (rng() % 6) {
            case 0: s[pos] = static_cast<char>(rng() % 256); break;
            case 1: s.erase(pos, 1 + rng() % 8); break;
            case 2: s.insert(pos, kTokens[rng() % std::size(kTokens)]); break;
            case 3: s.resize(pos); break;
            case 4: s.insert(pos, s.substr(rng() % s.size(), rng() % 32)); break;
            default: {  // swap a digit run for another number
                const size_t d = s.find_first_of("0123456789", pos);
                if (d != std::string::npos) s.replace(d, 1, std::to_string(rng() % 100000));
            }
        }
    }
    return s;
}

TEST(JobFuzz, MutantsParseOrRaiseInputError) {
    const std::string seeds[] = {
        test::small_job_text(), default_job_text(),
        read_text_file(test::source_path("data/published/runs/korthikanti22-t5-gpt-175b-full.json")),
        read_text_file(test::source_path("data/published/runs/torchtitan24-a100-llama3-8b-selective.json")),
    };
    std::mt19937 rng(20261121);
    const Calibration cal = default_calibration();
    int parsed = 0, rejected = 0;
    for (int i = 0; i < 3000; ++i) {
        const std::string text = mutate(seeds[i % std::size(seeds)], rng);
        try {
            const Job job = parse_job(text, "fuzz.yaml");
            const Estimate e = estimate(job, cal);
            EXPECT_TRUE(e.step_time_s > 0) << text;
            ++parsed;
        } catch (const InputError&) {
            ++rejected;
        }
    }
    // Both outcomes must occur, or the mutator is not exercising the parser.
    EXPECT_GT(parsed, 100);
    EXPECT_GT(rejected, 100);
}

}  // namespace
}  // namespace lostflops
