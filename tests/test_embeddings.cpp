// Loading embeddings: the bundled file, JSON, text tables, .npy and standard input, the limits checked as a
// file is read, and the errors a student's file can hit.
#include <catch2/catch.hpp>

#include <limits>
#include <sstream>

#include <xtensor/xnpy.hpp>

#include "inputs/embeddings.hpp"

using namespace attn;

TEST_CASE("the bundled journey.json holds the book's six tokens", "[io]") {
  const Inputs in = load_embeddings(default_embeddings_path());
  REQUIRE(in.num_tokens() == 6);
  REQUIRE(in.d_in() == 3);
  CHECK(in.tokens == std::vector<std::string>{"Your", "journey", "starts", "with", "one", "step"});
  CHECK(in.embeddings(0, 0) == 0.43f);
  CHECK(in.embeddings(1, 1) == 0.87f);
  CHECK(in.embeddings(5, 2) == 0.55f);
}

TEST_CASE("JSON: tokens are optional, a bare array of rows works", "[io]") {
  const Inputs named = parse_embeddings_json(R"({"tokens": ["a", "b"], "embeddings": [[1, 2], [3, 4.5]]})", "t");
  CHECK(named.tokens == std::vector<std::string>{"a", "b"});
  CHECK(named.embeddings(1, 1) == 4.5f);
  const Inputs bare = parse_embeddings_json("[[0.1], [0.2], [0.3]]", "t");
  CHECK(bare.tokens == std::vector<std::string>{"x1", "x2", "x3"});
  CHECK(bare.embeddings(2, 0) == 0.3f);
  const Inputs bom = parse_embeddings_json("\xEF\xBB\xBF{\"embeddings\": [[1]]}", "t");
  CHECK(bom.embeddings(0, 0) == 1.0f);
}

TEST_CASE("CSV: optional token column, quotes, comments, CRLF and BOM", "[io]") {
  const Inputs plain = parse_embeddings_table("0.5,1\n-2,3e-1\n", "t");
  CHECK(plain.tokens == std::vector<std::string>{"x1", "x2"});
  CHECK(plain.embeddings(1, 1) == 0.3f);
  const Inputs named =
      parse_embeddings_table("\xEF\xBB\xBF# a comment\r\nYour,0.43,0.15\r\n\r\n\"one, two\",0.1,0.2\r\n", "t");
  CHECK(named.tokens == std::vector<std::string>{"Your", "one, two"});
  CHECK(named.embeddings(0, 1) == 0.15f);
  CHECK(named.embeddings(1, 0) == 0.1f);
}

TEST_CASE("malformed embeddings are refused with the place named", "[io]") {
  using Catch::Matchers::Contains;
  CHECK_THROWS_WITH(parse_embeddings_json("{\"embeddings\": [[1, 2], [3]]}", "f.json"),
                    Contains("f.json") && Contains("row 2 has 1 value, row 1 has 2"));
  CHECK_THROWS_WITH(parse_embeddings_json("{\"embeddings\": [[1, \"x\"]]}", "f.json"),
                    Contains("embeddings[0][1] is not a number"));
  CHECK_THROWS_WITH(parse_embeddings_json("{\"embeddings\": []}", "f.json"), Contains("at least one token"));
  CHECK_THROWS_WITH(parse_embeddings_json("{\"embeddings\": [[]]}", "f.json"), Contains("at least one dimension"));
  CHECK_THROWS_WITH(parse_embeddings_json("{\"tokens\": [\"a\"], \"embeddings\": [[1], [2]]}", "f.json"),
                    Contains("1 token but 2 embedding rows"));
  CHECK_THROWS_WITH(parse_embeddings_json("{\"embeddings\": [[1e39]]}", "f.json"), Contains("not a finite"));
  // The fuzzer's first find: a number past any double made nlohmann-json throw out_of_range, uncaught.
  CHECK_THROWS_WITH(parse_embeddings_json("[[1], [-3e7777777000000000000159]]", "f.json"), Contains("too large"));
  CHECK_THROWS_WITH(parse_embeddings_json("{\n  \"embeddings\": [[1,]]\n}", "f.json"),
                    Contains("f.json:2:") && Contains("invalid JSON"));
  CHECK_THROWS_WITH(parse_embeddings_table("1,2\n3\n", "f.csv"), Contains("f.csv:2") && Contains("first row has 2"));
  CHECK_THROWS_WITH(parse_embeddings_table("a,1\nb,zz\n", "f.csv"), Contains("f.csv:2") && Contains("'zz'"));
  CHECK_THROWS_WITH(parse_embeddings_table("", "f.csv"), Contains("at least one token"));
  CHECK_THROWS_AS(load_embeddings("/nonexistent/attn.json"), InputError);
  CHECK_THROWS_WITH(load_embeddings("/tmp"), Contains("is a directory"));
}

