// The shape of the program (docs/architecture.md): the registry and the option table are the only places
// that know the lessons and options; every option a lesson mode does not use is refused; the output format
// is a renderer picked by --format; the benchmark's process-wide settings stay in the attn-bench program,
// and its failures map to the documented exit statuses like every other subcommand's.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdlib>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "cli/options.hpp"
#include "core/strings.hpp"
#include "core/torch_random.hpp"
#include "inputs/embeddings.hpp"
#include "inputs/sources.hpp"
#include "lessons/lessons.hpp"
#include "render/renderer.hpp"
#include "support.hpp"

using attn_test::quote;
using attn_test::run;
using attn_test::shell;
using ojson = nlohmann::ordered_json;

namespace {

// "3.5.1, 3.5.3" -> {3, 5, 1}; a section of the book's bonus material ("ch04/04_gqa") -> {99}.
std::vector<int> first_section(const std::string& section) {
  std::vector<int> parts;
  // Bonus material of the book's repository ("ch04/04_gqa") comes after its chapter's sections.
  if (section.rfind("ch", 0) == 0) return {std::stoi(section.substr(2, 2)), 99};
  std::size_t at = 0;
  while (at < section.size() && std::isdigit(static_cast<unsigned char>(section[at]))) {
    std::size_t end = at;
    while (end < section.size() && std::isdigit(static_cast<unsigned char>(section[end]))) ++end;
    parts.push_back(std::stoi(section.substr(at, end - at)));
    if (end >= section.size() || section[end] != '.') break;
    at = end + 1;
  }
  return parts;
}

template <class J>
std::vector<std::string> keys_of(const J& object) {
  std::vector<std::string> keys;
  for (const auto& [k, v] : object.items()) keys.push_back(k);
  return keys;
}

attn_test::Run run_as(const std::vector<std::string>& args, const attn::Terminal& term) {
  std::ostringstream out, err;
  std::istringstream in;
  attn_test::Run r;
  r.status = attn::run_cli(args, out, err, in, term);
  r.out = out.str();
  r.err = err.str();
  return r;
}

}  // namespace

TEST_CASE("the registry holds the chapter's lessons in book order, each option in the option table", "[architecture]") {
  const auto& all = attn::lessons();
  REQUIRE(all.size() >= 8);
  std::vector<int> last;
  std::set<attn::Opt> used;
  for (const auto& lesson : all) {
    INFO(lesson.info.name);
    const std::vector<int> section = first_section(lesson.info.section);
    REQUIRE_FALSE(section.empty());
    CHECK(section >= last);  // book order by the first section each lesson covers; bonus material last
    last = section;
    REQUIRE_FALSE(lesson.modes.empty());
    CHECK_FALSE(lesson.modes.front().selector.has_value());
    for (std::size_t m = 1; m < lesson.modes.size(); ++m) CHECK(lesson.modes[m].selector.has_value());
    for (const auto& mode : lesson.modes)
      for (const auto& use : mode.options) {
        CHECK_NOTHROW(attn::lesson_option(use.opt));
        used.insert(use.opt);
      }
  }
  // No lesson option in the table that no lesson takes.
  for (const attn::OptionSpec* spec : attn::options_in(attn::Scope::Lesson)) {
    INFO(spec->name);
    CHECK(used.count(*spec->opt) == 1);
    CHECK_FALSE(spec->key.empty());
  }
  CHECK(attn::find_lesson("mha") != nullptr);
  CHECK(attn::find_lesson("attention") == nullptr);
}

