#include "engine/runtime/model_weights.h"

#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <string>

#include "common/input_error.h"
#include "engine/runtime/model_shape.h"

using namespace tokenline;

namespace {

std::string temp_path(const char* name) {
  return (std::filesystem::temp_directory_path() / (std::to_string(::getpid()) + "-" + name)).string();
}

}  // namespace

TEST_CASE("random weights are seeded, a checkpoint written and read back is identical") {
  const ModelShape shape = load_model_shape("glm-5.3-tiny");
  ModelWeights a = ModelWeights::random(shape, 7);
  ModelWeights b = ModelWeights::random(shape, 7);
  ModelWeights c = ModelWeights::random(shape, 8);
  REQUIRE(a.specs().size() == b.specs().size());
  CHECK(a.tensor(3) == b.tensor(3));
  CHECK(a.tensor(3) != c.tensor(3));
  const std::string path = temp_path("tokenline_runtime_weights_roundtrip.safetensors");
  a.save(path);
  ModelWeights back = ModelWeights::load(shape, path);
  for (size_t i = 0; i < a.specs().size(); ++i) REQUIRE(back.tensor(i) == a.tensor(i));
  std::filesystem::remove(path);
}

TEST_CASE("a checkpoint of another shape or with a tensor missing is one InputError naming the tensor") {
  const ModelShape shape = load_model_shape("glm-5.3-tiny");
  ModelShape other = shape;
  other.hidden = shape.hidden / 2;  // every hidden-sized tensor has the wrong shape
  const std::string path = temp_path("tokenline_runtime_weights_bad.safetensors");
  ModelWeights::random(other, 1).save(path);
  try {
    (void)ModelWeights::load(shape, path);
    FAIL("expected an InputError");
  } catch (const InputError& e) {
    const std::string what = e.what();
    INFO(what);
    CHECK(what.find("model.embed_tokens.weight") != std::string::npos);
  }
  CHECK_THROWS_AS(ModelWeights::load(shape, temp_path("tokenline_no_such_checkpoint.safetensors")),
                  InputError);
  std::filesystem::remove(path);
}
