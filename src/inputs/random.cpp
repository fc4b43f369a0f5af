#include "inputs/random.hpp"

#include <string>

#include "core/torch_random.hpp"

namespace attn {

InputSource random_source() {
  return {"random", [](const InputOptions& opt) { return opt.random.has_value(); },
          [](const InputOptions& opt, std::istream&, const CheckMemory&) {
            const auto [n, d] = *opt.random;
            Inputs in;
            TorchGenerator gen(0);
            in.embeddings = gen.rand(n, d);  // (n, d)
            for (std::size_t i = 0; i < n; ++i) in.tokens.push_back("x" + std::to_string(i + 1));
            in.source = "torch.rand(" + std::to_string(n) + ", " + std::to_string(d) + ") after torch.manual_seed(0)";
            return in;
          },
          nullptr};
}

}  // namespace attn
