#pragma once
// --save-npy DIR: every step a run shows, as a NumPy file DIR/<step id>.npy (DIR/<lesson>/<step id>.npy
// for the tour, whose lessons share ids), written with xtensor's xt::dump_npy. np.load reads each back as
// the tensor PyTorch holds: float32 in the step's shape, int64 for an integer tensor, a 0-d float64 or
// int64 array for a Python float or int. Beside the text or JSON on stdout, never instead of it.
#include <string>

#include "trace/trace.hpp"

namespace attn {

// Before any work: DIR exists (it is created if only its last part is missing) and can be written to;
// a SystemError says why not.
void prepare_npy_dir(const std::string& dir);

// Writes the document's computed steps. Each file is written under a temporary name and renamed once all
// are written, so a failure (a SystemError) leaves no partial file behind.
void save_npy(const Document& doc, const std::string& dir);

}  // namespace attn
