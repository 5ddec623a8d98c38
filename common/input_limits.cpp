#include "common/input_limits.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

#include "common/input_error.h"

namespace tokenline {
namespace {

std::string mib_text(int64_t bytes) {
  return bytes % (int64_t{1} << 20) == 0 ? std::to_string(bytes >> 20) + " MiB"
                                         : std::to_string(bytes) + " bytes";
}

// Closes the descriptor on every path out.
struct Fd {
  int fd = -1;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};

}  // namespace

std::optional<std::string> read_bounded_file(const std::string& path, int64_t max_bytes,
                                             const std::string& where) {
  Fd f;
  f.fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (f.fd < 0) return std::nullopt;
  struct stat st {};
  if (::fstat(f.fd, &st) != 0) return std::nullopt;
  if (S_ISDIR(st.st_mode)) throw InputError(where, "a file", "a directory");
  const std::string expected = "a file of at most " + mib_text(max_bytes) + " (an input limit)";
  if (S_ISREG(st.st_mode) && st.st_size > max_bytes)
    throw InputError(where, expected, std::to_string(st.st_size) + " bytes");
  std::string text;
  if (S_ISREG(st.st_mode)) text.reserve(static_cast<size_t>(st.st_size));
  char chunk[1 << 16];
  while (true) {
    const ssize_t n = ::read(f.fd, chunk, sizeof chunk);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw InputError(where, "a readable file", "a read error");
    if (n == 0) break;
    text.append(chunk, static_cast<size_t>(n));
    if (static_cast<int64_t>(text.size()) > max_bytes)
      throw InputError(where, expected, S_ISREG(st.st_mode) ? "a file that grew past it" : "a longer stream");
  }
  return text;
}

}  // namespace tokenline
