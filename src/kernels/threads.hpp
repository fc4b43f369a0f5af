#pragma once
// on_threads: the one way attn runs work on several std::threads of its own (kernels.cpp's softmax rows
// and products, fast.cpp's calibration, attn-bench's memory copy and fills).
#include <thread>
#include <vector>

namespace attn {

// Runs body(i) for i in [0, threads) on that many threads (the caller's thread is one of them).
template <class F>
void on_threads(unsigned threads, F body) {
  std::vector<std::thread> pool;
  for (unsigned i = 1; i < threads; ++i) pool.emplace_back(body, i);
  body(0u);
  for (auto& t : pool) t.join();
}

}  // namespace attn
