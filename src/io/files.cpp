#include "io/files.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/errors.hpp"
#include "core/strings.hpp"
#include "io/paths.hpp"

namespace attn {

FileDescriptor& FileDescriptor::operator=(FileDescriptor&& o) noexcept {
  if (this != &o) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = o.release();
  }
  return *this;
}

FileDescriptor::~FileDescriptor() {
  if (fd_ >= 0) ::close(fd_);
}

std::string describe_file_type(unsigned mode) {
  switch (mode & S_IFMT) {
    case S_IFIFO: return "a FIFO (a named pipe)";
    case S_IFCHR: return "a character device";
    case S_IFBLK: return "a block device";
    case S_IFSOCK: return "a socket";
    case S_IFDIR: return "a directory";
    case S_IFLNK: return "a symbolic link";
    case S_IFREG: return "a regular file";
    default: return "not a regular file";
  }
}

std::string byte_size_text(std::size_t bytes) {
  char out[32];
  if (bytes >= (std::size_t{1} << 30)) {
    std::snprintf(out, sizeof out, "%.1f GiB", static_cast<double>(bytes) / (1u << 30));
  } else if (bytes >= (std::size_t{1} << 20)) {
    std::snprintf(out, sizeof out, "%.1f MiB", static_cast<double>(bytes) / (1u << 20));
  } else if (bytes >= 1024) {
    std::snprintf(out, sizeof out, "%.1f KiB", static_cast<double>(bytes) / 1024);
  } else {
    std::snprintf(out, sizeof out, "%zu bytes", bytes);
  }
  std::string s = out;
  const auto dot0 = s.find(".0 ");  // "512.0 MiB" -> "512 MiB"
  if (dot0 != std::string::npos) s.erase(dot0, 2);
  return s;
}

namespace {

// A file whose size is known: "1,048,577 bytes, more than the limit of 1 MiB for the model's config".
[[noreturn]] void too_large(const std::string& path, std::size_t size, const FileKind& kind) {
  throw InputError(path + ": " + with_commas(size) + " bytes, more than the limit of " + byte_size_text(kind.max_bytes) +
                   " for " + kind.what);
}
// A stream, or a file that grew while it was read: reading stops at the cap.
[[noreturn]] void too_long(const std::string& path, const FileKind& kind) {
  throw InputError(path + ": more than the limit of " + byte_size_text(kind.max_bytes) + " for " + kind.what +
                   " (reading stopped there)");
}

[[noreturn]] void not_a_file(const std::string& path, unsigned mode, const FileKind& kind) {
  throw InputError(path + ": is " + describe_file_type(mode) + ", not a file (attn reads " + kind.what +
                   " from a regular file)");
}

}  // namespace

RegularFile open_regular_file(const std::string& path, const FileKind& kind) {
  // O_NONBLOCK: opening a FIFO for reading would otherwise wait for a writer, forever if none comes.
  FileDescriptor fd(::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC));
  struct stat st {};
  if (fd.get() < 0) {
    const int error = errno;  // a socket cannot be opened at all (ENXIO): say what it is instead
    if (::stat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode)) not_a_file(path, st.st_mode, kind);
    throw InputError(path + ": cannot open " + kind.what + ": " + std::strerror(error));
  }
  if (::fstat(fd.get(), &st) != 0) throw InputError(path + ": cannot read " + kind.what + ": " + std::strerror(errno));
  if (!S_ISREG(st.st_mode)) not_a_file(path, st.st_mode, kind);
  const std::size_t size = static_cast<std::size_t>(st.st_size);
  if (size > kind.max_bytes) too_large(path, size, kind);
  return {std::move(fd), size};
}

std::string read_regular_file(const std::string& path, const FileKind& kind) {
  return read_regular_file(open_regular_file(path, kind), path, kind);
}

std::string read_regular_file(const RegularFile& file, const std::string& path, const FileKind& kind) {
  std::string bytes;
  bytes.resize(file.size + 1);  // one byte more than fstat said, to see a file that grew
  std::size_t have = 0;
  for (;;) {
    if (have == bytes.size()) {  // past the size it had when it was checked
      if (have > kind.max_bytes) too_long(path, kind);
      throw InputError(path + ": grew while attn read it (from " + with_commas(file.size) + " bytes); try again");
    }
    const ssize_t n = ::pread(file.fd.get(), &bytes[have], bytes.size() - have, static_cast<off_t>(have));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw InputError(path + ": cannot read " + kind.what + ": " + std::strerror(errno));
    if (n == 0) break;
    have += static_cast<std::size_t>(n);
  }
  bytes.resize(have);
  return bytes;
}

std::string read_bundled_file(const std::string& relative, const FileKind& kind, const std::string& missing) {
  const std::string path = find_data_file(relative);
  if (path.empty()) throw InputError(relative + ": " + missing + " is missing (looked in " + data_dirs_text() + ")");
  return read_regular_file(path, kind);
}

std::string read_capped(std::istream& in, const std::string& name, const FileKind& kind) {
  std::string bytes;
  char chunk[1 << 16];
  while (in.read(chunk, sizeof chunk) || in.gcount() > 0) {
    const std::size_t n = static_cast<std::size_t>(in.gcount());
    if (bytes.size() + n > bytes.capacity())  // doubling, but never past the cap and one chunk
      bytes.reserve(std::min(std::max(2 * bytes.capacity(), bytes.size() + n), kind.max_bytes + sizeof chunk));
    bytes.append(chunk, n);
    if (bytes.size() > kind.max_bytes) too_long(name, kind);
  }
  if (in.bad()) throw InputError(name + ": cannot read " + kind.what);
  return bytes;
}

}  // namespace attn
