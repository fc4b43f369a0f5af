// The option table: every option of attn, declared once. Each entry is made by a builder below that
// binds it to its field of CommandLine, so parsing (CLI11, with its own transformers for the enums), the
// help, the man page, the completion and the JSON config all come from the same line.
#include "cli/options.hpp"

#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <map>
#include <sstream>
#include <type_traits>
#include <variant>

#include <CLI/CLI.hpp>

#include "core/limits.hpp"
#include "core/strings.hpp"
#include "core/terminal_text.hpp"
#include "inputs/sources.hpp"
#include "text/words.hpp"
#include "lessons/registry.hpp"
#include "render/renderer.hpp"

namespace attn {

namespace {

using ojson = nlohmann::ordered_json;

// The part of CommandLine an option's field lives in.
template <class S> S& part(CommandLine& c);
template <> InputOptions& part<InputOptions>(CommandLine& c) { return c.input; }
template <> OutputOptions& part<OutputOptions>(CommandLine& c) { return c.output; }
template <> LessonConfig& part<LessonConfig>(CommandLine& c) { return c.lesson; }
template <> BenchOptions& part<BenchOptions>(CommandLine& c) { return c.bench; }
template <> ListOptions& part<ListOptions>(CommandLine& c) { return c.list; }
template <> PresentCli& part<PresentCli>(CommandLine& c) { return c.present; }
template <> ServeCli& part<ServeCli>(CommandLine& c) { return c.serve; }
template <class S> const S& part(const CommandLine& c) { return part<S>(const_cast<CommandLine&>(c)); }

// --max-memory's value: a whole or decimal number with an optional unit (K, M, G, T, P: powers of 1024,
// each also as KB or KiB; B or none: bytes), in bytes. Written here rather than with CLI11's AsSizeValue,
// which reads "-1" as 2^64 - 1 (an unlimited budget) and garbles the message for "-4G".
constexpr std::size_t kMinMemoryBudget = std::size_t{1} << 20, kMaxMemoryBudget = std::size_t{1} << 50;
const char* const kMemoryRange = "a size from 1M to 1P, such as 512M or 16G (K, M, G, T, P are powers of 1024)";

std::string parse_memory_size(std::string& value) {
  const std::string given = value;
  std::size_t i = 0;
  while (i < given.size() && std::isdigit(static_cast<unsigned char>(given[i]))) ++i;
  std::size_t j = i;
  if (j < given.size() && given[j] == '.') {
    ++j;
    while (j < given.size() && std::isdigit(static_cast<unsigned char>(given[j]))) ++j;
  }
  std::string unit = given.substr(j);
  for (char& c : unit) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  static const std::map<std::string, int> powers{{"", 0}, {"B", 0}, {"K", 1}, {"KB", 1}, {"KIB", 1}, {"M", 2}, {"MB", 2},
                                                 {"MIB", 2}, {"G", 3}, {"GB", 3}, {"GIB", 3}, {"T", 4}, {"TB", 4},
                                                 {"TIB", 4}, {"P", 5}, {"PB", 5}, {"PIB", 5}};
  const auto power = powers.find(unit);
  if (i == 0 || power == powers.end() || (j == i + 1))  // no digits first, an unknown unit, or "5."
    return "'" + visible(given) + "' is not " + kMemoryRange;
  // Exact for whole numbers; a decimal is read as a long double, whose 64-bit mantissa holds every byte count
  // up to the maximum.
  const long double number = std::strtold(given.substr(0, j).c_str(), nullptr);
  const long double bytes = number * std::pow(1024.0L, power->second);
  if (!(bytes >= static_cast<long double>(kMinMemoryBudget)))
    return "'" + visible(given) + "' is below the smallest budget, 1M" +
           (power->second == 0 && number >= 1 ? std::string(" (a number without a unit is bytes: did you mean ") + given + "M?)"
                                                : "") +
           "; give " + kMemoryRange;
  if (bytes > static_cast<long double>(kMaxMemoryBudget))
    return "'" + visible(given) + "' is past the largest budget, 1P; give " + kMemoryRange;
  value = std::to_string(static_cast<std::size_t>(bytes));
  return {};
}

// A number as CLI11 shows a default: 0, 0.5.
std::string shown(double v) {
  std::ostringstream s;
  s << v;
  return s.str();
}

CLI::Validator whole_number(std::uint64_t min, std::uint64_t max) {
  return CLI::Validator([min, max](std::string& v) { return whole_number_error(v, min, max); }, "");
}

// CLI11's CheckedTransformer turns a word into its enum value; the message names the words.
template <class E>
CLI::Validator word_of(const std::vector<std::pair<std::string, E>>& words) {
  const std::map<std::string, E> map(words.begin(), words.end());
  std::vector<std::string> names;
  for (const auto& w : words) names.push_back(w.first);
  const CLI::Validator to_enum = CLI::CheckedTransformer(map);  // a Validator: copies as one
  const std::string expected = "expected " + or_list(names);
  return CLI::Validator(
      [to_enum, map, expected](std::string& v) -> std::string {
        if (map.count(v) == 0) return expected + ", got '" + v + "'";
        return to_enum(v);
      },
      "");
}

template <class E>
std::string word_for(const std::vector<std::pair<std::string, E>>& words, E value) {
  for (const auto& w : words)
    if (w.second == value) return w.first;
  return "?";
}

}  // namespace

// The typed binding of an option to its field `T S::*` of CommandLine's part S: how CLI11 reads it (a
// value, an optional value, a flag, or a parser of its own), the check or transform its text goes
// through, how its default is shown, and its value in the JSON config. Every builder below makes one.
struct OptionSpec::Binding {
  virtual ~Binding() = default;
  virtual CLI::Option* add(const OptionSpec& spec, CLI::App* app, CommandLine& target, const CommandLine& defaults,
                           const std::string& help) const = 0;
  virtual void take(CommandLine& to, const CommandLine& from) const = 0;
  virtual ojson config(const CommandLine& c) const = 0;
  virtual std::string shown(const CommandLine& c) const = 0;
};

namespace {

// The value of a field of type T in the JSON config.
template <class T> ojson config_value(const T& v) { return ojson(v); }
template <class T> ojson config_value(const std::optional<T>& v) { return v ? ojson(*v) : ojson(nullptr); }

enum class Reads {
  Value,     // add_option on the field, its default shown in --help
  Optional,  // add_option_function on a std::optional field: unset unless given, no default shown
  Flag,      // add_flag
};

template <class S, class T>
struct Field final : OptionSpec::Binding {
  T S::*field = nullptr;
  Reads reads = Reads::Value;
  std::optional<CLI::Validator> check;
  bool transform = false;  // the check rewrites the text (a word into its enum's number, 4G into bytes)
  char delimiter = 0;    // a list: "a,b,c"
  std::function<std::string(const T&)> show;   // the default as shown; empty: none
  std::function<ojson(const T&)> json = [](const T& v) { return config_value(v); };
  // A parser of its own instead of CLI11's (--random NxD); sets the field.
  std::function<CLI::Option*(CLI::App*, CommandLine&, const std::string& help)> custom;