TEST_CASE("tables as NumPy, spreadsheets and people write them", "[io]") {
  // np.savetxt's default: '%.18e', one space between columns.
  const Inputs spaces = parse_embeddings_table("4.300000000000000000e-01 1.5e-01\n  5.5e-01   8.7e-01\n", "t.txt");
  CHECK(spaces.tokens == std::vector<std::string>{"x1", "x2"});
  CHECK(spaces.embeddings(0, 0) == 0.43f);
  CHECK(spaces.embeddings(1, 1) == 0.87f);
  const Inputs tabs = parse_embeddings_table("Your journey\t0.43\t0.15\nstep\t0.05\t0.8\n", "t.tsv");
  CHECK(tabs.tokens == std::vector<std::string>{"Your journey", "step"});  // a tab table keeps spaces in tokens
  CHECK(tabs.embeddings(1, 1) == 0.8f);
  const Inputs semi = parse_embeddings_table("# made by np.savetxt\n0.43;0.15\n0.55;0.87\n", "t.csv");
  CHECK(semi.embeddings(1, 0) == 0.55f);
  // A header row, with or without a token column; its names are not read.
  const Inputs header = parse_embeddings_table("token,d1,d2,d3\nYour,0.43,0.15,0.89\nstep,0.05,0.8,0.55\n", "t");
  CHECK(header.tokens == std::vector<std::string>{"Your", "step"});
  CHECK(header.d_in() == 3);
  CHECK(header.embeddings(1, 2) == 0.55f);
  const Inputs no_tokens = parse_embeddings_table("d1;d2\n1;2\n3;4\n", "t");
  CHECK(no_tokens.tokens == std::vector<std::string>{"x1", "x2"});
  CHECK(no_tokens.embeddings(1, 0) == 3.0f);
  // pandas' to_csv(): an empty first header cell, then an index column that labels the rows.
  const Inputs pandas = parse_embeddings_table(",0,1\n0,0.43,0.15\n1,0.55,0.87\n", "df.csv");
  CHECK(pandas.tokens == std::vector<std::string>{"0", "1"});
  CHECK(pandas.d_in() == 2);
  CHECK(pandas.embeddings(1, 0) == 0.55f);
  const Inputs lone = parse_embeddings_table("value\n0.5\n0.25\n", "t");  // one column under a header
  CHECK(lone.num_tokens() == 2);
  CHECK(lone.embeddings(1, 0) == 0.25f);
}