TEST_CASE("options a lesson or its mode does not use are usage errors that name them", "[architecture][errors]") {
  struct Unused {
    std::vector<std::string> args;
    std::string message;
  };
  const std::vector<Unused> cases{
      {{"gqa", "--emb-dim", "64"}, "--emb-dim only applies with --kv-cache"},
      {{"gqa", "--layers", "2"}, "--layers only applies with --kv-cache"},
      {{"gqa", "--kv-cache", "--d-out", "4"}, "--d-out does not apply with --kv-cache"},
      {{"gqa", "--kv-cache", "--seed", "1"}, "--seed does not apply with --kv-cache"},
      {{"gqa", "--kv-cache", "--random", "4x4"}, "--random does not apply with --kv-cache"},
      {{"simple", "--heads", "2"}, "attn simple does not take --heads"},
      {{"all-tokens", "--query", "1"}, "attn all-tokens does not take --query"},
      {{"causal", "--heads", "2"}, "attn causal does not take --heads"},
      {{"dropout", "--batch", "3"}, "attn dropout does not take --batch"},
      {{"mha", "--kv-groups", "1"}, "attn mha does not take --kv-groups"},
      {{"mha-wrapper", "--kv-cache"}, "attn mha-wrapper does not take --kv-cache"},
      {{"tour", "--seed", "7"}, "attn tour runs every lesson with the book's values and does not take --seed"},
      {{"simple", "--json", "--format", "text"}, "--json and --format exclude each other"},
      {{"gqa", "--kv-cache", "--step", "keys"}, "--step keys: this report of attn gqa has no steps"},
      {{"kv-cache", "--dropout", "0.1"}, "attn kv-cache does not take --dropout"},
      {{"kv-cache", "--kv-cache"}, "attn kv-cache does not take --kv-cache"},
      {{"kv-cache", "--estimate", "--prompt", "2"}, "--prompt does not apply with --estimate"},
      {{"kv-cache", "--context-length", "64"}, "--context-length only applies with --estimate"},
      {{"gqa", "--prompt", "2"}, "attn gqa does not take --prompt"},
  };
  for (const auto& c : cases) {
    INFO(c.args[0] << " " << c.args[1]);
    const auto r = run(c.args);
    CHECK(r.status == 2);
    CHECK(r.out.empty());
    CHECK(r.err.rfind("attn: " + c.message, 0) == 0);
    CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
  }
  // The same options where they apply are accepted.
  CHECK(run({"gqa", "--kv-cache", "--emb-dim", "64", "--heads", "4", "--kv-groups", "2"}).status == 0);
  CHECK(run({"mha", "--heads", "1"}).status == 0);
}

TEST_CASE("every cross-option rule of the table is enforced with its own message, before any work",
          "[architecture][errors]") {
  // A value each option's type accepts; a rule is checked before anything is read, so --model's directory
  // need not exist.
  const auto value_for = [](const attn::OptionSpec& s) -> std::vector<std::string> {
    const std::string name = s.spellings().front();
    if (s.is_flag()) return {name};
    if (name == "--random") return {name, "3x3"};
    if (name == "--format") return {name, "text"};
    if (name == "--input") return {name, attn::default_embeddings_path()};
    if (name == "--model") return {name, "/no/such/model"};
    if (name == "--text") return {name, "Hello"};
    return {name, "1"};
  };
  const auto& table = attn::option_table();
  const auto spec_of = [&](const std::string& name, attn::Scope scope) -> const attn::OptionSpec& {
    for (const auto& s : table)
      if (s.spellings().front() == name && (s.scope == scope || s.scope == attn::Scope::Input ||
                                            s.scope == attn::Scope::Output))
        return s;
    FAIL("no option " << name);
    throw;
  };
  // A lesson that takes the option (and --model, when a rule names it); none: the option is not a lesson's.
  const auto lesson_for = [](const attn::OptionSpec& s) -> std::string {
    for (const attn::Lesson& l : attn::lessons())
      if (l.modes.front().takes_model && (!s.opt || l.modes.front().takes(*s.opt))) return l.info.name;
    return "";
  };
  std::size_t rules = 0;
  for (const auto& spec : table) {
    if (spec.scope != attn::Scope::Input && spec.scope != attn::Scope::Output && spec.scope != attn::Scope::Lesson)
      continue;
    if (spec.excludes.empty() && spec.needs.empty()) continue;
    const std::string lesson = lesson_for(spec);
    INFO(spec.name);
    REQUIRE(!lesson.empty());
    for (const bool exclusion : {true, false}) {
      for (const auto& rule : exclusion ? spec.excludes : spec.needs) {
        ++rules;
        std::vector<std::string> args{lesson};
        for (const auto& a : value_for(spec)) args.push_back(a);
        if (exclusion)
          for (const auto& a : value_for(spec_of(rule.other, spec.scope))) args.push_back(a);
        std::string command = "attn";
        for (const auto& a : args) command += " " + a;
        INFO(command);
        const auto r = run(args);
        CHECK(r.status == 2);
        CHECK(r.out.empty());
        CHECK(r.err.rfind("attn: " + rule.message + " (see 'attn " + lesson + " --help')\n", 0) == 0);
      }
    }
  }
  CHECK(rules >= 16);  // the rules of --input, --text, --d-in, --embedding-seed, --model, --layer, --json, the shapes, --head
}

