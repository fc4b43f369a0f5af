#include "render/npy.hpp"

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sys/stat.h>
#include <unistd.h>
#include <utility>
#include <vector>

#include <xtensor/xnpy.hpp>

#include "core/errors.hpp"

namespace attn {

namespace {

bool is_dir(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

void make_dir(const std::string& dir) {
  if (is_dir(dir)) return;
  if (::mkdir(dir.c_str(), 0777) != 0 && !(errno == EEXIST && is_dir(dir)))
    throw SystemError("--save-npy " + dir + ": cannot create the directory: " + std::strerror(errno));
}

// The step's value as np.load should give it back.
std::string npy_bytes(const Step& s) {
  if (s.python_int) return xt::dump_npy(xt::xarray<std::int64_t>(*s.python_int));  // ()
  if (s.python_float) return xt::dump_npy(xt::xarray<double>(*s.python_float));    // ()
  if (s.integer) return xt::dump_npy(xt::xarray<std::int64_t>(xt::cast<std::int64_t>(s.tensor)));
  return xt::dump_npy(s.tensor);  // float32, the step's shape
}

// The path a step of `trace` is saved at.
std::string npy_path(const Document& doc, const Trace& trace, const Step& step, const std::string& dir) {
  const bool per_lesson = doc.traces.size() > 1;  // the tour: its lessons share step ids
  return dir + "/" + (per_lesson ? trace.info.name + "/" : std::string()) + step.id + ".npy";
}

}  // namespace

void prepare_npy_dir(const std::string& dir) {
  make_dir(dir);
  if (::access(dir.c_str(), W_OK | X_OK) != 0)
    throw SystemError("--save-npy " + dir + ": cannot write to the directory: " + std::strerror(errno));
}

void save_npy(const Document& doc, const std::string& dir) {
  prepare_npy_dir(dir);
  std::vector<std::pair<std::string, std::string>> written;  // (temporary, final) paths
  const auto remove_written = [&] {
    for (const auto& w : written) std::remove(w.first.c_str());
  };
  try {
    for (const Trace& trace : doc.traces) {
      if (doc.traces.size() > 1) make_dir(dir + "/" + trace.info.name);
      for (const Step& step : trace.steps) {
        if (!step.computed) continue;
        const std::string path = npy_path(doc, trace, step, dir);
        const std::string temporary = path + ".part";
        const std::string bytes = npy_bytes(step);
        std::ofstream file(temporary, std::ios::binary | std::ios::trunc);
        if (!file) throw SystemError("--save-npy: cannot write " + path + ": " + std::strerror(errno));
        written.emplace_back(temporary, path);
        file.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
        file.close();
        if (!file) throw SystemError("--save-npy: cannot write " + path + ": " + std::strerror(errno));
      }
    }
    for (std::size_t i = 0; i < written.size(); ++i) {
      if (std::rename(written[i].first.c_str(), written[i].second.c_str()) == 0) continue;
      const std::string error = std::strerror(errno);
      for (std::size_t k = 0; k < i; ++k) std::remove(written[k].second.c_str());  // this run's, renamed already
      written.erase(written.begin(), written.begin() + static_cast<std::ptrdiff_t>(i));
      throw SystemError("--save-npy: cannot write " + written.front().second + ": " + error);
    }
  } catch (...) {
    remove_written();
    throw;
  }
}

}  // namespace attn
