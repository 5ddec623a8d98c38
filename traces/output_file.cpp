#include "traces/output_file.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <system_error>

#include "common/input_error.h"

namespace tokenline {

OutputFile::OutputFile(std::string path) : path_(std::move(path)), partial_path_(path_ + ".partial") {
  file_ = std::fopen(partial_path_.c_str(), "wb");
  if (file_ == nullptr) {
    throw InputError(path_, "a writable output file", std::strerror(errno));
  }
  buffer_.reserve(kFlushBytes + kFlushBytes / 4);
}

OutputFile::~OutputFile() {
  if (file_ != nullptr) std::fclose(file_);
  if (!committed_) std::remove(partial_path_.c_str());
}

void OutputFile::flush() {
  if (buffer_.empty() || file_ == nullptr) return;
  if (std::fwrite(buffer_.data(), 1, buffer_.size(), file_) != buffer_.size()) failed_ = true;
  buffer_.clear();
}

bool OutputFile::commit() {
  if (committed_) return true;
  flush();
  if (file_ != nullptr) {
    if (std::fclose(file_) != 0) failed_ = true;
    file_ = nullptr;
  }
  if (failed_) return false;
  if (std::rename(partial_path_.c_str(), path_.c_str()) != 0) return false;
  committed_ = true;
  return true;
}

void require_writable_directory(const std::string& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec || !std::filesystem::is_directory(dir)) {
    throw InputError("--out " + dir, "a directory that exists or can be created",
                     ec ? ec.message() : std::string("not a directory"));
  }
  const std::string probe = (std::filesystem::path(dir) / ".tokenline-write-probe").string();
  std::FILE* f = std::fopen(probe.c_str(), "wb");
  if (f == nullptr) {
    throw InputError("--out " + dir, "a writable directory", std::strerror(errno));
  }
  std::fclose(f);
  std::remove(probe.c_str());
}

}  // namespace tokenline

namespace tokenline {

void retire_previous_outputs(const std::string& dir) {
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec)) return;
  for (const char* name : kRunOutputNames) {
    const std::filesystem::path path = std::filesystem::path(dir) / name;
    std::filesystem::remove(path.string() + ".partial", ec);
    if (!std::filesystem::exists(path, ec)) continue;
    std::filesystem::rename(path, path.string() + ".previous", ec);
    if (ec)
      throw InputError("--out " + dir,
                       "a directory whose earlier outputs can be renamed (" + std::string(name) + " to " +
                           name + ".previous)",
                       ec.message());
  }
}

void remove_previous_outputs(const std::string& dir) {
  std::error_code ec;
  for (const char* name : kRunOutputNames)
    std::filesystem::remove((std::filesystem::path(dir) / name).string() + ".previous", ec);
}

void restore_previous_outputs(const std::string& dir) {
  std::error_code ec;
  for (const char* name : kRunOutputNames) {
    const std::string path = (std::filesystem::path(dir) / name).string();
    std::filesystem::remove(path + ".partial", ec);
    if (std::filesystem::exists(path + ".previous", ec)) {
      std::filesystem::rename(path + ".previous", path, ec);
    } else {
      std::filesystem::remove(path, ec);  // the failed run's: retire_previous_outputs left no other there
    }
  }
}

RunOutputs::RunOutputs(std::string dir) : dir_(std::move(dir)) {
  require_writable_directory(dir_);
  const std::string lock_path = (std::filesystem::path(dir_) / ".tokenline.lock").string();
  lock_fd_ = ::open(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (lock_fd_ < 0)
    throw InputError("--out " + dir_, "a directory where a lock file can be created", std::strerror(errno));
  if (::flock(lock_fd_, LOCK_EX | LOCK_NB) != 0) {
    const int error = errno;
    ::close(lock_fd_);
    lock_fd_ = -1;
    throw InputError("--out " + dir_, "a directory no other tokenline run is writing into",
                     error == EWOULDBLOCK
                         ? std::string("another run holds its lock (.tokenline.lock); wait for "
                                       "it or choose another --out")
                         : std::string(std::strerror(error)));
  }
  try {
    retire_previous_outputs(dir_);
  } catch (...) {
    std::error_code ec;  // the outputs retired so far go back; the rest never moved
    for (const char* name : kRunOutputNames) {
      const std::string path = (std::filesystem::path(dir_) / name).string();
      if (std::filesystem::exists(path + ".previous", ec))
        std::filesystem::rename(path + ".previous", path, ec);
    }
    ::close(lock_fd_);
    throw;
  }
}

RunOutputs::~RunOutputs() {
  if (!committed_) restore_previous_outputs(dir_);
  ::close(lock_fd_);  // releases the lock
}

void RunOutputs::commit() {
  remove_previous_outputs(dir_);
  committed_ = true;
}

}  // namespace tokenline
