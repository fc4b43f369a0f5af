#pragma once
// From a parsed subcommand to what it asks to run: the options in effect (the mode's defaults, then what
// was given, each checked to apply, then the option table's rules), and the lessons they run with their
// values and JSON config, as a Request (run/run.hpp) in the words --lang, or else `language`, chooses.
#include <string>
#include <vector>

#include "cli/commands.hpp"
#include "run/run.hpp"

namespace attn {

// The options given on the command line over the defaults of the chosen mode (none: the tour, attn present,
// bench, serve), each checked to apply; a UsageError for one that does not, or that breaks a rule.
CommandLine effective(const Sub& sub, const LessonMode* mode, const CommandLine& parsed);

// The lessons of the tour, or of attn present: those named, in the order given, else every lesson (with
// --model, every lesson that takes it).
std::vector<const Lesson*> deck_lessons(const Sub& sub, const CommandLine& parsed, bool model);
// attn present's lessons, each as the book runs it (its first mode) with the lesson options given that it
// takes; a lesson option that none of them takes is a usage error naming it and the lessons that do.
std::vector<LessonRun> present_runs(const Sub& sub, const std::vector<const Lesson*>& deck, const CommandLine& parsed,
                                    const CommandLine& options);

// A run of `lessons`, in the words of --lang, else of `otherwise` (the environment's language; a web
// request's is English, as the server adds its own language to a request that gives none).
Request request_for(std::string command, std::vector<LessonRun> lessons, const CommandLine& options,
                    const std::string& otherwise);
// attn LESSON: the lesson in the mode its options pick.
Request lesson_request(const Sub& sub, const CommandLine& parsed, const std::string& language);
// attn tour: every lesson (with --model, every lesson that takes it) with the book's values, planned first.
Request tour_request(const Sub& sub, const CommandLine& parsed, const std::string& language);

}  // namespace attn
