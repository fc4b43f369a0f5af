#include "lessons/lesson.hpp"

#include "lessons/lessons.hpp"

#include <stdexcept>

#include <CLI/CLI.hpp>

namespace attn {

Trace::Trace(LessonInfo lesson_info, const Inputs& in) : info(std::move(lesson_info)), inputs(in) {
  config["input"] = in.source;
}

const Step& Trace::step(const std::string& id) const {
  for (const auto& s : steps)
    if (s.id == id) return s;
  throw std::out_of_range("no step '" + id + "' in lesson " + info.name);
}

CLI::App* LessonRegistry::add(const LessonInfo& info, LessonFn fn) {
  CLI::App* sub = app_.add_subcommand(info.name, info.summary + " (book section " + info.section + ")");
  sub->add_option("--input", common_.input,
                  "Embeddings to use instead of the book's six tokens: a JSON file "
                  "{\"tokens\": [...], \"embeddings\": [[...], ...]} or a CSV file (one row per token, "
                  "optional first column of token text). Default: the book's data/journey.json")
      ->type_name("FILE");
  sub->add_flag("--json", common_.json,
                "Print one JSON document (config, inputs, every step's tensor) instead of text; see docs/json.md");
  entries_.push_back(Entry{info, sub, std::move(fn)});
  return sub;
}

namespace {

CLI::Validator digits_validator(bool positive) {
  return CLI::Validator(
      [positive](std::string& value) -> std::string {
        const bool digits = !value.empty() && value.size() <= 20 &&
                            value.find_first_not_of("0123456789") == std::string::npos;
        if (digits && (!positive || value.find_first_not_of('0') != std::string::npos)) return {};
        return std::string("expected a whole number ") + (positive ? ">= 1" : ">= 0") + ", got '" + value + "'";
      },
      "");
}

}  // namespace

const CLI::Validator& whole_number() {
  static const CLI::Validator v = digits_validator(false);
  return v;
}

const CLI::Validator& positive_whole_number() {
  static const CLI::Validator v = digits_validator(true);
  return v;
}

void add_query_option(CLI::App* cmd, std::optional<std::size_t>& query) {
  cmd->add_option_function<std::size_t>(
         "--query", [&query](const std::size_t& q) { query = q; },
         "Index of the query token, counted from 0 (default: 1, \"journey\", as in the book; 0 for a "
         "one-token input)")
      ->check(whole_number())
      ->type_name("I");
}

std::string token_label(const Inputs& in, std::size_t i) {
  return std::to_string(i) + " \"" + in.tokens.at(i) + "\"";
}

std::size_t effective_query(const std::optional<std::size_t>& query, const Inputs& in) {
  const std::size_t q = query.value_or(in.num_tokens() > kBookQuery ? kBookQuery : 0);
  if (q >= in.num_tokens())
    throw UsageError("--query " + std::to_string(q) + " is past the last token (the input has " +
                     std::to_string(in.num_tokens()) + " tokens, numbered 0 to " +
                     std::to_string(in.num_tokens() - 1) + ")");
  return q;
}

void register_all_lessons(LessonRegistry& registry) {
  register_simple(registry);
  register_all_tokens(registry);
  register_trainable(registry);
}

}  // namespace attn
