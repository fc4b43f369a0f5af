// Every bad input and bad option set gets one line on stderr naming the problem, nothing on stdout, and
// the documented exit status (docs/errors.md): 2 for usage errors, 1 for unreadable or invalid files
// and write errors. Run through the real executable, as a student or a script meets it.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "support.hpp"

using attn_test::quote;

namespace {

struct Result {
  int status = -1;
  std::string out, err;
};

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

const attn_test::Scratch& scratch() {
  static const attn_test::Scratch s;
  return s;
}

Result run_exe(const std::vector<std::string>& args, const std::string& redirect_stdout = "") {
  std::string cmd = "cd " + quote(scratch().dir) + " && " + quote(ATTN_EXE);
  for (const auto& a : args) cmd += " " + quote(a);
  const std::string out = scratch().dir + "/stdout", err = scratch().dir + "/stderr";
  cmd += " >" + (redirect_stdout.empty() ? quote(out) : redirect_stdout) + " 2>" + quote(err);
  std::remove(out.c_str());
  const int raw = std::system(cmd.c_str());
  Result r;
  r.status = WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
  r.out = slurp(out);
  r.err = slurp(err);
  return r;
}

std::string rows(std::size_t n, std::size_t d) {
  std::string csv;
  for (std::size_t i = 0; i < n; ++i) {
    for (std::size_t j = 0; j < d; ++j) csv += (j ? ",0." : "0.") + std::to_string((i + j) % 10);
    csv += "\n";
  }
  return csv;
}

struct Bad {
  std::string what;
  std::vector<std::string> args;
  int status;
  std::string needle;  // must appear in the one stderr line
};

std::vector<Bad> bad_files() {
  const attn_test::Scratch& s = scratch();
  const auto in = [&](const std::string& name, const std::string& content) {
    return std::vector<std::string>{"simple", "--input", s.file(name, content)};
  };
  return {
      {"missing file", {"simple", "--input", "nope.json"}, 1, "nope.json: cannot open"},
      {"a directory", {"simple", "--input", s.dir}, 1, "is a directory"},
      {"empty JSON", in("empty.json", ""), 1, "empty"},
      {"blank JSON", in("blank.json", " \n\t\n"), 1, "empty"},
      {"empty CSV", in("empty.csv", ""), 1, "empty"},
      {"JSON syntax", in("syntax.json", "{\"embeddings\": [[1,]]}"), 1, "syntax.json:1:20: invalid JSON"},
      {"JSON cut short", in("short.json", "{\"embeddings\": [[1, 2]"), 1, "invalid JSON"},
      {"JSON scalar", in("scalar.json", "42"), 1, "embeddings"},
      {"JSON without embeddings", in("noemb.json", "{\"tokens\": [\"a\"]}"), 1, "\"embeddings\""},
      {"embeddings not an array", in("notarr.json", "{\"embeddings\": 5}"), 1, "array of rows"},
      {"row not an array", in("flat.json", "{\"embeddings\": [1, 2]}"), 1, "embeddings[0]"},
      {"ragged JSON", in("ragged.json", "[[1, 2], [3]]"), 1, "row 2 has 1 value, row 1 has 2"},
      {"text in JSON", in("text.json", "[[1, \"x\"]]"), 1, "embeddings[0][1] is not a number"},
      {"boolean in JSON", in("bool.json", "[[true]]"), 1, "not a number"},
      {"null in JSON", in("null.json", "[[null]]"), 1, "not a number"},
      {"zero tokens", in("zero.json", "{\"embeddings\": []}"), 1, "at least one token"},
      {"zero dims", in("zerod.json", "[[]]"), 1, "at least one dimension"},
      {"token count", in("count.json", "{\"tokens\": [\"a\"], \"embeddings\": [[1], [2]]}"), 1, "1 token but 2 embedding rows"},
      {"empty token list", in("none.json", "{\"tokens\": [], \"embeddings\": [[1], [2]]}"), 1, "0 tokens but 2 embedding rows"},
      {"token not a string", in("tok.json", "{\"tokens\": [1], \"embeddings\": [[1]]}"), 1, "tokens[0]"},
      {"float32 overflow", in("big.json", "[[1e39]]"), 1, "not a finite"},
      {"double overflow", in("huge.json", "[[1e999999]]"), 1, "too large"},
      {"non-UTF-8 JSON token", in("utf.json", "{\"tokens\": [\"\xff\"], \"embeddings\": [[1]]}"), 1, "UTF-8"},
      {"ragged CSV", in("ragged.csv", "1,2\n3\n"), 1, "ragged.csv:2"},
      {"text in CSV", in("text.csv", "a,1\nb,zz\n"), 1, "'zz'"},
      {"NaN in CSV", in("nan.csv", "1,nan\n"), 1, "not a finite"},
      {"inf in CSV", in("inf.csv", "1,-inf\n"), 1, "not a finite"},
      {"open quote in CSV", in("quote.csv", "\"a,1\n"), 1, "unterminated"},
      {"non-UTF-8 CSV token", in("utf.csv", "a\xc3,1\n"), 1, "UTF-8"},
      {"only comments", in("comments.csv", "# nothing here\n"), 1, "at least one token"},
      {"too many tokens", in("tall.csv", rows(8193, 1)), 1, "limit of 8192"},
      {"too many dims", in("wide.csv", rows(1, 4097)), 1, "limit of 4096"},
  };
}

std::vector<Bad> bad_options() {
  return {
      {"unknown lesson", {"attention"}, 2, "attention"},
      {"unknown option", {"simple", "--verbose"}, 2, "--verbose"},
      {"empty --input", {"simple", "--input", ""}, 2, "--input: needs a file name"},
      {"extra argument", {"mha", "now"}, 2, "now"},
      {"missing value", {"simple", "--query"}, 2, "--query"},
      {"query past the end", {"simple", "--query", "6"}, 2, "--query 6"},
      {"negative query", {"trainable", "--query", "-1"}, 2, "--query"},
      {"query not a number", {"simple", "--query", "two"}, 2, "--query"},
      {"zero heads", {"mha", "--heads", "0"}, 2, "--heads"},
      {"zero d_out", {"trainable", "--d-out", "0"}, 2, "--d-out"},
      {"huge d_out", {"mha", "--d-out", "99999999999"}, 2, "--d-out"},
      {"d_out % heads", {"mha", "--d-out", "5", "--heads", "2"}, 2, "--d-out 5"},
      {"heads % kv_groups", {"gqa", "--kv-groups", "3"}, 2, "--kv-groups 3"},
      {"zero kv groups", {"gqa", "--kv-groups", "0"}, 2, "--kv-groups"},
      {"dropout above 1", {"causal", "--dropout", "1.5"}, 2, "--dropout"},
      {"dropout below 0", {"dropout", "--dropout", "-0.5"}, 2, "--dropout"},
      {"dropout NaN", {"mha", "--dropout", "nan"}, 2, "--dropout"},
      {"dropout RNG", {"dropout", "--dropout-rng", "cuda"}, 2, "--dropout-rng"},
      {"zero batch", {"mha", "--batch", "0"}, 2, "--batch"},
      {"batch past the limit", {"gqa", "--batch", "65"}, 2, "--batch"},
      {"negative seed", {"trainable", "--seed", "-5"}, 2, "--seed"},
      {"seed past 2^64", {"mha", "--seed", "18446744073709551616"}, 2, "--seed"},
      {"random with zero tokens", {"mha", "--random", "0x5"}, 2, "--random"},
      {"random with too many tokens", {"simple", "--random", "9000x3"}, 2, "--random"},
      {"random with too many dims", {"simple", "--random", "3x5000"}, 2, "--random"},
      {"random not NxD", {"simple", "--random", "abc"}, 2, "--random"},
      {"input and random", {"simple", "--random", "2x2", "--input", "x.json"}, 2, "--random"},
      {"attention too large", {"mha", "--random", "8192x2", "--heads", "16", "--d-out", "16"}, 2, "limit"},
      {"prompt of every token", {"kv-cache", "--prompt", "6"}, 2, "--prompt 6 leaves no token to decode"},
      {"empty --text", {"simple", "--text", ""}, 2, "--text has no tokens"},
      {"--text not UTF-8", {"simple", "--text", "caf\xe9"}, 2, "--text is not valid UTF-8"},
      {"--text and --input", {"simple", "--text", "hi", "--input", "x.json"}, 2, "--text and --input exclude each other"},
      {"--text and --random", {"mha", "--text", "hi", "--random", "2x2"}, 2, "--text and --random exclude each other"},
      {"--d-in without --text", {"simple", "--d-in", "4"}, 2, "--d-in only applies with --text"},
      {"--embedding-seed without --text", {"causal", "--embedding-seed", "1"}, 2, "--embedding-seed only applies with --text"},
      {"zero --d-in", {"simple", "--text", "hi", "--d-in", "0"}, 2, "--d-in"},
      {"--d-in past 1024", {"simple", "--text", "hi", "--d-in", "1025"}, 2, "--d-in"},
      {"--text where no input is read", {"kv-cache", "--estimate", "--text", "hi"}, 2, "--text"},
      {"prompt of no token", {"kv-cache", "--prompt", "0"}, 2, "--prompt"},
      {"a single token to decode from", {"kv-cache", "--random", "1x3"}, 2, "at least 2 tokens"},
      {"kv-cache heads % kv_groups", {"kv-cache", "--kv-groups", "3"}, 2, "--kv-groups 3"},
      {"kv-cache d_out % heads", {"kv-cache", "--heads", "3"}, 2, "--d-out 2"},
      // A value refused by an option the subcommand takes only to refuse it is named by the option.
      {"--seed that simple refuses", {"simple", "--seed", "-1"}, 2, "attn: --seed: expected a whole number from 0 to"},
      {"--heads that the tour refuses", {"tour", "--heads", "0"}, 2, "attn: --heads: expected a whole number from 1 to 1024, got '0'"},
      {"--dropout-rng that simple refuses", {"simple", "--dropout-rng", "bogus"}, 2, "attn: --dropout-rng: expected default or mkl, got 'bogus'"},
      // Nothing after '=' is an empty value, not the next argument.
      {"--save-npy= before a flag", {"simple", "--save-npy=", "--quiet"}, 2, "attn: --save-npy: needs a directory name"},
      {"--text= before an option", {"mha", "--text=", "--seed=5"}, 2, "attn: --text has no tokens"},
  };
}

}  // namespace

