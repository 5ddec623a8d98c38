// AccuracyTable: how close the shipped profiles came to published end-to-end runs, so that a prediction can
// say how far to trust it. calibrate/accuracy.csv is written by `scripts/validate-fidelity --loho --accuracy
// calibrate/accuracy.csv` (each group of published runs - one model, one mode, one file's hardware x engine -
// with the MAPE of its predicted mean TTFT, TPOT and E2E, priced by the GPU's own profile and, leaving that
// GPU out, by the engine's profile of the nearest other GPU transferred), and compiled in. accuracy_note
// picks the rows that speak for one run (its profile, or how transfers did; its model family) and words them.
// Nothing here is fitted or chosen: the figures are the validation run's, and docs/validation.md says how
// each was reached.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace tokenline {

// One line of the table: a model's runs in one file, priced one way.
struct AccuracyRow {
  std::string set;       // "fit set" (a profile's terms may be fitted on them) | "held out" (no fit saw them)
  std::string hardware;  // "b200": the GPU the runs ran on
  std::string engine;    // "sglang" | "vllm" | "trtllm"
  std::string pricing;   // "own" (the GPU's own profile) | "transferred" (that GPU left out)
  std::string profile;   // what priced them: the own profile, or the transferred one's source
  std::string model;     // "Llama-3.1-70B" (the model_path's name)
  std::string model_type;  // "llama": the family, as tokenline read the config (ModelConfig::hf_model_type)
  std::string mode;        // "agg" | "disagg"
  int points = 0;
  double ttft_pct = 0;  // mean absolute percentage errors of the mean TTFT, TPOT and E2E
  double tpot_pct = 0;
  double e2e_pct = 0;
};

struct AccuracyTable {
  std::string provenance;  // the command and date that wrote it (the file's first "# " line)
  std::vector<AccuracyRow> rows;
};

// Parses the CSV text (header "set,hardware,engine,pricing,profile,model,model_type,mode,points,ttft_pct,
// tpot_pct,e2e_pct"; lines starting with '#' are comments, the first one the provenance). Throws InputError
// naming `file`, the line and the field for a malformed line.
AccuracyTable parse_accuracy_table(std::string_view text, const std::string& file);

// The table compiled into the binary (calibrate/accuracy.csv).
const AccuracyTable& shipped_accuracy_table();

// The run a note is for.
struct AccuracyQuery {
  std::string hardware;    // the run's GPU ("h200")
  std::string engine;      // the engine whose rules the run applied
  std::string kind;        // the time source: "profile" | "transferred" | "roofline" | "ideal" | "replay"
  std::string profile;     // TimeSourceChoice::profile ("h200-sglang", "transfer:b300-sglang", "")
  std::string model_type;  // ModelConfig::hf_model_type
  std::string model_name;  // ModelConfig::name: a preset's name or the config's path
  bool disaggregated = false;
};

struct AccuracyNote {
  std::vector<std::string> lines;  // for the summary, one phrase each; empty for a replay
  std::vector<AccuracyRow> rows;   // the rows the lines summarize
};

// What the table says about the run `q`: the published runs priced as this run is priced (its own profile's
// rows; for a transferred profile, the leave-one-hardware-out rows of that transfer, or of the engine's
// transfers), their range of errors, and the rows of the run's model family among them (or, if none, on the
// engine's other profiles). A profile no published run checked says so and gives the engine's other
// profiles' range instead; the roofline and the seed's ideal rates say that no run validates them.
AccuracyNote accuracy_note(const AccuracyTable& table, const AccuracyQuery& q);

}  // namespace tokenline