TEST_CASE("a table's header and cells are checked against each other", "[io]") {
  using Catch::Matchers::Contains;
  CHECK_THROWS_WITH(parse_embeddings_table("token,d1,d2\nYour,1\n", "h.csv"),
                    Contains("h.csv:2: 2 columns, the header row (line 1) has 3"));
  // A spreadsheet with a decimal comma: refused, saying why.
  CHECK_THROWS_WITH(parse_embeddings_table("a;b\nx;0,5\n", "d.csv"),
                    Contains("d.csv:2: column 2 ('0,5') is not a number (attn reads a decimal point"));
  // A row with a bad cell is data, not a header: it is refused, not skipped.
  CHECK_THROWS_WITH(parse_embeddings_table("Your,zz,0.5\n", "b.csv"), Contains("b.csv:1: column 2 ('zz')"));
  CHECK_THROWS_WITH(parse_embeddings_table("d1,d2\n", "only-header.csv"), Contains("at least one token"));
  CHECK_THROWS_WITH(parse_embeddings_table("1 2\n3\n", "r.txt"), Contains("r.txt:2: 1 value, the first row has 2"));
}

TEST_CASE("token text that is not valid UTF-8 is refused: stray bytes, overlong forms, surrogates, past U+10FFFF",
          "[io]") {
  using Catch::Matchers::Contains;
  for (const char* token : {"a\xff", "\xc0\xaf", "a\xed\xa0\x80", "\xf4\x90\x80\x80", "\xe2\x82"}) {
    INFO(token);
    CHECK_THROWS_WITH(parse_embeddings_table(std::string(token) + ",1\n", "u.csv"),
                      Contains("u.csv:1: the token text is not valid UTF-8"));
  }
  CHECK(parse_embeddings_table("caf\xc3\xa9 \xf0\x9f\x98\x80,1\n", "u.csv").tokens.front() == "caf\xc3\xa9 \xf0\x9f\x98\x80");
}

TEST_CASE("the format comes from the extension, else from the content", "[io]") {
  CHECK(format_of_name("a.json") == InputFormat::Json);
  CHECK(format_of_name("A.NPY") == InputFormat::Npy);
  for (const char* name : {"a.csv", "a.tsv", "a.txt", "a.dat", "a.TAB"}) CHECK(format_of_name(name) == InputFormat::Table);
  CHECK_FALSE(format_of_name("embeddings").has_value());
  CHECK_FALSE(format_of_name("a.json.bak").has_value());
  CHECK(format_of_content("\x93NUMPY\x01\x00") == InputFormat::Npy);
  CHECK(format_of_content("\xEF\xBB\xBF  \n [[1]]") == InputFormat::Json);
  CHECK(format_of_content("{\"embeddings\": [[1]]}") == InputFormat::Json);
  CHECK(format_of_content("0.5 0.25\n") == InputFormat::Table);
  CHECK(format_of_content("token,d1\n") == InputFormat::Table);
  std::istringstream piped("token;d1\nYour;0.5\n");
  const Inputs in = load_embeddings("-", piped);
  CHECK(in.source == "<stdin>");
  CHECK(in.tokens == std::vector<std::string>{"Your"});
  CHECK(in.embeddings(0, 0) == 0.5f);
  std::istringstream empty("  \n");
  CHECK_THROWS_WITH(load_embeddings("-", empty), "<stdin>: the file is empty");
}

namespace {

// A .npy file as NumPy writes format 1.0: magic, version, header length, the header dict padded to 64.
std::string npy(const std::string& dict, const std::string& data, char major = 1) {
  std::string header = dict;
  while ((10 + header.size() + 1) % 64 != 0) header += ' ';
  header += '\n';
  std::string out = std::string("\x93NUMPY", 6) + major + '\0';
  out += static_cast<char>(header.size() & 0xff);
  out += static_cast<char>(header.size() >> 8);
  return out + header + data;
}

std::string floats(std::initializer_list<float> values) {
  std::string out;
  for (float v : values) out.append(reinterpret_cast<const char*>(&v), sizeof v);
  return out;
}

}  // namespace

