#include "serve/web.hpp"

#include <algorithm>

#include "core/errors.hpp"
#include "core/terminal_text.hpp"
#include "text/language.hpp"

namespace attn {

namespace {

// The option a request's key names ("d-out", "no-explain"); nullptr for none.
const WebOption* web_option(const FrontEnd& front, const std::string& key) {
  for (const WebOption& option : front.options)
    for (const std::string& name : option.spellings)
      if (name == "--" + key) return &option;
  return nullptr;
}

}  // namespace

std::vector<std::string> web_args(const FrontEnd& front, const std::string& command, const Params& params,
                                  const std::string& format, const std::string& model) {
  std::vector<std::string> args{command};
  for (std::size_t i = 0; i < params.size(); ++i) {
    const auto& [key, value] = params[i];
    const WebOption* option = web_option(front, key);
    if (option == nullptr) throw UsageError("attn " + command + " has no option --" + visible(key));
    if (!option->refusal.empty()) throw UsageError("--" + key + " " + option->refusal);
    for (std::size_t j = 0; j < i; ++j)
      if (web_option(front, params[j].first) == option) throw UsageError("--" + key + " is given twice");
    args.push_back(option->flag && value.empty() ? "--" + key : "--" + key + "=" + value);
  }
  if (!model.empty()) args.insert(args.end(), {"--model", model});
  args.insert(args.end(), {"--format", format});
  return args;
}

Request web_request(const FrontEnd& front, const std::string& command, const Params& params,
                    const std::string& format, const std::string& model) {
  return front.read(web_args(front, command, params, format, model));
}

std::string request_language(const Params& params, const std::string& otherwise) {
  const auto& spoken = supported_languages();
  for (const auto& [key, value] : params)
    if (key == "lang" && std::find(spoken.begin(), spoken.end(), value) != spoken.end()) return chosen_language(value, otherwise);
  return otherwise;
}

LiveBar live_bar(const FrontEnd& front, const std::string& lesson, const Params& params, const std::string& error,
                 bool model, const std::string& language) {
  LiveBar bar = front.bar(model);
  bar.lesson = lesson;
  bar.values = params;
  bar.error = error;
  bar.words = Words(request_language(params, language));
  return bar;
}

}  // namespace attn
