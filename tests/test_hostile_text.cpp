// Text from outside can never act on a terminal (docs/errors.md, "Text from outside"): token text, file
// names, cells, option values and subcommand names are shown with control characters made visible, in
// the text view, its heatmaps and every error line; JSON keeps the exact strings, RFC 8259-escaped.
#include <catch2/catch.hpp>

#include <fstream>
#include <regex>

#include <nlohmann/json.hpp>

#include "core/terminal_text.hpp"
#include "support.hpp"

using attn::backslash_replaced;
using attn::clip_label;
using attn::clip_to_width;
using attn::token_repr;
using attn::display_width;
using attn::visible;
using attn_test::run;

namespace {

// Bytes a terminal would act on: C0 controls but the line feed, DEL, and the UTF-8 of C1 controls.
std::size_t control_bytes(const std::string& s) {
  std::size_t n = 0;
  for (std::size_t i = 0; i < s.size(); ++i) {
    const auto c = static_cast<unsigned char>(s[i]);
    if ((c < 0x20 && c != '\n') || c == 0x7f) ++n;
    if (c == 0xc2 && i + 1 < s.size() && static_cast<unsigned char>(s[i + 1]) >= 0x80 &&
        static_cast<unsigned char>(s[i + 1]) <= 0x9f)
      ++n;
  }
  return n;
}

// Hostile tokens: clear the screen, set the window title (OSC 0, ended by BEL), write the clipboard
// (OSC 52), fake a colour, carriage return over the line, NUL, DEL, a C1 CSI, a bidi override.
const std::vector<std::string> kHostile{
    "\x1b[2J\x1b[H", "\x1b]0;owned\x07", "\x1b]52;c;ZWNobyBoaQ==\x07", "\x1b[31mred", std::string("a\rb\0c", 5),
    "del\x7f", "c1\xc2\x9b", "\xe2\x80\xae" "evil"};

const attn_test::Scratch& scratch() {
  static const attn_test::Scratch s;
  return s;
}

std::string write_tokens_file(const std::vector<std::string>& tokens) {
  nlohmann::json doc;
  doc["tokens"] = tokens;
  nlohmann::json rows = nlohmann::json::array();
  for (std::size_t i = 0; i < tokens.size(); ++i) rows.push_back({0.1 * static_cast<double>(i + 1), 0.5, 0.25});
  doc["embeddings"] = rows;
  return scratch().file("hostile_tokens.json", doc.dump());
}

}  // namespace

TEST_CASE("visible() makes control characters, invalid bytes and bidi overrides visible, and keeps the rest",
          "[hostile]") {
  CHECK(visible("plain text, café, 日本, 👍") == "plain text, café, 日本, 👍");
  CHECK(visible("\x1b[2J") == "\\x1b[2J");
  CHECK(visible("\x1b]0;t\x07") == "\\x1b]0;t\\x07");
  CHECK(visible(std::string("a\0b", 3)) == "a\\x00b");
  CHECK(visible("tab\tcr\rlf\n") == "tab\\x09cr\\x0dlf\\x0a");
  CHECK(visible("\x7f") == "\\x7f");
  CHECK(visible("\xc2\x9b") == "\\xc2\\x9b");    // C1 CSI, as UTF-8
  CHECK(visible("\xff\xfe ok") == "\\xff\\xfe ok");  // not UTF-8
  CHECK(visible("\xe2\x80\xae!") == "\\u{202e}!");  // RIGHT-TO-LEFT OVERRIDE
  CHECK(visible("\xe2\x81\xa6") == "\\u{2066}");    // LEFT-TO-RIGHT ISOLATE
}

TEST_CASE("shell_word() quotes a path for bash only as much as it needs and escapes what visible() would",
          "[hostile]") {
  using attn::shell_word;
  CHECK(shell_word("gpt2/124M") == "gpt2/124M");
  CHECK(shell_word("/usr/share/attn/gpt2-tf-to-hf.py") == "/usr/share/attn/gpt2-tf-to-hf.py");
  CHECK(shell_word("") == "''");
  CHECK(shell_word("my models/124M") == "'my models/124M'");
  CHECK(shell_word("it's $HOME `x` *") == "'it'\\''s $HOME `x` *'");
  CHECK(shell_word("caf\xc3\xa9 \xf0\x9f\xa7\x88") == "'caf\xc3\xa9 \xf0\x9f\xa7\x88'");  // printable: kept
  CHECK(shell_word("a\nb") == "$'a\\x0ab'");
  CHECK(shell_word("it's\\\x1b[2J") == "$'it\\'s\\\\\\x1b[2J'");
  CHECK(shell_word("\xff ok") == "$'\\xff ok'");                      // not UTF-8
  CHECK(shell_word("\xe2\x80\xae" "evil") == "$'\\xe2\\x80\\xaeevil'");  // a bidi override, as its bytes
  CHECK(shell_word("c1\xc2\x9b") == "$'c1\\xc2\\x9b'");
  for (const std::string& hostile : kHostile) CHECK(visible(shell_word(hostile)) == shell_word(hostile));
}

