#pragma once
// Which instruction-set build of a kernel runs: the one dispatch of src/kernels. Each body that has builds
// (tile_kernels.inc, softmax_rows.inc) is written once and compiled once per instruction set by
// kernels/isa_builds.hpp's pragmas; its .cpp keeps a table of each build's functions, and for_isa picks a
// table by the CPU's feature flags (best_vector_isa), never by OpenBLAS's idea of the CPU. The tests run
// every build the machine can (tests/test_kernels.cpp).

#include <optional>
#include <string>

namespace attn {

enum class VectorIsa { Scalar, Avx2, Avx512 };

// The widest build this CPU runs, asked of it once (a function-local static: the CPU model is known by the
// time it is first needed), then remembered.
inline VectorIsa best_vector_isa() {
  static const VectorIsa best = [] {
    // Each build's target (isa_builds.hpp): AVX-512F with VL and FMA; AVX2 with FMA.
    if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("fma"))
      return VectorIsa::Avx512;
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return VectorIsa::Avx2;
    return VectorIsa::Scalar;
  }();
  return best;
}

// Each build's name, as attn bench prints it and --isa takes it.
inline const char* isa_name(VectorIsa isa) {
  switch (isa) {
    case VectorIsa::Avx512: return "avx512";
    case VectorIsa::Avx2: return "avx2";
    case VectorIsa::Scalar: break;
  }
  return "portable";
}
// The build a name names ("avx512", "avx2", "portable"), or none.
inline std::optional<VectorIsa> isa_named(const std::string& name) {
  for (VectorIsa isa : {VectorIsa::Avx512, VectorIsa::Avx2, VectorIsa::Scalar})
    if (name == isa_name(isa)) return isa;
  return std::nullopt;
}
// Whether a CPU whose widest build is `widest` runs `isa`'s build: any build no wider.
inline bool runs_on(VectorIsa isa, VectorIsa widest) { return static_cast<int>(isa) <= static_cast<int>(widest); }
inline bool cpu_runs(VectorIsa isa) { return runs_on(isa, best_vector_isa()); }

// The build the fast kernels run (causal_attention_fused, decode_attention): the widest the CPU runs,
// unless attn-bench's --isa chose a narrower one (set_fast_isa in kernels/fast.hpp), so that an AVX-512
// machine can measure the AVX2 build as an AVX2-only CPU would run it. One per process: an inline
// function's static is the same object in every translation unit.
inline VectorIsa& fast_isa_slot() {
  static VectorIsa chosen = best_vector_isa();
  return chosen;
}
inline VectorIsa fast_vector_isa() { return fast_isa_slot(); }

// A body's table of functions for one build: avx512's, avx2's, or the one that assumes no vector
// instructions (a portable vector build, or the scalar reference itself).
template <class Table>
const Table& for_isa(VectorIsa isa, const Table& avx512, const Table& avx2, const Table& scalar) {
  switch (isa) {
    case VectorIsa::Avx512: return avx512;
    case VectorIsa::Avx2: return avx2;
    case VectorIsa::Scalar: break;
  }
  return scalar;
}

}  // namespace attn
