// RequestsCsvWriter: streams requests.csv, one row per request in id order. Columns:
// id,arrival_s,first_token_s,finish_s,input_tokens,output_tokens,cached_tokens,preemptions,instance,status,
// decode_instance,kv_transfer_bytes,kv_transfer_s,ttft_s,tpot_s,e2e_s. Times in seconds with 6 decimals
// (microseconds); first_token_s, ttft_s and tpot_s are empty when no token was produced (tpot_s also with
// one output token). Requests leave out of id order; a row waits until every smaller id has been written
// (ids count up from 0 in every workload, workload_window.h), so what is held is the rows that overtook a
// request still in the system, not the run. The file appears only after finish() (OutputFile).
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "traces/output_file.h"
#include "traces/request_row.h"

namespace tokenline {

class RequestsCsvWriter {
 public:
  explicit RequestsCsvWriter(const std::string& path);  // throws InputError when path is not writable
  void write(const RequestRow& r);
  bool finish();  // writes the rows still waiting (ids never seen are skipped), then commits

 private:
  void append(const RequestRow& r);

  OutputFile file_;
  int64_t next_id_ = 0;                    // the next row to write
  std::map<int64_t, RequestRow> waiting_;  // rows past next_id_, by id
};

}  // namespace tokenline