TEST_CASE("the input sources: one at a time, also for a caller without the option table", "[architecture][inputs]") {
  attn::InputOptions opt;
  opt.input = attn::default_embeddings_path();
  opt.random = std::make_pair(std::size_t{3}, std::size_t{2});
  std::istringstream no_input;
  const auto no_check = [](std::size_t) {};
  CHECK_THROWS_WITH(attn::load_inputs(opt, no_input, no_check),
                    Catch::Contains("the inputs come from one source: not both file and random"));
  opt.input.clear();
  CHECK(attn::load_inputs(opt, no_input, no_check).embeddings.shape(0) == 3);
  // --text with --model is the model's text, not a source of its own; without --model, its own.
  opt = {};
  opt.text = "Hello";
  CHECK(attn::inputs_config(opt, attn::load_inputs(opt, no_input, no_check)).contains("d_in"));
}

TEST_CASE("the JSON config: input, the mode's options in table order, then what the lesson derived", "[architecture][json]") {
  for (const auto& lesson : attn::lessons()) {
    INFO(lesson.info.name);
    const auto r = run({lesson.info.name, "--json"});
    REQUIRE(r.status == 0);
    const auto config = ojson::parse(r.out)["config"];
    // "input" first, for a lesson that takes one (chapter 4's run the book's own example tensors).
    std::vector<std::string> expected;
    if (lesson.modes.front().uses_inputs) expected.push_back("input");
    for (const attn::OptionSpec* spec : attn::options_in(attn::Scope::Lesson))
      if (lesson.modes.front().takes(*spec->opt)) expected.push_back(spec->key);
    std::vector<std::string> keys = keys_of(config);
    REQUIRE(keys.size() >= expected.size());
    keys.resize(expected.size());
    CHECK(keys == expected);
  }
  const auto trainable = ojson::parse(run({"trainable", "--json"}).out)["config"];
  CHECK(trainable["seed"].is_null());
  CHECK(trainable["query"] == 1);
  CHECK(trainable["manual_seeds"] == ojson({123, 123, 789}));
  CHECK(keys_of(trainable).back() == "manual_seeds");
  // Given values reach the config as the option table writes them.
  const auto mha = nlohmann::json::parse(
      run({"mha", "--json", "--heads", "1", "--seed", "7", "--dropout", "0.5", "--dropout-rng", "mkl"}).out)["config"];
  CHECK(mha["heads"] == 1);
  CHECK(mha["seed"] == 7);
  CHECK(mha["dropout"] == 0.5);
  CHECK(mha["dropout_rng"] == "mkl");
  CHECK(mha["manual_seeds"] == nlohmann::json({7}));
  // The KV-cache mode reads no embeddings: its config starts with the mode's own flag.
  const auto kv = ojson::parse(run({"gqa", "--kv-cache", "--json", "--dtype", "fp16"}).out)["config"];
  CHECK(keys_of(kv) == std::vector<std::string>{"kv_cache", "emb_dim", "heads", "kv_groups", "layers",
                                                "context_length", "batch", "dtype"});
  CHECK(kv["heads"] == 32);
  CHECK(kv["dtype"] == "fp16");
  const auto estimate = ojson::parse(run({"kv-cache", "--estimate", "--json"}).out)["config"];
  CHECK(keys_of(estimate) == std::vector<std::string>{"estimate", "emb_dim", "heads", "kv_groups", "layers",
                                                      "context_length", "batch", "dtype"});
  // --text: what reproduces the inputs follows "input", before the lesson's options.
  const auto text = ojson::parse(run({"causal", "--json", "--text", "Hi there", "--d-in", "4"}).out)["config"];
  const std::vector<std::string> text_keys = keys_of(text);
  REQUIRE(text_keys.size() > 4);
  CHECK(std::vector<std::string>(text_keys.begin(), text_keys.begin() + 5) ==
        std::vector<std::string>{"input", "text", "d_in", "embedding_seed", "d_out"});
  CHECK(text["text"] == "Hi there");
  CHECK(text["d_in"] == 4);
  CHECK(text["embedding_seed"] == 123);
  // kv-cache's --kv-groups has no default value: null without it (MultiHeadAttention), as seed is.
  const auto decoded = ojson::parse(run({"kv-cache", "--json"}).out);
  CHECK(decoded["config"]["kv_groups"].is_null());
  CHECK(decoded["config"]["prompt"] == 1);
  CHECK(decoded["modules"][0]["name"] == "mha");
  const auto grouped = ojson::parse(run({"kv-cache", "--json", "--kv-groups", "1"}).out);
  CHECK(grouped["config"]["kv_groups"] == 1);
  CHECK(grouped["modules"][0]["name"] == "gqa");
}

