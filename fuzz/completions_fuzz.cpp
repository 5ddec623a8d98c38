// libFuzzer harness: the body of POST /v1/completions through `tokenline serve`'s handler
// (engine/runtime/openai_handler.h). The feed is closed, so a valid body is answered 503 at once instead
// of waiting for an engine; every body must get a reply, never a crash.
#include <cstdint>
#include <cstdlib>

#include "engine/runtime/clock.h"
#include "engine/runtime/openai_handler.h"
#include "fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace tokenline;
  static SteadyClock clock;
  static const ModelShape shape = load_model_shape("glm-5.3-tiny");
  LiveFeed feed(clock);
  feed.close();
  OpenAiHandler handler(feed, shape);
  const HttpResponse r = handler.handle(HttpRequest{"POST", "/v1/completions", fuzz::text_of(data, size)});
  if (r.status != 400 && r.status != 503) std::abort();
  return 0;
}