  CLI::Option* add(const OptionSpec& spec, CLI::App* app, CommandLine& target, const CommandLine& defaults,
                   const std::string& help) const override {
    const std::string name = spec.name;
    CLI::Option* o = nullptr;
    if (custom) {
      o = custom(app, target, help);
    } else if (reads == Reads::Flag) {
      if constexpr (std::is_same_v<T, bool>) o = app->add_flag(name, part<S>(target).*field, help);
    } else if (reads == Reads::Optional) {
      if constexpr (is_optional<T>::value) {
        using V = typename T::value_type;
        T S::*f = field;
        o = app->add_option_function<V>(name, [&target, f](const V& v) { part<S>(target).*f = v; }, help);
      }
    } else {
      o = app->add_option(name, part<S>(target).*field, help);
      if (show) o->default_str(show(part<S>(defaults).*field));
    }
    if (o == nullptr) throw std::logic_error("option " + name + ": its field does not fit how it is read");
    if (check && transform) o->transform(*check);
    if (check && !transform) o->check(*check);
    if (delimiter != 0) o->delimiter(delimiter);
    if (!spec.type_name.empty()) o->type_name(spec.type_name);
    return o;
  }
  void take(CommandLine& to, const CommandLine& from) const override { part<S>(to).*field = part<S>(from).*field; }
  ojson config(const CommandLine& c) const override { return json(part<S>(c).*field); }
  std::string shown(const CommandLine& c) const override { return show ? show(part<S>(c).*field) : std::string(); }

