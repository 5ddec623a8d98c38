// The accuracy table (calibrate/accuracy_table.h): what `scripts/validate-fidelity --accuracy` writes is read
// back strictly, and each kind of run gets the rows that speak for it - its own profile's, a transfer's, the
// engine's other profiles' - with its model or family named.
#include "calibrate/accuracy_table.h"

#include <catch2/catch.hpp>
#include <set>
#include <string>

#include "common/input_error.h"
#include "cost/op_profile.h"

using namespace tokenline;

namespace {

const char* kTable =
    "# scripts/validate-fidelity --accuracy, 2026-12-06, tree abc\n"
    "set,hardware,engine,pricing,profile,model,model_type,mode,points,ttft_pct,tpot_pct,e2e_pct\n"
    "fit set,b200,trtllm,own,b200-trtllm,DeepSeek-R1,deepseek_v3,agg,42,28.3,17.1,15.9\n"
    "fit set,b200,trtllm,own,b200-trtllm,Llama-3.1-70B,llama,agg,72,23.1,14.3,14.5\n"
    "fit set,b200,trtllm,transferred,b300-trtllm,Llama-3.1-70B,llama,agg,72,9.6,8.7,8.6\n"
    "held out,h200,trtllm,own,h200-trtllm,Llama-3.1-70B,llama,agg,72,11.9,6.9,7.0\n"
    "held out,h200,sglang,own,h200-sglang,Qwen3-235B-A22B-FP8,qwen3_moe,agg,24,31.4,9.7,10.2\n"
    "\n";

AccuracyQuery query(const std::string& hardware, const std::string& engine, const std::string& kind,
                    const std::string& profile, const std::string& model_type, const std::string& name) {
  return {.hardware = hardware,
          .engine = engine,
          .kind = kind,
          .profile = profile,
          .model_type = model_type,
          .model_name = name};
}

std::string joined(const AccuracyNote& n) {
  std::string s;
  for (const std::string& l : n.lines) s += l + "\n";
  return s;
}

std::string error_of(const std::string& text) {
  try {
    parse_accuracy_table(text, "acc.csv");
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("the accuracy table reads its rows and its provenance", "[accuracy]") {
  const AccuracyTable t = parse_accuracy_table(kTable, "acc.csv");
  CHECK(t.provenance == "scripts/validate-fidelity --accuracy, 2026-12-06, tree abc");
  REQUIRE(t.rows.size() == 5);
  CHECK(t.rows[1].model == "Llama-3.1-70B");
  CHECK(t.rows[1].model_type == "llama");
  CHECK(t.rows[1].points == 72);
  CHECK(t.rows[1].tpot_pct == Approx(14.3));
  CHECK(t.rows[2].pricing == "transferred");
  CHECK(t.rows[3].set == "held out");
}

TEST_CASE("a malformed accuracy table names the line and the field", "[accuracy]") {
  const std::string header =
      "set,hardware,engine,pricing,profile,model,model_type,mode,points,ttft_pct,tpot_pct,e2e_pct\n";
  CHECK(error_of("set,hardware\n").starts_with("acc.csv:1: expected the header"));
  CHECK(error_of("# only a comment\n").find("no header line") != std::string::npos);
  CHECK(error_of(header + "fit set,b200,trtllm,own,p,m,llama,agg,4,1,2\n")
            .starts_with("acc.csv:2: expected 12 fields"));
  CHECK(error_of(header + "train,b200,trtllm,own,p,m,llama,agg,4,1,2,3\n").starts_with("acc.csv:2: set:"));
  CHECK(error_of(header + "fit set,b200,trtllm,moved,p,m,llama,agg,4,1,2,3\n")
            .starts_with("acc.csv:2: pricing:"));
  CHECK(error_of(header + "fit set,b200,trtllm,own,p,m,llama,pd,4,1,2,3\n").starts_with("acc.csv:2: mode:"));
  CHECK(
      error_of(header + "fit set,b200,trtllm,own,p,m,llama,agg,0,1,2,3\n").starts_with("acc.csv:2: points:"));
  CHECK(error_of(header + "fit set,b200,trtllm,own,p,m,llama,agg,2.5,1,2,3\n")
            .starts_with("acc.csv:2: points:"));
  CHECK(error_of(header + "fit set,b200,trtllm,own,p,m,llama,agg,4,x,2,3\n")
            .starts_with("acc.csv:2: ttft_pct:"));
  CHECK(error_of(header + "fit set,b200,trtllm,own,p,m,llama,agg,4,1,-2,3\n")
            .starts_with("acc.csv:2: tpot_pct:"));
  CHECK(
      error_of(header + "fit set,b200,trtllm,own,,m,llama,agg,4,1,2,3\n").starts_with("acc.csv:2: expected"));
}

TEST_CASE("a run priced by its GPU's profile quotes that profile's runs and its own model's", "[accuracy]") {
  const AccuracyTable t = parse_accuracy_table(kTable, "acc.csv");
  const AccuracyNote n = accuracy_note(t, query("b200", "trtllm", "profile", "b200-trtllm", "llama",
                                                "models/meta-llama--Llama-3.1-70B_config.json"));
  REQUIRE(n.lines.size() == 2);
  CHECK(n.lines[0] ==
        "b200-trtllm vs 114 published runs, 2 models, all in sample: TPOT 14.3-17.1%, TTFT 23.1-28.3% (MAPE "
        "per "
        "model)");
  CHECK(n.lines[1] ==
        "this model: Llama-3.1-70B, 72 runs in sample: TPOT 14.3%, TTFT 23.1% (calibrate/accuracy.csv)");
  CHECK(n.rows.size() == 2);
  // another model of the family is quoted as the family; a family not among them gets no such line
  const AccuracyNote other =
      accuracy_note(t, query("b200", "trtllm", "profile", "b200-trtllm", "llama", "llama-3.1-8b"));
  CHECK(other.lines[1].starts_with("this family (llama): Llama-3.1-70B, 72 runs"));
  const AccuracyNote qwen = accuracy_note(
      t, query("h200", "sglang", "profile", "h200-sglang", "qwen3_moe", "Qwen--Qwen3-235B-A22B_config.json"));
  CHECK(qwen.lines[0].find("24 published runs, 1 model, all held out") != std::string::npos);
  CHECK(qwen.lines[1].starts_with("this model: Qwen3-235B-A22B-FP8"));  // "-FP8" names the checkpoint
  // as do "-Instruct" and both together, whatever the case; a longer name is another model
  const AccuracyTable eight = parse_accuracy_table(
      "set,hardware,engine,pricing,profile,model,model_type,mode,points,ttft_pct,tpot_pct,e2e_pct\n"
      "fit set,h200,vllm,own,h200-vllm,Llama-3.1-70B,llama,agg,60,8.0,9.1,8.8\n"
      "fit set,h200,vllm,own,h200-vllm,Llama-3.1-8B-Instruct-FP8,llama,agg,13,76.8,74.9,68.9\n",
      "acc.csv");
  CHECK(accuracy_note(eight, query("h200", "vllm", "profile", "h200-vllm", "llama", "llama-3.1-8b"))
            .lines[1]
            .starts_with("this model: Llama-3.1-8B-Instruct-FP8, 13 runs"));
  CHECK(accuracy_note(eight, query("h200", "vllm", "profile", "h200-vllm", "llama", "llama-3.1-405b"))
            .lines[1]
            .starts_with("this family (llama): Llama-3.1-70B, 60 runs"));
}

TEST_CASE("a profile no run checks quotes the engine's other profiles, the family on its GPU", "[accuracy]") {
  const AccuracyTable t = parse_accuracy_table(kTable, "acc.csv");
  const AccuracyNote n =
      accuracy_note(t, query("gb200", "trtllm", "profile", "gb200-trtllm", "llama", "llama-3.1-70b"));
  REQUIRE(n.lines.size() == 2);
  CHECK(n.lines[0].starts_with(
      "no published gb200 trtllm run checks gb200-trtllm; trtllm's profiles on other GPUs "
      "vs 186 published runs, 2 models, 72 held out: TPOT 6.9-17.1%"));
  CHECK(n.lines[1].find("on b200 trtllm") != std::string::npos);
  CHECK(n.lines[1].find("on h200 trtllm") != std::string::npos);
  // a family no run of the engine has
  const AccuracyNote gemma =
      accuracy_note(t, query("gb200", "trtllm", "profile", "gb200-trtllm", "gemma3", "g"));
  CHECK(gemma.lines.back().starts_with("no published trtllm run of the gemma3 family checked"));
}

TEST_CASE("a transferred profile quotes the leave-one-hardware-out rows of that transfer", "[accuracy]") {
  const AccuracyTable t = parse_accuracy_table(kTable, "acc.csv");
  const AccuracyNote n = accuracy_note(
      t, query("b200", "trtllm", "transferred", "transfer:b300-trtllm", "llama", "llama-3.1-70b"));
  REQUIRE_FALSE(n.lines.empty());
  CHECK(
      n.lines[0].starts_with("b300-trtllm transferred to b200 vs 72 published runs, 1 model, all in sample: "
                             "TPOT 8.7%, TTFT 9.6%"));
  // a transfer no row checks: the engine's transfers
  const AccuracyNote h100 =
      accuracy_note(t, query("h100", "trtllm", "transferred", "transfer:h200-trtllm", "llama", "llama"));
  CHECK(
      h100.lines[0].starts_with("no published h100 run checks this transfer; trtllm's profiles transferred"));
}

TEST_CASE("the roofline and the ideal rates are not validated, a replay needs no note", "[accuracy]") {
  const AccuracyTable t = parse_accuracy_table(kTable, "acc.csv");
  CHECK(joined(accuracy_note(t, query("h200", "sglang", "roofline", "", "llama", "x")))
            .find("no published run "
                  "validates it") != std::string::npos);
  CHECK(joined(accuracy_note(t, query("h200", "sglang", "ideal", "", "llama", "x")))
            .find("not a measured run") != std::string::npos);
  CHECK(accuracy_note(t, query("h200", "sglang", "replay", "", "llama", "x")).lines.empty());
  CHECK(accuracy_note(t, query("h200", "mystery", "profile", "h200-mystery", "llama", "x")).lines ==
        std::vector<std::string>{"no published run checks mystery on any GPU here"});
}

TEST_CASE("the shipped accuracy table names shipped profiles, engines and both sets", "[accuracy]") {
  const AccuracyTable& t = shipped_accuracy_table();
  REQUIRE_FALSE(t.rows.empty());
  CHECK(t.provenance.find("validate-fidelity") != std::string::npos);
  std::set<std::string> sets;
  std::set<std::string> pricing;
  std::set<std::string> profiles;
  for (const AccuracyRow& r : t.rows) {
    sets.insert(r.set);
    pricing.insert(r.pricing);
    CHECK(r.profile.starts_with(r.pricing == "own" ? r.hardware + "-" : ""));
    CHECK(r.profile.ends_with("-" + r.engine));
    profiles.insert(r.profile);
    CHECK_FALSE(r.model_type.empty());
  }
  for (const std::string& p : profiles) CHECK_NOTHROW(load_op_profile(p));  // a shipped profile's name
  CHECK(sets == std::set<std::string>{"fit set", "held out"});
  CHECK(pricing == std::set<std::string>{"own", "transferred"});
}
