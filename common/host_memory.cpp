#include "common/host_memory.h"

#include <charconv>
#include <fstream>
#include <sstream>

namespace tokenline {

std::optional<int64_t> parse_mem_available(const std::string& meminfo) {
  constexpr std::string_view kKey = "MemAvailable:";
  const size_t at = meminfo.find(kKey);
  if (at == std::string::npos) return std::nullopt;
  const size_t begin = meminfo.find_first_not_of(' ', at + kKey.size());
  if (begin == std::string::npos) return std::nullopt;
  int64_t kib = 0;
  const auto [ptr, ec] = std::from_chars(meminfo.data() + begin, meminfo.data() + meminfo.size(), kib);
  constexpr int64_t kBytesPerKib = 1024;  // /proc/meminfo's "kB" are KiB
  if (ec != std::errc() || ptr == meminfo.data() + begin || kib < 0) return std::nullopt;
  return kib * kBytesPerKib;
}

std::optional<int64_t> available_host_bytes() {
  std::ifstream in("/proc/meminfo");
  if (!in) return std::nullopt;
  std::ostringstream text;
  text << in.rdbuf();
  return parse_mem_available(text.str());
}

}  // namespace tokenline
