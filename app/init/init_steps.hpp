#pragma once
// rv init's steps on the cluster once the key works (app/init/init_remote.cpp); internal to app/init/init.

#include "app/init/init.hpp"

#include <string>

namespace rv::app::init_steps {

// The user's Slurm associations (sacctmgr, with discovery's one round trip): accounts, the
// default one (offered), QOS and the partitions the chosen account may use.
Result<nlohmann::json> slurm(const InitOptions& o, InitAnswers& a, proc::Runner& runner, const std::string& user,
                             Prompter& prompter);

// Scratch (detected, or asked) for the caches, and rv's directories created; `cache_root` is the
// absolute cache directory on scratch ("" when the caches stay under remote_root).
Result<nlohmann::json> storage(const InitOptions& o, InitAnswers& a, proc::Runner& runner, Prompter& prompter,
                               std::string& cache_root);

} // namespace rv::app::init_steps
