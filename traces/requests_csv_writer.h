// RequestsCsvWriter: streams requests.csv, one row per request in the order requests leave the system.
// Columns: id,arrival_s,first_token_s,finish_s,input_tokens,output_tokens,cached_tokens,preemptions,
// instance,status. Times in seconds with 6 decimals (microseconds); first_token_s is empty when no token
// was produced. The file appears only after finish() (OutputFile).
#pragma once

#include <string>

#include "traces/output_file.h"
#include "traces/request_row.h"

namespace tokenline {

class RequestsCsvWriter {
 public:
  explicit RequestsCsvWriter(const std::string& path);  // throws InputError when path is not writable
  void write(const RequestRow& r);
  bool finish() { return file_.commit(); }

 private:
  OutputFile file_;
};

}  // namespace tokenline
