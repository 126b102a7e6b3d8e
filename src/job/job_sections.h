// The sections of a job file (docs/job-file.md), read by parse_job
// (job.cpp): model (job_model.cpp), cluster, training and parallel
// (job_sections.cpp), run (job_run.cpp). Each throws InputError naming `file` and the dotted key.
#pragma once

#include <string>

#include <yaml-cpp/yaml.h>

#include "lostflops/spec.h"

namespace lostflops {

// `section` with the keys of `base` it does not set itself; `drop` is left out.
// `key` names the section in errors (a key that is not a plain string).
YAML::Node merged(const YAML::Node& base, const YAML::Node& section, const std::string& drop,
                  const std::string& file, const std::string& key);

// The name a section's `preset` key gives (`section` is "model" or
// "cluster"): InputError when it is a list or a mapping.
std::string preset_name(const YAML::Node& preset, const std::string& file, const std::string& section);

Model read_model(YAML::Node node, const std::string& file);
Cluster read_cluster(YAML::Node node, const std::string& file);
Training read_training(YAML::Node node, const std::string& file);
ParallelPlan read_parallel(YAML::Node node, const std::string& file, int num_gpus, const std::string& arch,
                           Framework fw);
// The optional `run:` section (job_run.cpp); absent: every default.
RunSpec read_run(YAML::Node node, const std::string& file, const Cluster& cluster, const Model& model);

}  // namespace lostflops
