#include "inputs/random.hpp"

#include <string>

#include "core/limits.hpp"
#include "core/torch_random.hpp"
#include "inputs/input_text.hpp"

namespace attn {

namespace {

// NxD, each a whole number within the limits.
std::string parse_shape(const std::string& v, InputOptions& into) {
  const auto x = v.find('x');
  const auto digits = [](const std::string& d) {
    return !d.empty() && d.size() <= 9 && d.find_first_not_of("0123456789") == std::string::npos;
  };
  if (x == std::string::npos || !digits(v.substr(0, x)) || !digits(v.substr(x + 1)))
    return "--random: expected NxD with whole numbers, e.g. 1024x768, got '" + v + "'";
  const std::size_t n = std::stoul(v.substr(0, x)), d = std::stoul(v.substr(x + 1));
  if (n < 1 || n > kMaxTokens)
    return "--random " + v + ": N must be from 1 to " + std::to_string(kMaxTokens) + " tokens";
  if (d < 1 || d > kMaxDims) return "--random " + v + ": D must be from 1 to " + std::to_string(kMaxDims) + " dims";
  into.random = std::make_pair(n, d);
  return {};
}

}  // namespace

InputSource random_source() {
  SourceOption random{"--random", "NxD",
                      "Random inputs instead: N tokens of D dims from torch.rand(N, D) after torch.manual_seed(0), "
                      "e.g. 1024x768",
                      &InputOptions::random};
  random.parse = parse_shape;
  random.range = "N from 1 to " + std::to_string(kMaxTokens) + ", D from 1 to " + std::to_string(kMaxDims);
  return {"random", [](const InputOptions& opt) { return opt.random.has_value(); },
          [](const InputOptions& opt, std::istream&, const CheckMemory& check_memory, const Words& words) {
            const auto [n, d] = *opt.random;
            // Checked before the numbers are drawn: what every plan counts of them (the trace's copy of the
            // inputs and a batch of them, Trace::planned_bytes), on the process's base.
            check_memory(saturating_sum(kBaseBytes, saturating_product({2, n, d, sizeof(float)})));
            Inputs in;
            TorchGenerator gen(0);
            in.embeddings = gen.rand(n, d);  // (n, d)
            for (std::size_t i = 0; i < n; ++i) in.tokens.push_back("x" + std::to_string(i + 1));
            describe_source(in, words, "source_random", {{"n", std::to_string(n)}, {"d", std::to_string(d)}});
            return in;
          },
          nullptr,
          {random}};
}

}  // namespace attn
