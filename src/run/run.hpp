#pragma once
// The application, with no command line in it: a Request (which lessons, on which inputs, which steps,
// within which memory budget) becomes a Document (run), which a renderer and a sink then take (emit, in
// run/emit.hpp). attn's subcommands are its callers (src/cli): a lesson, the tour, attn present; a local
// web page would be one more.
#include <cstddef>
#include <istream>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/limits.hpp"
#include "inputs/sources.hpp"
#include "lessons/config.hpp"
#include "render/renderer.hpp"

namespace attn {

// The registry's entries (lessons/registry.hpp), named here only: a Request says which lesson and mode run,
// and whoever reads a Request (attn serve) needs nothing of how a lesson computes.
struct Lesson;
struct LessonMode;

// How the output looks and where it goes (every lesson and the tour; attn present takes --color and
// --max-memory).
struct OutputOptions {
  std::string format = "text";  // --format: a name from render/formats.cpp
  bool json = false;            // --json: the same as --format json
  When color = When::Auto;
  When heatmap = When::Auto;
  HeatScale scale = HeatScale::Fixed;  // --scale: the heatmaps' colours
  bool pause = false;
  bool quiet = false;
  bool explain = true;
  std::vector<std::string> steps;  // --step: only these step ids (lessons only)
  std::string save_npy;            // --save-npy DIR: also each shown step as DIR/<id>.npy; empty: no files
  std::size_t max_memory = kDefaultMemoryBudget;  // --max-memory SIZE: the budget, in bytes
  std::optional<std::size_t> threads;  // --threads N: at most N (io/cpus.hpp); none: the CPUs given
  std::string lang;  // --lang: "en", "ru"; "" when not given (then the environment's, Terminal::language)
};

// One lesson of a run: its mode, the values it runs with, and those values as its JSON config lists them
// (the mode's options in the option table's order; the caller knows the table).
struct LessonRun {
  const Lesson* lesson = nullptr;
  const LessonMode* mode = nullptr;
  LessonConfig config;
  nlohmann::ordered_json options = nlohmann::ordered_json::object();
};

struct Request {
  std::string command;             // what the run is called in messages and the document: "mha", "tour"
  std::vector<LessonRun> lessons;  // in the order they run: one for a lesson, the deck for the tour
  InputOptions input;
  OutputOptions output;
  // The words of the run, in its language: English, or the translations in data/lessons/<language>/ (an
  // entry a translation lacks stays English): --lang, else the environment's (chosen_language, where the
  // caller binds the options).
  Words words;
  // attn present: --step's ids apply to the lessons that have them, and a lesson with none of them is left
  // out; an id that no lesson has is a usage error. (Else every lesson must have every id.)
  bool steps_where_found = false;
};

// Where a run reads and reports: --input -'s stream, and the progress line ("computing mha... 2.4 s", on
// `err` while a run takes longer than a second, erased when it ends) when `progress` is set.
struct RunStreams {
  std::istream& in;
  std::ostream& err;
  bool progress = false;
};

// Loads the inputs, plans every lesson, has `renderer` check each plan (its limits; its working memory
// counts in the budget), refuses a run past the budget (a UsageError that gives the estimate, before any
// step is computed), then computes the steps shown. --save-npy's DIR is checked, not yet touched.
Document run(const Request& request, const Renderer& renderer, const RunStreams& streams);

}  // namespace attn
