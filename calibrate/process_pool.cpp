#include "calibrate/process_pool.h"

#include <fcntl.h>
#include <sched.h>
#include <spawn.h>
#include <sys/wait.h>

#include <cerrno>
#include <map>
#include <string_view>

extern char** environ;

namespace tokenline {
namespace {

constexpr int kCannotStart = 127;  // the shell's convention for "command not found / not executable"
constexpr int kSignalBase = 128;   // the shell's convention: 128 + signal number

// Starts one job; returns its pid, or -1 when posix_spawn failed.
pid_t spawn(const ProcessJob& job) {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, job.log_path.c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_adddup2(&actions, STDOUT_FILENO, STDERR_FILENO);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  std::vector<char*> argv;
  for (const std::string& a : job.argv) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  pid_t pid = -1;
  const int rc = posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  return rc == 0 ? pid : -1;
}

int decode_status(int status) {
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return kSignalBase + WTERMSIG(status);
  return kCannotStart;
}

}  // namespace

std::vector<int> run_processes(const std::vector<ProcessJob>& jobs, int max_parallel) {
  std::vector<int> codes(jobs.size(), kCannotStart);
  std::map<pid_t, size_t> running;  // pid -> job index
  size_t next = 0;
  while (next < jobs.size() || !running.empty()) {
    while (next < jobs.size() && static_cast<int>(running.size()) < max_parallel) {
      const pid_t pid = spawn(jobs[next]);
      if (pid > 0) running[pid] = next;
      ++next;
    }
    if (running.empty()) continue;
    int status = 0;
    const pid_t done = ::waitpid(-1, &status, 0);
    if (done < 0) {
      if (errno == EINTR) continue;
      break;  // ECHILD: no children left that we know of
    }
    auto it = running.find(done);
    if (it == running.end()) continue;  // a child this pool did not start
    codes[it->second] = decode_status(status);
    running.erase(it);
  }
  return codes;
}

int available_cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) != 0) return 1;
  const int n = CPU_COUNT(&set);
  return n > 0 ? n : 1;
}

std::string log_reason(const std::string& text) {
  // CLI11 ends a command-line error with this hint; the line before it says what was wrong.
  constexpr std::string_view kHint = "Run with --help for more information.";
  size_t end = text.find_last_not_of("\n ");
  if (end == std::string::npos) return "no output";
  size_t begin = text.rfind('\n', end);
  begin = begin == std::string::npos ? 0 : begin + 1;
  if (std::string_view(text).substr(begin, end + 1 - begin) == kHint && begin > 0) {
    const size_t before = text.find_last_not_of("\n ", begin - 1);
    if (before != std::string::npos) {
      end = before;
      begin = text.rfind('\n', end);
      begin = begin == std::string::npos ? 0 : begin + 1;
    }
  }
  return text.substr(begin, end + 1 - begin);
}

}  // namespace tokenline
