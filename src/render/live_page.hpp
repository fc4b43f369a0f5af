#pragma once
// attn serve's live page (docs/serve.md): the html page of one lesson (or the tour) as --format html writes
// it, with a control bar generated from the option table and a small script that recomputes as you type:
// it fetches /page/LESSON?... from the same server and swaps the new page's contents in, keeps the state in
// the address (/?lesson=mha&text=...&seed=5), and shows a refusal inline, in the CLI's words. The page stays
// self-contained: its style and script (data/web/live.css and live.js) are inline, and its CSP allows
// connect-src 'self' only.
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "text/words.hpp"

namespace attn {

// The Content-Security-Policy of --format html's page (html.cpp writes it in the page, attn serve sends it
// too): nothing may be fetched. The live page's adds its own server, and nothing else.
inline const std::string kPagePolicy = "default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:";
inline const std::string kLivePagePolicy = kPagePolicy + "; connect-src 'self'";

// One control of the bar: a lesson option or an input option a request may give.
struct LiveControl {
  std::string key;        // the query key: the option's long name without its dashes ("seed", "d-out", "text")
  std::string type_name;  // "N", "P", "TEXT": how --help names its value
  std::string help;       // the option's help line (the control's title)
  std::string min, max;   // a number's range, as text ("" when the option has none)
  // The choices of the lesson control that take it, each with its default as --help shows it ("" for none,
  // "the book's"): a control is disabled, and not sent, for a lesson that does not take it.
  std::map<std::string, std::string> takers;
  std::vector<std::string> values;  // a choice's words (--lang: en, ru), drawn as a list; empty for a box
  // The option of the server's own command line that excludes this one ("--model": attn serve --model DIR
  // refuses --heads, whose value the model's layer sets), "" for none: then no lesson takes it (`takers` is
  // empty), and its title says why.
  std::string refused_with;
};

struct LiveBar {
  std::vector<std::string> choices;   // the lesson control's choices: every lesson, in book order, then "tour"
  std::string lesson;                 // the choice shown
  std::vector<LiveControl> controls;  // in the bar's order, "text" first
  std::vector<std::pair<std::string, std::string>> values;  // the request's options (key, value), as given
  std::string error;                  // a refusal in the CLI's words, shown inline ("" for none)
  Words words;                        // the bar's own: the request's --lang, else the server's
};

// The live page: `page` (the html renderer's whole output for bar.lesson and bar.values; "" when the request
// was refused, and then the page is the bar and bar.error) with the bar after its header, the live script,
// and a Content-Security-Policy that allows connect-src 'self' and nothing else from outside.
std::string live_page(const std::string& page, const LiveBar& bar);

}  // namespace attn