TEST_CASE("bad inputs and options: exit status, one line on stderr, nothing on stdout", "[errors][e2e]") {
  std::vector<Bad> cases = bad_files();
  for (auto& b : bad_options()) cases.push_back(b);
  REQUIRE(cases.size() >= 40);
  for (const auto& b : cases) {
    INFO(b.what);
    const Result r = run_exe(b.args);
    CHECK(r.status == b.status);
    CHECK(r.out.empty());
    CHECK(r.err.rfind("attn: ", 0) == 0);
    CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
    CHECK(r.err.find(b.needle) != std::string::npos);
  }
}

TEST_CASE("accepted oddities: BOM, CRLF, comments, a one-token input", "[errors][e2e]") {
  const attn_test::Scratch& s = scratch();
  for (const auto& [name, content] : std::vector<std::pair<std::string, std::string>>{
           {"bom.json", "\xEF\xBB\xBF{\"embeddings\": [[1, 2]]}"},
           {"crlf.csv", "\xEF\xBB\xBF" "a,1,2\r\nb,3,4\r\n"},
           {"comment.csv", "# tokens\nx,0.5\n"}}) {
    INFO(name);
    const Result r = run_exe({"simple", "--input", s.file(name, content)});
    CHECK(r.status == 0);
    CHECK(r.err.empty());
    CHECK(r.out.find("context_vec_2") != std::string::npos);
  }
}

