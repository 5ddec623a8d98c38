// gunzip: the whole content of a gzip file, for tests that check what --trace-gzip wrote. Test-only
// (Catch2 REQUIRE on a file that does not open); link ZLIB::ZLIB.
#pragma once

#include <zlib.h>

#include <catch2/catch.hpp>
#include <string>

namespace tokenline {

inline std::string gunzip(const std::string& path) {
  gzFile f = gzopen(path.c_str(), "rb");
  REQUIRE(f != nullptr);
  std::string out;
  char buf[1 << 16];
  int n = 0;
  while ((n = gzread(f, buf, sizeof buf)) > 0) out.append(buf, static_cast<size_t>(n));
  gzclose(f);
  return out;
}

}  // namespace tokenline
