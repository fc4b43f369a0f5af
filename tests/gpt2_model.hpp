#pragma once
// A GPT-2 directory as Hugging Face lays it out (config.json, model.safetensors, and GPT-2's own tokenizer
// files, linked from data/gpt2), of any shape, written by the test that needs it: all-zero weights in a
// sparse file (no disk is used), or random ones as scripts/bench-gpt2.py draws them, so that every head
// attends a little differently.
#include <catch2/catch.hpp>

#include <cstdint>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include <sys/stat.h>
#include <unistd.h>

namespace attn_test {

enum class Weights { Zero, Random };

// DIR (made here) with a GPT-2 of embedding width E, `layers` blocks of `heads` heads and `positions`
// positions; its path. Random: each weight uniform in +-0.0346 (a standard deviation of 0.02, GPT-2's
// initialisation, as scripts/bench-gpt2.py's normal draws have), the LayerNorm scales 1; from a fixed
// xorshift generator, the same file on every run (NumPy is not a test dependency; the distribution's
// shape does not matter to a figure).
inline std::string gpt2_model(const std::string& dir, std::size_t E, std::size_t layers, std::size_t heads, std::size_t positions,
                              Weights weights = Weights::Zero) {
  REQUIRE(::mkdir(dir.c_str(), 0700) == 0);
  const std::size_t V = 50257;
  std::vector<std::pair<std::string, std::vector<std::size_t>>> tensors{{"wte.weight", {V, E}}, {"wpe.weight", {positions, E}}};
  for (std::size_t l = 0; l < layers; ++l) {
    const std::string h = "h." + std::to_string(l) + ".";
    for (const auto& [n, shape] : std::vector<std::pair<std::string, std::vector<std::size_t>>>{
             {"ln_1.weight", {E}}, {"ln_1.bias", {E}}, {"attn.c_attn.weight", {E, 3 * E}}, {"attn.c_attn.bias", {3 * E}},
             {"attn.c_proj.weight", {E, E}}, {"attn.c_proj.bias", {E}}, {"ln_2.weight", {E}}, {"ln_2.bias", {E}},
             {"mlp.c_fc.weight", {E, 4 * E}}, {"mlp.c_fc.bias", {4 * E}}, {"mlp.c_proj.weight", {4 * E, E}},
             {"mlp.c_proj.bias", {E}}})
      tensors.push_back({h + n, shape});
  }
  tensors.push_back({"ln_f.weight", {E}});
  tensors.push_back({"ln_f.bias", {E}});
  nlohmann::ordered_json header = nlohmann::ordered_json::object();
  std::size_t at = 0;
  for (const auto& [n, shape] : tensors) {
    std::size_t bytes = 4;
    for (const std::size_t d : shape) bytes *= d;
    header[n] = {{"dtype", "F32"}, {"shape", shape}, {"data_offsets", {at, at + bytes}}};
    at += bytes;
  }
  const std::string text = header.dump();
  std::string head(8, '\0');
  for (int i = 0; i < 8; ++i) head[i] = static_cast<char>((text.size() >> (8 * i)) & 0xff);
  const std::string path = dir + "/model.safetensors";
  {
    std::ofstream out(path, std::ios::binary);
    out << head << text;
    if (weights == Weights::Random) {
      std::uint64_t x = 88172645463325252ull;
      std::vector<float> values;
      for (const auto& [n, shape] : tensors) {
        std::size_t count = 1;
        for (const std::size_t d : shape) count *= d;
        values.resize(count);
        const bool scale = shape.size() == 1 && n.size() > 7 && n.compare(n.size() - 7, 7, ".weight") == 0;  // LayerNorm's
        for (float& v : values) {
          x ^= x << 13, x ^= x >> 7, x ^= x << 17;
          v = scale ? 1.0f : (static_cast<float>(x >> 40) / 16777216.0f - 0.5f) * 0.0693f;
        }
        out.write(reinterpret_cast<const char*>(values.data()), static_cast<std::streamsize>(count * sizeof(float)));
      }
    }
    REQUIRE(out.good());
  }
  if (weights == Weights::Zero) REQUIRE(::truncate(path.c_str(), static_cast<off_t>(8 + text.size() + at)) == 0);
  std::ofstream(dir + "/config.json") << nlohmann::json{{"model_type", "gpt2"}, {"vocab_size", V}, {"n_positions", positions},
                                                      {"n_embd", E}, {"n_layer", layers}, {"n_head", heads}}.dump();
  for (const auto& [from, to] : {std::pair<const char*, const char*>{"encoder.json", "vocab.json"}, {"vocab.bpe", "merges.txt"}})
    REQUIRE(::symlink((std::string(ATTN_SOURCE_DIR) + "/data/gpt2/" + from).c_str(), (dir + "/" + to).c_str()) == 0);
  return dir;
}

}  // namespace attn_test