TEST_CASE("a write error is reported with exit 1, and a closed pipe ends quietly", "[errors][e2e]") {
  const Result full = run_exe({"simple"}, "/dev/full");
  CHECK(full.status == 1);
  CHECK(full.err.rfind("attn: cannot write output", 0) == 0);
  CHECK(std::count(full.err.begin(), full.err.end(), '\n') == 1);
  // `attn ... | head -3`: the reader goes away; attn must neither complain nor hang.
  const std::string err = scratch().dir + "/pipe-stderr";
  const auto piped = attn_test::shell(quote(ATTN_EXE) + " mha --random 300x64 --d-out 64 --heads 4 2>" + quote(err) +
                                      " | head -3");
  CHECK(piped.status == 0);
  CHECK(std::count(piped.out.begin(), piped.out.end(), '\n') == 3);
  CHECK(slurp(err).empty());
}

TEST_CASE("large scores: softmax stays finite, the naive softmax overflows as the book warns", "[errors][numerics][e2e]") {
  // The book's inputs times 1e4: scores around 1e8, so exp overflows float32.
  const Result r = run_exe({"simple", "--json", "--input",
                            scratch().file("scaled.json", "[[4300, 1500, 8900], [5500, 8700, 6600], [5700, 8500, 6400]]")});
  REQUIRE(r.status == 0);
  const auto doc = nlohmann::json::parse(r.out);
  for (const auto& step : doc["steps"]) {
    const std::string id = step["id"];
    if (id == "attn_weights_2") {
      for (const auto& v : step["data"]) CHECK(v.is_number());  // finite: no "nan"/"inf" strings
    }
    if (id == "attn_weights_2_naive") CHECK(step["data"].dump().find("nan") != std::string::npos);
  }
}