TEST_CASE("bash reads every shell_word() back as the exact bytes it quoted", "[hostile][e2e]") {
  std::vector<std::string> words;  // no NUL: no path holds one, and bash ends a $'...' word there
  for (const std::string& w : kHostile)
    if (w.find('\0') == std::string::npos) words.push_back(w);
  for (const char* w : {"", "plain/path-1.2", "my models/124M", "it's", "a\\b", "'", "\\'", "\xff\xfe", "$(id)", "x\ny"})
    words.emplace_back(w);
  for (const std::string& w : words) {
    INFO(visible(w));
    const attn_test::Run r = attn_test::shell("bash -c " + attn_test::quote("printf %s " + attn::shell_word(w)));
    CHECK(r.status == 0);
    CHECK(r.out == w);
  }
}

TEST_CASE("token_repr: a token as Python's repr prints it with spaces as the open box and bytes not UTF-8 as b'...'",
          "[hostile]") {
  // Expectations from Python 3's repr(), with each space then written as "␣" (U+2423).
  CHECK(token_repr("Your") == "'Your'");
  CHECK(token_repr(" journey") == "'\xe2\x90\xa3journey'");  // GPT-2's leading space, marked
  CHECK(token_repr("New York") == "'New\xe2\x90\xa3York'");   // every space: the token stays one word when wrapped
  CHECK(token_repr("") == "''");
  // Quotes: single unless the text holds a ' and no " (then double, the ' kept); a quote of the kind used escaped.
  CHECK(token_repr("'t") == "\"'t\"");
  CHECK(token_repr("can't") == "\"can't\"");
  CHECK(token_repr("say \"hi\"") == "'say\xe2\x90\xa3\"hi\"'");
  CHECK(token_repr("both ' and \"") == "'both\xe2\x90\xa3\\'\xe2\x90\xa3" "and\xe2\x90\xa3\"'");
  CHECK(token_repr("back\\slash") == "'back\\\\slash'");
  // Controls as repr escapes them: \t \n \r, the rest \xNN; C1 controls, format characters (bidi overrides,
  // the zero-width joiner) and separators other than the space as \xNN, \uNNNN or \UNNNNNNNN.
  CHECK(token_repr("\x1b[2J") == "'\\x1b[2J'");
  CHECK(token_repr("a\tb\nc\rd") == "'a\\tb\\nc\\rd'");
  CHECK(token_repr(std::string("a\0b", 3)) == "'a\\x00b'");
  CHECK(token_repr("\x7f") == "'\\x7f'");
  CHECK(token_repr("\xc2\x85") == "'\\x85'");                 // NEXT LINE, a C1 control
  CHECK(token_repr("\xc2\xa0nbsp") == "'\\xa0nbsp'");          // NO-BREAK SPACE
  CHECK(token_repr("\xe2\x80\xae" "evil") == "'\\u202eevil'");  // RIGHT-TO-LEFT OVERRIDE
  CHECK(token_repr("zw\xe2\x80\x8dj") == "'zw\\u200dj'");      // ZERO WIDTH JOINER
  CHECK(token_repr("\xf3\xa0\x80\x81") == "'\\U000e0001'");    // LANGUAGE TAG
  CHECK(token_repr("\xe2\x90\xa3") == "'\\u2423'");             // a real open box is not a space
  // Printable text as it is: accents, combining marks, wide characters, emoji.
  CHECK(token_repr("caf\xc3\xa9") == "'caf\xc3\xa9'");
  CHECK(token_repr("e\xcc\x81") == "'e\xcc\x81'");
  CHECK(token_repr("日本") == "'日本'");
  CHECK(token_repr("👍") == "'👍'");
  // Not whole UTF-8 (a piece of a character GPT-2 split over tokens): Python's repr of the bytes.
  CHECK(token_repr(" \xf0\x9f") == "b'\xe2\x90\xa3\\xf0\\x9f'");
  CHECK(token_repr("\xa7") == "b'\\xa7'");
  CHECK(token_repr("caf\xc3\xa9\xf0") == "b'caf\\xc3\\xa9\\xf0'");  // every byte past ASCII, as bytes' repr
  CHECK(token_repr("'\xff") == "b\"'\\xff\"");
  CHECK(token_repr("\\\xff\t") == "b'\\\\\\xff\\t'");
  // Whatever the token, the form acts on no terminal and is XML-safe: visible() and xml_safe() leave it alone.
  for (const std::string& t : kHostile) {
    INFO(t);
    CHECK(visible(token_repr(t)) == token_repr(t));
    CHECK(attn::xml_safe(token_repr(t)) == token_repr(t));
  }
  // JSON's form of a token: Python's bytes.decode("utf-8", "backslashreplace").
  CHECK(backslash_replaced(" \xf0\x9f") == " \\xf0\\x9f");
  CHECK(backslash_replaced("caf\xc3\xa9") == "caf\xc3\xa9");
}

