// Every tensor the book prints appears verbatim in attn's text output (tests/data/book-ch03-printed.json
// is a copy of the shared reference: PyTorch's own print() of the chapter's notebooks).
#include <catch2/catch.hpp>

#include <fstream>
#include <map>
#include <regex>

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

TEST_CASE("the chapter's other printed outputs: a dot product by hand, row 2's sum, the batched product", "[book]") {
  // What ch03.ipynb prints for them; print labels ("Row 2 sum:", "First head:") are the book's, the values ours.
  struct Printed {
    std::string lesson, id, printed;
  };
  const std::vector<Printed> book{
      {"simple", "res", "tensor(0.9544)"},
      {"simple", "res_torch_dot", "tensor(0.9544)"},
      {"all-tokens", "row_2_sum", "1.0"},
      {"all-tokens", "all_row_sums", "tensor([1.0000, 1.0000, 1.0000, 1.0000, 1.0000, 1.0000])"},
      {"all-tokens", "context_vec_2", "tensor([0.4419, 0.6515, 0.5683])"},
      {"mha", "a_matmul",
       "tensor([[[[1.3208, 1.1631, 1.2879],\n"
       "          [1.1631, 2.2150, 1.8424],\n"
       "          [1.2879, 1.8424, 2.0402]],\n"
       "\n"
       "         [[0.4391, 0.7003, 0.5903],\n"
       "          [0.7003, 1.3737, 1.0620],\n"
       "          [0.5903, 1.0620, 0.9912]]]])"},
      {"mha", "first_res",
       "tensor([[1.3208, 1.1631, 1.2879],\n        [1.1631, 2.2150, 1.8424],\n        [1.2879, 1.8424, 2.0402]])"},
      {"mha", "second_res",
       "tensor([[0.4391, 0.7003, 0.5903],\n        [0.7003, 1.3737, 1.0620],\n        [0.5903, 1.0620, 0.9912]])"},
  };
  for (const auto& p : book) {
    INFO("attn " << p.lesson << ", step " << p.id);
    const attn_test::Run r = attn_test::run({p.lesson, "--quiet", "--step", p.id});
    REQUIRE(r.status == 0);
    CHECK(r.out == p.id + "\n" + p.printed + "\n");
  }
  // In the chapter's order: the batched product comes before the module's own scores.
  const std::string mha = attn_test::run({"mha", "--quiet"}).out;
  CHECK(mha.find("\nsecond_res\n") < mha.find("\nattn_scores\n"));
  CHECK(mha.find("\nqueries_heads\n") < mha.find("\na\n"));
}

namespace {

// The part of a lesson's text output that is step `id`: from its "[k/n] id -- " header to the next header.
struct StepText {
  std::size_t number = 0;  // k, 0 when the step is missing
  std::string text;
};

StepText step_text(const std::string& out, const std::string& id) {
  static const std::regex header(R"(\n\[(\d+)/\d+\] (\S+) -- )");
  StepText found;
  for (auto it = std::sregex_iterator(out.begin(), out.end(), header); it != std::sregex_iterator(); ++it) {
    if ((*it)[2] != id) continue;
    found.number = std::stoul((*it)[1]);
    const std::size_t begin = static_cast<std::size_t>(it->position());
    auto next = std::next(it);
    const std::size_t end = next == std::sregex_iterator() ? out.size() : static_cast<std::size_t>(next->position());
    found.text = out.substr(begin, end - begin);
    break;
  }
  return found;
}

}  // namespace

TEST_CASE("every output of the chapter's notebook appears verbatim in a lesson's step, in the book's order", "[book]") {
  // tests/data/ch03-notebook-outputs.json: what ch03.ipynb prints, cell by cell, with the step that shows
  // it (tests/book/notebook_outputs.py). Each lesson's text is checked as a reader sees it, explained.
  std::ifstream in(ATTN_TESTS_DIR "/data/ch03-notebook-outputs.json");
  REQUIRE(in.good());
  const auto book = nlohmann::json::parse(in);
  std::map<std::string, std::string> text;       // lesson -> its text output
  std::map<std::string, std::size_t> last_step;  // lesson -> the step number of its previous entry
  std::size_t checked = 0;
  for (const auto& e : book.at("entries")) {
    const std::string lesson = e.at("lesson"), id = e.at("step"), kind = e.at("kind"), printed = e.at("printed");
    INFO("cell " << e.at("cell") << " (" << e.at("section").get<std::string>() << "): attn " << lesson << ", step "
                 << id << ", " << kind);
    if (text.count(lesson) == 0) {
      const attn_test::Run r = attn_test::run({lesson, "--heatmap", "never", "--color", "never"});
      REQUIRE(r.status == 0);
      text[lesson] = r.out;
    }
    const StepText step = step_text(text[lesson], id);
    REQUIRE(step.number > 0);
    if (kind == "shape") {
      CHECK(step.text.find("\n  shape: " + printed + "\n") != std::string::npos);
    } else if (kind == "python") {
      CHECK(step.text.find("\n  a Python float, not a tensor\n" + printed + "\n") != std::string::npos);
    } else {
      CHECK(step.text.find("\n" + printed + "\n") != std::string::npos);
    }
    // The book's order: within a lesson, each output at the same step as the one before or a later one.
    CHECK(step.number >= last_step[lesson]);
    last_step[lesson] = step.number;
    ++checked;
  }
  // 44 values from the 34 cells that print the chapter's computations (the 35th prints PyTorch's version).
  CHECK(checked == 44);
  CHECK(book.at("not_lesson_outputs").size() == 1);
  CHECK(last_step.size() == 7);  // every lesson of the chapter but gqa, which is bonus material
}

TEST_CASE("kv-cache: the rows decoded one token at a time print the book's context_vecs of 3.6.2 exactly",
          "[book][kv-cache]") {
  // The reference's printed context_vecs of attn mha (the book's 3.6.2) and of attn gqa (the bonus
  // material's GroupedQueryAttention), each from the same module decoded token by token with the cache.
  std::ifstream in(ATTN_TESTS_DIR "/data/book-ch03-printed.json");
  REQUIRE(in.good());
  const auto ref = nlohmann::json::parse(in);
  const std::map<std::string, std::vector<std::string>> decoded_as{
      {"mha", {"kv-cache"}},
      {"gqa", {"kv-cache", "--d-out", "4", "--heads", "4", "--kv-groups", "2"}},
  };
  std::size_t checked = 0;
  for (const auto& e : ref.at("entries")) {
    if (e.at("id") != "context_vecs" || decoded_as.count(e.at("lesson")) == 0) continue;
    std::vector<std::string> args = decoded_as.at(e.at("lesson"));
    for (const std::string prompt : {"1", "3", "5"}) {
      std::vector<std::string> run_args = args;
      run_args.insert(run_args.end(), {"--prompt", prompt, "--heatmap", "never"});
      INFO("attn " << run_args[0] << " ... --prompt " << prompt << " against the book's " << e.at("lesson"));
      const attn_test::Run r = attn_test::run(run_args);
      REQUIRE(r.status == 0);
      const StepText cached = step_text(r.out, "context_vecs_cached");
      REQUIRE(cached.number > 0);
      CHECK(cached.text.find("\n" + e.at("printed").get<std::string>() + "\n") != std::string::npos);
      // And bit for bit equal to the full forward: the difference printed is exactly zero.
      CHECK(step_text(r.out, "max_abs_diff").text.find("\ntensor(0.)\n") != std::string::npos);
      ++checked;
    }
  }
  CHECK(checked == 6);
}
