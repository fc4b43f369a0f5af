// Loading embeddings: the bundled file, JSON and CSV forms, and the errors a student's file can hit.
#include <catch2/catch.hpp>

#include "io/embeddings.hpp"

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
  const Inputs plain = parse_embeddings_csv("0.5,1\n-2,3e-1\n", "t");
  CHECK(plain.tokens == std::vector<std::string>{"x1", "x2"});
  CHECK(plain.embeddings(1, 1) == 0.3f);
  const Inputs named =
      parse_embeddings_csv("\xEF\xBB\xBF# a comment\r\nYour,0.43,0.15\r\n\r\n\"one, two\",0.1,0.2\r\n", "t");
  CHECK(named.tokens == std::vector<std::string>{"Your", "one, two"});
  CHECK(named.embeddings(0, 1) == 0.15f);
  CHECK(named.embeddings(1, 0) == 0.1f);
}

TEST_CASE("malformed embeddings are refused with the place named", "[io]") {
  using Catch::Matchers::Contains;
  CHECK_THROWS_WITH(parse_embeddings_json("{\"embeddings\": [[1, 2], [3]]}", "f.json"),
                    Contains("f.json") && Contains("row 2 has 1 values"));
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
  CHECK_THROWS_WITH(parse_embeddings_csv("1,2\n3\n", "f.csv"), Contains("f.csv:2") && Contains("first row has 2"));
  CHECK_THROWS_WITH(parse_embeddings_csv("a,1\nb,zz\n", "f.csv"), Contains("f.csv:2") && Contains("'zz'"));
  CHECK_THROWS_WITH(parse_embeddings_csv("", "f.csv"), Contains("at least one token"));
  CHECK_THROWS_AS(load_embeddings("/nonexistent/attn.json"), InputError);
  CHECK_THROWS_WITH(load_embeddings("/tmp"), Contains("is a directory"));
}
