// host_memory: how much memory this machine can still give a process, so that a run whose weights and KV
// cannot fit is refused before it allocates (instead of growing until the machine runs out).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace tokenline {

// MemAvailable of /proc/meminfo in bytes; nullopt where it cannot be read (then no check is made).
std::optional<int64_t> available_host_bytes();

// The MemAvailable value in `meminfo` text (/proc/meminfo's format), in bytes; nullopt when absent.
std::optional<int64_t> parse_mem_available(const std::string& meminfo);

}  // namespace tokenline
