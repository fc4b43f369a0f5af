// The man page, the bash completion and the README's option tables, written from the option table
// (cli/options.cpp) and the lesson registry, so none of them can list an option the program lacks.
#include "tools/docgen.hpp"

#include <algorithm>
#include <cstdio>
#include <map>
#include <set>
#include <sstream>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "cli/bench_options.hpp"
#include "cli/cli.hpp"
#include "cli/commands.hpp"
#include "cli/options.hpp"
#include "inputs/embeddings.hpp"
#include "text/words.hpp"
#include "lessons/registry.hpp"
#include "render/json.hpp"
#include "render/renderer.hpp"

namespace attn {

namespace {

// "gqa" or "gqa --kv-cache": the subcommand and flag that run a mode.
std::string mode_command(const Lesson& lesson, const LessonMode& mode) {
  std::string c = lesson.info.name;
  if (mode.selector) c += " " + lesson_option(*mode.selector).spellings().front();
  return c;
}

// An option's default in one mode: the mode's words for it where it has some (kv-cache's --kv-groups:
// "none"), else the value of the mode's defaults.
std::string mode_default(const OptionSpec& spec, const OptionUse& use, const CommandLine& defaults) {
  return use.default_note.empty() ? spec.shown_default(defaults) : use.default_note;
}

// Every lesson mode that takes `o`, each with its default as help shows it.
struct Use {
  const Lesson* lesson;
  const LessonMode* mode;
  std::string help;
  std::string default_value;
};
std::vector<Use> uses_of(Opt o) {
  std::vector<Use> out;
  const OptionSpec& spec = lesson_option(o);
  for (const Lesson& lesson : lessons())
    for (const LessonMode& mode : lesson.modes)
      for (const OptionUse& use : mode.options)
        if (use.opt == o) {
          CommandLine defaults;
          defaults.lesson = mode.defaults;
          out.push_back({&lesson, &mode, use.help, mode_default(spec, use, defaults)});
        }
  return out;
}

std::string with_type(const OptionSpec& spec) {
  std::string out;
  for (const auto& name : spec.spellings()) out += (out.empty() ? "" : ", ") + name;
  return spec.is_flag() ? out : out + " " + spec.type_name;
}

// The default for one mode's table cell and the man page: the value, or the spec's words for it.
std::string default_text(const OptionSpec& spec, const std::string& value) {
  return value.empty() ? spec.default_note : value;
}

// ---- roff (man(7)) ----

// Text safe in a roff line: backslashes and hyphens escaped, no line starting with a control character.
std::string roff(const std::string& text) {
  std::string out;
  for (char c : text) {
    if (c == '\\') {
      out += "\\e";
    } else if (c == '-') {
      out += "\\-";
    } else {
      out += c;
    }
  }
  if (!out.empty() && (out[0] == '.' || out[0] == '\'')) out.insert(0, "\\&");
  return out;
}

// An option as a man page item: bold name, italic value, then its text.
std::string man_item(const OptionSpec& spec, const std::string& text) {
  std::string head;
  for (const auto& name : spec.spellings()) head += (head.empty() ? "" : ", ") + std::string("\\fB") + roff(name) + "\\fR";
  if (!spec.is_flag()) head += " \\fI" + roff(spec.type_name) + "\\fR";
  return ".TP\n" + head + "\n" + roff(text) + "\n";
}

std::string spec_facts(const OptionSpec& spec) {
  std::string facts;
  if (!spec.values.empty()) {
    facts += " One of:";
    for (std::size_t i = 0; i < spec.values.size(); ++i) facts += (i ? ", " : " ") + spec.values[i];
    facts += ".";
  }
  if (!spec.range.empty()) facts += " From " + spec.range + ".";
  return facts;
}

// ---- markdown ----

std::string md_cell(std::string text) {
  std::string out;
  for (char c : text) out += c == '|' ? std::string("\\|") : std::string(1, c);
  return out;
}

// "2 (gqa: 4; gqa --kv-cache: 32)": the most common default, then where it differs.
std::string md_defaults(const OptionSpec& spec, const std::vector<Use>& uses) {
  std::map<std::string, std::size_t> count;
  for (const auto& u : uses) ++count[default_text(spec, u.default_value)];
  std::string common;
  std::size_t best = 0;
  for (const auto& u : uses) {  // first in registry order among the most frequent
    const std::string d = default_text(spec, u.default_value);
    if (count[d] > best) best = count[d], common = d;
  }
  std::string others;
  for (const auto& u : uses) {
    const std::string d = default_text(spec, u.default_value);
    if (d == common) continue;
    const std::string who = mode_command(*u.lesson, *u.mode);
    others += (others.empty() ? "" : "; ") + who + ": " + d;
  }
  return others.empty() ? common : common + " (" + others + ")";
}

std::string md_lessons(const std::vector<Use>& uses) {
  std::vector<std::string> who;
  for (const auto& u : uses) {
    const std::string w = mode_command(*u.lesson, *u.mode);
    if (std::find(who.begin(), who.end(), w) == who.end()) who.push_back(w);
  }
  std::string out;
  for (const auto& w : who) out += (out.empty() ? "" : ", ") + w;
  return out;
}

// ---- bash ----

std::string words(const std::vector<std::string>& list) {
  std::string out;
  for (const auto& w : list) out += (out.empty() ? "" : " ") + w;
  return out;
}

// Step ids a lesson's first mode has with the book's configuration, for --step's completion.
std::vector<std::string> step_ids(const Lesson& lesson, const Inputs& in) {
  std::vector<std::string> ids;
  const LessonMode& mode = lesson.modes.front();
  Selection plan;
  plan.plan_only = true;
  for (const Step& s : mode.run(in, mode.defaults, plan).steps) ids.push_back(s.id);
  return ids;
}

// What attn present takes besides its own options, in words: the output options it takes by name.
std::string present_also() {
  std::string outputs;
  for (const OptionSpec* s : options_in(Scope::Output))
    if (present_takes(*s)) outputs += s->spellings().back() + ", ";
  return "the input options, " + outputs + "--step, and the lesson options of the lessons it presents as the book "
         "runs them, each applied to the lessons that take it";
}

}  // namespace

std::string man_page() {
  std::string m;
  m += ".\\\" Generated from attn's option table by attn-docgen; do not edit.\n";
  m += ".TH ATTN 1 \"\" \"attn " ATTN_VERSION "\" \"User Commands\"\n";
  m += ".SH NAME\nattn \\- every step of attention, as chapter 3 of \"Build a Large Language Model (From Scratch)\" "
       "computes it\n";
  // One line per subcommand, from the command line's own list (a new one cannot be left out); \\& after an
  // operand's "..." keeps groff from taking it for a sentence's end.
  m += ".SH SYNOPSIS\n.B attn\n.I LESSON\n.RI [ OPTIONS ]\n.br\n";
  for (const auto& [name, operand] : other_commands())
    m += ".B attn " + name + "\n" + (operand.empty() ? "" : ".RI [ \"" + roff(operand) + "\\&\" ]\n") + ".RI [ OPTIONS ]\n.br\n";
  m += ".B attn\n.RB [ \\-\\-help | \\-\\-version ]\n";
  m += ".SH DESCRIPTION\n" +
       roff("Each subcommand is one lesson of the chapter, in book order. It runs on the book's six tokens, "
            "\"Your journey starts with one step\" (or your own --input), and shows every intermediate score, "
            "weight and context tensor under the variable name the book uses, with a short explanation, the "
            "PyTorch line that computes it, and the numbers exactly as PyTorch prints them in the book. --json "
            "gives scripts the same steps as one JSON document.") +
       "\n";

  m += ".SH LESSONS\n";
  for (const Lesson& lesson : lessons()) {
    m += ".SS \"attn " + roff(lesson.info.name) + "\"\n";
    m += roff(lesson.info.title + " (" + where_in_book(lesson.info) + "). " + lesson.info.summary + ".") + "\n";
    const auto uses = lesson.option_uses();
    for (const Lesson::Use& u : uses) {
      CommandLine defaults;
      defaults.lesson = u.mode->defaults;
      const OptionSpec& spec = lesson_option(u.use->opt);
      std::string text = u.use->help.empty() ? spec.help : u.use->help;
      const std::string d = mode_default(spec, *u.use, defaults);  // (--seed and --query say theirs in their help)
      if (!d.empty())
        text += ". Default: " + d +
                (u.mode->selector ? " (with " + lesson_option(*u.mode->selector).spellings().front() + ")" : "");
      m += man_item(spec, text + "." + spec_facts(spec));
    }
    if (uses.empty()) m += roff("No options of its own; it takes the options of every lesson.") + "\n";
  }

  m += ".SH OPTIONS OF EVERY LESSON\n" + roff("Every lesson and attn tour take these (--step: the lessons only).") + "\n";
  const CommandLine defaults;
  for (Scope scope : {Scope::Input, Scope::Output, Scope::Step})
    for (const OptionSpec* spec : options_in(scope)) {
      const std::string d = default_text(*spec, spec->shown_default(defaults));
      m += man_item(*spec, spec->help + (d.empty() ? "" : ". Default: " + d) + "." + spec_facts(*spec));
    }

  m += ".SH OTHER COMMANDS\n.SS \"attn tour\"\n" +
       roff("Every lesson in book order, each with its book defaults, as one document; it takes the options of "
            "every lesson except --step.") +
       "\n.SS \"attn present [LESSON ...]\"\n" +
       roff("Full screen for class (ncurses): every lesson, or the lessons named, one step per slide. Keys: the "
            "right arrow, Space, PageDown or Enter for the next step; the left arrow, PageUp or Backspace for the "
            "previous; Home and End; [ and ] for lessons; g, a number N and Enter to go to step N of the lesson, "
            "the one titled [N/n] (g 0: the lesson's intro, its step 0); Up and Down to scroll a tall step; t for "
            "the printed tensor first (a heatmap comes first, under the title); + and - for one head of a step alone, "
            "enlarged with every number (past the last or first: every head side by side again); Tab and Shift-Tab "
            "to select a head of a grid of heads, then Enter to open it large with its labels, numbers and each "
            "query's strongest keys; n for every number of a heatmap; s "
            "to cycle the colour scale (fixed, matrix, row); b or . for a blank screen; ? for help; Esc to bring an "
            "open head back to its grid, else to quit, as q and Ctrl-C do. It takes " + present_also() + "; and these:") +
       "\n";
  for (const OptionSpec* spec : options_in(Scope::Present)) {
    const std::string d = spec->shown_default(defaults);
    m += man_item(*spec, spec->help + (d.empty() || d == "off" ? "" : ". Default: " + d) + "." + spec_facts(*spec));
  }
  m += ".SS \"attn serve\"\n" +
       roff("The lessons as live pages in a browser on this machine (cpp-httplib): / is the live page, which "
            "recomputes as you type; /page/LESSON?KEY=VALUE is the html page of attn LESSON --KEY VALUE --format "
            "html, and /api/LESSON?KEY=VALUE what attn LESSON --KEY VALUE --format json writes. A refused request is "
            "a 400 with the command line's message; a request may not name a file. Ctrl-C or SIGTERM stops it (exit "
            "0). Details: docs/serve.md.") +
       "\n";
  for (const OptionSpec* spec : options_in(Scope::Serve)) {
    const std::string d = spec->shown_default(defaults);
    m += man_item(*spec, spec->help + (d.empty() || d == "off" ? "" : ". Default: " + d) + "." + spec_facts(*spec));
  }
  m += ".SS \"attn list\"\n" + roff("The lessons in book order: section, what each shows, how to run it.") + "\n";
  for (const OptionSpec* spec : options_in(Scope::List)) m += man_item(*spec, spec->help + ".");
  std::string impls;
  for (const std::string& name : bench_impls()) impls += (impls.empty() ? "" : ", ") + name;
  m += ".SS \"attn bench\"\n" +
       roff("Times the chapter's multi-head attention implementations (" + impls + ") at GPT-2 small's "
            "size on this machine; runs the attn-bench program. Figures and method: docs/performance.md.") +
       "\n";
  m += ".PP\n" + roff("The implementations (--impl), all on the same weights:") + "\n.nf\n" + roff(bench_impls_help()) +
       ".fi\n";
  for (const OptionSpec* spec : options_in(Scope::Bench)) {
    const std::string d = spec->shown_default(defaults);
    m += man_item(*spec, spec->help + (d.empty() || d == "off" ? "" : ". Default: " + d) + "." + spec_facts(*spec));
  }

  m += ".SH EXIT STATUS\n.TP\n0\nSuccess, including \\-\\-help and \\-\\-version.\n"
       ".TP\n1\n" +
       roff("An input file cannot be read or is invalid; output cannot be written; out of memory; a helper "
            "program is missing.") +
       "\n.TP\n2\n" +
       roff("Usage: an unknown lesson or option, a bad value, a bad combination, or an option the lesson does "
            "not take.") +
       "\n.PP\n" + roff("Every failure prints one line on standard error, starting \"attn: \", and nothing on "
                        "standard output.") +
       "\n";
  m += ".SH ENVIRONMENT\n.TP\n.B NO_COLOR\n" + roff("Set and not empty: no colour with --color auto.") +
       "\n.TP\n.B TERM\n" + roff("dumb: no colour with --color auto.") + "\n.TP\n.B COLORTERM\n" +
       roff("truecolor or 24bit: heatmaps in 24-bit colour.") + "\n.TP\n.B ATTN_DATA_DIR\n" +
       roff("A directory holding journey.json, looked in before the installed one.") + "\n";
  m += ".SH FILES\n.TP\n.I " + roff(ATTN_INSTALL_DATADIR "/journey.json") + "\n" +
       roff("The book's six tokens and their embeddings (also found in ../share/attn beside the executable).") +
       "\n.TP\n.I " + roff(ATTN_INSTALL_DATADIR "/gpt2-tf-to-hf.py") + "\n" +
       roff("python3 gpt2-tf-to-hf.py SRC DEST converts the GPT-2 that the book's gpt_download.py downloads (a "
            "TensorFlow checkpoint, in SRC) into the four files --model reads, in the new directory DEST. It needs "
            "TensorFlow and NumPy.") +
       "\n.TP\n.I " + roff(ATTN_INSTALL_LIBEXECDIR "/attn-bench") + "\n" +
       roff("The benchmark program behind attn bench (also found beside the executable, or in ../libexec/attn).") +
       "\n";
  m += ".SH EXAMPLES\n.nf\n" +
       roff("attn simple                     # one query, step by step\n"
            "attn present                    # every lesson full screen, for class\n"
            "attn tour --pause               # every lesson, one step per Enter\n"
            "attn mha --heads 4 --d-out 4    # the chapter's MultiHeadAttention\n"
            "attn kv-cache                   # decoding token by token: the KV cache\n"
            "attn kv-cache --estimate        # the KV-cache memory of MHA and GQA\n"
            "attn simple --json | jq '.steps[] | select(.id == \"attn_weights_2\") | .data'") +
       "\n.fi\n";
  m += ".SH SEE ALSO\n" +
       roff("jq(1). The project's docs/: a page per lesson, json.md (the JSON schema), errors.md (limits and "
            "exit statuses), classroom.md, performance.md.") +
       "\n";
  return m;
}

std::string bash_completion() {
  const Inputs book = load_embeddings(default_embeddings_path());
  std::vector<std::string> commands;
  for (const Lesson& lesson : lessons()) commands.push_back(lesson.info.name);
  commands.insert(commands.end(), {"list", "tour", "present", "serve", "bench"});

  const auto names_of = [](const std::vector<const OptionSpec*>& specs) {
    std::vector<std::string> out;
    for (const OptionSpec* s : specs)
      for (const auto& n : s->spellings()) out.push_back(n);
    return out;
  };
  std::vector<const OptionSpec*> common = options_in(Scope::Input);
  for (const OptionSpec* s : options_in(Scope::Output)) common.push_back(s);

  std::string b;
  b += "# bash completion for attn, generated from its option table by attn-docgen; do not edit.\n";
  b += "# Completes subcommands, options, the words of enum options, and step ids after --step.\n";
  b += "_attn() {\n";
  b += "  local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]} cmd= i\n";
  b += "  for ((i = 1; i < COMP_CWORD; i++)); do\n";
  b += "    case ${COMP_WORDS[i]} in -*) ;; *) cmd=${COMP_WORDS[i]}; break ;; esac\n";
  b += "  done\n";
  b += "  if [[ -z $cmd ]]; then\n";
  b += "    COMPREPLY=($(compgen -W \"" + words(commands) + " --help --version\" -- \"$cur\"))\n";
  b += "    return\n";
  b += "  fi\n";
  // Values of the option before the cursor.
  b += "  case $prev in\n";
  b += "    --input) COMPREPLY=($(compgen -f -- \"$cur\")); compopt -o filenames 2>/dev/null; return ;;\n";
  b += "    --save-npy) COMPREPLY=($(compgen -d -- \"$cur\")); compopt -o filenames 2>/dev/null; return ;;\n";
  std::set<std::string> done{"--input", "--save-npy"};
  for (const OptionSpec& spec : option_table()) {
    const std::string name = spec.spellings().front();
    if (spec.is_flag() || spec.values.empty() || done.count(name)) continue;
    done.insert(name);
    if (spec.type_name.find(",") != std::string::npos) {  // a comma-separated list: complete its last item
      b += "    " + name + ") COMPREPLY=($(compgen -P \"${cur%\"${cur##*,}\"}\" -W \"" + words(spec.values) +
           "\" -- \"${cur##*,}\")); return ;;\n";
    } else {
      b += "    " + name + ") COMPREPLY=($(compgen -W \"" + words(spec.values) + "\" -- \"$cur\")); return ;;\n";
    }
  }
  b += "    --step)\n      local ids\n      case $cmd in\n";
  for (const Lesson& lesson : lessons())
    b += "        " + lesson.info.name + ") ids=\"" + words(step_ids(lesson, book)) + "\" ;;\n";
  {  // attn present: the steps of every lesson
    std::set<std::string> all;
    for (const Lesson& lesson : lessons())
      for (const auto& id : step_ids(lesson, book)) all.insert(id);
    b += "        present) ids=\"" + words(std::vector<std::string>(all.begin(), all.end())) + "\" ;;\n";
  }
  b += "      esac\n";
  b += "      COMPREPLY=($(compgen -P \"${cur%\"${cur##*,}\"}\" -W \"$ids\" -- \"${cur##*,}\")); return ;;\n";
  std::set<std::string> valued;
  for (const OptionSpec& spec : option_table())
    if (!spec.is_flag() && spec.values.empty() && !done.count(spec.spellings().front()) &&
        spec.spellings().front() != "--step")
      valued.insert(spec.spellings().front());
  std::string valued_list;
  for (const auto& v : valued) valued_list += (valued_list.empty() ? "" : "|") + v;
  b += "    " + valued_list + ") return ;;  # a number or NxD: nothing to offer\n";
  b += "  esac\n";
  // The options of the subcommand.
  b += "  local opts\n  case $cmd in\n";
  for (const Lesson& lesson : lessons()) {
    std::vector<std::string> opts = names_of(common);
    for (const auto& n : names_of(options_in(Scope::Step))) opts.push_back(n);
    for (const Lesson::Use& u : lesson.option_uses())
      for (const auto& n : lesson_option(u.use->opt).spellings()) opts.push_back(n);
    b += "    " + lesson.info.name + ") opts=\"" + words(opts) + "\" ;;\n";
  }
  b += "    tour) opts=\"" + words(names_of(common)) + "\" ;;\n";
  {
    std::vector<const OptionSpec*> present;
    for (const OptionSpec& s : option_table())
      if (present_takes(s)) present.push_back(&s);
    std::vector<std::string> opts = names_of(present);
    for (const Lesson& lesson : lessons()) opts.push_back(lesson.info.name);
    b += "    present) opts=\"" + words(opts) + "\" ;;\n";
  }
  b += "    list) opts=\"" + words(names_of(options_in(Scope::List))) + "\" ;;\n";
  b += "    bench) opts=\"" + words(names_of(options_in(Scope::Bench))) + "\" ;;\n";
  b += "    serve) opts=\"" + words(names_of(options_in(Scope::Serve))) + "\" ;;\n";
  b += "    *) return ;;\n  esac\n";
  b += "  COMPREPLY=($(compgen -W \"$opts --help\" -- \"$cur\"))\n";
  b += "}\n";
  b += "complete -F _attn attn\n";
  return b;
}

std::string readme_option_tables() {
  const CommandLine defaults;
  std::string t;
  t += "Every lesson (and `attn tour`, except `--step`):\n\n";
  t += "| option | default | meaning |\n| --- | --- | --- |\n";
  for (Scope scope : {Scope::Input, Scope::Output, Scope::Step})
    for (const OptionSpec* spec : options_in(scope))
      t += "| `" + with_type(*spec) + "` | " + md_cell(default_text(*spec, spec->shown_default(defaults))) + " | " +
           md_cell(spec->help) + " |\n";
  t += "| `-h`, `--help` | | the lesson's options with their defaults |\n";
  t += "\nLesson options (each lesson's `--help` says what it means there):\n\n";
  t += "| option | lessons | default | meaning |\n| --- | --- | --- | --- |\n";
  for (const OptionSpec* spec : options_in(Scope::Lesson)) {
    const std::vector<Use> uses = uses_of(*spec->opt);
    t += "| `" + with_type(*spec) + "` | " + md_lessons(uses) + " | " + md_cell(md_defaults(*spec, uses)) + " | " +
         md_cell(spec->help) + " |\n";
  }
  t += "\n`attn present [LESSON ...]` (also " + present_also() + "):\n\n";
  t += "| option | default | meaning |\n| --- | --- | --- |\n";
  for (const OptionSpec* spec : options_in(Scope::Present))
    t += "| `" + with_type(*spec) + "` | " + md_cell(spec->shown_default(defaults)) + " | " + md_cell(spec->help) + " |\n";
  t += "\n`attn serve` ([docs/serve.md](docs/serve.md)):\n\n| option | default | meaning |\n| --- | --- | --- |\n";
  for (const OptionSpec* spec : options_in(Scope::Serve))
    t += "| `" + with_type(*spec) + "` | " + md_cell(spec->default_note.empty() ? spec->shown_default(defaults) : spec->default_note) +
         " | " + md_cell(spec->help) + " |\n";
  t += "\n`attn bench`:\n\n| option | default | meaning |\n| --- | --- | --- |\n";
  for (const OptionSpec* spec : options_in(Scope::Bench)) {
    std::string d = default_text(*spec, spec->shown_default(defaults));
    if (spec->spellings().front() == "--impl") d = "all";
    t += "| `" + with_type(*spec) + "` | " + md_cell(d) + " | " + md_cell(spec->help) + " |\n";
  }
  return t;
}


namespace {

// One libFuzzer dictionary entry: the bytes in double quotes, a quote, a backslash and every byte outside
// printable ASCII as \xNN.
std::string dict_entry(const std::string& bytes) {
  std::string e = "\"";
  for (const unsigned char c : bytes) {
    if (c == '"' || c == '\\' || c < 0x20 || c > 0x7e) {
      char hex[5];
      std::snprintf(hex, sizeof hex, "\\x%02x", c);
      e += hex;
    } else {
      e += static_cast<char>(c);
    }
  }
  return e + "\"\n";
}

}  // namespace

std::string fuzz_dictionary() {
  std::vector<std::string> words;
  for (const Lesson& lesson : lessons()) words.push_back(lesson.info.name + "\n");
  words.insert(words.end(), {"tour\n", "list\n", "present\n"});  // not serve: it listens until stopped
  std::set<std::string> seen;
  const auto add = [&](const std::string& w) {
    if (seen.insert(w).second) words.push_back(w);
  };
  for (const OptionSpec& spec : option_table()) {
    for (const auto& n : spec.spellings()) add(n + "\n");
    for (const auto& v : spec.values) add(v + "\n");
  }
  const Inputs book = load_embeddings(default_embeddings_path());
  for (const Lesson& lesson : lessons())
    for (const auto& id : step_ids(lesson, book)) add(id + "\n");
  // What the table does not say: standard input (a line "--" starts it), values of the shapes the
  // options take, and hostile bytes for the checks on what reaches a terminal.
  for (const char* w : {"--input\n-\n", "\n--\n", "Your journey\n", "3x4\n", "0.5\n", "1e20", "-0.0", "\x1b[2J",
                        "{\"tokens\": [\"\x1b]0;x\x07\"], \"embeddings\": [[1e20, 2]]}"})
    add(w);
  std::string d = "# libFuzzer dictionary for fuzz_cli, generated by attn-docgen fuzz-dict from the lesson registry and the\n"
                  "# option table: subcommands, options, their values and step ids, each on its own line of argv.\n";
  for (const auto& w : words) d += dict_entry(w);
  return d;
}

std::string translation_file(const std::string& language, const std::string& english_path, const std::string& english,
                             const std::string& translation_path, const std::string& translation) {
  const Content content(english_path, english, translation.empty() ? "" : translation_path, translation);
  nlohmann::ordered_json entries = nlohmann::ordered_json::object();
  std::vector<std::string> order;  // the English file's order, which paths() (a map's) is not
  for (const std::string& pattern : content.step_patterns())
    for (const std::string& path : content.translatable_paths())
      if (path.rfind("steps/" + pattern + "/", 0) == 0) order.push_back(path);
  for (const std::string& path : content.translatable_paths())
    if (path.rfind("steps/", 0) != 0) order.push_back(path);
  for (const std::string& path : order) {
    nlohmann::ordered_json entry{{"source", text_hash(content.english(path))}};
    if (const auto text = content.fresh_translation(path)) {
      entry["text"] = *text;
    } else {
      entry["english"] = content.english(path);
      entry["text"] = "";
    }
    entries[path] = entry;
  }
  return json_text(nlohmann::ordered_json{{"language", language}, {"entries", entries}}, 2) + "\n";
}

namespace {

// A table cell's text: on one line, its pipes escaped (GFM splits a row at every other "|").
std::string table_cell(const std::string& text) {
  std::string out;
  for (const char c : text) out += c == '|' ? std::string("\\|") : c == '\n' ? std::string(" ") : std::string(1, c);
  return out;
}

// The page's own words (data/lessons/docs.json, translated as every content file is), filled in.
std::string page_word(const Words& words, const std::string& name, const std::string& lesson, const std::string& language) {
  return words.phrase("docs", name, {{"lesson", lesson}, {"language", language}});
}

}  // namespace

std::string lesson_page(const std::string& language, const std::string& lesson) {
  const auto& languages = supported_languages();
  if (std::find(languages.begin(), languages.end(), language) == languages.end())
    throw std::invalid_argument("no language \"" + language + "\"");
  const Words words(chosen_language(language, ""));  // the page's language, as --lang gives it
  const auto w = [&](const char* name) { return page_word(words, name, lesson, language); };
  const auto& all = lessons();
  const auto found = std::find_if(all.begin(), all.end(), [&](const Lesson& l) { return l.info.name == lesson; });
  if (found == all.end()) throw std::invalid_argument("no lesson \"" + lesson + "\"");
  // The steps as the lesson's run fills them in, in the language, through the command line itself.
  std::ostringstream out, err;
  if (run_cli({lesson, "--lang", language, "--json"}, out, err) != 0)
    throw std::runtime_error("attn " + lesson + " --lang " + language + " failed: " + err.str());
  const auto doc = nlohmann::json::parse(out.str());
  const Content& content = words.content(lesson);
  std::string page = "# attn " + lesson + ": " + content.piece("lesson/title", "") + "\n\n" +
                     content.piece("lesson/summary", "") + "\n\n" + w("section") + ": " + found->info.section + ". " +
                     w("english") + ": [" + lesson + ".md](" + lesson + ".md).\n\n## " + w("run") + "\n\n" +
                     w("run_text") + "\n\n```sh\nattn " + lesson + " --lang " + language + "\n```\n\n## " + w("steps") +
                     "\n\n" + w(found->modes.front().uses_inputs ? "steps_text" : "steps_text_example") + "\n\n" + w("header") + "\n| --- | --- | --- |\n";
  for (const auto& step : doc.at("steps"))
    page += "| `" + step.at("id").get<std::string>() + "` | " + table_cell(step.at("title").get<std::string>()) + " | " +
            table_cell(step.at("explanation").get<std::string>()) + " |\n";
  return page + "\n_" + w("generated") + "_\n";
}

}  // namespace attn
