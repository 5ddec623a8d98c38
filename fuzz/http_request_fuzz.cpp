// libFuzzer harness: the bytes of an HTTP connection as `tokenline serve` reads them
// (serve/http_request_reader.h). The input's first byte is a count k (low 3 bits), the next k bytes
// piece sizes; the rest is the connection's byte stream, fed in pieces of those sizes (cycled) so the
// parser sees requests split at arbitrary points, and read request after request (pipelining). Checked:
// a status is final once reached (fed again it is repeated, the buffer untouched); the bytes used never
// exceed the bytes given; a whole request has a body within the limit, a target without '?', lower-case
// header names; only a whole request has request(); and the whole requests are the same as when the stream
// arrives in one piece, and so is the final status, but for two differences of Beast's (same_outcome). A
// broken rule aborts (a fuzz finding).
#include <algorithm>
#include <cctype>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "fuzz/fuzz_input.h"
#include "serve/http_request_reader.h"

namespace tokenline::fuzz {
namespace {

// Smaller than the server's (64 KiB headers, 8 MiB body) so that inputs of a few KiB reach both limits.
constexpr int64_t kFuzzHeaderLimitBytes = 1024;
constexpr int64_t kFuzzBodyLimitBytes = 512;
constexpr size_t kMaxSplitSizes = 7;  // the count byte's low 3 bits

void require(bool ok) {
  if (!ok) std::abort();
}

bool lower_case(const std::string& name) {
  return std::none_of(name.begin(), name.end(), [](unsigned char c) { return c >= 'A' && c <= 'Z'; });
}

// A whole request as text, to compare two readings of the same stream.
std::string describe(const HttpRequestReader& reader) {
  const HttpRequest& req = reader.request();
  require(req.body.size() <= static_cast<size_t>(kFuzzBodyLimitBytes));
  require(req.target.find('?') == std::string::npos);
  std::string text = req.method + '\n' + req.target + '\n' + (reader.keep_alive() ? "keep\n" : "close\n");
  for (const auto& [name, value] : req.headers) {
    require(lower_case(name));
    text += name + ':' + value + '\n';
  }
  return text + req.body;
}

// A final status is repeated and leaves the buffer alone; request() exists only after kOk.
void check_final(HttpRequestReader& reader, HttpReadStatus status, std::string& buffer) {
  const std::string before = buffer;
  const int64_t consumed = reader.consumed_bytes();
  require(reader.feed(buffer) == status && reader.status() == status);
  require(buffer == before && reader.consumed_bytes() == consumed);
  if (status == HttpReadStatus::kOk) return;
  try {
    reader.request();
    std::abort();  // a request from a failed read
  } catch (const std::logic_error&) {
  }
}

// Reads requests from `stream` fed in pieces of `sizes` (cycled; empty: all at once). Returns one line per
// whole request and the final status.
std::vector<std::string> read_stream(const std::string& stream, const std::vector<size_t>& sizes) {
  std::vector<std::string> outcomes;
  auto reader = std::make_unique<HttpRequestReader>(kFuzzHeaderLimitBytes, kFuzzBodyLimitBytes);
  std::string buffer;
  size_t given = 0, used = 0, piece = 0;
  while (true) {
    const size_t n = sizes.empty() ? stream.size() : sizes[piece++ % sizes.size()];
    const size_t take = std::min(n, stream.size() - given);
    buffer.append(stream, given, take);
    given += take;
    const size_t before = buffer.size();
    const HttpReadStatus status = reader->feed(buffer);
    require(buffer.size() <= before && reader->status() == status);
    used += before - buffer.size();
    require(used <= given);
    switch (status) {
      case HttpReadStatus::kNeedMore:
        if (given < stream.size()) continue;
        outcomes.push_back("need more");
        return outcomes;
      case HttpReadStatus::kOk:
        outcomes.push_back(describe(*reader));
        check_final(*reader, status, buffer);
        reader = std::make_unique<HttpRequestReader>(kFuzzHeaderLimitBytes, kFuzzBodyLimitBytes);
        continue;
      case HttpReadStatus::kTooLarge:
        check_final(*reader, status, buffer);
        outcomes.push_back("too large");
        return outcomes;
      case HttpReadStatus::kBad:
        check_final(*reader, status, buffer);
        outcomes.push_back("bad");
        return outcomes;
    }
  }
}

// Beast checks the fields of a header in its first piece at once, those of later pieces only once the
// header is whole (or past the limit): bad fields in an unfinished header are "bad" in one piece and
// "need more" (a 408 or 400 at the connection's end) or "too large" in several. And Beast 1.74 takes a
// chunk's size off the body limit before it parses the chunk's extensions, again at each retry: a
// malformed extension (its parse runs past the line's end) waits for more in one piece and is "too large"
// in many. A well-formed extension is unaffected (http_request_reader_test). Otherwise they agree.
bool same_outcome(const std::vector<std::string>& pieces, const std::vector<std::string>& whole,
                  bool chunked) {
  if (pieces.size() != whole.size()) return false;
  if (!std::equal(pieces.begin(), pieces.end() - 1, whole.begin())) return false;
  return pieces.back() == whole.back() ||
         (whole.back() == "bad" && (pieces.back() == "need more" || pieces.back() == "too large")) ||
         (chunked && whole.back() == "need more" && pieces.back() == "too large");
}

bool mentions_chunked(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(), [](unsigned char c) { return std::tolower(c); });
  return text.find("chunked") != std::string::npos;
}

}  // namespace
}  // namespace tokenline::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace tokenline::fuzz;
  if (size == 0) return 0;
  const size_t count = std::min<size_t>(data[0] & kMaxSplitSizes, size - 1);
  std::vector<size_t> sizes;
  for (size_t i = 1; i <= count; ++i) sizes.push_back(std::max<size_t>(data[i], 1));
  const std::string stream = text_of(data + 1 + count, size - 1 - count);
  require(same_outcome(read_stream(stream, sizes), read_stream(stream, {}), mentions_chunked(stream)));
  return 0;
}
