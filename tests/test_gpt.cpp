// Chapter 4's modules (src/modules/gpt.hpp) against PyTorch 1.13 running the book's classes
// (tests/golden/gpt_modules.py writes tests/golden/gpt/modules.json): the parameters drawn from the same
// seed, the train-mode logits with the dropout masks drawn after them, each block's output, the eval-mode
// logits and greedy generation, FeedForward, LayerNorm and 4.4's gradients.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <fstream>

#include <nlohmann/json.hpp>

#include "modules/gpt.hpp"
#include "support.hpp"

using namespace attn;

namespace {

const nlohmann::json& golden() {
  static const nlohmann::json data = [] {
    std::ifstream in(ATTN_TESTS_DIR "/golden/gpt/modules.json");
    return nlohmann::json::parse(in);
  }();
  return data;
}

// How far attn may be from PyTorch's values. The data are PyTorch's on OpenBLAS's SkylakeX kernels: on
// those (and Cooperlake's, SapphireRapids', the same products) attn must give them to the bit; OpenBLAS's
// AVX2 kernels add a product's terms in another order, in PyTorch as here, and move the last bits.
double tolerance(double elsewhere) { return attn_test::skylakex_kernels() ? 0.0 : elsewhere; }

double largest_difference(const float* got, std::size_t n, const nlohmann::json& want) {
  REQUIRE(want.size() == n);
  double worst = 0.0;
  for (std::size_t i = 0; i < n; ++i) worst = std::max(worst, std::abs(double(got[i]) - want[i].get<double>()));
  return worst;
}

GptConfig config_of(const nlohmann::json& c) {
  GptConfig cfg;
  cfg.vocab_size = c["vocab_size"];
  cfg.context_length = c["context_length"];
  cfg.emb_dim = c["emb_dim"];
  cfg.n_heads = c["n_heads"];
  cfg.n_layers = c["n_layers"];
  cfg.drop_rate_emb = cfg.drop_rate_attn = cfg.drop_rate_shortcut = c["drop_rate"].get<double>();
  cfg.qkv_bias = c["qkv_bias"];
  return cfg;
}

std::vector<std::vector<std::int64_t>> batch_of(const nlohmann::json& b) {
  return b.get<std::vector<std::vector<std::int64_t>>>();
}

// generate_text_simple: the argmax of the last token's softmax, appended, with the context cut to the model's
// context length.
std::vector<std::int64_t> greedy(const GPTModel& model, std::vector<std::int64_t> ids, std::size_t new_tokens) {
  for (std::size_t step = 0; step < new_tokens; ++step) {
    const std::size_t from = ids.size() > model.cfg.context_length ? ids.size() - model.cfg.context_length : 0;
    const std::vector<std::vector<std::int64_t>> context{{ids.begin() + from, ids.end()}};
    const Tensor3 logits = model.forward(context, ForwardMode{});  // eval mode
    Vector last = xt::empty<float>({model.cfg.vocab_size});  // (vocab_size,): logits[:, -1, :]
    std::copy_n(&logits(0, logits.shape(1) - 1, 0), last.size(), last.data());
    const Vector probas = softmax(last);  // torch.argmax(torch.softmax(logits, dim=-1)): the first largest
    ids.push_back(std::max_element(probas.begin(), probas.end()) - probas.begin());
  }
  return ids;
}

}  // namespace

TEST_CASE("GPT_CONFIG_124M counts the book's parameters from its shapes alone", "[modules]") {
  GptConfig cfg;  // GPT_CONFIG_124M
  CHECK(cfg.attention_parameters() == 2360064);
  CHECK(cfg.feed_forward_parameters() == 4722432);
  CHECK(cfg.gpt_parameters() == 163009536);
  // Without the output head (weight tying, 4.6): 124,412,160.
  CHECK(cfg.gpt_parameters() - cfg.vocab_size * cfg.emb_dim == 124412160);
}

TEST_CASE("GPTModel is PyTorch's for the same seed: parameters, train-mode logits, blocks, eval and greedy ids",
          "[modules]") {
  for (const auto& c : golden()["models"]) {
    const GptConfig cfg = config_of(c["config"]);
    INFO("config " << c["config"].dump() << ", seed " << c["seed"]);
    TorchGenerator gen(c["seed"].get<std::uint64_t>());
    const GPTModel model(cfg, gen);
    CHECK(model.num_parameters() == c["parameters"].get<std::size_t>());
    CHECK(cfg.gpt_parameters() == c["parameters"].get<std::size_t>());
    const auto batch = batch_of(c["batch"]);
    const GPTModel::Pass train = model.pass(batch, ForwardMode{&gen});  // model(batch) in train mode
    CHECK(std::vector<std::size_t>(train.logits.shape().begin(), train.logits.shape().end()) ==
          c["logits_shape"].get<std::vector<std::size_t>>());
    REQUIRE(train.block_outs.size() == c["block_outs"].size());
    for (std::size_t i = 0; i < train.block_outs.size(); ++i) {
      INFO("block " << i);
      CHECK(largest_difference(train.block_outs[i].data(), train.block_outs[i].size(), c["block_outs"][i]) <= tolerance(1e-5));
    }
    CHECK(largest_difference(train.logits.data(), train.logits.size(), c["logits"]) <= tolerance(1e-5));
    const Tensor3 eval = model.forward(batch, ForwardMode{});
    CHECK(largest_difference(eval.data(), eval.size(), c["eval_logits"]) <= tolerance(1e-5));
    CHECK(greedy(model, batch[0], 4) == c["generated"].get<std::vector<std::int64_t>>());

    TorchGenerator dummy_gen(c["seed"].get<std::uint64_t>());
    const DummyGPTModel dummy(cfg, dummy_gen);
    CHECK(dummy.num_parameters() == cfg.dummy_parameters());
    const Tensor3 dummy_logits = dummy.pass(batch, ForwardMode{&dummy_gen}).logits;
    CHECK(largest_difference(dummy_logits.data(), dummy_logits.size(), c["dummy_logits"]) <= tolerance(1e-5));
  }
}

