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
#include "serve/server.hpp"

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

// attn serve's reading of a request (serve/server.hpp's FrontEnd::read): the Request the command line
// `attn COMMAND --KEY=VALUE ... [--model MODEL] --format FORMAT` makes, after refusing a key that is no
// option of a lesson or the tour, one that names a file or is the server's, and a key given twice. Throws
// the UsageError the command line would.
Request web_request(const std::string& command, const Params& params, const std::string& format,
                    const std::string& model);
// The live page's bar (FrontEnd::bar): the lessons and the tour, and the option table's entries marked
// in_live_bar, each with the lessons that take it and their defaults; what the server's configuration
// refuses follows its rules beside --model: --layer and --head only with a model, and with one --d-out,
// --heads and --kv-groups taken by no lesson (LiveControl::refused_with). In the language of `params`'
// lang ("" without one: attn serve gives its own).
LiveBar live_bar(const std::string& lesson, const Params& params, const std::string& error, bool model);

// The subcommands other than the lessons (list, tour, present, serve, bench), in the order the command line
// adds them, each with its optional operand ("LESSON ..." for present; "" for none): attn-docgen's SYNOPSIS,
// which so cannot leave a subcommand out.
std::vector<std::pair<std::string, std::string>> other_commands();

// The same for a process with no terminal and no input (what tests and scripts see).
int run_cli(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

}  // namespace attn