TEST_CASE("clip_label cuts between whole characters and whole escapes and says so with an ellipsis", "[hostile]") {
  const std::string dots = "\xe2\x80\xa6";
  CHECK(clip_label("'Your'", 6) == "'Your'");  // fits: as it is, no ellipsis
  CHECK(clip_label("'journey'", 8) == "'journe" + dots);  // seven columns and the ellipsis
  CHECK(display_width(clip_label("'journey'", 5)) == 5);
  // Never inside an escape: b'␣\xf0\x9f' in 8 columns is b'␣\xf0 and the ellipsis, never b'␣\xf0\x9.
  CHECK(clip_label("b'\xe2\x90\xa3\\xf0\\x9f'", 8) == "b'\xe2\x90\xa3\\xf0" + dots);
  CHECK(clip_label("b'\xe2\x90\xa3\\xf0\\x9f'", 7) == "b'\xe2\x90\xa3" + dots);
  CHECK(clip_label("b'\xe2\x90\xa3\\xf0\\x9f'", 10) == "b'\xe2\x90\xa3\\xf0" + dots);
  CHECK(clip_label("b'\xe2\x90\xa3\\xf0\\x9f'", 11) == "b'\xe2\x90\xa3\\xf0" + dots);  // \x9f and the ellipsis: 12
  CHECK(clip_label("b'\xe2\x90\xa3\\xf0\\x9f'", 12) == "b'\xe2\x90\xa3\\xf0\\x9f'");
  CHECK(clip_label("'\\u202eevil'", 6) == "'" + dots);
  CHECK(clip_label("'\\u202eevil'", 7) == "'" + dots);
  CHECK(clip_label("'\\u202eevil'", 8) == "'\\u202e" + dots);
  CHECK(clip_label("'\\U000e0001'", 10) == "'" + dots);
  CHECK(clip_label("'a\\\\b'", 3) == "'a" + dots);       // \\ is one escape
  CHECK(clip_label("'a\\\\b'", 4) == "'a" + dots);
  CHECK(clip_label("'a\\\\b'", 5) == "'a\\\\" + dots);
  CHECK(clip_label("x\\u{202e}y", 5) == "x" + dots);  // visible()'s escapes too
  // Never inside a character: wide characters and emoji sequences stay whole.
  CHECK(clip_label("'日本語'", 6) == "'日本" + dots);
  CHECK(clip_label("'日本語'", 5) == "'日" + dots);  // 本 would need columns 4 and 5, leaving none for …
  CHECK(clip_label("'ab👨‍👩‍👧cd'", 5) == "'ab" + dots);
  CHECK(clip_label("'e\xcc\x81xyz'", 3) == "'e\xcc\x81" + dots);
  CHECK(clip_label("anything", 0).empty());
  CHECK(clip_label("ab", 1) == dots);
}

TEST_CASE("display widths come from utf8proc, and clipping never cuts a character or an emoji sequence", "[hostile]") {
  CHECK(display_width("abc") == 3);
  CHECK(display_width("日本語") == 6);
  CHECK(display_width("e\xcc\x81") == 1);  // e + combining acute
  CHECK(display_width("👍") == 2);
  CHECK(display_width("👨‍👩‍👧") == 2);  // one family: a ZWJ sequence is one cluster
  CHECK(clip_to_width("日本語", 5) == "日本");
  CHECK(clip_to_width("日本語", 1).empty());
  CHECK(clip_to_width("ab👨‍👩‍👧cd", 3) == "ab");
  CHECK(clip_to_width("ab👨‍👩‍👧cd", 4) == "ab👨‍👩‍👧");
  CHECK(clip_to_width("e\xcc\x81x", 1) == "e\xcc\x81");
}

