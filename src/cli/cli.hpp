#pragma once
// The whole command line in one call, so that tests run exactly what the executable runs:
// parse (the option table, cli/options.cpp) -> load the inputs -> run the lesson(s) -> render.
#include <functional>
#include <istream>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "core/errors.hpp"
#include "present/presenter.hpp"
#include "render/style.hpp"

namespace attn {

// Parses `args` (without the program name), runs the chosen subcommand and writes its whole output to
// `out` in one piece (step by step, reading Enter or q from `in`, only with --pause on a terminal), or one
// line starting "attn: " to `err`. Progress lines also go to `err`, and only when `term` says stderr is a
// terminal. `term` says which streams are terminals and what the environment asks for (colour). Returns
// the exit status.
int run_cli(const std::vector<std::string>& args, std::ostream& out, std::ostream& err, std::istream& in,
            const Terminal& term);

// The same, with attn present's document and options handed to `screen` instead of the ncurses presenter
// (present/presenter.hpp's present): a test sees what the class would, as run_cli computed it.
using PresentScreen = std::function<void(const Document&, const PresentOptions&)>;
int run_cli(const std::vector<std::string>& args, std::ostream& out, std::ostream& err, std::istream& in,
            const Terminal& term, const PresentScreen& screen);

// The same for a process with no terminal and no input (what tests and scripts see).
int run_cli(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

}  // namespace attn
