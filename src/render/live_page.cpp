// attn serve's live page (render/live_page.hpp, docs/serve.md): the html renderer's page with a control bar
// after its header, a second small script, and a Content-Security-Policy that also allows connect-src 'self'.
// The page itself is not re-rendered here: its header, its <main> and its own script stay byte for byte what
// --format html writes, so the live page cannot drift from the static one. Every text from outside (the
// values of a request, the refusal, the option help) is escaped.
#include "render/live_page.hpp"

#include <cctype>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "core/terminal_text.hpp"
#include "text/words.hpp"
#include "render/figure.hpp"
#include "render/json.hpp"
#include "render/renderer.hpp"
#include "render/web_assets.hpp"

namespace attn {

namespace {

std::string attribute(const char* name, const std::string& value) {
  return std::string(" ") + name + "=\"" + html_escape(value) + "\"";
}

std::string value_of(const LiveBar& bar, const std::string& key) {
  for (const auto& [k, v] : bar.values)
    if (k == key) return v;
  return {};
}

// The defaults the option table says in words (OptionSpec::default_note), each a phrase of the page's words.
const char* const kDefaultNotes[] = {"live_default_books", "live_default_environment"};

// A lesson's default as a placeholder shows it: a default in words ("the book's", the option table's
// default_note) in the bar's language; a number as it is.
std::string shown_default(const std::string& text, const Words& words) {
  for (const char* name : kDefaultNotes)
    if (text == Words().page(name)) return words.page(name);
  return text;
}

// A control the server's configuration refuses: its title, saying why.
std::string refusal_title(const LiveControl& c, const Words& words) {
  return words.page("live_refused_with", {{"option", "--" + c.key}, {"other", c.refused_with}});
}

// Every language's words of the bar, for the script (data-words, as ASCII JSON, then escaped).
std::string bar_words() {
  nlohmann::json all = nlohmann::json::object();
  for (const std::string& language : supported_languages()) {
    const Words words(chosen_language(language, ""));  // the page switches languages: it carries each one's
    nlohmann::json w = nlohmann::json::object();
    for (const char* name : {"recompute", "recompute_title", "bar_label"}) w[name] = words.page(std::string("live_") + name);
    w["refused_with"] = words.page("live_refused_with", {{"option", "{option}"}, {"other", "{other}"}});
    w["notes"] = nlohmann::json::object();
    for (const char* name : kDefaultNotes) w["notes"][Words().page(name)] = words.page(name);
    all[language] = w;
  }
  return json_text(all, -1, true);
}

std::string control(const LiveBar& bar, const LiveControl& c) {
  const auto taker = c.takers.find(bar.lesson);
  const bool on = taker != c.takers.end();
  const std::string placeholder = on ? shown_default(taker->second, bar.words) : "";
  const std::string title = c.refused_with.empty() ? c.help : refusal_title(c, bar.words);
  const bool text = c.key == "text" || c.type_name == "TEXT";
  // A one-letter value is a number as --help names it: P a probability, N, I, H, L whole numbers.
  const bool number = c.type_name.size() == 1 && std::isupper(static_cast<unsigned char>(c.type_name[0]));
  nlohmann::json takers = nlohmann::json::object();
  for (const auto& [lesson, shown] : c.takers) takers[lesson] = shown;
  if (!c.values.empty()) {  // a choice (--lang): its words, and "" for the default, which the placeholder names
    std::string out = "<label><code>" + markup(c.key) + "</code> <select" + attribute("id", "live-" + c.key) + attribute("name", c.key);
    if (!title.empty()) out += attribute("title", title);
    if (!c.refused_with.empty()) out += attribute("data-refused-with", c.refused_with);
    out += attribute("data-takers", json_text(takers, -1, true));
    if (!on) out += " disabled";
    out += "><option value=\"\">" + markup(placeholder) + "</option>";
    const std::string given = value_of(bar, c.key);
    for (const std::string& v : c.values)
      out += "<option" + attribute("value", v) + (v == given ? " selected" : "") + ">" + markup(v) + "</option>";
    return out + "</select></label>";
  }
  std::string out = std::string("<label") + (text ? " class=\"wide\"" : "") + "><code>" + markup(c.key) + "</code> <input";
  out += attribute("id", "live-" + c.key) + attribute("name", c.key);
  if (number) {
    out += " type=\"number\"";
    out += c.type_name == "P" ? " step=\"any\" inputmode=\"decimal\"" : " step=\"1\" inputmode=\"numeric\"";
    if (!c.min.empty()) out += attribute("min", c.min);
    if (!c.max.empty()) out += attribute("max", c.max);
  } else {
    out += " type=\"text\"";
    if (text) out += " size=\"40\"";
  }
  out += " autocomplete=\"off\" spellcheck=\"false\"";
  // From outside: shown as the page shows text, with the value itself beside it when that differs, for the
  // script to send (its fill() and current()).
  const std::string raw = value_of(bar, c.key), shown = visible(raw);
  out += attribute("value", shown);
  if (shown != raw)
    out += attribute("data-raw", json_text(nlohmann::json(raw), -1, true)) + attribute("data-shown", shown);
  if (!placeholder.empty()) out += attribute("placeholder", placeholder);
  if (!title.empty()) out += attribute("title", title);
  if (!c.refused_with.empty()) out += attribute("data-refused-with", c.refused_with);
  // Every lesson's default, for the script to follow another lesson (as ASCII JSON, then escaped).
  out += attribute("data-takers", json_text(takers, -1, true));
  if (!on) out += " disabled";
  return out + "></label>";
}

// The control bar. Without the script, the form is a plain GET of /?lesson=...&KEY=VALUE (an empty box then
// arrives as KEY=, a disabled one not at all); the script sends only the boxes that hold a value.
std::string bar_html(const LiveBar& bar) {
  const auto say = [&](const char* name) { return bar.words.page(name); };
  std::string out = "<form class=\"live\" id=\"live\" role=\"search\"" + attribute("aria-label", say("live_bar_label")) +
                    " action=\"/\" method=\"get\" novalidate" + attribute("data-lesson", bar.lesson) +
                    attribute("data-words", bar_words()) + ">";
  out += "<label><code>lesson</code> <select id=\"live-lesson\" name=\"lesson\">";
  for (const std::string& choice : bar.choices)
    out += "<option" + attribute("value", choice) + (choice == bar.lesson ? " selected" : "") + ">" + markup(choice) + "</option>";
  out += "</select></label>";
  for (const LiveControl& c : bar.controls) out += control(bar, c);
  out += "<button type=\"submit\"" + attribute("title", say("live_recompute_title")) + ">" + markup(say("live_recompute")) + "</button>";
  out += "<p class=\"live-error\" id=\"live-error\" role=\"alert\" aria-live=\"assertive\">" + markup(bar.error) + "</p>";
  return out + "</form>\n";
}

// Where `what` is in `page`, or a logic error: the page is the html renderer's, whose form this relies on.
std::size_t at(const std::string& page, const std::string& what, bool last = false) {
  const std::size_t found = last ? page.rfind(what) : page.find(what);
  if (found == std::string::npos) throw std::logic_error("live_page: the page has no " + what);
  return found;
}

// The page of a refused request: the html renderer's page of no lesson (its style, header and script), with
// an empty <main>; the bar says why.
std::string empty_page() {
  std::string page = join(find_format("html")->make({})->render(Document{}));
  const std::size_t from = at(page, "<main>") + 6, to = at(page, "</main>", true);
  return page.replace(from, to - from, "\n");
}

}  // namespace

std::string live_page(const std::string& given, const LiveBar& bar) {
  std::string page = given.empty() ? empty_page() : given;
  // From the end backwards, so each place found stays where it was.
  page.insert(at(page, "</body>", true), "<script>\n" + web_asset("live.js") + "</script>\n");
  page.insert(at(page, "</header>") + 9, "\n" + bar_html(bar));
  page.insert(at(page, "</head>"), "<style>\n" + web_asset("live.css") + "</style>\n");
  const std::string csp = "<meta http-equiv=\"Content-Security-Policy\" content=\"";
  const std::size_t from = at(page, csp) + csp.size();
  const std::size_t to = page.find('"', from);
  if (to == std::string::npos) throw std::logic_error("live_page: the page's policy is not closed");
  return page.replace(from, to - from, kLivePagePolicy);
}

}  // namespace attn