  template <class U> struct is_optional : std::false_type {};
  template <class U> struct is_optional<std::optional<U>> : std::true_type {};
};

// A check from a function that returns "" or the message; CLI11 then says "--NAME: message".
CLI::Validator checked(std::function<std::string(std::string&)> f) { return CLI::Validator(std::move(f), ""); }

template <class S, class T>
std::shared_ptr<Field<S, T>> field_of(OptionSpec& s, T S::*field, Reads reads = Reads::Value) {
  auto b = std::make_shared<Field<S, T>>();
  b->field = field;
  b->reads = reads;
  s.binding = b;
  return b;
}

OptionSpec entry(Scope scope, std::optional<Opt> opt, std::string name, std::string type, std::string key,
                 std::string help) {
  OptionSpec s;
  s.scope = scope;
  s.opt = opt;
  s.name = std::move(name);
  s.type_name = std::move(type);
  s.key = std::move(key);
  s.help = std::move(help);
  return s;
}

// A whole number from min to max.
template <class S>
OptionSpec whole(Scope scope, std::optional<Opt> opt, std::string name, std::string type, std::size_t S::*field,
                 std::uint64_t min, std::uint64_t max, std::string key, std::string help) {
  OptionSpec s = entry(scope, opt, std::move(name), std::move(type), std::move(key), std::move(help));
  s.range = std::to_string(min) + " to " + std::to_string(max);
  const auto b = field_of(s, field);
  b->check = whole_number(min, max);
  b->show = [](const std::size_t& v) { return std::to_string(v); };
  return s;
}

// A whole number that may be left unset (the lesson then picks the book's value).
template <class S, class T>
OptionSpec maybe_whole(Scope scope, std::optional<Opt> opt, std::string name, std::string type, std::optional<T> S::*field,
                       std::uint64_t min, std::uint64_t max, std::string key, std::string help) {
  OptionSpec s = entry(scope, opt, std::move(name), std::move(type), std::move(key), std::move(help));
  s.range = std::to_string(min) + " to " + std::to_string(max);
  field_of(s, field, Reads::Optional)->check = whole_number(min, max);
  return s;
}

// A real number from min to max ("expected WHAT from MIN to MAX").
template <class S>
OptionSpec real(Scope scope, std::optional<Opt> opt, std::string name, std::string type, double S::*field, double min,
                double max, std::string what, std::string key, std::string help) {
  OptionSpec s = entry(scope, opt, std::move(name), std::move(type), std::move(key), std::move(help));
  s.range = shown(min) + " to " + shown(max);
  const auto b = field_of(s, field);
  b->check = checked([min, max, expected = "expected " + what + " from " + shown(min) + " to " + shown(max)](
                         std::string& v) -> std::string {
    char* end = nullptr;
    const double x = std::strtod(v.c_str(), &end);
    if (v.empty() || end != v.c_str() + v.size() || !(x >= min && x <= max)) return expected + ", got '" + v + "'";
    return {};
  });
  b->show = [](const double& v) { return shown(v); };
  return s;
}

template <class S>
OptionSpec flag(Scope scope, std::optional<Opt> opt, std::string name, bool S::*field, std::string key,
                std::string help) {
  OptionSpec s = entry(scope, opt, std::move(name), "", std::move(key), std::move(help));
  field_of(s, field, Reads::Flag)->show = [](const bool& v) { return std::string(v ? "on" : "off"); };
  return s;
}

// One of a few words, stored as the enum E (the config is the word, not the enum's number).
template <class S, class E>
OptionSpec choice(Scope scope, std::optional<Opt> opt, std::string name, std::string type, E S::*field,
                  std::vector<std::pair<std::string, E>> words, std::string key, std::string help) {
  OptionSpec s = entry(scope, opt, std::move(name), std::move(type), std::move(key), std::move(help));
  for (const auto& w : words) s.values.push_back(w.first);
  const auto b = field_of(s, field);
  b->check = word_of(words);
  b->transform = true;
  b->show = [words](const E& v) { return word_for(words, v); };
  b->json = [words](const E& v) { return ojson(word_for(words, v)); };
  return s;
}

// A name: any text but the empty one, which is refused with `empty`.
template <class S>
OptionSpec name_of(Scope scope, std::string name, std::string type, std::string S::*field, std::string empty,
                   std::string help) {
  OptionSpec s = entry(scope, std::nullopt, std::move(name), std::move(type), "", std::move(help));
  field_of(s, field)->check = checked([empty](std::string& v) { return v.empty() ? empty : std::string(); });
  return s;
}

// One of a few words, kept as the word, or not given at all: "" then, shown as nothing, so the help and the
// tables show `not_given` instead (--lang's environment, --isa's widest build).
template <class S>
OptionSpec word_or_unset(Scope scope, std::string name, std::string type, std::string S::*field,
                         const std::vector<std::string>& names, std::string help, std::string not_given) {
  std::vector<std::pair<std::string, std::string>> words;
  for (const std::string& w : names) words.emplace_back(w, w);
  OptionSpec s = entry(scope, std::nullopt, std::move(name), std::move(type), "", std::move(help));
  s.values = names;
  const auto b = field_of(s, field);
  b->check = word_of(words);
  b->transform = true;
  b->show = [](const std::string& v) { return v; };
  s.default_note = std::move(not_given);
  return s;
}

// --lang LANG: the languages attn speaks (text/language.hpp); not given, the environment's.
template <class S>
OptionSpec lang_option(Scope scope, std::string S::*field) {
  return word_or_unset(scope, "--lang", "LANG", field, supported_languages(),
                       "The language of the lessons' words, pages and slides: en or ru; the numbers, shapes and code "
                       "are the same in each. Not given: LANGUAGE, LC_ALL, LC_MESSAGES or LANG, as gettext reads "
                       "them (English for a language attn does not speak). --help and errors stay English",
                       "from the environment");
}

std::vector<std::pair<std::string, When>> when_words() {
  return {{"never", When::Never}, {"auto", When::Auto}, {"always", When::Always}};
}

// --format: one of the renderers (render/formats.cpp).
OptionSpec format_option() {
  std::vector<std::string> names;
  std::string help = "Output format:";
  for (const auto& f : formats()) {
    names.push_back(f.name);
    help += std::string(names.size() == 1 ? " " : "; ") + f.name + ", " + f.help;
  }
  OptionSpec s = entry(Scope::Output, std::nullopt, "--format", "FORMAT", "", help);
  s.values = names;
  const auto b = field_of(s, &OutputOptions::format);
  b->check = checked([member = CLI::Validator(CLI::IsMember(names)), expected = "expected " + or_list(names)](std::string& v) {
    return member(v).empty() ? std::string() : expected + ", got '" + v + "'";
  });
  b->show = [](const std::string& v) { return v; };
  return s;
}

// --query I: a token index. Any whole number is read (a negative one too), so that one past the input is
// refused once the input is known, with its real range (lessons/helpers.cpp, effective_query).
OptionSpec token_index_option() {
  OptionSpec s = entry(Scope::Lesson, Opt::Query, "--query", "I", "query",
                       "Index of the query token, counted from 0 (default: 1, \"journey\", as in the book; 0 for a "
                       "one-token input)");
  s.range = "0 to the number of tokens - 1";
  field_of(s, &LessonConfig::query, Reads::Optional)->check = checked([](std::string& v) -> std::string {
    constexpr auto limit = static_cast<std::uint64_t>(kMaxTokens);
    const bool negative = !v.empty() && v[0] == '-';
    if (!whole_number_error(negative ? v.substr(1) : v, 0, limit).empty())
      return "expected a token index, a whole number from 0 to " + std::to_string(limit - 1) + ", got '" + v + "'";
    return {};
  });
  return s;
}

OptionSpec step_option() {
  OptionSpec s = entry(Scope::Step, std::nullopt, "--step", "ID[,ID...]", "",
                       "Show (and compute) only these steps, by the book's variable names (e.g. attn_weights_2); attn LESSON "
                       "--json | jq '.steps[].id' lists them");
  field_of(s, &OutputOptions::steps)->delimiter = ',';
  return s;
}

OptionSpec impl_option() {
  OptionSpec s = entry(Scope::Bench, std::nullopt, "--impl", "NAME,...", "", "Implementations to run (default: all)");
  s.values = bench_impls();
  const auto b = field_of(s, &BenchOptions::impls);
  b->check = CLI::IsMember(bench_impls());
  b->delimiter = ',';
  return s;
}

// --isa: the fast kernels' build, and oneDNN's cap, so that one CPU can time a narrower CPU's code.
OptionSpec isa_option() {
  return word_or_unset(Scope::Bench, "--isa", "BUILD", &BenchOptions::isa, bench_isas(),
                       "The fast kernels' build, and oneDNN's, for fused, gqa and --decode: avx512, avx2 or portable; "
                       "an AVX-512 CPU then times the AVX2 code as an AVX2-only CPU runs it (the chapter's wrapper "
                       "and mha stay on OpenBLAS, which OPENBLAS_CORETYPE sets). Not given: the CPU's widest",
                       "the CPU's widest");
}

OptionSpec cache_option() {
  OptionSpec s = entry(Scope::Bench, std::nullopt, "--cache", "N,...", "",
                       "With --decode: the KV cache lengths to time, in tokens");
  s.range = "1 to " + std::to_string(kMaxDecodeCache) + " each";
  const auto b = field_of(s, &BenchOptions::cache);
  b->check = whole_number(1, kMaxDecodeCache);
  b->delimiter = ',';
  b->show = [](const std::vector<std::size_t>& cache) {
    std::string text;
    for (const std::size_t n : cache) text += (text.empty() ? "" : ",") + std::to_string(n);
    return text;
  };
  return s;
}

// A rule of an option beside another, with its sentence.
void add_rule(OptionSpec& s, const SourceRule& r) {
  switch (r.kind) {
    case SourceRule::Exclusive:
      s.excludes.push_back({r.other, s.name + " and " + r.other + " exclude each other" + r.why});
      break;
    case SourceRule::NotWith:
      s.excludes.push_back({r.other, s.name + " does not apply with " + r.other + r.why});
      break;
    case SourceRule::OnlyWith:
      s.needs.push_back({r.other, s.name + " only applies with " + r.other + " (" + r.why + ")"});
      break;
  }
}

// An input source's option (inputs/source.hpp) as an entry of the table, bound by its field's type.
OptionSpec source_option(const SourceOption& o) {
  OptionSpec s = entry(Scope::Input, std::nullopt, o.name, o.type_name, "", o.help);
  std::visit(
      [&](auto field) {
        using F = decltype(field);
        if constexpr (std::is_same_v<F, std::string InputOptions::*>) {
          field_of(s, field)->check = checked([empty = o.empty](std::string& v) { return v.empty() ? empty : std::string(); });
        } else if constexpr (std::is_same_v<F, std::optional<std::string> InputOptions::*>) {
          field_of(s, field, Reads::Optional);
        } else if constexpr (std::is_same_v<F, std::size_t InputOptions::*>) {
          s.range = std::to_string(o.min) + " to " + std::to_string(o.max);
          const auto b = field_of(s, field);
          b->check = whole_number(o.min, o.max);
          b->show = [](const std::size_t& v) { return std::to_string(v); };
        } else {  // read by the source's own parser
          field_of(s, field)->custom = [name = o.name, parse = o.parse](CLI::App* app, CommandLine& target,
                                                                          const std::string& help) {
            return app->add_option_function<std::string>(
                name,
                [&target, parse](const std::string& v) {
                  const std::string error = parse(v, target.input);
                  if (!error.empty()) throw CLI::ValidationError(error);
                },
                help);
          };
        }
      },
      o.field);
  if (!o.range.empty()) s.range = o.range;
  s.default_note = o.default_note;
  for (const SourceRule& r : o.rules) add_rule(s, r);
  return s;
}

// --max-memory SIZE: a budget in bytes, read as parse_memory_size reads it.
template <class S>
OptionSpec memory_option(Scope scope, std::size_t S::*field, std::string help) {
  OptionSpec mem = entry(scope, std::nullopt, "--max-memory", "SIZE", "", std::move(help));
  const auto b = field_of(mem, field);
  b->check = CLI::Validator(parse_memory_size, "", "SIZE");  // 4G -> 4 * 2^30
  b->transform = true;
  static_assert(kDefaultMemoryBudget == std::size_t{4} << 30, "the default as help shows it");
  b->show = [](const std::size_t& v) { return v == kDefaultMemoryBudget ? std::string("4G") : std::to_string(v); };
  return mem;
}

// --threads N: at most N threads, below what the process is given (io/cpus.hpp).
template <class S>
OptionSpec threads_option(Scope scope, std::optional<std::size_t> S::*field, std::string help) {
  OptionSpec s = maybe_whole(scope, std::nullopt, "--threads", "N", field, 1, kMaxThreads, "", std::move(help));
  s.default_note = "the CPUs given";
  return s;
}

std::vector<OptionSpec> make_table() {
  using L = LessonConfig;
  const auto O = Scope::Output, Le = Scope::Lesson, B = Scope::Bench;
  std::vector<OptionSpec> t;
  // The rules of the entry just added, with the sentences a student reads.
  const auto exclusive = [&t](const std::string& other, const std::string& why = "") {
    add_rule(t.back(), {SourceRule::Exclusive, other, why});
  };
  const auto only_with = [&t](const std::string& other, const std::string& why) {
    add_rule(t.back(), {SourceRule::OnlyWith, other, why});
  };
  const auto not_with_model = [&t](const std::string& why) { add_rule(t.back(), {SourceRule::NotWith, "--model", why}); };
  const std::string real_weights =
      ": the layer's real weights set d_out, the heads and the bias (pick a head with --head where a lesson uses one)";
  // Inputs, as each input source declares its options (src/inputs), then the output, on every lesson and the
  // tour.
  for (const InputSource& source : input_sources())
    for (const SourceOption& option : source.options) t.push_back(source_option(option));
  t.push_back(format_option());
  t.push_back(flag(O, std::nullopt, "--json", &OutputOptions::json, "",
                   "Print one JSON document (config, inputs, every step's tensor) instead of text; the same as "
                   "--format json; see docs/json.md"));
  exclusive("--format", " (--json is --format json)");
  t.push_back(choice(O, std::nullopt, "--color", "WHEN", &OutputOptions::color, when_words(), "",
                     "Colour: auto = when stdout is a terminal, NO_COLOR is unset and TERM is not dumb; --json never "
                     "has colour"));
  t.back().in_present = true;
  t.push_back(choice(O, std::nullopt, "--heatmap", "WHEN", &OutputOptions::heatmap, when_words(), "",
                     "Also draw weight matrices as heatmaps (token labels, every number, masked cells as a dot): auto "
                     "= when stdout is a terminal"));
  t.push_back(choice(O, std::nullopt, "--scale", "HOW", &OutputOptions::scale,
                     std::vector<std::pair<std::string, HeatScale>>{
                         {"fixed", HeatScale::Fixed}, {"matrix", HeatScale::Matrix}, {"row", HeatScale::Row}},
                     "",
                     "Heatmap colours, in every format and attn present: fixed (weights on 0 to 1, as the "
                     "probabilities they are; signed values centred on 0), matrix (its own min to max) or row (each "
                     "row's own min to max: small weights told apart next to a large one). The legend says which"));
  t.back().in_present = true;
  t.push_back(flag(O, std::nullopt, "--pause", &OutputOptions::pause, "",
                   "Wait after each step: Enter for the next, q quits at once (only when stdin and stdout are "
                   "terminals; ignored otherwise, so scripts never hang)"));
  t.push_back(flag(O, std::nullopt, "--quiet", &OutputOptions::quiet, "",
                   "Only each step's id and tensor, for diffing against the book"));
  t.push_back(flag(O, std::nullopt, "--explain,!--no-explain", &OutputOptions::explain, "",
                   "Show each step's explanation and the book's PyTorch code (default; --no-explain hides them)"));
  t.back().in_present = true;
  t.push_back(step_option());
  t.push_back(name_of(O, "--save-npy", "DIR", &OutputOptions::save_npy, "needs a directory name",
                     "Also write each step shown as a NumPy file DIR/<step id>.npy (np.load reads the tensor "
                     "back; the tour writes DIR/<lesson>/<step id>.npy); DIR is created if missing, and earlier files of "
                     "the same names are replaced only when the whole run succeeds"));
  t.push_back(memory_option(O, &OutputOptions::max_memory,
                            "Refuse a run whose estimated peak memory is larger: 1M to 1P, e.g. 512M or 16G (K, M, G, T, "
                            "P are powers of 1024); checked on the plan, before any work"));
  t.back().in_present = true;
  t.push_back(threads_option(O, &OutputOptions::threads,
                             "Compute on at most N threads (OpenBLAS's and attn's own): fewer than the CPUs the "
                             "process is given (its affinity mask, cgroup quota, OMP_NUM_THREADS and "
                             "OPENBLAS_NUM_THREADS) slows a large run, never changes a number"));
  t.back().in_present = true;
  t.push_back(lang_option(O, &OutputOptions::lang));
  t.back().in_present = true;
  // What a request to attn serve may not give: it names a file on the server, or the server decides it.
  const std::string names_file = "names a file on the server, which a request may not";
  for (OptionSpec& spec : t) {
    const std::string name = spec.spellings().front();
    if (name == "--input" || name == "--model" || name == "--save-npy") spec.web_refusal = names_file;
    if (name == "--format" || name == "--json")
      spec.web_refusal = "is the address's: /api/LESSON gives JSON, /page/LESSON the html page";
    if (name == "--pause") spec.web_refusal = "is for a terminal, not a web page";
    if (name == "--max-memory") spec.web_refusal = "is the server's (attn serve --max-memory)";
    if (name == "--threads") spec.web_refusal = "is the server's (attn serve --threads)";
    if (name == "--text" || name == "--layer" || name == "--lang") spec.in_live_bar = true;
  }

  // Lesson options, in the order the JSON config lists them.
  t.push_back(flag(Le, Opt::KvCache, "--kv-cache", &L::kv_cache, "kv_cache",
                   "Instead of the lesson: the KV-cache memory of MHA vs GQA for a model (as attn kv-cache --estimate)"));
  t.push_back(flag(Le, Opt::Estimate, "--estimate", &L::estimate, "estimate",
                   "Instead of the lesson: the KV-cache memory of MHA vs GQA for a model"));
  t.push_back(whole(Le, Opt::EmbDim, "--emb-dim", "N", &L::emb_dim, 1, std::size_t{1} << 20, "emb_dim",
                    "Embedding size (emb_dim): the size of each token's vector"));
  t.push_back(whole(Le, Opt::DOut, "--d-out", "N", &L::d_out, 1, kMaxDims, "d_out",
                    "Output dimension of the projections (per head for mha-wrapper, the whole module for mha and gqa)"));
  not_with_model(real_weights);
  t.push_back(whole(Le, Opt::Heads, "--heads", "H", &L::heads, 1, kMaxHeads, "heads",
                    "Number of attention heads (num_heads)"));
  not_with_model(real_weights);
  t.push_back(whole(Le, Opt::KvGroups, "--kv-groups", "G", &L::kv_groups, 1, kMaxHeads, "kv_groups",
                    "Number of key/value heads (num_kv_groups); each serves heads / kv-groups query heads"));
  not_with_model(real_weights);
  t.push_back(whole(Le, Opt::Layers, "--layers", "N", &L::layers, 1, 4096, "layers",
                    "Number of transformer layers (n_layers)"));
  t.push_back(whole(Le, Opt::ContextLength, "--context-length", "N", &L::context_length, 1, std::size_t{1} << 30,
                    "context_length", "Context length (context_length): the most tokens the model reads at once"));
  t.push_back(real(Le, Opt::Dropout, "--dropout", "P", &L::dropout, 0.0, 1.0, "a probability", "dropout",
                   "Dropout probability"));
  t.push_back(real(Le, Opt::DropRate, "--drop-rate", "P", &L::drop_rate, 0.0, 1.0, "a probability", "drop_rate",
                   "drop_rate of the model's configuration: every nn.Dropout's probability"));
  t.push_back(choice(Le, Opt::DropoutRng, "--dropout-rng", "RNG", &L::dropout_rng,
                     std::vector<std::pair<std::string, DropoutRng>>{{"default", DropoutRng::Default},
                                                                     {"mkl", DropoutRng::Mkl}},
                     "dropout_rng",
                     "How dropout masks are drawn, which depends on how your PyTorch was built: 'default' as builds "
                     "without MKL (Apple silicon, Debian's python3-torch; the book's numbers), 'mkl' as the x86-64 "
                     "Linux/Windows wheels. python -c 'import torch; print(torch.backends.mkl.is_available())' "
                     "prints True for mkl"));
  t.push_back(maybe_whole(Le, Opt::Seed, "--seed", "N", &L::seed, 0, std::numeric_limits<std::uint64_t>::max(), "seed",
                          "Replace every torch.manual_seed value of the lesson (default: the book's)"));
  t.back().default_note = "the book's";
  t.push_back(flag(Le, Opt::QkvBias, "--qkv-bias", &L::qkv_bias, "qkv_bias",
                   "Give the query, key and value nn.Linear layers a bias (qkv_bias=True)"));
  not_with_model(real_weights);
  t.push_back(whole(Le, Opt::Batch, "--batch", "B", &L::batch, 1, kMaxBatch, "batch",
                    "Batch size: the inputs stacked this many times (torch.stack)"));
  t.push_back(whole(Le, Opt::Prompt, "--prompt", "N", &L::prompt, 1, kMaxTokens, "prompt",
                    "Cache the first N tokens in one call, then decode the rest one token per call"));
  t.back().range = "1 to the number of tokens - 1";
  t.push_back(whole(Le, Opt::MaxNewTokens, "--max-new-tokens", "N", &L::max_new_tokens, 1, kMaxNewTokens,
                    "max_new_tokens", "How many tokens to generate, one forward pass each"));
  t.push_back(maybe_whole(Le, Opt::Head, "--head", "H", &L::head, 0, kMaxHeads - 1, "head",
                          "With --model: which of the layer's heads gives the query, key and value weights"));
  t.back().default_note = "0";
  t.back().range = "0 to the model's heads - 1";
  only_with("--model", "it picks a block or a head of a pretrained GPT-2");
  t.push_back(choice(Le, Opt::DType, "--dtype", "TYPE", &L::dtype,
                     std::vector<std::pair<std::string, CacheDType>>{
                         {"fp32", CacheDType::FP32}, {"bf16", CacheDType::BF16}, {"fp16", CacheDType::FP16}},
                     "dtype", "With the memory estimate: element type of the cache, fp32, bf16 or fp16"));
  t.push_back(token_index_option());
  t.back().default_note = "1 (0 for a one-token input)";
  for (OptionSpec& spec : t)  // the live page's bar (attn serve), after --text and --layer
    for (const char* name : {"--seed", "--d-out", "--heads", "--kv-groups", "--dropout", "--head"})
      if (spec.scope == Le && spec.name == name) spec.in_live_bar = true;

  // attn bench
  t.push_back(whole(B, std::nullopt, "--batch", "B", &BenchOptions::batch, 1, kMaxBatch, "", "Batch size"));
  t.push_back(whole(B, std::nullopt, "--tokens", "N", &BenchOptions::tokens, 1, kMaxTokens, "", "Tokens per sequence"));
  t.push_back(whole(B, std::nullopt, "--dim", "N", &BenchOptions::dim, 1, kMaxDims, "", "Embedding size d_in = d_out"));
  t.push_back(whole(B, std::nullopt, "--heads", "H", &BenchOptions::heads, 1, kMaxHeads, "", "Attention heads"));
  t.push_back(whole(B, std::nullopt, "--kv-groups", "G", &BenchOptions::kv_groups, 1, kMaxHeads, "",
                    "Key/value heads of the gqa implementation"));
  t.push_back(whole(B, std::nullopt, "--repeats", "N", &BenchOptions::repeats, 1, 100, "",
                    "Timed runs per implementation, after one warm-up"));
  t.push_back(impl_option());
  t.push_back(flag(B, std::nullopt, "--decode", &BenchOptions::decode, "",
                   "Time decoding instead: one new token attending to a KV cache of each --cache length, MHA and "
                   "GQA, against this machine's memory bandwidth (--batch, --tokens and --impl do not apply)"));
  t.push_back(cache_option());
  t.push_back(isa_option());
  t.push_back(flag(B, std::nullopt, "--quick", &BenchOptions::quick, "",
                   "A quick look: measure neither the machine's FMA peak and SGEMM rates nor its memory bandwidth "
                   "(no %peak, %SGEMM, %copy), warm up with one run, and with --decode time sweeps of at most 20 "
                   "ms"));
  t.push_back(memory_option(B, &BenchOptions::max_memory,
                            "Refuse a run whose estimated peak memory is larger: 1M to 1P, e.g. 512M or 16G (K, M, G, "
                            "T, P are powers of 1024); estimated from the options, before anything is allocated"));
  t.push_back(threads_option(B, &BenchOptions::threads,
                             "Run on at most N threads, below the CPUs the process is given (its affinity mask, "
                             "cgroup quota, OMP_NUM_THREADS and OPENBLAS_NUM_THREADS); the report says how many and "
                             "what set them"));
  t.push_back(flag(B, std::nullopt, "--json", &OutputOptions::json, "", "Print the results as one JSON document"));
  t.push_back(flag(Scope::List, std::nullopt, "--json", &ListOptions::json, "", "Print the list as JSON"));
  t.push_back(lang_option(Scope::List, &ListOptions::lang));
  // attn serve
  const auto Sv = Scope::Serve;
  t.push_back(name_of(Sv, "--host", "ADDRESS", &ServeCli::host, "needs an address",
                      "The address to listen on: 127.0.0.1, this machine only (default); another address lets "
                      "anyone who reaches it use the server"));
  t.back().default_note = "127.0.0.1";
  t.push_back(whole(Sv, std::nullopt, "--port", "PORT", &ServeCli::port, 0, 65535, "",
                    "The port to listen on; 0 picks a free one (the line on stderr names it)"));
  t.push_back(name_of(Sv, "--model", "DIR", &ServeCli::model, "needs a directory (a Hugging Face GPT-2 download)",
                      "A pretrained GPT-2 (as attn LESSON --model takes it), read once at start and used by every "
                      "request: the page then has --layer and --head"));
  t.push_back(memory_option(Sv, &ServeCli::max_memory,
                            "The server's whole budget: the model, and --jobs computations at once, each checked on "
                            "its plan before any work (1M to 1P, e.g. 512M or 16G)"));
  t.push_back(whole(Sv, std::nullopt, "--jobs", "N", &ServeCli::jobs, 1, 64, "",
                    "Computations at once; a request beyond them gets 503 with Retry-After"));
  t.push_back(threads_option(Sv, &ServeCli::threads,
                             "Compute on N threads, shared among the --jobs computations at once: each gets N / jobs, "
                             "at least one; at most the CPUs the process is given"));
  t.push_back(whole(Sv, std::nullopt, "--time-limit", "SECONDS", &ServeCli::time_limit, 1, 3600, "",
                    "Stop a computation that takes longer (503)"));
  t.push_back(lang_option(Sv, &ServeCli::lang));
  t.back().help = "The language of a request that gives no lang=: en or ru (the live page's bar chooses too). Not "
                  "given: LANGUAGE, LC_ALL, LC_MESSAGES or LANG, as gettext reads them";
  t.push_back(flag(Sv, std::nullopt, "--log", &ServeCli::log, "",
                   "One line per request on stderr (method, address, status, milliseconds), escaped; nothing is "
                   "logged without it"));
  // attn present
  const auto P = Scope::Present;
  t.push_back(flag(P, std::nullopt, "--reveal", &PresentCli::reveal, "",
                   "Predict, then see: each step shows its explanation and code first, and its result on the next "
                   "key"));
  t.push_back(choice(P, std::nullopt, "--theme", "THEME", &PresentCli::theme,
                     std::vector<std::pair<std::string, Theme>>{
                         {"dark", Theme::Dark}, {"light", Theme::Light}, {"contrast", Theme::Contrast}},
                     "",
                     "Colours for the room: dark (light text on black), light (black on white, for bright rooms and "
                     "projectors that wash out dark slides) or contrast (bold white and yellow on black)"));
  return t;
}

}  // namespace

std::string whole_number_error(const std::string& value, std::uint64_t min, std::uint64_t max) {
  const std::string expected =
      "expected a whole number from " + std::to_string(min) + " to " + std::to_string(max) + ", got '" + value + "'";
  if (value.empty() || value.find_first_not_of("0123456789") != std::string::npos) return expected;
  errno = 0;
  const unsigned long long v = std::strtoull(value.c_str(), nullptr, 10);
  if (errno == ERANGE || v < min || v > max) return expected;
  return {};
}

CLI::Option* OptionSpec::add(CLI::App* app, CommandLine& target, const CommandLine& defaults,
                             const std::string& help) const {
  return binding->add(*this, app, target, defaults, help);
}
void OptionSpec::take(CommandLine& to, const CommandLine& from) const { binding->take(to, from); }
ojson OptionSpec::config(const CommandLine& c) const { return binding->config(c); }
std::string OptionSpec::shown_default(const CommandLine& c) const { return binding->shown(c); }

std::vector<std::string> OptionSpec::spellings() const {
  std::vector<std::string> out;
  std::string rest = name;
  while (!rest.empty()) {
    const auto comma = rest.find(',');
    std::string one = rest.substr(0, comma);
    if (!one.empty() && one[0] == '!') one.erase(0, 1);
    out.push_back(one);
    rest = comma == std::string::npos ? "" : rest.substr(comma + 1);
  }
  return out;
}

const std::vector<OptionSpec>& option_table() {
  static const std::vector<OptionSpec> table = make_table();
  return table;
}

const OptionSpec& lesson_option(Opt o) {
  for (const auto& s : option_table())
    if (s.scope == Scope::Lesson && s.opt == o) return s;
  throw std::logic_error("no option table entry for a lesson option");
}

bool present_takes(const OptionSpec& spec) {
  switch (spec.scope) {
    case Scope::Input:
    case Scope::Step:
    case Scope::Present: return true;
    case Scope::Output: return spec.in_present;
    case Scope::Lesson:
      for (const Lesson& lesson : lessons())
        if (lesson.modes.front().takes(*spec.opt)) return true;
      return false;
    default: return false;
  }
}

std::vector<const OptionSpec*> options_in(Scope scope) {
  std::vector<const OptionSpec*> out;
  for (const auto& s : option_table())
    if (s.scope == scope) out.push_back(&s);
  return out;
}

}  // namespace attn