TEST_CASE("hostile token text reaches no terminal: every lesson's text and heatmaps show it escaped", "[hostile]") {
  const std::string path = write_tokens_file(kHostile);
  for (const auto& lesson : attn::lessons()) {
    INFO("attn " << lesson.info.name);
    const auto r = run({lesson.info.name, "--input", path, "--heatmap", "always", "--color", "never"});
    if (!lesson.modes.front().uses_inputs) {  // chapter 4's, on the book's own example tensors: refused
      CHECK(r.status == 2);
      CHECK(r.out.empty());
      CHECK(r.err == "attn: attn " + lesson.info.name + " does not take --input: it reads no embeddings, only the book's own example tensors (see 'attn " + lesson.info.name + " --help')\n");
      continue;
    }
    REQUIRE(r.status == 0);
    CHECK(control_bytes(r.out) == 0);
    CHECK(r.err.empty());
    CHECK(r.out.find("\\x1b[2J\\x1b[H") != std::string::npos);  // the token list in the header
  }
  // Heatmap labels are cut after escaping: a label is a prefix of the token as token_repr shows it.
  const auto r = run({"all-tokens", "--input", path, "--heatmap", "always", "--color", "never"});
  CHECK(r.out.find("  '\\x1b]0;") != std::string::npos);
  CHECK(r.out.find("\\x1b[31m") != std::string::npos);
  // Colours on a terminal are ours only: the one ESC a token held is shown, and red is never switched on by it.
  const auto coloured = run({"simple", "--input", path, "--color", "always"});
  CHECK(coloured.out.find("\x1b[31mred") == std::string::npos);
  CHECK(coloured.out.find("\\x1b[31mred") != std::string::npos);
}

TEST_CASE("JSON keeps hostile tokens exactly, escaped as RFC 8259 requires", "[hostile][json]") {
  const std::string path = write_tokens_file(kHostile);
  const auto r = run({"simple", "--input", path, "--json"});
  REQUIRE(r.status == 0);
  CHECK(control_bytes(r.out) == 0);
  CHECK(r.out.find("\\u001b[2J") != std::string::npos);
  CHECK(r.out.find("\"del\\u007f\"") != std::string::npos);  // DEL and C1 escaped too, which RFC 8259 allows
  CHECK(r.out.find("\"c1\\u009b\"") != std::string::npos);
  const auto doc = nlohmann::json::parse(r.out);
  CHECK(doc["inputs"]["tokens"].get<std::vector<std::string>>() == kHostile);
}

TEST_CASE("error lines show control characters from paths, cells, option values and command names escaped",
          "[hostile][errors]") {
  // A cell that is not a number, holding an escape sequence.
  const std::string cell = scratch().file("hostile_cell.csv", "tok,0.5\nbad,\x1b]0;x\x07\n");
  const std::vector<std::vector<std::string>> cases{
      {"simple", "--input", "no\x1b[2Jsuch.json"},
      {"simple", "--input", cell},
      {"simple", "--query", "\x1b[31m1"},
      {"simple", "--step", "x\x07y"},
      {"mha\x1b]0;t\x07"},
      {"bench", "--shape", "\x1b[2J"},
  };
  for (const auto& args : cases) {
    INFO(visible(args.back()));
    const auto r = run(args);
    CHECK(r.status != 0);
    CHECK(r.out.empty());
    CHECK(control_bytes(r.err) == 0);
    CHECK((r.err.find("\\x1b") != std::string::npos || r.err.find("\\x07") != std::string::npos));
    CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
  }
}

TEST_CASE("a --text sentence of control characters is tokenized, but never reaches the terminal", "[hostile][gpt2]") {
  // NUL cannot be in argv; every other hostile string can, joined into one sentence.
  std::string sentence;
  for (const auto& h : kHostile)
    if (h.find('\0') == std::string::npos) sentence += h + " ";
  for (const std::string& lesson : {"simple", "mha", "kv-cache"}) {
    INFO(lesson);
    const auto text = run({lesson, "--text", sentence, "--heatmap", "always", "--color", "always"});
    REQUIRE(text.status == 0);
    // Colour escapes are attn's own (ESC [ ... m); nothing else that a terminal acts on.
    const std::string without_colour = std::regex_replace(text.out, std::regex("\x1b\\[[0-9;]*m"), "");
    CHECK(control_bytes(without_colour) == 0);
    CHECK(text.out.find("\\x1b") != std::string::npos);  // ESC is a token of its own, shown as \x1b
    // JSON keeps each token's text exactly, escaped as RFC 8259 says (DEL among them); a character GPT-2
    // splits over several tokens (the bidi override, 3 bytes) cannot be JSON text in pieces and is written
    // as its bytes' \x escapes.
    const auto doc = nlohmann::json::parse(run({lesson, "--text", sentence, "--json"}).out);
    const auto tokens = doc.at("inputs").at("tokens").get<std::vector<std::string>>();
    CHECK(doc.at("inputs").at("token_ids").size() == tokens.size());
    CHECK(std::any_of(tokens.begin(), tokens.end(), [](const std::string& t) { return t.find('\x7f') != std::string::npos; }));
    CHECK(std::any_of(tokens.begin(), tokens.end(), [](const std::string& t) { return t.find("\\xe2") != std::string::npos; }));
  }
}
