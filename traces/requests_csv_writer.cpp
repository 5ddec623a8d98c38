#include "traces/requests_csv_writer.h"

#include "traces/number_format.h"

namespace tokenline {
namespace {

constexpr int kTimeDecimals = 6;  // microseconds

}  // namespace

RequestsCsvWriter::RequestsCsvWriter(const std::string& path) : file_(path) {
  file_.buffer().append(
      "id,arrival_s,first_token_s,finish_s,input_tokens,output_tokens,cached_tokens,preemptions,instance,"
      "status,decode_instance,kv_transfer_bytes,kv_transfer_s,ttft_s,tpot_s,e2e_s\n");
}

void RequestsCsvWriter::write(const RequestRow& r) {
  if (r.id != next_id_) {
    waiting_.emplace(r.id, r);
    return;
  }
  append(r);
  ++next_id_;
  for (auto it = waiting_.begin(); it != waiting_.end() && it->first == next_id_; it = waiting_.erase(it)) {
    append(it->second);
    ++next_id_;
  }
}

bool RequestsCsvWriter::finish() {
  for (const auto& [id, row] : waiting_) append(row);
  waiting_.clear();
  return file_.commit();
}

void RequestsCsvWriter::append(const RequestRow& r) {
  std::string& out = file_.buffer();
  append_int(out, r.id);
  out.push_back(',');
  append_fixed(out, r.arrival_s, kTimeDecimals);
  out.push_back(',');
  if (r.first_token_s >= 0) append_fixed(out, r.first_token_s, kTimeDecimals);
  out.push_back(',');
  append_fixed(out, r.finish_s, kTimeDecimals);
  out.push_back(',');
  append_int(out, r.input_tokens);
  out.push_back(',');
  append_int(out, r.generated_tokens);
  out.push_back(',');
  append_int(out, r.cached_tokens);
  out.push_back(',');
  append_int(out, r.preemptions);
  out.push_back(',');
  append_int(out, r.instance);
  out.push_back(',');
  out.append(r.status.data(), r.status.size());
  out.push_back(',');
  if (r.decode_instance >= 0) append_int(out, r.decode_instance);
  out.push_back(',');
  if (r.kv_transfer_s >= 0) append_int(out, static_cast<int64_t>(r.kv_transfer_bytes + 0.5));
  out.push_back(',');
  if (r.kv_transfer_s >= 0) append_fixed(out, r.kv_transfer_s, kTimeDecimals);
  out.push_back(',');
  if (r.first_token_s >= 0) append_fixed(out, r.first_token_s - r.arrival_s, kTimeDecimals);
  out.push_back(',');
  if (r.first_token_s >= 0 && r.generated_tokens > 1)
    append_fixed(out, request_tpot_s(r.first_token_s, r.finish_s, r.generated_tokens), kTimeDecimals);
  out.push_back(',');
  append_fixed(out, r.finish_s - r.arrival_s, kTimeDecimals);
  out.push_back('\n');
  file_.maybe_flush();
}

}  // namespace tokenline
