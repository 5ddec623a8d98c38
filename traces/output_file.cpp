#include "traces/output_file.h"

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

}  // namespace tokenline