TEST_CASE("a lesson's --help shows each lesson's own options, defaults and help, and none it does not take", "[architecture][cli]") {
  for (const auto& lesson : attn::lessons()) {
    INFO(lesson.info.name);
    auto h = run({lesson.info.name, "--help"});
    REQUIRE(h.status == 0);
    h.out = h.out.substr(0, h.out.find("Examples:"));  // the options, not the footer's examples
    for (const auto& mode : lesson.modes)
      for (const auto& use : mode.options) CHECK(h.out.find(attn::lesson_option(use.opt).name) != std::string::npos);
    for (const attn::OptionSpec* spec : attn::options_in(attn::Scope::Lesson)) {
      if (!lesson.takes(*spec->opt)) CHECK(h.out.find(spec->name + " ") == std::string::npos);
    }
  }
  CHECK(run({"dropout", "--help"}).out.find("--dropout P=0.5") != std::string::npos);
  CHECK(run({"causal", "--help"}).out.find("--dropout P=0 ") != std::string::npos);
  CHECK(run({"gqa", "--help"}).out.find("--emb-dim N=4096") != std::string::npos);
  // Help wraps at 80 columns: look for the text with its line breaks as spaces.
  std::string wrapper_help;
  for (const std::string& word : attn::wrap_words(run({"mha-wrapper", "--help"}).out, std::string::npos))
    wrapper_help += word;
  CHECK(wrapper_help.find("(--d-out 1 is exercise 3.2)") != std::string::npos);
  CHECK(run({"simple", "--help"}).out.find("--format FORMAT=text") != std::string::npos);
  CHECK(run({"bench", "--help"}).out.find("--heads H=12") != std::string::npos);
}

