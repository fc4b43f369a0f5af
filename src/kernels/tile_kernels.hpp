#pragma once
// The fast kernels' instruction-set builds (tile_kernels.cpp, bodies in tile_kernels.inc): what each build
// exports to fast.cpp, which picks one by the CPU's feature flags (kernels_for). Internal to src/kernels.
#include <cstddef>
#include <vector>

#include "kernels/kernels.hpp"

namespace attn::tiles {

constexpr std::size_t kFusedTileQ = 128;  // queries per fused task (a multiple of every build's kNR)
constexpr std::size_t kFusedTileK = 256;  // keys per inner step
// The row length of the fused kernel's transposed tiles: the tile's queries and 16 floats of padding. A
// power of two (512 bytes) would put every row of a column block in the same few sets of the L1 cache,
// which then holds only a few dozen of the block's rows: the products ran at a third of the speed.
constexpr std::size_t kFusedLd = kFusedTileQ + 16;

// Per-thread scratch of the fused kernel, sized by fused_scratch.
struct FusedScratch {
  std::size_t acc_ld;             // head_dim rounded up to 32, a whole number of every build's column blocks
  std::vector<float> qt;          // (hd, kFusedLd)
  std::vector<float> st;          // (kFusedTileK, kFusedLd)
  std::vector<float> acc;         // (kFusedTileQ, acc_ld)
  std::vector<float> row_max;     // (kFusedTileQ,)
  std::vector<float> row_sum;     // (kFusedTileQ,)
  std::vector<float> correction;  // (kFusedTileQ,)
};
FusedScratch fused_scratch(std::size_t head_dim);
// The row length of the packed keys and values, and of the fused kernel's accumulator.
inline std::size_t packed_row(std::size_t head_dim) { return (head_dim + 31) / 32 * 32; }

struct IsaKernels {
  // Query rows [q0, q0 + kFusedTileQ) of head h in batch b; kp, vp: its key/value head's (T, head_dim)
  // keys and values packed in rows of acc_ld floats (zero past head_dim); last_nonfinite: that (batch,
  // kv head)'s head_dim entries of the last row whose value is not finite (-1: none).
  void (*fused_task)(const AttentionShape& s, const AttentionIO& io, std::size_t b, std::size_t h, std::size_t q0,
                     const float* kp, const float* vp, const std::ptrdiff_t* last_nonfinite, FusedScratch& w);
  bool (*all_finite)(const float* x, std::size_t n);
  // Keys [j0, j1) for every query head: per head the maximum score, the sum of exps and the unnormalised
  // output (head_dim floats); scores: heads * (j1 - j0) floats of scratch.
  void (*decode_part)(const DecodeShape& s, const DecodeIO& io, std::size_t j0, std::size_t j1, float* part_max,
                      float* part_sum, float* part_out, float* scores);
  float (*fma_chains)(std::size_t iters);  // the peak-FMA calibration loop
  std::size_t fma_chain_flops;             // floating-point operations per iteration of it
  std::size_t mr, nr;                      // the micro-kernel's register block
};

const IsaKernels& kernels_for(VectorIsa isa);

}  // namespace attn::tiles
