#include "cli/bench_process.hpp"

#include <cerrno>
#include <cstring>
#include <spawn.h>
#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/errors.hpp"
#include "io/paths.hpp"

extern char** environ;

namespace attn {

namespace {

// Closes a pipe's two ends on every way out.
struct Pipe {
  int fd[2] = {-1, -1};
  Pipe() {
    if (::pipe(fd) != 0) throw SystemError(std::string("cannot start attn-bench: ") + std::strerror(errno));
  }
  ~Pipe() {
    for (int f : fd)
      if (f >= 0) ::close(f);
  }
  void close_end(int i) {
    ::close(fd[i]);
    fd[i] = -1;
  }
};

}  // namespace

std::string bench_executable() {
  std::vector<std::string> places;
  if (const std::string dir = executable_dir(); !dir.empty()) {
    places.push_back(dir + "/attn-bench");
    places.push_back(dir + "/../libexec/attn/attn-bench");
  }
  places.push_back(ATTN_INSTALL_LIBEXECDIR "/attn-bench");
  for (const auto& p : places)
    if (::access(p.c_str(), X_OK) == 0) return p;
  std::string looked;
  for (const auto& p : places) looked += (looked.empty() ? "" : ", ") + p;
  throw SystemError("cannot find the benchmark program attn-bench (looked for " + looked + ")");
}

int run_bench_process(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  const std::string exe = bench_executable();
  std::vector<char*> argv{const_cast<char*>(exe.c_str())};
  for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);

  Pipe out_pipe, err_pipe;
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, out_pipe.fd[1], STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&actions, err_pipe.fd[1], STDERR_FILENO);
  pid_t pid = 0;
  const int spawned = posix_spawn(&pid, exe.c_str(), &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (spawned != 0) throw SystemError("cannot start " + exe + ": " + std::strerror(spawned));
  out_pipe.close_end(1);
  err_pipe.close_end(1);

  // Read both pipes until the program closes them: stdout kept whole, stderr passed on as it comes.
  std::string text;
  pollfd fds[2] = {{out_pipe.fd[0], POLLIN, 0}, {err_pipe.fd[0], POLLIN, 0}};
  char buf[1 << 16];
  while (fds[0].fd >= 0 || fds[1].fd >= 0) {
    if (::poll(fds, 2, -1) < 0) {
      if (errno == EINTR) continue;
      break;
    }
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || fds[i].revents == 0) continue;
      const ssize_t got = ::read(fds[i].fd, buf, sizeof buf);
      if (got < 0 && errno == EINTR) continue;
      if (got <= 0) {
        fds[i].fd = -1;
        continue;
      }
      if (i == 0) {
        text.append(buf, static_cast<std::size_t>(got));
      } else {
        err.write(buf, got);
        err.flush();
      }
    }
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFSIGNALED(status))
    throw SystemError("attn-bench ended by signal " + std::to_string(WTERMSIG(status)) + " (" +
                      strsignal(WTERMSIG(status)) + ")");
  const int code = WIFEXITED(status) ? WEXITSTATUS(status) : 1;
  if (code == 0) out << text;
  return code;
}

}  // namespace attn
