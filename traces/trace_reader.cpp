#include "traces/trace_reader.h"

#include <cmath>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "common/input_error.h"

namespace tokenline {
namespace {

constexpr double kNsPerUs = 1e3;
constexpr double kNsPerS = 1e9;
constexpr int kStreamsPerRank = 2;  // trace_tid: compute and comm threads per rank

using nlohmann::json;

json parse_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path, "a readable trace.json", "no such file");
  std::stringstream buffer;
  buffer << in.rdbuf();
  json doc = json::parse(buffer.str(), nullptr, false);
  if (doc.is_discarded())
    throw InputError(path, "a JSON document (Chrome Trace Event Format)", "malformed JSON");
  if (!doc.is_object() || !doc.contains("traceEvents") || !doc["traceEvents"].is_array())
    throw InputError(path, "an object with a traceEvents array", "something else");
  return doc;
}

double number(const json& e, const char* key, const std::string& where) {
  auto it = e.find(key);
  if (it == e.end() || !it->is_number())
    throw InputError(where, std::string("a numeric \"") + key + "\"", "none");
  return it->get<double>();
}

int64_t arg(const json& e, const char* key) {
  auto args = e.find("args");
  if (args == e.end() || !args->is_object()) return 0;
  auto it = args->find(key);
  return it != args->end() && it->is_number_integer() ? it->get<int64_t>() : 0;
}

}  // namespace

double trace_us_to_s(double us) {
  return static_cast<double>(std::llround(us * kNsPerUs)) / kNsPerS;
}

RecordedRun read_recorded_run(const std::string& path) {
  const json doc = parse_file(path);
  std::map<int32_t, RecordedInstance> by_pid;
  const json& events = doc["traceEvents"];
  for (size_t i = 0; i < events.size(); ++i) {
    const json& e = events[i];
    if (!e.is_object() || e.value("ph", "") != "X") continue;
    const std::string where = path + ": traceEvents[" + std::to_string(i) + "]";
    const std::string name = e.value("name", "");
    const auto pid = static_cast<int32_t>(number(e, "pid", where));
    const auto tid = static_cast<int32_t>(number(e, "tid", where));
    const double start_s = trace_us_to_s(number(e, "ts", where));
    const double duration_s = trace_us_to_s(number(e, "dur", where));
    RecordedInstance& inst = by_pid[pid];
    inst.pid = pid;
    const int32_t rank = tid / kStreamsPerRank;
    if (name == "step") {
      const int64_t step = arg(e, "step");
      if (inst.steps.empty() || inst.steps.back().step != step) {
        RecordedStep s;
        s.step = step;
        s.start_s = start_s;
        s.duration_s = duration_s;
        inst.steps.push_back(std::move(s));
      }
      inst.steps.back().ranks.push_back({rank, arg(e, "tokens"), arg(e, "requests")});
      continue;
    }
    if (inst.steps.empty()) throw InputError(where, "op spans after their step span", "'" + name + "' first");
    RecordedStep& s = inst.steps.back();
    s.ops.push_back(RecordedOp{.name = name,
                               .rank = rank,
                               .comm = tid % kStreamsPerRank == 1,
                               .start_s = trace_us_to_s((number(e, "ts", where) - s.start_s * 1e6)),
                               .duration_s = duration_s});
  }
  RecordedRun run;
  for (auto& [pid, inst] : by_pid) {
    if (pid != static_cast<int32_t>(run.instances.size()) + 1)
      throw InputError(path, "instances with pids 1, 2, ... (as tokenline writes them)",
                       "pid " + std::to_string(pid));
    run.instances.push_back(std::move(inst));
  }
  if (run.instances.empty())
    throw InputError(path, "step spans (a trace written by tokenline sim or run)", "none");
  return run;
}

}  // namespace tokenline
