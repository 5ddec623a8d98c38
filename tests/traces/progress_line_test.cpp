#include "traces/progress_line.h"

#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdio>
#include <string>

#include "tests/traces/test_dir.h"

namespace tokenline {
namespace {

// What `body` writes to stderr (fd 2 redirected into a scratch file meanwhile).
template <typename Body>
std::string captured_stderr(const testing::TestDir& dir, Body body) {
  const std::string path = dir.file("stderr.txt");
  std::fflush(stderr);
  const int saved = ::dup(2);
  std::FILE* f = std::fopen(path.c_str(), "wb");
  REQUIRE(f != nullptr);
  ::dup2(::fileno(f), 2);
  body();
  std::fflush(stderr);
  ::dup2(saved, 2);
  ::close(saved);
  std::fclose(f);
  return testing::read_all(path);
}

TEST_CASE("the progress line stays silent when disabled or for a short run", "[progress_line]") {
  testing::TestDir dir("progress_line");
  const std::string disabled = captured_stderr(dir, [] {
    ProgressLine p(false);
    for (int i = 0; i < 100000; ++i) p.tick(i * 0.01, i, i);
    p.finish(1000, 100000, 100000);
  });
  CHECK(disabled.empty());
  const std::string short_run = captured_stderr(dir, [] {
    ProgressLine p(true);  // well under kQuietS of wall time
    for (int i = 0; i < 1000; ++i) p.tick(i * 0.01, i, i);
    p.finish(10, 1000, 1000);
  });
  CHECK(short_run.empty());
}

}  // namespace
}  // namespace tokenline
