// Every tensor the book prints appears verbatim in attn's text output (tests/data/book-ch03-printed.json
// is a copy of the shared reference: PyTorch's own print() of the chapter's notebooks).
#include <catch2/catch.hpp>

#include <fstream>

#include <nlohmann/json.hpp>

#include "support.hpp"

TEST_CASE("the book's printed tensors appear verbatim in the text output", "[book]") {
  std::ifstream in(ATTN_TESTS_DIR "/data/book-ch03-printed.json");
  REQUIRE(in.good());
  const auto ref = nlohmann::json::parse(in);
  std::size_t checked = 0;
  for (const auto& e : ref.at("entries")) {
    const std::string lesson = e.at("lesson");
    std::vector<std::string> args{lesson};
    for (const auto& a : e.at("args")) args.push_back(a);
    const attn_test::Run r = attn_test::run(args);
    INFO("attn " << lesson << " " << e.at("args").dump() << ", step " << e.at("id"));
    REQUIRE(r.status == 0);
    const std::string printed = e.at("printed");
    CHECK(r.out.find(printed) != std::string::npos);
    ++checked;
  }
  // Every entry of the reference: 5 simple, 3 all-tokens, 8 trainable (one with --seed 123), 7 causal,
  // 3 dropout (one with --dropout-rng mkl), 1 mha-wrapper, 1 mha, 1 gqa.
  CHECK(checked == 29);
}
