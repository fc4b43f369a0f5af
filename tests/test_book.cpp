// Every tensor the book prints appears verbatim in attn's text output (tests/data/book-ch03-printed.json
// is a copy of the shared reference: PyTorch's own print() of the chapter's notebooks).
#include <catch2/catch.hpp>

#include <fstream>
#include <set>

#include <nlohmann/json.hpp>

#include "support.hpp"

namespace {

// The lessons built so far; an entry for any other lesson is not yet expected to pass.
const std::set<std::string> kLessons{"simple", "all-tokens", "trainable"};

}  // namespace

TEST_CASE("the book's printed tensors appear verbatim in the text output", "[book]") {
  std::ifstream in(ATTN_TESTS_DIR "/data/book-ch03-printed.json");
  REQUIRE(in.good());
  const auto ref = nlohmann::json::parse(in);
  std::size_t checked = 0;
  for (const auto& e : ref.at("entries")) {
    const std::string lesson = e.at("lesson");
    if (kLessons.count(lesson) == 0) continue;
    std::vector<std::string> args{lesson};
    for (const auto& a : e.at("args")) args.push_back(a);
    const attn_test::Run r = attn_test::run(args);
    INFO("attn " << lesson << " " << e.at("args").dump() << ", step " << e.at("id"));
    REQUIRE(r.status == 0);
    const std::string printed = e.at("printed");
    CHECK(r.out.find(printed) != std::string::npos);
    ++checked;
  }
  // 5 simple + 3 all-tokens + 8 trainable entries (one of them with --seed 123).
  CHECK(checked == 16);
}
