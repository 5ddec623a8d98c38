// libFuzzer harness: the body of POST /v1/completions and /v1/chat/completions as `tokenline serve` parses
// it (serve/openai_request.h): every body is a request or an OpenAI error, never a crash.
#include <cstdint>
#include <cstdlib>
#include <variant>

#include "fuzz/fuzz_input.h"
#include "serve/byte_tokenizer.h"
#include "serve/openai_request.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace tokenline;
  static const ByteTokenizer tokenizer;
  static const ServedModel model{
      .name = "glm-5.3-tiny", .max_context_tokens = 4096, .vocab = 512, .mtp = false};
  const std::string body = fuzz::text_of(data, size);
  for (Endpoint e : {Endpoint::kCompletions, Endpoint::kChat}) {
    const auto parsed = parse_completion_request(e, body, tokenizer, model);
    if (const ApiError* err = std::get_if<ApiError>(&parsed);
        err != nullptr && err->status != 400 && err->status != 404)
      std::abort();
  }
  return 0;
}
