#pragma once
// A request as the command line reads it (docs/serve.md): GET /api/mha?seed=5&d-out=6 is `attn mha --seed=5
// --d-out=6 --format json`. This layer maps a request's options to those arguments, refusing what the option
// table says a request may not give (a key that is no option of a lesson or the tour, one that names a file
// or is the server's to decide, a key given twice); the command line's own parser, which the caller hands it
// (FrontEnd), reads them into the Request, so the API cannot drift from the command line. And the live
// page's bar for a request: the lessons and controls the front end offers, showing the request's lesson, its
// values and its refusal, in its language.
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "render/live_page.hpp"
#include "run/run.hpp"

namespace attn {

// A request's options (key without dashes, value), as the address decoded them (cpp-httplib orders them by key).
using Params = std::vector<std::pair<std::string, std::string>>;

// An option a request may name: a lesson, input, output or step option of the option table.
struct WebOption {
  std::vector<std::string> spellings;  // "--explain", "--no-explain"
  bool flag = false;                   // takes no value: `explain=` is --explain
  // Why a request may not give it (it names a file on the server, or the server decides it); "": it may.
  std::string refusal;
};

// What the server needs of the command line, given by the caller (src/cli) so that this layer knows no CLI11.
struct FrontEnd {
  // The Request `attn ARGS...` makes; throws what the command line would (a UsageError in its words).
  std::function<Request(const std::vector<std::string>& args)> read;
  std::vector<WebOption> options;  // the options a request may name
  // The live page's bar before a request fills it in (LiveBar's choices and controls) for a server with a
  // model (`model`) or without: what the server's configuration refuses follows the option table's rules
  // beside --model.
  std::function<LiveBar(bool model)> bar;
};

// The arguments of `attn COMMAND --KEY=VALUE ... [--model MODEL] --format FORMAT` for a request, after
// refusing a key that is no option, one a request may not give, and one given twice (UsageErrors in the
// command line's words).
std::vector<std::string> web_args(const FrontEnd& front, const std::string& command, const Params& params,
                                  const std::string& format, const std::string& model);
// The Request those arguments make, read by the front end.
Request web_request(const FrontEnd& front, const std::string& command, const Params& params,
                    const std::string& format, const std::string& model);

// The language a request asks for: its `lang` when that is one attn speaks (chosen_language: "en" is ""),
// else `otherwise` (the server's). A `lang` attn does not speak is the command line's to refuse.
std::string request_language(const Params& params, const std::string& otherwise);

// The live page's bar for a request: the front end's for the server's configuration (`model`), showing
// `lesson` with the request's `params` and `error` (a refusal, "" for none), in the request's language, else
// `language` (the server's).
LiveBar live_bar(const FrontEnd& front, const std::string& lesson, const Params& params, const std::string& error,
                 bool model, const std::string& language = "");

}  // namespace attn
