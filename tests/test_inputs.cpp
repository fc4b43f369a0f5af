// Inputs people already have, through the command line: every form NumPy writes, read by attn and its
// output read back by NumPy (tests/inputs/roundtrip.py); standard input; --save-npy.
#include <catch2/catch.hpp>

#include <sstream>
#include <sys/stat.h>

#include "support.hpp"

using attn_test::quote;
using attn_test::Scratch;
using attn_test::shell;

namespace {

const std::string kExe = quote(ATTN_EXE);

struct Piped {
  int status;
  std::string out, err;
};

// run_cli in-process with `stdin_text` as standard input.
Piped run_with_stdin(const std::vector<std::string>& args, const std::string& stdin_text,
                     const attn::Terminal& term = {}) {
  std::istringstream in(stdin_text);
  std::ostringstream out, err;
  const int status = attn::run_cli(args, out, err, in, term);
  return {status, out.str(), err.str()};
}

bool exists(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0;
}

}  // namespace

TEST_CASE("NumPy writes each input form, attn reads it, NumPy reads attn's JSON and .npy files back", "[inputs][e2e]") {
  const Scratch scratch;
  const auto r = shell("/usr/bin/python3 " + quote(std::string(ATTN_TESTS_DIR) + "/inputs/roundtrip.py") + " " +
                       kExe + " " + quote(scratch.dir) + " 2>&1");
  INFO(r.out);
  CHECK(r.status == 0);
  CHECK(r.out.find("15 forms round-tripped") != std::string::npos);
}

TEST_CASE("standard input: --input - reads it, in the format its content has", "[inputs][e2e]") {
  const auto json = run_with_stdin({"simple", "--input", "-", "--step", "attn_scores_2", "--quiet"},
                                   R"({"tokens": ["a", "b"], "embeddings": [[1, 0], [0.5, 2]]})");
  CHECK(json.status == 0);
  CHECK(json.out == "attn_scores_2\ntensor([0.5000, 4.2500])\n");
  const auto table = run_with_stdin({"simple", "--input", "-", "--json", "--step", "attn_scores_2"},
                                    "token d1 d2\na 1 0\nb 0.5 2\n");
  CHECK(table.status == 0);
  CHECK(table.out.find("\"input\": \"<stdin>\"") != std::string::npos);
  CHECK(table.out.find("\"tokens\": [\"a\", \"b\"]") != std::string::npos);
  CHECK(table.out.find("[0.5, 4.25]") != std::string::npos);
  // Errors name standard input as the place; nothing reaches stdout.
  const auto bad = run_with_stdin({"simple", "--input", "-"}, "1,2\n3\n");
  CHECK(bad.status == 1);
  CHECK(bad.out.empty());
  CHECK(bad.err == "attn: <stdin>:2: 1 value, the first row has 2\n");
  // On a terminal, --pause would wait for Enter on the stream the embeddings came from; in a pipe it is
  // ignored, as always.
  attn::Terminal terminal;
  terminal.stdin_tty = terminal.stdout_tty = true;
  const auto pause = run_with_stdin({"simple", "--input", "-", "--pause"}, "[[1]]", terminal);
  CHECK(pause.status == 2);
  CHECK(pause.err ==
        "attn: --pause reads Enter from standard input, which --input - reads the embeddings from (see 'attn simple "
        "--help')\n");
  const auto piped_pause = run_with_stdin({"simple", "--input", "-", "--pause", "--quiet", "--step", "inputs"}, "[[1]]");
  CHECK(piped_pause.status == 0);
  CHECK(piped_pause.out == "inputs\ntensor([[1.]])\n");
  // The real executable, in a pipe.
  const auto piped = shell("printf '0.5 1\\n2 0\\n' | " + kExe + " simple --input - --step attn_scores_2 --quiet");
  CHECK(piped.status == 0);
  CHECK(piped.out == "attn_scores_2\ntensor([1., 4.])\n");
}

TEST_CASE("NumPy files out: --save-npy writes the steps shown, per lesson for the tour, and nothing on failure", "[inputs][e2e]") {
  const Scratch scratch;
  const std::string dir = scratch.dir + "/out";
  const auto one = attn_test::run({"mha", "--step", "context_vecs,num_params", "--save-npy", dir, "--quiet"});
  REQUIRE(one.status == 0);
  CHECK(exists(dir + "/context_vecs.npy"));
  CHECK(exists(dir + "/num_params.npy"));
  CHECK_FALSE(exists(dir + "/attn_scores.npy"));  // not shown, so not computed and not written
  const auto py = shell("/usr/bin/python3 -c " +
                        quote("import numpy as np; a = np.load('" + dir + "/context_vecs.npy'); "
                              "n = np.load('" + dir + "/num_params.npy'); "
                              "print(a.dtype, a.shape, n.dtype, n.shape, int(n), round(float(a[0, 0, 0]), 4))"));
  CHECK(py.out == "float32 (2, 6, 2) int64 () 24 0.319\n");
  const auto tour = attn_test::run({"tour", "--save-npy", scratch.dir + "/tour", "--quiet"});
  REQUIRE(tour.status == 0);
  CHECK(exists(scratch.dir + "/tour/simple/attn_scores_2.npy"));
  CHECK(exists(scratch.dir + "/tour/all-tokens/row_2_sum.npy"));
  CHECK(exists(scratch.dir + "/tour/gqa/context_vecs.npy"));
  const auto py_float = shell("/usr/bin/python3 -c " +
                              quote("import numpy as np; a = np.load('" + scratch.dir +
                                    "/tour/all-tokens/row_2_sum.npy'); print(a.dtype, a.shape, float(a))"));
  CHECK(py_float.out == "float64 () 1.0\n");
  // A directory that cannot be made (a file in the way of its parents): refused before the work, with
  // nothing on stdout. (Missing parents alone are made: test_save_npy.cpp.)
  const std::string in_the_way = scratch.file("no", "");
  const auto missing = attn_test::run({"simple", "--save-npy", scratch.dir + "/no/such/dir"});
  CHECK(missing.status == 1);
  CHECK(missing.out.empty());
  CHECK(missing.err == "attn: --save-npy " + scratch.dir + "/no/such/dir: cannot create the directory: " + in_the_way +
                           " is a regular file\n");
  const auto empty = attn_test::run({"simple", "--save-npy", ""});
  CHECK(empty.status == 2);
  CHECK(empty.err.find("--save-npy: needs a directory name") != std::string::npos);
  // A step file that cannot be written (a directory in its place): no other file is left behind.
  const std::string blocked = scratch.dir + "/blocked";
  REQUIRE(::mkdir(blocked.c_str(), 0777) == 0);
  REQUIRE(::mkdir((blocked + "/attn_weights_2.npy").c_str(), 0777) == 0);
  const auto fails = attn_test::run({"simple", "--save-npy", blocked});
  CHECK(fails.status == 1);
  CHECK(fails.out.empty());
  CHECK(fails.err.find("attn: --save-npy: cannot write " + blocked + "/attn_weights_2.npy") == 0);
  CHECK_FALSE(exists(blocked + "/attn_scores_2.npy"));
  CHECK_FALSE(exists(blocked + "/attn_scores_2.npy.part"));
}
