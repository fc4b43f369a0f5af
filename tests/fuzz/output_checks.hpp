#pragma once
// What every fuzz target checks of attn's output, whatever the input was: nothing the input held can act
// on a terminal, JSON is strict RFC 8259, and a failure is one documented line. A broken check traps, which
// libFuzzer reports as a crash with the input that caused it.
#include <cctype>
#include <cstddef>
#include <string>

#include <nlohmann/json.hpp>

namespace attn_fuzz {

inline void check(bool ok) {
  if (!ok) __builtin_trap();
}

// No C0 control but the line feed (and, when colour was asked for, ESC starting a CSI colour sequence that
// attn wrote itself: ESC [ digits and semicolons, then m or K), no DEL, no C1 control in its UTF-8 form.
inline void check_terminal_safe(const std::string& text, bool colour) {
  for (std::size_t i = 0; i < text.size(); ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c == '\n') continue;
    if (c == 0x1b && colour) {
      std::size_t k = i + 1;
      check(k < text.size() && text[k] == '[');
      for (++k; k < text.size() && ((text[k] >= '0' && text[k] <= '9') || text[k] == ';'); ++k) {
      }
      check(k < text.size() && (text[k] == 'm' || text[k] == 'K'));
      i = k;
      continue;
    }
    check(c >= 0x20 && c != 0x7f);
    if (c == 0xc2 && i + 1 < text.size()) {
      const auto n = static_cast<unsigned char>(text[i + 1]);
      check(n < 0x80 || n > 0x9f);
    }
  }
}

// An HTML page (--format html) whose every tag is one attn writes: a known element, no attribute whose name
// starts with "on" (an event handler), one <script> and one <style>, whose contents are attn's own (the
// scanner skips them: they hold no '<' of the input's, which would have been escaped). Text from the input
// can only have been escaped text: a '<' it held would start an unknown tag or a second script here.
inline void check_html_safe(const std::string& html) {
  static const char* const kTags[] = {"!DOCTYPE", "html", "head", "meta", "title", "style", "body", "header", "span",
                                      "button", "main", "nav", "h2", "h3", "ol", "ul", "li", "a", "code", "section",
                                      "p", "pre", "figure", "figcaption", "svg", "defs", "pattern", "rect", "text", "g", "div", "line", "strong",
                                      "script"};
  check_terminal_safe(html, false);
  std::size_t scripts = 0, styles = 0;
  for (std::size_t i = html.find('<'); i != std::string::npos; i = html.find('<', i + 1)) {
    std::size_t k = i + 1;
    if (k < html.size() && html[k] == '/') ++k;
    const std::size_t name_start = k;
    while (k < html.size() && (std::isalnum(static_cast<unsigned char>(html[k])) || html[k] == '!')) ++k;
    const std::string name = html.substr(name_start, k - name_start);
    bool known = false;
    for (const char* t : kTags) known = known || name == t;
    check(known);
    // The attributes, to the closing '>': quoted values skipped, names never on...
    while (k < html.size() && html[k] != '>') {
      if (html[k] == '"' || html[k] == '\'') {
        const char q = html[k];
        k = html.find(q, k + 1);
        check(k != std::string::npos);
        ++k;
        continue;
      }
      if (html[k] == ' ' && k + 3 < html.size()) check(!(html[k + 1] == 'o' && html[k + 2] == 'n'));
      ++k;
    }
    check(k < html.size());
    if (html[i + 1] != '/' && (name == "script" || name == "style")) {
      ++(name == "script" ? scripts : styles);
      const std::size_t end = html.find("</" + name + ">", k);
      check(end != std::string::npos);
      i = end;
    }
  }
  check(scripts == 1 && styles == 1);
}

// Strict JSON: nlohmann refuses NaN and Infinity literals, comments and trailing commas.
inline nlohmann::json check_strict_json(const std::string& text) {
  nlohmann::json doc;
  try {
    doc = nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception&) {
    check(false);
  }
  return doc;
}

// A failure: exit 1 or 2, nothing on stdout, one line on stderr starting "attn: ", safe on a terminal,
// and never an internal error (a bug, not something the input did).
inline void check_failure(int status, const std::string& out, const std::string& err) {
  check(status == 1 || status == 2);
  check(out.empty());
  check(err.rfind("attn: ", 0) == 0);
  check(err.find('\n') == err.size() - 1);
  check(err.rfind("attn: internal error", 0) != 0);  // (the input's own text may say "internal error")
  check_terminal_safe(err, false);
}

}  // namespace attn_fuzz