TEST_CASE("the --format option picks a renderer, and --json is --format json", "[architecture][cli]") {
  REQUIRE(attn::formats().size() >= 2);
  CHECK(attn::formats().front().name == "text");
  for (const char* lesson : {"simple", "gqa"}) {
    INFO(lesson);
    CHECK(run({lesson, "--format", "json"}).out == run({lesson, "--json"}).out);
    CHECK(run({lesson, "--format", "text"}).out == run({lesson}).out);
  }
  CHECK(run({"tour", "--format", "json"}).out == run({"tour", "--json"}).out);
  const auto bad = run({"simple", "--format", "xml"});
  CHECK(bad.status == 2);
  std::string names;  // "text or json", as many as are registered
  for (std::size_t i = 0; i < attn::formats().size(); ++i)
    names += (i == 0 ? "" : i + 1 == attn::formats().size() ? " or " : ", ") + attn::formats()[i].name;
  CHECK(bad.err == "attn: --format: expected " + names + ", got 'xml' (see 'attn simple --help')\n");
}

TEST_CASE("the --step option shows only the steps asked for, with their place in the lesson", "[architecture][cli]") {
  const auto text = run({"simple", "--step", "attn_weights_2,context_vec_2"});
  REQUIRE(text.status == 0);
  CHECK(text.out.find("[10/12] attn_weights_2 -- ") != std::string::npos);
  CHECK(text.out.find("tensor([0.1385, 0.2379, 0.2333, 0.1240, 0.1082, 0.1581])") != std::string::npos);
  CHECK(text.out.find("[12/12] context_vec_2 -- ") != std::string::npos);
  CHECK(text.out.find("[3/12]") == std::string::npos);
  const auto doc = nlohmann::json::parse(run({"simple", "--json", "--step", "context_vec_2"}).out);
  REQUIRE(doc["steps"].size() == 1);
  CHECK(doc["steps"][0]["id"] == "context_vec_2");
  const auto quiet = run({"all-tokens", "--quiet", "--step", "attn_weights"});
  CHECK(quiet.out.rfind("attn_weights\ntensor([[0.2098,", 0) == 0);
  const auto bad = run({"simple", "--step", "attn_weights"});
  CHECK(bad.status == 2);
  CHECK(bad.out.empty());
  CHECK(bad.err.rfind("attn: --step attn_weights: attn simple has no such step; its steps are inputs, query, "
                      "attn_scores_2,", 0) == 0);
  const auto tour = run({"tour", "--step", "inputs"});
  CHECK(tour.status == 2);
  CHECK(tour.err.rfind("attn: attn tour shows every step of every lesson and does not take --step; give it to "
                       "one lesson: attn LESSON --step ID", 0) == 0);
}

namespace {

// --random N x D, as the command line makes it: torch.rand(N, D) after torch.manual_seed(0).
attn::Inputs random_inputs(std::size_t n, std::size_t d) {
  attn::Inputs in;
  attn::TorchGenerator gen(0);
  in.embeddings = gen.rand(n, d);
  for (std::size_t i = 0; i < n; ++i) in.tokens.push_back("x" + std::to_string(i + 1));
  in.source = "test";
  return in;
}

}  // namespace