TEST_CASE("FeedForward on torch.rand(2, 3, emb_dim) is PyTorch's, and so is the book's LayerNorm", "[modules]") {
  for (const auto& m : golden()["feed_forward"]) {
    const std::size_t emb = m["emb_dim"];
    INFO("emb_dim " << emb);
    TorchGenerator gen(m["seed"].get<std::uint64_t>());
    const FeedForward ff(emb, gen);
    AnyTensor x = xt::empty<float>({std::size_t{2}, std::size_t{3}, emb});  // torch.rand(2, 3, emb)
    for (float& v : x) v = gen.uniform(0.0f, 1.0f);
    CHECK(largest_difference(x.data(), x.size(), m["x"]) == 0.0);
    const AnyTensor out = ff.forward(x);
    CHECK(out.shape(2) == emb);
    CHECK(largest_difference(out.data(), out.size(), m["ff"]) <= tolerance(1e-5));
  }
  const auto& n = golden()["layer_norm"];
  TorchGenerator gen(123);
  AnyTensor batch_example = xt::empty<float>({std::size_t{2}, std::size_t{5}});  // torch.randn(2, 5)
  const std::vector<float> drawn = gen.normal(batch_example.size());
  std::copy(drawn.begin(), drawn.end(), batch_example.data());
  CHECK(largest_difference(batch_example.data(), batch_example.size(), n["batch_example"]) == 0.0);
  const Linear layer(5, 6, true, gen);
  const AnyTensor out = relu(linear(layer, batch_example));  // (2, 6)
  CHECK(largest_difference(out.data(), out.size(), n["out"]) <= tolerance(1e-6));
  const AnyTensor mean = mean_last(out), var = var_last(out, /*unbiased=*/true);
  CHECK(largest_difference(mean.data(), mean.size(), n["mean"]) <= tolerance(1e-6));
  CHECK(largest_difference(var.data(), var.size(), n["var"]) <= tolerance(1e-6));
  const AnyTensor out_ln = LayerNorm(6).forward(out);
  CHECK(largest_difference(out_ln.data(), out_ln.size(), n["out_ln"]) <= tolerance(1e-5));
}

TEST_CASE("4.4's gradients are autograd's: vanishing without shortcuts, kept with them", "[modules]") {
  const Matrix x = {{1.0f, 0.0f, -1.0f}};  // (1, 3)
  for (const auto& s : golden()["shortcut"]) {
    const bool use = s["use_shortcut"];
    INFO("use_shortcut " << use);
    TorchGenerator gen(123);
    const ExampleDeepNeuralNetwork net({3, 3, 3, 3, 3, 1}, use, gen);
    const auto g = net.gradients(x);
    CHECK(largest_difference(g.output.data(), g.output.size(), s["output"]) <= tolerance(1e-6));
    REQUIRE(g.grad_means.size() == 5);
    for (std::size_t i = 0; i < 5; ++i) {
      INFO("layer " << i);
      const double want = s["grad_means"][i];
      CHECK(std::abs(g.grad_means[i] - want) <= tolerance(1e-6 * std::abs(want)));
      const Matrix& w = g.weight_grads[i];
      CHECK(largest_difference(w.data(), w.size(), s["weight_grads"][i]) <= tolerance(1e-5 * std::abs(want)));
      const Vector& bias = g.bias_grads[i];
      CHECK(largest_difference(bias.data(), bias.size(), s["bias_grads"][i]) <= tolerance(1e-5 * std::abs(want)));
    }
  }
  // The point of the lesson: without shortcuts the first layer's gradient is a 25th of the last one's.
  const auto& none = golden()["shortcut"][0]["grad_means"];
  CHECK(none[0].get<double>() * 20 < none[4].get<double>());
}

TEST_CASE("GPT_CONFIG_124M from seed 123: attn generate writes the book's ids, and attn gpt's logits start as the book's",
          "[modules]") {
  // The book's 4.7 output and the first three logits of 4.6, which it prints; the whole model is drawn.
  const attn_test::Run generated = attn_test::run({"generate", "--step", "out", "--json"});
  REQUIRE(generated.status == 0);
  const nlohmann::json out = nlohmann::json::parse(generated.out)["steps"][0];
  CHECK(out["id"] == "out");
  CHECK(out["data"] == nlohmann::json::parse("[[15496, 11, 314, 716, 27018, 24086, 47843, 30961, 42348, 7267]]"));
  CHECK(out["code"].get<std::string>().find("'Hello, I am Featureiman Byeswickattribute argue'") != std::string::npos);
  const attn_test::Run logits = attn_test::run({"gpt", "--step", "out"});
  REQUIRE(logits.status == 0);
  CHECK(logits.out.find("tensor([[[ 0.3613,  0.4222, -0.0711,  ...,  0.3483,  0.4661, -0.2838],") != std::string::npos);
}
