#pragma once
// Causal multi-head attention kernels, after llm.c's dev/ kernels: the simple references, the chapter's
// unfused way, and what they share. The fast versions, checked against the references
// (tests/test_kernels.cpp) before they are timed (attn bench), are declared in kernels/fast.hpp.
//
// Both take queries, keys and values as they come out of the projections: row-major (B, T, heads * hd)
// matrices with a row stride (ld) of their own, so a head is a strided view, never a copy. Query head h
// reads key/value head h / (heads / kv_heads): kv_heads == heads is MHA, fewer is GQA.
#include <cstddef>

#include "core/nn.hpp"
#include "kernels/vector_isa.hpp"

namespace attn {

// A multi-head attention layer's weights in nn.Linear's layout, as the whole-layer forwards take them:
// the book's MultiHeadAttention (kv_heads == heads) or GroupedQueryAttention (modules/attention.hpp's
// weights()). Borrowed: the layer outlives the call.
struct AttentionWeights {
  const Linear& W_query;   // (heads * head_dim, d_in)
  const Linear& W_key;     // (kv_heads * head_dim, d_in)
  const Linear& W_value;   // (kv_heads * head_dim, d_in)
  const Linear& out_proj;  // (heads * head_dim, heads * head_dim)
  std::size_t heads;
  std::size_t kv_heads;
};

struct AttentionShape {
  std::size_t batch;     // B
  std::size_t tokens;    // T
  std::size_t heads;     // query heads
  std::size_t kv_heads;  // key/value heads, dividing heads
  std::size_t head_dim;  // hd
  // The key/value head query head h reads.
  std::size_t kv_head(std::size_t h) const { return h / (heads / kv_heads); }
};

// Strided views of the projected tensors and of the output.
struct AttentionIO {
  const float* q;  // (B, T, heads * hd), rows ldq apart
  std::size_t ldq;
  const float* k;  // (B, T, kv_heads * hd), rows ldk apart
  std::size_t ldk;
  const float* v;  // (B, T, kv_heads * hd), rows ldv apart
  std::size_t ldv;
  float* out;      // (B, T, heads * hd), rows ldo apart: the heads' context vectors, concatenated
  std::size_t ldo;
};

// The reference: for each (batch, head) the full (T, T) scores, scaled by 1/sqrt(hd), masked above the
// diagonal, softmax, times the values (every key's, the future's zero weights included, as PyTorch's
// product: 0 * inf is NaN). One thread, one (T, T) matrix at a time. Scores that overflow float32 give
// PyTorch's NaN rows; the unfused and fused kernels agree with it there too.
void causal_attention_reference(const AttentionShape& s, const AttentionIO& io);

// The chapter's MultiHeadAttention way, with heads as strided views: every (batch, head) scores matrix
// computed as PyTorch's bmm computes one (batch_matrix_product: SGEMM, or a plain loop below 400
// multiply-adds) into a full (B, heads, T, T) tensor, as PyTorch holds it, masked and softmaxed row by row
// on `threads` threads (the sum in PyTorch's order, softmax_sum), then the same product per head for the context.
void causal_attention_unfused(const AttentionShape& s, const AttentionIO& io, unsigned threads);

// out (rows, n) = x (rows, k) @ w.T + bias for a row-major w (n, k) and bias (n,) or null: nn.Linear on a
// folded batch, its rows split over `threads` threads, one single-threaded SGEMM each. Used inside
// SingleThreadedBlas, so that OpenBLAS's own threads never compete with ours for the cores.
void linear_rows(const float* x, std::size_t rows, std::size_t k, const float* w, std::size_t n, const float* bias,
                 float* out, unsigned threads);

// While alive, OpenBLAS runs on one thread (its pool would otherwise keep spinning on the cores our
// threads need); the previous setting comes back after.
class SingleThreadedBlas {
 public:
  SingleThreadedBlas();
  ~SingleThreadedBlas();
  SingleThreadedBlas(const SingleThreadedBlas&) = delete;
  SingleThreadedBlas& operator=(const SingleThreadedBlas&) = delete;

 private:
  int saved_;
};

// The kernels' softmax steps in the three builds they pick from at run time (the best the CPU has), exposed
// so the tests can check each build the machine can run: max_with is the row maximum, max(init, x[0..n)),
// NaN if any of them is NaN (max_propagating_nan);
// exp_shift_sum_with does x[i] = exp(x[i] - shift) in place and returns the sum. Every build gives the
// scalar build's maximum and torch_exp's bits; only the order of the sum differs. One body for the vector
// builds (kernels/softmax_rows.inc), compiled for each as kernels/isa_builds.hpp says.
float exp_shift_sum_with(VectorIsa isa, float* x, std::size_t n, float shift);
float max_with(VectorIsa isa, const float* x, std::size_t n, float init);

// Decoding: one new token per query head against a KV cache of `cache_tokens` tokens (the kv-cache
// lesson's cache_k and cache_v, batch 1: (cache_tokens, kv_heads, head_dim) rows, the new token's own key
// and value already appended). No mask: the new token sees every cached one.
struct DecodeShape {
  std::size_t cache_tokens;
  std::size_t heads;
  std::size_t kv_heads;
  std::size_t head_dim;
};
struct DecodeIO {
  const float* q;  // (heads * hd): the new token's queries
  const float* k;  // (cache_tokens, kv_heads * hd), rows ld apart
  const float* v;  // (cache_tokens, kv_heads * hd), rows ld apart
  std::size_t ld;
  float* out;      // (heads * hd): the context vectors, heads concatenated
};
// The reference: per head, every score, softmax (nn's), then the weighted sum of the values, in loops.
void decode_attention_reference(const DecodeShape& s, const DecodeIO& io);
// Floating-point operations of the causal part only: 2 * (QK^T + PV) multiply-adds over the T(T+1)/2
// visible (query, key) pairs of every head.
double causal_attention_flops(const AttentionShape& s);

}  // namespace attn