TEST_CASE("with --step, a lesson computes only what the steps asked for need", "[architecture][step]") {
  using attn::Selection;
  // Exercise 3.3: GPT-2's sizes. The parameter count needs the module, not one forward pass.
  const attn::Inputs gpt2_sized = random_inputs(1024, 768);
  attn::LessonConfig cfg = attn::book_config("mha");
  cfg.d_out = 768;
  cfg.heads = 12;
  const attn::Trace count = attn::run_mha(gpt2_sized, cfg, Selection{{"num_params"}, {}});
  CHECK(count.values_computed == 0);
  REQUIRE(count.step("num_params").python_int.has_value());
  CHECK(*count.step("num_params").python_int == 2360064);
  CHECK_FALSE(count.step("context_vecs").computed);
  CHECK(count.step("context_vecs").shape == std::vector<std::size_t>{2, 1024, 768});

  // The scores need the batch, the query and key projections, their split into heads, the (identity)
  // repeat of the keys, and the product: 7 values and the step. Not the values, the softmax or out_proj.
  const attn::Inputs book = attn::load_embeddings(attn::default_embeddings_path());
  const attn::LessonConfig mha = attn::book_config("mha");
  const attn::Trace scores = attn::run_mha(book, mha, Selection{{"attn_scores"}, {}});
  CHECK(scores.values_computed == 8);
  const attn::Trace full = attn::run_mha(book, mha);
  CHECK(full.values_computed > 30);
  CHECK(scores.step("attn_scores").tensor == full.step("attn_scores").tensor);
  CHECK_FALSE(scores.step("attn_weights").computed);
  CHECK(full.step("attn_weights").computed);

  // A step of the lesson's first part computes nothing of the module's.
  const attn::Trace early = attn::run_causal(book, attn::book_config("causal"), Selection{{"mask"}, {}});
  CHECK(early.values_computed == 2);
  CHECK(early.step("mask").tensor == attn::run_causal(book, attn::book_config("causal")).step("mask").tensor);

  // A cache after token 3 needs the batch, and for each of the four calls so far its slice of the batch,
  // its new keys and the cache they extend: 13 values and the step. No query, score, weight or out_proj.
  const attn::Trace cache = attn::run_kv_cache(book, attn::book_config("kv-cache"), Selection{{"cache_k_3"}, {}});
  CHECK(cache.values_computed == 14);
  CHECK(cache.step("cache_k_3").tensor == attn::run_kv_cache(book, attn::book_config("kv-cache")).step("cache_k_3").tensor);
  // The cost and the memory come from the shapes: nothing is computed for them.
  CHECK(attn::run_kv_cache(book, attn::book_config("kv-cache"), Selection{{"macs", "cache_bytes"}, {}}).values_computed == 0);

  // --help and the completion list the steps without computing any.
  Selection plan;
  plan.plan_only = true;
  const attn::Trace listed = attn::run_gqa(book, attn::book_config("gqa"), plan);
  CHECK(listed.values_computed == 0);
  CHECK(listed.steps.size() == 18);
  CHECK(std::none_of(listed.steps.begin(), listed.steps.end(), [](const attn::Step& s) { return s.computed; }));
}

