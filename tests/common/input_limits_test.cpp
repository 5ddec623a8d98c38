// read_bounded_file: the one rule for reading a whole input file, bounded before it is read.
#include "common/input_limits.h"

#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <string>

#include "common/input_error.h"

namespace tokenline {
namespace {

namespace fs = std::filesystem;

struct ScratchDir {
  fs::path path = fs::temp_directory_path() / ("tl_input_limits_" + std::to_string(::getpid()));
  ScratchDir() { fs::create_directories(path); }
  ~ScratchDir() { fs::remove_all(path); }
};

}  // namespace

TEST_CASE("read_bounded_file reads a regular file under the limit whole", "[input_limits]") {
  ScratchDir dir;
  const fs::path file = dir.path / "a.csv";
  std::ofstream(file) << "header\n1,2\n";
  CHECK(read_bounded_file(file.string(), 64, "a.csv") == std::optional<std::string>("header\n1,2\n"));
  CHECK(read_bounded_file(file.string(), 11, "a.csv").has_value());  // exactly the limit
  CHECK_FALSE(read_bounded_file((dir.path / "missing").string(), 64, "missing").has_value());
}

TEST_CASE("read_bounded_file refuses a longer regular file from its size, without reading it",
          "[input_limits]") {
  ScratchDir dir;
  const fs::path file = dir.path / "big.csv";
  std::ofstream(file) << "";
  fs::resize_file(file, std::uintmax_t{1} << 32);  // sparse 4 GiB: reading it would take seconds
  CHECK_THROWS_WITH(read_bounded_file(file.string(), 1 << 20, "big.csv"),
                    "big.csv: expected a file of at most 1 MiB (an input limit), found 4294967296 bytes");
}

TEST_CASE("read_bounded_file stops a stream that does not end (/dev/zero) at the limit", "[input_limits]") {
  CHECK_THROWS_WITH(read_bounded_file("/dev/zero", 1 << 20, "--expert-skew histogram:/dev/zero"),
                    "--expert-skew histogram:/dev/zero: expected a file of at most 1 MiB (an input limit), "
                    "found a longer stream");
  ScratchDir dir;
  CHECK_THROWS_WITH(read_bounded_file(dir.path.string(), 1 << 20, "dir"),
                    "dir: expected a file, found a directory");
}

}  // namespace tokenline
