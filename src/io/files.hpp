#pragma once
// Every file attn reads from outside (an --input file, --input -, config.json, vocab.json, merges.txt,
// model.safetensors, the bundled data) goes through here, so that a path which is not a file can neither
// block nor exhaust us:
//   - it is opened with O_NONBLOCK (a FIFO nobody writes opens at once instead of waiting for a writer)
//     and O_NOCTTY, then fstat'ed: anything but a regular file (a FIFO, a device, a socket, a directory)
//     is refused by name before a byte is read;
//   - each kind of file has a size cap that fits what it holds, checked on its size before reading and
//     again while reading (a file that grows under us stops at the cap);
//   - a failure is one InputError that names the file and says what is wrong with it.
// The descriptor is held by an owner, so no error path leaks it.
#include <cstddef>
#include <istream>
#include <string>

namespace attn {

// An open file descriptor, closed when its owner goes.
class FileDescriptor {
 public:
  FileDescriptor() = default;
  explicit FileDescriptor(int fd) : fd_(fd) {}
  FileDescriptor(FileDescriptor&& o) noexcept : fd_(o.release()) {}
  FileDescriptor& operator=(FileDescriptor&& o) noexcept;
  FileDescriptor(const FileDescriptor&) = delete;
  FileDescriptor& operator=(const FileDescriptor&) = delete;
  ~FileDescriptor();
  int get() const { return fd_; }
  int release() {
    const int fd = fd_;
    fd_ = -1;
    return fd;
  }

 private:
  int fd_ = -1;
};

// What a file holds, for its messages and its cap: "the tokenizer vocabulary", 64 MiB.
struct FileKind {
  const char* what;
  std::size_t max_bytes;
};

struct RegularFile {
  FileDescriptor fd;
  std::size_t size = 0;
};

// `path` opened for reading, checked to be a regular file of at most kind.max_bytes. InputErrors:
// "PATH: cannot open the tokenizer vocabulary: No such file or directory", "PATH: is a FIFO (a named
// pipe), not a file", "PATH: 600 MiB, more than the limit of 64 MiB for the tokenizer vocabulary".
RegularFile open_regular_file(const std::string& path, const FileKind& kind);

// All of a regular file (open_regular_file's checks).
std::string read_regular_file(const std::string& path, const FileKind& kind);
// All of a file opened and checked already, no more than the size it had then (a file that grew since is
// refused: its size was what a limit or the memory budget was checked on); `path` labels the messages.
std::string read_regular_file(const RegularFile& file, const std::string& path, const FileKind& kind);

// A file bundled with attn ("web/page.js"), found as every bundled file is (io/paths.hpp, find_data_file) and
// read whole (read_regular_file's checks); missing, an InputError: "web/page.js: the page's script is
// missing (looked in $ATTN_DATA_DIR, ...)", `missing` naming what it is.
std::string read_bundled_file(const std::string& relative, const FileKind& kind, const std::string& missing);

// All of a stream (standard input for --input -), read in chunks and stopped as soon as it passes the
// cap; `name` labels the messages.
std::string read_capped(std::istream& in, const std::string& name, const FileKind& kind);

// "a FIFO (a named pipe)", "a character device", ...: what a non-regular st_mode is, for messages.
std::string describe_file_type(unsigned mode);

// "512 MiB", "1.5 KiB": a byte count as messages give it.
std::string byte_size_text(std::size_t bytes);

}  // namespace attn