TEST_CASE("lazy values are nodes the trace owns, computed from their arguments, and a lesson returns only a resolved trace",
          "[architecture][step]") {
  // What a slip would have been undefined behaviour before does not compile now (tried by hand: each
  // lesson mistake below fails to build with the static_assert's message). A computation that captures a
  // local, by reference or by value, is refused by Trace::lazy and Trace::add: they static_assert this trait.
  int local = 0;
  const auto by_reference = [&local] { return local; };
  const auto by_value = [local] { return local; };
  const auto from_arguments = [](const attn::Vector& x, std::size_t i) { return x(i); };
  (void)by_reference, (void)by_value, (void)from_arguments;
  static_assert(!attn::takes_inputs_as_arguments_v<decltype(by_reference)>);
  static_assert(!attn::takes_inputs_as_arguments_v<decltype(by_value)>);
  static_assert(attn::takes_inputs_as_arguments_v<decltype(from_arguments), attn::Node<attn::Vector>, std::size_t>);
  static_assert(attn::takes_inputs_as_arguments_v<decltype(&attn::softmax_naive), attn::Node<attn::Vector>>);
  // Nor may an input be a raw pointer, which could point at a local.
  static_assert(!attn::takes_inputs_as_arguments_v<decltype(from_arguments), const attn::Vector*, std::size_t>);
  // A lesson that forgets resolve() does not compile: a Trace is no ResolvedTrace, only resolve() makes one,
  // and a function returning a Trace is no lesson mode's Run.
  using Forgetful = attn::Trace (*)(const attn::Inputs&, const attn::LessonConfig&, const attn::Selection&);
  static_assert(!std::is_convertible_v<attn::Trace, attn::ResolvedTrace>);
  static_assert(!std::is_constructible_v<attn::ResolvedTrace, attn::Trace>);
  static_assert(!std::is_constructible_v<attn::LessonMode::Run, Forgetful>);
  static_assert(std::is_constructible_v<attn::LessonMode::Run, decltype(&attn::run_simple)>);

  // The trace owns the values: a handle outlives the scope that made it, and the computation sees its
  // inputs as arguments. Only what a shown step needs is computed; resolve() then frees every value, and
  // reading a handle after it is a logic_error at once, in every build.
  attn::Trace t(attn::LessonInfo{"test", "0", "", ""}, random_inputs(3, 2), attn::Selection{{"doubled"}, {}});
  attn::Node<attn::Vector> doubled;
  {
    const attn::Node<attn::Vector> x = t.keep(attn::Vector{1.0f, -2.0f});  // (2,)
    doubled = t.lazy<attn::Vector>([](const attn::Vector& x, float by) { return attn::Vector(by * x); }, x, 2.0f);
  }
  t.add("doubled", "", "", "", {2}, doubled);
  t.add("unshown", "", "", "", {2}, [](const attn::Vector& d) { return attn::Vector(d + 1.0f); }, doubled);
  const attn::ResolvedTrace r = t.resolve();
  CHECK(r.values_computed == 2);  // the node and the step that shows it; not the unshown step
  CHECK(r.step("doubled").tensor == attn::AnyTensor(attn::Vector{2.0f, -4.0f}));
  CHECK_FALSE(r.step("unshown").computed);
  REQUIRE_THROWS_AS(doubled(), std::logic_error);
  CHECK_THROWS_WITH(doubled(), Catch::Contains("reads a lazy value after Trace::resolve()"));
  // Resolved once only, and what it checked the plan with (the caller's, referring to its locals) is not kept.
  CHECK_FALSE(r.selection.before_work);
  attn::ResolvedTrace again = r;
  CHECK_THROWS_WITH(again.resolve(), Catch::Contains("Trace::resolve() called twice"));

  // A trace whose nodes read its inputs is refused if it moved before resolving.
  attn::Trace first(attn::LessonInfo{"test", "0", "", ""}, random_inputs(3, 2));
  const attn::Node<attn::Matrix> inputs = first.embeddings();
  first.add("row_sums", "", "", "", {3}, [](const attn::Matrix& inputs) { return attn::row_sums(inputs); }, inputs);
  attn::Trace moved = std::move(first);
  CHECK_THROWS_WITH(moved.resolve(), Catch::Contains("moved its trace before Trace::resolve()"));
}

TEST_CASE("the JSON size limit is checked on the plan, before any step is computed", "[architecture][step][json]") {
  // 2,048 tokens, one head: four (2, 1, 2048, 2048) weight tensors are over 33,554,432 numbers together.
  bool checked = false;
  std::size_t computed_when_checked = 99;
  attn::Selection watch{{}, [&](const attn::Trace& plan) {
                          checked = true;
                          computed_when_checked = plan.values_computed;
                        }};
  attn::LessonConfig cfg = attn::book_config("mha");
  cfg.d_out = 4;
  cfg.heads = 1;
  (void)attn::run_mha(random_inputs(8, 4), cfg, watch);
  CHECK(checked);
  CHECK(computed_when_checked == 0);

  const auto refused = run({"mha", "--random", "2048x4", "--d-out", "4", "--heads", "1", "--json"});
  CHECK(refused.status == 2);
  CHECK(refused.out.empty());
  CHECK(refused.err.rfind("attn: the JSON would hold ", 0) == 0);
  CHECK(refused.err.find(" numbers, more than the limit of 33,554,432; pick steps with --step") != std::string::npos);
  const auto one = run({"mha", "--random", "2048x4", "--d-out", "4", "--heads", "1", "--json", "--step", "num_params"});
  REQUIRE(one.status == 0);
  const auto doc = nlohmann::json::parse(one.out);
  CHECK(doc["steps"][0]["data"] == 68);  // 3 * (4 x 4) weights, out_proj's 4 x 4 and its bias of 4
  CHECK(doc["inputs"].contains("tokens"));
  CHECK_FALSE(doc["inputs"].contains("embeddings"));
}

