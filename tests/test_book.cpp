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

TEST_CASE("exercise 3.1 as its solution prints it: sa_v1 with sa_v2's weights, both seeded with 123", "[book]") {
  // ch03/01_main-chapter-code/exercise-solutions.ipynb prints this for sa_v1(inputs) and for sa_v2(inputs).
  const std::string printed =
      "tensor([[-0.5337, -0.1051],\n"
      "        [-0.5323, -0.1080],\n"
      "        [-0.5323, -0.1079],\n"
      "        [-0.5297, -0.1076],\n"
      "        [-0.5311, -0.1066],\n"
      "        [-0.5299, -0.1081]])";
  const attn_test::Run r = attn_test::run({"trainable", "--seed", "123", "--quiet"});
  REQUIRE(r.status == 0);
  CHECK(r.out.find("sa_v2_output\n" + printed) != std::string::npos);
  CHECK(r.out.find("sa_v1_output_v2_weights\n" + printed) != std::string::npos);
  CHECK(r.out.find("v1_v2_max_diff\ntensor(0.)") != std::string::npos);
}