TEST_CASE(".npy: float32 and float64, C and Fortran order, read by xt::load_npy", "[io]") {
  const Inputs c = parse_embeddings_npy(
      npy("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }", floats({1, 2, 3, 4, 5, 6})), "c.npy");
  CHECK(c.tokens == std::vector<std::string>{"x1", "x2"});
  CHECK(c.embeddings(0, 2) == 3.0f);
  CHECK(c.embeddings(1, 0) == 4.0f);
  const Inputs f = parse_embeddings_npy(
      npy("{'descr': '<f4', 'fortran_order': True, 'shape': (2, 3), }", floats({1, 4, 2, 5, 3, 6})), "f.npy");
  CHECK(bool(f.embeddings == c.embeddings));
  const double d[] = {0.1, 1e-50};  // rounded to float32 as torch.tensor rounds: 0.1f, and 0 for the tiny one
  const Inputs f8 = parse_embeddings_npy(npy("{'descr': '<f8', 'fortran_order': False, 'shape': (1, 2), }",
                                             std::string(reinterpret_cast<const char*>(d), sizeof d)),
                                         "d.npy");
  CHECK(f8.embeddings(0, 0) == 0.1f);
  CHECK(f8.embeddings(0, 1) == 0.0f);
  // What xt::dump_npy writes (as --save-npy does) reads back.
  const Matrix m = {{0.43f, 0.15f}, {-0.0f, 7.5f}};
  CHECK(bool(parse_embeddings_npy(xt::dump_npy(m), "m.npy").embeddings == m));
}

TEST_CASE(".npy from anyone: refused before any allocation the header asks for", "[io]") {
  using Catch::Matchers::Contains;
  const std::string ok = "{'descr': '<f4', 'fortran_order': False, 'shape': (1, 2), }";
  const auto refuse = [](const std::string& bytes, const std::string& why) {
    CHECK_THROWS_WITH(parse_embeddings_npy(bytes, "x.npy"), Contains("x.npy: ") && Contains(why));
  };
  refuse("not npy at all", "no NumPy magic string");
  refuse(npy(ok, floats({1})), "its header says 8 bytes of data, the file holds 4");
  refuse(npy(ok, floats({1, 2, 3})), "its header says 8 bytes of data, the file holds 12");
  refuse(npy(ok, floats({1, 2})).substr(0, 40), "the header runs past the end of the file");
  refuse(npy(ok, floats({1, 2}), 3), "format version 3.0 is not supported");
  refuse(npy("{'descr': '<f4', 'fortran_order': False, 'shape': (1, 2)", floats({1, 2})), "not the dict NumPy writes");
  refuse(npy("{'descr': '<f4', 'fortran_order': Maybe, 'shape': (1, 2), }", floats({1, 2})), "not the dict NumPy writes");
  refuse(npy("{'descr': '<i8', 'fortran_order': False, 'shape': (1, 1), }", std::string(8, '\0')),
         "dtype '<i8'; attn reads float32 ('<f4') or float64 ('<f8')");
  refuse(npy("{'descr': '>f4', 'fortran_order': False, 'shape': (1, 1), }", std::string(4, '\0')), "dtype '>f4'");
  refuse(npy("{'descr': '<f4', 'fortran_order': False, 'shape': (6,), }", floats({1, 2, 3, 4, 5, 6})),
         "shape (6,); attn needs 2 dimensions");
  refuse(npy("{'descr': '<f4', 'fortran_order': False, 'shape': (1, 2, 3), }", std::string(24, '\0')),
         "shape (1, 2, 3)");
  refuse(npy("{'descr': '<f4', 'fortran_order': False, 'shape': (0, 3), }", ""), "need at least one token");
  // Shapes past a limit, or whose byte count would overflow, are refused from the header alone.
  refuse(npy("{'descr': '<f4', 'fortran_order': False, 'shape': (8193, 1), }", ""), "8193 tokens, more than the limit");
  refuse(npy("{'descr': '<f4', 'fortran_order': False, 'shape': (1, 4097), }", ""), "4097 dimensions, more than");
  refuse(npy("{'descr': '<f8', 'fortran_order': False, 'shape': (99999999999999999999, 1), }", ""), "tokens, more than");
  const std::string nan = floats({1, std::numeric_limits<float>::quiet_NaN()});
  refuse(npy(ok, nan), "row 1, column 2: value is not a finite float32 number");
}

