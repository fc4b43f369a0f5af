#pragma once
// The whole command line in one call, so that tests run exactly what the executable runs.
#include <istream>
#include <ostream>
#include <string>
#include <vector>

#include "render/style.hpp"

namespace attn {

// Exit statuses (docs/errors.md).
inline constexpr int kExitOk = 0;
inline constexpr int kExitRuntime = 1;  // unreadable or invalid input file, write error
inline constexpr int kExitUsage = 2;    // bad option, bad value, bad combination, unknown subcommand

// Parses `args` (without the program name), runs the chosen lesson and writes its whole output to `out`
// in one piece (step by step, reading Enter or q from `in`, only with --pause on a terminal), or one line
// starting "attn: " to `err`. `term` says which streams are terminals and what the environment asks
// for (colour). Returns the exit status.
int run_cli(const std::vector<std::string>& args, std::ostream& out, std::ostream& err, std::istream& in,
            const Terminal& term);

// The same for a process with no terminal and no input (what tests and scripts see).
int run_cli(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

}  // namespace attn
