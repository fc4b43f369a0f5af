#pragma once
// OpenBLAS as the process runs it: how many threads one computation uses (ours and OpenBLAS's), and which
// kernels OpenBLAS chose, with the restart when it chose its slow fallback on a CPU it did not know.
#include <optional>
#include <string>

namespace attn {

// The threads one computation may use: the chapter's softmax rows (causal_attention_unfused's callers),
// GPT-2's attention, and OpenBLAS's products (openblas_set_num_threads). Set once where the options are
// bound: the CPU count (io/cpus.hpp) for a lesson, the tour and attn present, that count shared among its
// jobs for attn serve. Unset, the process's CPU count.
void set_compute_threads(unsigned threads);
unsigned compute_threads();

// The kernels OpenBLAS runs ("Haswell", "SkylakeX", "Prescott", ...: openblas_get_corename).
std::string openblas_core();

// The kernel families whose numbers the golden files hold (tests/golden/blas_variants.py; the families
// test tier checks each): SkylakeX's (and Cooperlake's, SapphireRapids') and Haswell's (and Zen's).
bool core_in_golden_families(const std::string& core);

// The core OpenBLAS should be told to run (OPENBLAS_CORETYPE) when it runs one outside those families on a
// CPU that can run one of them, as Debian's 0.3.21 fell back to Prescott's SSE3 kernels on a 16-core Xeon
// it did not know (5x slower): "SkylakeX" on AVX-512 (F, BW, DQ, VL), "Haswell" on AVX2 with FMA. None when
// OpenBLAS's choice is in the families or the CPU runs neither.
std::optional<std::string> better_openblas_core(const std::string& core, bool avx512, bool avx2_fma);

// At the start of main, before anything is computed: when OpenBLAS chose a core better_openblas_core
// improves, and neither the user (OPENBLAS_CORETYPE) nor an earlier restart has chosen, runs the program
// again (/proc/self/exe, the same arguments) with OPENBLAS_CORETYPE set to the better core, and
// ATTN_OPENBLAS_FELL_BACK to the one it replaces. Returns only when it does not restart.
void restart_on_openblas_fallback(char** argv);

// One sentence about OpenBLAS's kernels, or none when they are in the golden families and were OpenBLAS's
// own choice: "OpenBLAS runs its Prescott kernels ..." with what to do, or, after a restart, what was done.
std::optional<std::string> openblas_core_warning();

}  // namespace attn
