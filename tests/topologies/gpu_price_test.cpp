// The list prices of the hardware JSONs (topologies/gpu_price.h): each with its source and date, and a
// malformed price block refused naming the field.
#include "topologies/gpu_price.h"

#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "common/input_error.h"
#include "topologies/hardware_loader.h"

namespace tokenline {
namespace {

std::string h200_with_price(const std::string& price_block) {
  std::ifstream in(std::string(TOKENLINE_SOURCE_DIR) + "/topologies/hardware/h200.json");
  std::ostringstream s;
  s << in.rdbuf();
  std::string text = s.str();
  const size_t at = text.find("\"price\"");
  REQUIRE(at != std::string::npos);
  const size_t end = text.rfind('}');
  return text.substr(0, at) + price_block + "\n}\n" + text.substr(end + 1);
}

std::string error_of(const std::string& text) {
  const auto dir = std::filesystem::temp_directory_path() / ("tl_gpu_price_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string path = (dir / "hw.json").string();
  std::ofstream(path) << text;
  std::string why = "no error";
  try {
    load_gpu_price(path);
  } catch (const InputError& e) {
    why = e.what();
  }
  std::filesystem::remove_all(dir);
  return why;
}

TEST_CASE("every listed price has a source and a date", "[hardware][cost]") {
  int priced = 0;
  for (const std::string& name : hardware_presets()) {
    const GpuPrice p = load_gpu_price(name);
    if (p.usd_per_gpu_hour == 0) continue;
    ++priced;
    INFO(name);
    CHECK(p.usd_per_gpu_hour > 0.5);  // a GPU-hour of these parts, not a cent
    CHECK(p.usd_per_gpu_hour < 20);
    CHECK(p.source.size() > 20);
    CHECK(p.date.size() == 10);  // YYYY-MM-DD
  }
  CHECK(priced == 4);  // h100, h200, b200, gb200; b300 and gb300 have none
  CHECK(load_gpu_price("h200").usd_per_gpu_hour == 4.54);
  CHECK(load_gpu_price("b300").usd_per_gpu_hour == 0);
}

TEST_CASE("a malformed price block is refused naming the field", "[hardware][cost]") {
  CHECK(
      error_of(h200_with_price(R"("price": {"usd_per_gpu_hour": {"value": -1, "source": "x", "date": "d"}})"))
          .find("price.usd_per_gpu_hour.value") != std::string::npos);
  CHECK(error_of(h200_with_price(R"("price": {"usd_per_gpu_hour": {"value": 3, "source": "x"}})"))
            .find("date") != std::string::npos);
  CHECK(error_of(h200_with_price(R"("price": {"usd_per_hour": {"value": 3, "source": "x", "date": "d"}})"))
            .find("usd_per_hour") != std::string::npos);
  CHECK(error_of(h200_with_price(
            R"("price": {"usd_per_gpu_hour": {"value": 3, "source": "x", "date": "d"}})")) == "no error");
}

}  // namespace
}  // namespace tokenline
