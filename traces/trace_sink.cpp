#include "traces/trace_sink.h"

#include <zlib.h>

namespace tokenline {
namespace {

constexpr int kGzipWindowBits = 15 + 16;  // 32 KiB window (zlib's largest); +16 asks for a gzip wrapper
constexpr int kMemLevel = 8;              // zlib's default
constexpr size_t kOutChunkBytes = size_t{1} << 16;

}  // namespace

struct TraceSink::Deflater {
  z_stream stream{};
  bool open = false;
};

TraceSink::TraceSink(std::string path, TraceEncoding encoding)
    : file_(std::move(path)), encoding_(encoding), deflater_(std::make_unique<Deflater>()) {
  if (encoding_ == TraceEncoding::kPlain) return;
  text_.reserve(kDeflateBytes + kDeflateBytes / 4);
  // JSON text compresses ~10x even at the fastest level, which keeps up with the simulation.
  deflater_->open = deflateInit2(&deflater_->stream, Z_BEST_SPEED, Z_DEFLATED, kGzipWindowBits, kMemLevel,
                                 Z_DEFAULT_STRATEGY) == Z_OK;
  failed_ = !deflater_->open;
}

TraceSink::~TraceSink() {
  if (deflater_->open) deflateEnd(&deflater_->stream);
}

void TraceSink::maybe_flush() {
  if (encoding_ == TraceEncoding::kPlain) {
    file_.maybe_flush();
    return;
  }
  if (text_.size() < kDeflateBytes) return;
  deflate_text(false);
  file_.maybe_flush();
}

void TraceSink::deflate_text(bool finish) {
  if (failed_) {
    text_.clear();
    return;
  }
  z_stream& z = deflater_->stream;
  z.next_in = reinterpret_cast<Bytef*>(text_.data());
  z.avail_in = static_cast<uInt>(text_.size());
  std::string& out = file_.buffer();
  int rc = Z_OK;
  do {
    const size_t before = out.size();
    out.resize(before + kOutChunkBytes);
    z.next_out = reinterpret_cast<Bytef*>(out.data() + before);
    z.avail_out = static_cast<uInt>(kOutChunkBytes);
    rc = deflate(&z, finish ? Z_FINISH : Z_NO_FLUSH);
    out.resize(before + kOutChunkBytes - z.avail_out);
    if (rc == Z_STREAM_ERROR) failed_ = true;
  } while (!failed_ && (finish ? rc != Z_STREAM_END : z.avail_in > 0 || z.avail_out == 0));
  text_.clear();
}

bool TraceSink::commit() {
  if (encoding_ == TraceEncoding::kGzip) deflate_text(true);
  return !failed_ && file_.commit();  // a failed stream is never published
}

}  // namespace tokenline
