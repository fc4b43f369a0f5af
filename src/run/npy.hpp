#pragma once
// --save-npy DIR: every step a run shows, as a NumPy file DIR/<step id>.npy (DIR/<lesson>/<step id>.npy
// for the tour, whose lessons share ids), written with xtensor's xt::dump_npy. np.load reads each back as
// the tensor PyTorch holds: float32 in the step's shape, int64 for an integer tensor, a 0-d float64 or
// int64 array for a Python float or int. Beside the text or JSON on stdout, never instead of it.
//
// What happens to DIR (docs/inputs.md):
//   - nothing before the run's limits pass and its steps are computed: a refused run creates nothing;
//   - the files are written into a fresh staging directory inside DIR (a random name made with mkdirat on
//     the directory opened once, which fails on anything already there, so nobody can have
//     planted anything in it), each opened with O_CREAT | O_EXCL | O_NOFOLLOW: no link is ever followed
//     and nothing outside DIR is ever written;
//   - only once every file is written and stdout has taken the whole output are they moved into place,
//     one rename each; a file of the same name from an earlier run is replaced, every other file in DIR
//     is left alone, and an entry that is not a regular file (a directory, a link) is refused, not replaced;
//   - DIR is made if missing, with the missing directories above it (as mkdir -p does), each opened without
//     following a link as it is made;
//   - a run that fails at any point, a rename included, leaves DIR exactly as it found it: files it
//     replaced are put back, files it added are removed, and DIR itself, with the directories above it that
//     the run made, is removed if the run created it (each only while empty).
#include <memory>
#include <string>

#include "document/document.hpp"

namespace attn {

// Before any work: DIR can be written to, or, when DIR does not exist yet, the nearest directory above it
// that does (DIR and the missing ones between are made later, by NpySave). Creates nothing; a SystemError
// says why not, naming a file that is in the way ("cannot create the directory: npy is a regular file").
void prepare_npy_dir(const std::string& dir);

// The memory writing the files of a planned document takes: one file's bytes at a time (int64 for an
// integer step), with xtensor's copy.
std::size_t npy_working_bytes(const Document& planned);

// The document's computed steps, staged inside DIR and put in place by commit().
class NpySave {
 public:
  // Writes every file into the staging directory (creating DIR and its missing parents); a SystemError, with
  // DIR left as it was, if any cannot be written or an entry it would replace is not a regular file.
  NpySave(const Document& doc, const std::string& dir);
  // Moves the files into DIR. On failure (a SystemError) every move made is undone first.
  void commit();
  // Not committed: the staged files go, and DIR too if this run created it.
  ~NpySave();
  NpySave(const NpySave&) = delete;
  NpySave& operator=(const NpySave&) = delete;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace attn
