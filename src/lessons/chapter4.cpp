#include "lessons/chapter4.hpp"

#include <cmath>

#include "core/errors.hpp"
#include "core/limits.hpp"
#include "core/strings.hpp"
#include "lessons/helpers.hpp"
#include "model/gpt2_tokenizer.hpp"

namespace attn {

AnyTensor randn(TorchGenerator& gen, const std::vector<std::size_t>& shape) {
  AnyTensor out = AnyTensor::from_shape(shape);
  gen.normal(out.data(), out.size());
  return out;
}

AnyTensor rand(TorchGenerator& gen, const std::vector<std::size_t>& shape) {
  AnyTensor out = AnyTensor::from_shape(shape);
  gen.uniform(out.data(), out.size(), 0.0f, 1.0f);
  return out;
}

AnyTensor linspace(float start, float end, std::size_t steps) {
  AnyTensor out = AnyTensor::from_shape({steps});
  if (steps == 0) return out;
  if (steps == 1) {
    out(0) = start;
    return out;
  }
  // Written out because no library computes linspace in PyTorch's order: aten's RangeFactoriesKernel.cpp,
  // whose AVX2 build GCC compiles with -mfma, contracting each a * b + c into one fused multiply-add
  // (checked against PyTorch 1.13 under ATEN_CPU_CAPABILITY=default, avx2 and avx512: 8 lanes without FMA,
  // 8 and 16 with it, reproduce each of the three).
  const float step = (end - start) / static_cast<float>(steps - 1);
  const std::size_t halfway = steps / 2;
  const auto from_ends = [&](std::size_t idx) {  // the scalar form
    return idx < halfway ? std::fma(step, static_cast<float>(idx), start)
                         : std::fma(-step, static_cast<float>(steps - idx - 1), end);
  };
  constexpr std::size_t kLanes = 8;  // Vectorized<float>::size() under AVX2
  std::size_t idx = 0;
  // cpu_serial_kernel_vec runs its vector form two vectors at a time, then the scalar form on the rest.
  for (; idx + 2 * kLanes <= steps; idx += 2 * kLanes)
    for (std::size_t v = idx; v < idx + 2 * kLanes; v += kLanes) {
      const float base = from_ends(v);  // Vectorized<float>::arange(base, step): base + k * step, fused
      for (std::size_t k = 0; k < kLanes; ++k) out(v + k) = std::fma(static_cast<float>(k), step, base);
    }
  for (; idx < steps; ++idx) out(idx) = from_ends(idx);
  return out;
}

LessonConfig gpt_config_124m() {
  LessonConfig book;
  book.emb_dim = 768;
  book.heads = 12;
  book.layers = 12;
  book.context_length = 1024;
  book.drop_rate = 0.1;
  return book;
}

GptConfig gpt_config(const LessonConfig& cfg) {
  GptConfig model;
  model.emb_dim = cfg.emb_dim;
  model.n_heads = cfg.heads;
  model.n_layers = cfg.layers;
  model.context_length = cfg.context_length;
  model.drop_rate_emb = model.drop_rate_attn = model.drop_rate_shortcut = cfg.drop_rate;
  model.qkv_bias = cfg.qkv_bias;
  return model;
}

void check_model_shape(const GptConfig& cfg) {
  if (cfg.emb_dim % cfg.n_heads != 0)
    throw UsageError("--emb-dim " + std::to_string(cfg.emb_dim) + " is not divisible by --heads " +
                     std::to_string(cfg.n_heads) + ": each head takes emb_dim / n_heads of every vector");
  check_elements("the feed-forward network's (4 * emb_dim, emb_dim) weight", {4, cfg.emb_dim, cfg.emb_dim});
  check_elements("the (vocab_size, emb_dim) token embeddings", {cfg.vocab_size, cfg.emb_dim});
  check_elements("the (context_length, emb_dim) positional embeddings", {cfg.context_length, cfg.emb_dim});
}

LessonText& set_config_values(LessonText& text, const GptConfig& cfg) {
  return text.set("emb_dim", cfg.emb_dim)
      .set("n_heads", cfg.n_heads)
      .set("n_layers", cfg.n_layers)
      .set("context_length", cfg.context_length)
      .set("vocab_size", cfg.vocab_size)
      .set("drop_rate", py_float(cfg.drop_rate_shortcut))
      .set("qkv_bias", cfg.qkv_bias ? "True" : "False");
}

Batch book_batch() {
  Batch batch;
  for (const char* txt : {"Every effort moves you", "Every day holds a"}) {
    std::vector<std::int64_t> ids;
    for (const Gpt2Token& token : Gpt2Tokenizer::bundled().encode(txt)) ids.push_back(token.id);
    batch.push_back(std::move(ids));
  }
  return batch;
}

AnyTensor batch_tensor(const Batch& batch) {
  AnyTensor out = AnyTensor::from_shape({batch.size(), batch.front().size()});  // (b, num_tokens)
  for (std::size_t i = 0; i < batch.size(); ++i)
    for (std::size_t t = 0; t < batch[i].size(); ++t) out(i, t) = static_cast<float>(batch[i][t]);
  return out;
}

void check_context_length(const GptConfig& cfg, std::size_t tokens) {
  if (cfg.context_length < tokens)
    throw UsageError("--context-length " + std::to_string(cfg.context_length) + " is shorter than the batch's " +
                     std::to_string(tokens) + " tokens: pos_emb has a row for each position");
}

std::string batch_literal(const Batch& batch) {
  std::string out = "[";
  for (std::size_t i = 0; i < batch.size(); ++i) {
    out += i ? ", [" : "[";
    for (std::size_t t = 0; t < batch[i].size(); ++t) out += (t ? ", " : "") + std::to_string(batch[i][t]);
    out += "]";
  }
  return out + "]";
}

LessonMode chapter4_mode(std::vector<OptionUse> options, LessonConfig defaults, LessonMode::Run run) {
  LessonMode mode(std::move(options), defaults, std::move(run), /*uses_inputs=*/false);
  mode.takes_model = false;
  mode.no_model_reason = option_help("shared", "no_model_chapter4");
  return mode;
}

}  // namespace attn