TEST_CASE("reading stops at the token or value past a limit", "[io]") {
  using Catch::Matchers::Contains;
  // 8,193 rows and then something that is no embedding at all: the limit is what is reported, so reading
  // stopped at row 8,193 and never reached the rest.
  std::string json = "[";
  for (int r = 0; r < 8193; ++r) json += "[1],";
  json += "this is not JSON";
  CHECK_THROWS_WITH(parse_embeddings_json(json, "tall.json"),
                    "tall.json: more tokens than the limit of 8192 (reading stopped at token 8193)");
  std::string table;
  for (int r = 0; r < 8193; ++r) table += "1\n";
  table += "garbage,,,\n";
  CHECK_THROWS_WITH(parse_embeddings_table(table, "tall.csv"), Contains("more tokens than the limit of 8192"));
  std::string wide = "[[";
  for (int c = 0; c < 4097; ++c) wide += "1,";
  wide += "x";
  CHECK_THROWS_WITH(parse_embeddings_json(wide, "wide.json"),
                    "wide.json: more dimensions than the limit of 4096 (reading stopped at value 4097 of row 1)");
  // A row longer than the first stops reading at its first extra value.
  CHECK_THROWS_WITH(parse_embeddings_json("[[1, 2], [3, 4, 5, this is not JSON", "long.json"),
                    "long.json: row 2, column 3: row 1 has only 2 values");
  CHECK_THROWS_WITH(parse_embeddings_table("1 2\n3 4 5 x\n", "long.txt"), "long.txt:2: column 3: row 1 has only 2 values");
  std::string tokens = "{\"tokens\": [";
  for (int r = 0; r < 8193; ++r) tokens += "\"t\",";
  CHECK_THROWS_WITH(parse_embeddings_json(tokens, "t.json"), Contains("more tokens than the limit of 8192"));
}

TEST_CASE("JSON keys other than tokens and embeddings are skipped, whatever they hold", "[io]") {
  using Catch::Matchers::Contains;
  const Inputs in = parse_embeddings_json(
      R"({"model": {"name": "toy", "layers": [[1, [2]], {"x": null}]}, "embeddings": [[1, 2]], "note": "hi"})", "k");
  CHECK(in.embeddings(0, 1) == 2.0f);
  CHECK_THROWS_WITH(parse_embeddings_json(R"({"embeddings": [[1]], "embeddings": [[2]]})", "dup.json"),
                    "dup.json: the key \"embeddings\" appears twice");
  CHECK_THROWS_WITH(parse_embeddings_json(R"({"tokens": "a", "embeddings": [[1]]})", "t.json"),
                    Contains("\"tokens\" must be an array of strings"));
  CHECK_THROWS_WITH(parse_embeddings_json(R"({"tokens": ["a", 1], "embeddings": [[1], [2]]})", "t.json"),
                    Contains("tokens[1] is not a string"));
  CHECK_THROWS_WITH(parse_embeddings_json(R"({"embeddings": {"a": 1}})", "e.json"),
                    Contains("\"embeddings\" must be an array of rows of numbers"));
  CHECK_THROWS_WITH(parse_embeddings_json(R"([[1], 2])", "e.json"), Contains("embeddings[1] is not an array of numbers"));
  CHECK_THROWS_WITH(parse_embeddings_json(R"([[1, [2]]])", "e.json"), Contains("embeddings[0][1] is not a number"));
  CHECK_THROWS_WITH(parse_embeddings_json(R"({"tokens": ["a"]})", "e.json"), Contains("expected a key \"embeddings\""));
  CHECK_THROWS_WITH(parse_embeddings_json("[[1]] [[2]]", "e.json"), Contains("e.json:1:7: invalid JSON"));
}