TEST_CASE("attn's operator new is the memory budget's, and the attn-bench program's counter is its own", "[architecture][e2e]") {
  // nm lists what an executable defines; a replacement operator new is a defined symbol "operator new(...)".
  // attn's holds a run to its budget while it plans (core/heap_budget_new.cpp); the benchmark's counts every
  // allocation (bench/alloc_counter.cpp), and must never apply to a lesson, nor the budget to a benchmark.
  const auto count = [](const std::string& exe, const std::string& symbol) {
    return shell("nm -C --defined-only " + quote(exe) + " | grep -c " + quote(symbol) + " || true").out;
  };
  CHECK(count(ATTN_EXE, "operator new(") != "0\n");
  CHECK(count(ATTN_EXE, "HeapBudget::before_allocation") != "0\n");
  CHECK(count(ATTN_EXE, "alloc_counter") == "0\n");
  CHECK(count(ATTN_BENCH_EXE, "operator new(") != "0\n");
  CHECK(count(ATTN_BENCH_EXE, "alloc_counter::live") != "0\n");  // its operator new (a program links only one)
}

TEST_CASE("attn loads neither oneDNN nor OpenMP, only the attn-bench program (whose fast kernels use them) does",
          "[architecture][e2e]") {
  // The two cost every process about 15 ms to load, and no lesson runs the fast paths (kernels/fast.cpp).
  const auto libraries = [](const std::string& exe) { return shell("ldd " + quote(exe)).out; };
  const std::string attn = libraries(ATTN_EXE), bench = libraries(ATTN_BENCH_EXE);
  CHECK(attn.find("libdnnl") == std::string::npos);
  CHECK(attn.find("libgomp") == std::string::npos);
  CHECK(bench.find("libdnnl") != std::string::npos);  // the same check finds them where they are
  CHECK(bench.find("libgomp") != std::string::npos);
}

TEST_CASE("attn bench: errors map to the documented statuses, and progress goes to the error stream", "[architecture][bench]") {
  const auto bad = run({"bench", "--dim", "10", "--heads", "3"});
  CHECK(bad.status == 2);
  CHECK(bad.err == "attn: --dim 10 is not divisible by --heads 3 (see 'attn bench --help')\n");
  CHECK(run({"bench", "--repeats", "0"}).status == 2);
  // On a terminal, attn-bench's progress lines reach run_cli's error stream, not the process's stderr.
  attn::Terminal term;
  term.stderr_tty = true;
  const auto tiny = run_as({"bench", "--batch", "1", "--tokens", "8", "--dim", "8", "--heads", "2", "--kv-groups", "1",
                            "--repeats", "1", "--impl", "mha,fused", "--json"},
                           term);
  REQUIRE(tiny.status == 0);
  CHECK(tiny.err == "attn: bench: mha done\nattn: bench: fused done\n");
  CHECK(nlohmann::json::parse(tiny.out)["results"].size() == 2);
}

TEST_CASE("attn bench out of memory: exit 1 and one line, not an abort", "[architecture][bench][errors]") {
  attn_test::not_under_asan("it needs more address space than the limit allows");
  // mha's (1, 12, 4096, 4096) scores alone are 805 MB, past a 700 MB address-space limit.
  const auto r = shell("ulimit -v 700000; " + quote(ATTN_EXE) +
                       " bench --tokens 4096 --batch 1 --impl mha 2>&1 >/dev/null; echo \"exit $?\"");
  CHECK(r.out == "attn: out of memory\nexit 1\n");
}
