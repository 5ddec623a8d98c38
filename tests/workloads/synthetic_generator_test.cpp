#include "workloads/synthetic_generator.h"

#include <catch2/catch.hpp>
#include <cmath>
#include <map>
#include <set>

#include "common/input_error.h"
#include "test_sources.h"
#include "workloads/tokenline_reader.h"

namespace tokenline {
namespace {

using test::drain;

std::vector<WorkloadRequest> generate(const std::string& spec, uint64_t default_seed = 0) {
  SyntheticGenerator g(parse_synthetic_spec(spec), default_seed);
  return drain(g);
}

std::string spec_error(const std::string& spec) {
  try {
    parse_synthetic_spec(spec);
  } catch (const InputError& e) {
    return e.what();
  }
  return "no error";
}

TEST_CASE("synthetic spec: values with commas stay whole, defaults apply", "[synthetic]") {
  const SyntheticSpec s = parse_synthetic_spec(
      "n=50,rate=5,arrival=gamma:cv=2,input=lognormal:mean=2000,sigma=1,output=uniform:1:9,seed=42");
  CHECK(s.request_count() == 50);
  CHECK(s.rate == 5);
  CHECK(s.arrival == ArrivalKind::kGamma);
  CHECK(s.arrival_cv == 2);
  CHECK(s.input.params().kind == LengthKind::kLognormal);
  CHECK(s.input.params().sigma == 1);
  CHECK(s.output.params().hi == 9);
  CHECK(s.seed == uint64_t{42});
  CHECK(parse_synthetic_spec("").request_count() == 100);
}

TEST_CASE("synthetic spec errors name the key", "[synthetic]") {
  CHECK(spec_error("n=0") == "synthetic: n: expected an integer >= 1, found '0'");
  CHECK(spec_error("rate=fast") == "synthetic: rate: expected a number > 0, found 'fast'");
  CHECK(spec_error("arrival=bursty") == "synthetic: arrival: expected poisson | gamma:cv=C, found 'bursty'");
  CHECK(spec_error("n=5,n=6") == "synthetic: n: expected each key once, found 'n' twice");
  CHECK(spec_error("prefix_groups=4") ==
        "synthetic: prefix_tokens: expected prefix_groups and prefix_tokens both > 0 or both absent, found "
        "prefix_groups=4, prefix_tokens=0");
  CHECK(spec_error("speed=3").find("synthetic: speed: expected one of the keys {n, rate,") == 0);
  CHECK(spec_error("fast").find("synthetic: expected key=value items with keys {n, rate,") == 0);
}

TEST_CASE("an unknown key is blamed, not the key before it", "[synthetic][input_limits]") {
  const std::string e = spec_error("n=10,foo=3");
  CHECK(e.find("synthetic: foo: expected one of the keys {n, rate,") == 0);
  CHECK(e.find("found unknown key 'foo'") != std::string::npos);
  CHECK(spec_error("input=lognormal:mean=2000,sigma=1,seed=5,bar=1").find("synthetic: bar:") == 0);
}

TEST_CASE("requests are bounded before anything is generated", "[synthetic][input_limits]") {
  CHECK(spec_error("n=1000000000") == "synthetic: n: expected at most 100000000 requests, found 1000000000");
  CHECK(spec_error("prefix_groups=1,prefix_tokens=9223372036854775807")
            .find("synthetic: prefix_tokens: expected at most 134217728") == 0);
}

// One session generator: the fixed-time session keys of earlier versions point at synthetic-sessions:,
// whose next turn waits for the last answer (workloads/session_generator.h).
TEST_CASE("synthetic: the old session keys are refused, pointing at synthetic-sessions:", "[synthetic]") {
  for (const std::string key : {"sessions=10", "turns=3", "think_s=5"}) {
    INFO(key);
    const std::string e = spec_error("n=4," + key);
    CHECK(e.find("synthetic: " + key.substr(0, key.find('=')) + ": expected synthetic-sessions:") == 0);
    CHECK(e.find("found " + key + " in synthetic:") != std::string::npos);
  }
}

TEST_CASE("a generated prompt above the token limit is an input error", "[synthetic][input_limits]") {
  SyntheticGenerator g(parse_synthetic_spec("n=2,input=fixed:9223372036854775807"), 1);
  try {
    g.next();
    FAIL("no error");
  } catch (const InputError& e) {
    CHECK(std::string(e.what()).find("expected prompts and outputs of at most 134217728 tokens") !=
          std::string::npos);
  }
}

// Found by fuzz/synthetic_spec_fuzz.cpp (corpus: think-s-1e120-arrival-overflow): the generator itself
// returned arrivals of 1e119 s, past the WorkloadSource contract; only the CLI's window refused them.
TEST_CASE("arrivals past the time limit are an input error from the generator", "[synthetic][input_limits]") {
  SyntheticGenerator g(parse_synthetic_spec("n=3,rate=1e-300"), 1);
  REQUIRE(g.next()->arrival_s == 0);
  try {
    while (g.next()) {
    }
    FAIL("no error");
  } catch (const InputError& e) {
    CHECK(std::string(e.what()).find("arrival: expected a time <= 1e+09 s") != std::string::npos);
  }
  // A slow rate within the limit still generates: the second request ~1e6 s later.
  CHECK(generate("n=2,rate=1e-6,seed=3").size() == 2);
}

TEST_CASE("synthetic: the same spec and seed give byte-identical requests", "[synthetic]") {
  const std::string spec =
      "n=300,rate=4,arrival=gamma:cv=3,input=zipf:s=1.1,max=4096,output=lognormal:mean=200,sigma=1,"
      "prefix_groups=3,prefix_tokens=1024,seed=7";
  const auto a = generate(spec);
  const auto b = generate(spec);
  REQUIRE(a.size() == 300);
  std::string text_a, text_b;
  for (const auto& r : a) text_a += to_tokenline_line(r) + "\n";
  for (const auto& r : b) text_b += to_tokenline_line(r) + "\n";
  CHECK(text_a == text_b);
  CHECK(text_a != [&] {
    std::string t;
    for (const auto& r : generate(spec + "1")) t += to_tokenline_line(r) + "\n";  // seed=71
    return t;
  }());
  // seed= in the spec wins over the caller's default seed; without it the default decides.
  CHECK(generate(spec, 99)[5].input_tokens == a[5].input_tokens);
  CHECK(generate("n=5,input=uniform:1:100000", 1)[4].input_tokens !=
        generate("n=5,input=uniform:1:100000", 2)[4].input_tokens);
}

TEST_CASE("synthetic: pinned first requests (seed 42)", "[synthetic]") {
  // Computed once from this code; a change means every synthetic workload changed.
  const auto rs = generate("n=3,rate=2,input=uniform:100:1000,output=uniform:10:20,seed=42");
  REQUIRE(rs.size() == 3);
  CHECK(rs[0].arrival_s == 0.0);
  CHECK(rs[0].input_tokens == 647);
  CHECK(rs[1].input_tokens == 635);
  CHECK(rs[2].output_tokens == 12);
  CHECK(rs[1].arrival_s == Approx(0.02333443961076586).epsilon(1e-14));
}

TEST_CASE("synthetic: poisson and gamma arrivals have the asked rate and burstiness", "[synthetic]") {
  for (double cv : {1.0, 3.0}) {
    INFO("cv " << cv);
    const std::string arrival = cv == 1.0 ? "poisson" : "gamma:cv=3";
    const auto rs = generate("n=40001,rate=5,arrival=" + arrival + ",seed=3");
    double sum = 0, sum_sq = 0;
    for (size_t i = 1; i < rs.size(); ++i) {
      const double gap = rs[i].arrival_s - rs[i - 1].arrival_s;
      REQUIRE(gap >= 0);
      sum += gap;
      sum_sq += gap * gap;
    }
    const double n = static_cast<double>(rs.size() - 1);
    const double mean = sum / n;
    const double sd = std::sqrt(sum_sq / n - mean * mean);
    CHECK(mean == Approx(0.2).margin(5 * cv * 0.2 / std::sqrt(n)));
    CHECK(sd / mean == Approx(cv).epsilon(0.1));
  }
}

TEST_CASE("synthetic: shared-prefix groups share exactly the prefix's full blocks", "[synthetic]") {
  const auto rs =
      generate("n=200,input=fixed:700,prefix_groups=4,prefix_tokens=1100,block_tokens=512,seed=5");
  std::map<int64_t, int> first_block_users;
  std::set<int64_t> tail_hashes;
  for (const auto& r : rs) {
    CHECK(r.input_tokens == 1100 + 700);
    REQUIRE(r.block_hashes.size() == 4);  // ceil(1800 / 512)
    CHECK(r.block_tokens == 512);
    ++first_block_users[r.block_hashes[0]];
    // block 2 covers tokens 1024..1535: partly outside the 1100-token prefix, so it is the request's own
    CHECK(tail_hashes.insert(r.block_hashes[2]).second);
  }
  CHECK(first_block_users.size() == 4);
  for (const auto& [hash, users] : first_block_users) CHECK(users > 20);  // uniform over 4 groups: ~50 each
}

}  // namespace
}  // namespace tokenline
