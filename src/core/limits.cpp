#include "core/limits.hpp"

#include "core/errors.hpp"
#include "core/strings.hpp"

namespace attn {

void check_elements(const std::string& what, std::initializer_list<std::size_t> shape) {
  const std::size_t count = saturating_product(shape);
  if (count > kMaxElements)
    throw UsageError("this would build " + what + " of " + with_commas(count) + " numbers, more than the limit of " +
                     with_commas(kMaxElements) + "; use fewer tokens, heads or a smaller batch");
}

}  // namespace attn
