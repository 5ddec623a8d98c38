// quantization_config / hf_quant_config.json -> WeightFormats. nlohmann stays in this file and hf_config.cpp.
//
// What each method stores, and which modules it leaves unquantized, as the engines load them:
// - every method quantizes Linear layers only: embeddings, the LM head, norms and MoE routers stay at the
//   checkpoint's dtype (vLLM builds VocabParallelEmbedding / ParallelLMHead and the routers of
//   deepseek_v2.py, qwen3_moe.py, gpt_oss.py, minimax_m2.py with quant_config=None; v0.11);
// - exclusion lists are matched per module name, with each producer's own syntax: transformers'
//   modules_to_not_convert (a module or its parent, a regex prefix), compressed-tensors' ignore and targets
//   ("re:" regexes matched from the start, else exact names), ModelOpt's exclude_modules (fnmatch globs).
#include "engine/model/hf_quant_config.h"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <optional>
#include <regex>
#include <sstream>
#include <vector>

#include "common/input_error.h"
#include "common/json_depth.h"

namespace tokenline {
namespace {

using nlohmann::json;

constexpr const char* kSupportedMethods =
    "one of fp8, fbgemm_fp8, mxfp4, mxfp8, modelopt (quant_algo FP8, MXFP8, NVFP4, W4A16_NVFP4, "
    "MIXED_PRECISION), "
    "compressed-tensors (int4 / int8 "
    "pack-quantized, fp8 float-quantized, nvfp4 / mxfp4 pack-quantized), awq, gptq";
constexpr int64_t kNvfp4GroupSize = 16;
constexpr int64_t kMxfp4GroupSize = 32;
constexpr size_t kMaxPatternChars = 256;  // the longest exclusion pattern compiled as a regex
constexpr size_t kMaxPatterns = 8192;     // entries in one list (GLM-5's modules_to_not_convert: ~700)
// Modules one MIXED_PRECISION quantized_layers object names (nvidia/MiniMax-M3-NVFP4: 22,422, every
// routed expert's projections one by one).
constexpr size_t kMaxQuantizedLayers = size_t{1} << 16;

enum class Syntax { kTransformers, kCompressedTensors, kModelOpt };

// One exclusion (or target) entry, compiled once.
class Pattern {
 public:
  Pattern(const std::string& text, Syntax syntax, const std::string& where) : syntax_(syntax) {
    std::string body = text;
    if (syntax == Syntax::kCompressedTensors && body.starts_with("re:")) {
      body = body.substr(3);
      regex_ = true;
    } else if (syntax == Syntax::kModelOpt && body.find_first_of("*?[") != std::string::npos) {
      body = glob_to_regex(body);
      regex_ = true;
    } else if (syntax == Syntax::kTransformers && body.find_first_of("*?[(|\\+^$") != std::string::npos) {
      regex_ = true;
    }
    literal_ = body;
    if (regex_ && (body.size() > kMaxPatternChars || nested_repetition(body)))
      throw InputError(where, "a pattern of at most 256 characters, 8 repetitions and no nested repetition",
                       "'" + text + "'");
    if (regex_) {
      try {
        re_ = std::regex(body, std::regex::ECMAScript | std::regex::optimize);
      } catch (const std::regex_error&) {
        throw InputError(where, "a valid pattern", "'" + text + "'");
      }
    }
  }

  bool matches(const std::string& name) const {
    if (!regex_) {
      // The module itself, one under it (transformers), or the same name under a wrapper's prefix.
      if (name == literal_ || name.ends_with("." + literal_)) return true;
      return syntax_ == Syntax::kTransformers && name.starts_with(literal_ + ".");
    }
    switch (syntax_) {
      case Syntax::kCompressedTensors:  // Python re.match: anchored at the start only
        return std::regex_search(name, re_, std::regex_constants::match_continuous);
      case Syntax::kModelOpt:  // fnmatch: the whole name
        return std::regex_match(name, re_);
      case Syntax::kTransformers: {
        std::smatch m;
        if (!std::regex_search(name, m, re_, std::regex_constants::match_continuous)) return false;
        const size_t end = size_t(m.length(0));
        return end == name.size() || name[end] == '.';
      }
    }
    return false;
  }

 private:
  // True when a repeated group holds a repetition itself ("(a*)*") or the pattern repeats more than 8 times:
  // std::regex backtracks through such patterns in exponential (or high-degree) time. The configs'
  // patterns (".*self_attn.*", "mlp\\.(gate|up)_proj") repeat twice at most.
  static bool nested_repetition(const std::string& re) {
    constexpr int kMaxRepetitions = 8;
    int repetitions = 0;
    std::vector<bool> repeats_inside{false};  // per open group: a quantifier seen inside it
    for (size_t i = 0; i < re.size(); ++i) {
      const char ch = re[i];
      if (ch == '\\') {
        ++i;
      } else if (ch == '(') {
        repeats_inside.push_back(false);
      } else if (ch == ')' && repeats_inside.size() > 1) {
        const bool inner = repeats_inside.back();
        repeats_inside.pop_back();
        const bool quantified =
            i + 1 < re.size() && std::string_view("*+?{").find(re[i + 1]) != std::string_view::npos;
        if (inner && quantified) return true;
        repeats_inside.back() = repeats_inside.back() || inner || quantified;
      } else if (ch == '*' || ch == '+' || ch == '{') {
        repeats_inside.back() = true;
        if (++repetitions > kMaxRepetitions) return true;
      }
    }
    return false;
  }

  static std::string glob_to_regex(const std::string& glob) {
    std::string re;
    for (const char ch : glob) {
      if (ch == '*') {
        re += ".*";
      } else if (ch == '?') {
        re += '.';
      } else if (std::string_view("\\^$.|+()[]{}").find(ch) != std::string_view::npos) {
        re += '\\';
        re += ch;
      } else {
        re += ch;
      }
    }
    return re;
  }

  Syntax syntax_;
  bool regex_ = false;
  std::string literal_;
  std::regex re_;
};

// A method's quantized format and which Linear modules hold it.
struct QuantSpec {
  WeightFormat format;
  std::vector<Pattern> excluded;
  std::vector<Pattern> targets;  // empty: every Linear module
  // ModelOpt's MIXED_PRECISION: each named module's own format (a quantized_layers key names the module or
  // a parent of it: "...mlp.experts"); a module no key names stays unquantized.
  std::vector<std::pair<Pattern, WeightFormat>> per_module;
  std::string source;
  std::string kv_cache_quant_algo;  // ModelOpt's, as written ("FP8"); empty: none

  // The format module `name` is stored in; nullopt: unquantized.
  std::optional<WeightFormat> format_of(const std::string& name) const {
    for (const Pattern& p : excluded)
      if (p.matches(name)) return std::nullopt;
    if (!per_module.empty()) {
      for (const auto& [p, f] : per_module)
        if (p.matches(name)) return f;
      return std::nullopt;
    }
    if (targets.empty()) return format;
    for (const Pattern& p : targets)
      if (p.matches(name)) return format;
    return std::nullopt;
  }
};

std::string str_field(const json& q, const char* key, const std::string& where) {
  auto it = q.find(key);
  if (it == q.end() || it->is_null()) return "";
  if (!it->is_string()) throw InputError(where + "." + key, "a string", it->dump());
  return it->get<std::string>();
}

int64_t int_field(const json& q, const char* key, int64_t fallback, const std::string& where) {
  auto it = q.find(key);
  if (it == q.end() || it->is_null()) return fallback;
  const bool huge = it->is_number_unsigned() && it->get<uint64_t>() > (uint64_t{1} << 20);
  if (!it->is_number_integer() || huge || it->get<int64_t>() < -1 || it->get<int64_t>() > (int64_t{1} << 20))
    throw InputError(where + "." + key, "an integer -1 .. 2^20", it->dump());
  return it->get<int64_t>();
}

bool bool_field(const json& q, const char* key, bool fallback, const std::string& where) {
  auto it = q.find(key);
  if (it == q.end() || it->is_null()) return fallback;
  if (!it->is_boolean()) throw InputError(where + "." + key, "true or false", it->dump());
  return it->get<bool>();
}

void read_patterns(const json& q, const char* key, Syntax syntax, const std::string& where,
                   std::vector<Pattern>& out) {
  auto it = q.find(key);
  if (it == q.end() || it->is_null()) return;
  if (!it->is_array() || it->size() > kMaxPatterns)
    throw InputError(where + "." + key, "a list of at most 8192 module names or patterns",
                     it->is_array() ? std::to_string(it->size()) + " entries" : it->dump());
  for (const json& v : *it) {
    if (!v.is_string()) throw InputError(where + "." + key, "a list of strings", v.dump());
    out.emplace_back(v.get<std::string>(), syntax, where + "." + key);
  }
}

// weight_block_size [128, 128] -> 128 (square blocks only).
int64_t block_edge(const json& b, const std::string& where) {
  const bool square = b.is_array() && b.size() == 2 && b[0].is_number_integer() && b[0] == b[1] &&
                      b[0].get<int64_t>() > 0 && b[0].get<int64_t>() <= (int64_t{1} << 20);
  if (!square) throw InputError(where, "two equal positive integers", b.dump());
  return b[0].get<int64_t>();
}

QuantSpec fp8_spec(const json& q, const std::string& where) {
  QuantSpec s;
  s.format.kind = WeightFormatKind::kFp8PerTensor;
  auto b = q.find("weight_block_size");
  if (b != q.end() && !b->is_null()) {
    s.format.kind = WeightFormatKind::kFp8Block;
    s.format.group = block_edge(*b, where + ".weight_block_size");
  }
  read_patterns(q, "modules_to_not_convert", Syntax::kTransformers, where, s.excluded);
  return s;
}

// quant_method mxfp8 (MiniMaxAI/MiniMax-M3-MXFP8; vLLM model_executor/layers/quantization/mxfp8.py
// Mxfp8Config: every Linear layer in E4M3 with an E8M0 scale per 32 values, but those ignored_layers names;
// SGLang's override writes weight_block_size [1, 32], scale_fmt ue8m0). A block other than [1, 32] is not
// MXFP8.
QuantSpec mxfp8_spec(const json& q, const std::string& where) {
  QuantSpec s;
  s.format.kind = WeightFormatKind::kMxfp8;
  auto b = q.find("weight_block_size");
  if (b != q.end() && !b->is_null() && *b != json::array({1, 32}))
    throw InputError(where + ".weight_block_size", "[1, 32] (MXFP8's scale group)", b->dump());
  read_patterns(q, "ignored_layers", Syntax::kTransformers, where, s.excluded);
  read_patterns(q, "modules_to_not_convert", Syntax::kTransformers, where, s.excluded);
  return s;
}

// One ModelOpt quant_algo's format (modelopt's export, hf_quant_config.json): FP8 (per tensor),
// FP8_PER_CHANNEL_PER_TOKEN, NVFP4 (group 16: an E4M3 scale per 16 values) and W4A16_NVFP4 (the same weights
// multiplied with BF16 activations).
WeightFormat modelopt_format(const std::string& algo, const json& q, const std::string& where) {
  WeightFormat f;
  if (algo == "FP8") {
    f.kind = WeightFormatKind::kFp8PerTensor;
  } else if (algo == "FP8_PER_CHANNEL_PER_TOKEN") {
    f.kind = WeightFormatKind::kFp8PerChannel;
  } else if (algo == "MXFP8") {  // nvidia/MiniMax-M3-NVFP4's quantized_layers: its attention and dense layers
    f.kind = WeightFormatKind::kMxfp8;
  } else if (algo == "NVFP4" || algo == "W4A16_NVFP4") {
    const int64_t group = int_field(q, "group_size", kNvfp4GroupSize, where);
    if (group != kNvfp4GroupSize)
      throw InputError(where + ".group_size", "16 (NVFP4's block)", std::to_string(group));
    f.kind = WeightFormatKind::kNvfp4;
    f.weight_only = algo == "W4A16_NVFP4";
  } else {
    throw InputError(
        where + ".quant_algo",
        "FP8, FP8_PER_CHANNEL_PER_TOKEN, MXFP8, NVFP4, W4A16_NVFP4 or MIXED_PRECISION (tokenline's "
        "ModelOpt formats)",
        "'" + algo + "'");
  }
  return f;
}

// ModelOpt: {"quant_algo": "NVFP4", "group_size": 16, "exclude_modules": [...]} in hf_quant_config.json's
// "quantization" or in config.json's quantization_config; MIXED_PRECISION with a quantized_layers object
// of {module: {"quant_algo", "group_size"}} (nvidia/Qwen3.6-35B-A3B-NVFP4).
QuantSpec modelopt_spec(const json& q, const std::string& where) {
  const std::string algo = str_field(q, "quant_algo", where);
  QuantSpec s;
  if (algo == "MIXED_PRECISION") {
    auto layers = q.find("quantized_layers");
    if (layers == q.end() || !layers->is_object() || layers->empty() || layers->size() > kMaxQuantizedLayers)
      throw InputError(where + ".quantized_layers",
                       "an object of at most 65536 modules, each with its quant_algo (MIXED_PRECISION)",
                       layers == q.end()     ? "no such field"
                       : layers->is_object() ? std::to_string(layers->size()) + " entries"
                                             : layers->dump());
    for (const auto& [name, spec] : layers->items()) {
      const std::string at = where + ".quantized_layers." + name;
      if (!spec.is_object()) throw InputError(at, "an object with quant_algo", spec.dump());
      s.per_module.emplace_back(Pattern(name, Syntax::kTransformers, at),
                                modelopt_format(str_field(spec, "quant_algo", at), spec, at));
    }
    s.format = s.per_module.front().second;
  } else {
    s.format = modelopt_format(algo, q, where);
  }
  read_patterns(q, "exclude_modules", Syntax::kModelOpt, where, s.excluded);
  read_patterns(q, "ignore", Syntax::kModelOpt, where, s.excluded);
  // kv_cache_quant_algo: null or absent without a KV format, else its name (ModelOpt's export writes "FP8",
  // "NVFP4").
  if (auto kv = q.find("kv_cache_quant_algo"); kv != q.end() && !kv->is_null()) {
    if (!kv->is_string() || kv->get<std::string>().empty())
      throw InputError(where + ".kv_cache_quant_algo", "a KV cache format name (FP8, NVFP4) or null",
                       kv->dump());
    s.kv_cache_quant_algo = kv->get<std::string>();
  }
  return s;
}

// One compressed-tensors scheme's weights: {"num_bits", "type", "strategy", "group_size", "symmetric",
// "block_structure"}; activations_quantized: the scheme's input_activations is set (W8A8, W4A4).
WeightFormat compressed_weights(const json& w, bool activations_quantized, const std::string& where) {
  if (!w.is_object()) throw InputError(where, "an object with num_bits and type", w.dump());
  const int64_t bits = int_field(w, "num_bits", 0, where);
  const std::string type = str_field(w, "type", where);
  const std::string strategy = str_field(w, "strategy", where);
  const int64_t group = int_field(w, "group_size", 0, where);
  WeightFormat f;
  f.weight_only = !activations_quantized;
  if (type == "int" && (bits == 4 || bits == 8)) {
    f.kind = bits == 4 ? WeightFormatKind::kInt4 : WeightFormatKind::kInt8;
    if (strategy == "group" && group <= 0)
      throw InputError(where + ".group_size", "a positive group size", std::to_string(group));
    if (strategy != "group" && strategy != "channel" && strategy != "tensor")
      throw InputError(where + ".strategy", "group, channel or tensor", "'" + strategy + "'");
    f.group = strategy == "group" ? group : 0;
    f.zero_points = !bool_field(w, "symmetric", true, where);
    f.scale_bytes = 2;  // scales saved in the model's dtype (BF16)
    return f;
  }
  if (type == "float" && bits == 8) {
    if (strategy == "tensor") {
      f.kind = WeightFormatKind::kFp8PerTensor;
    } else if (strategy == "channel") {
      f.kind = WeightFormatKind::kFp8PerChannel;
    } else if (strategy == "block") {
      f.kind = WeightFormatKind::kFp8Block;
      auto b = w.find("block_structure");
      if (b == w.end()) throw InputError(where + ".block_structure", "[edge, edge]", "no such field");
      f.group = block_edge(*b, where + ".block_structure");
    } else {
      throw InputError(where + ".strategy", "tensor, channel or block (FP8)", "'" + strategy + "'");
    }
    return f;
  }
  if (type == "float" && bits == 4 && (group == kNvfp4GroupSize || group == kMxfp4GroupSize)) {
    f.kind = group == kNvfp4GroupSize ? WeightFormatKind::kNvfp4 : WeightFormatKind::kMxfp4;
    return f;
  }
  throw InputError(where,
                   "int 4 / 8 bits, float 8 bits, or float 4 bits in groups of 16 (NVFP4) or 32 (MXFP4)",
                   type + " " + std::to_string(bits) + " bits, group_size " + std::to_string(group));
}

// compressed-tensors: every config group must hold one weight scheme (mixed schemes are refused).
QuantSpec compressed_tensors_spec(const json& q, const std::string& where) {
  auto groups = q.find("config_groups");
  if (groups == q.end() || !groups->is_object() || groups->empty())
    throw InputError(where + ".config_groups", "an object of quantization schemes",
                     groups == q.end() ? "no such field" : groups->dump());
  QuantSpec s;
  std::optional<WeightFormat> format;
  for (const auto& [name, g] : groups->items()) {
    const std::string gwhere = where + ".config_groups." + name;
    if (!g.is_object() || !g.contains("weights"))
      throw InputError(gwhere, "an object with weights", g.dump());
    auto act = g.find("input_activations");
    const WeightFormat f =
        compressed_weights(g.at("weights"), act != g.end() && !act->is_null(), gwhere + ".weights");
    if (format && !(*format == f))
      throw InputError(gwhere + ".weights",
                       "the scheme of the other groups (" + weight_format_name(*format) + ")",
                       weight_format_name(f));
    format = f;
    read_patterns(g, "targets", Syntax::kCompressedTensors, gwhere, s.targets);
  }
  s.format = *format;
  // "Linear" targets every Linear module: the same as no target list.
  bool every_linear = false;
  for (const auto& [name, g] : groups->items()) {
    auto targets = g.find("targets");
    if (targets != g.end() && targets->is_array())
      for (const json& v : *targets) every_linear = every_linear || (v.is_string() && v == "Linear");
  }
  if (every_linear) s.targets.clear();
  read_patterns(q, "ignore", Syntax::kCompressedTensors, where, s.excluded);
  return s;
}

// AWQ (AutoAWQ / transformers AwqConfig): 4-bit weights, FP16 scales and packed zero points per group.
QuantSpec awq_spec(const json& q, const std::string& where) {
  QuantSpec s;
  const int64_t bits = int_field(q, "bits", int_field(q, "w_bit", 4, where), where);
  if (bits != 4) throw InputError(where + ".bits", "4 (AWQ)", std::to_string(bits));
  const int64_t group = int_field(q, "group_size", int_field(q, "q_group_size", 128, where), where);
  s.format = {.kind = WeightFormatKind::kInt4,
              .group = group > 0 ? group : 0,
              .zero_points = bool_field(q, "zero_point", true, where),
              .scale_bytes = 2,
              .weight_only = true};
  read_patterns(q, "modules_to_not_convert", Syntax::kTransformers, where, s.excluded);
  return s;
}

// GPTQ: 4- or 8-bit weights, FP16 scales, zero points stored even when symmetric (qzeros); its g_idx
// (4 B per input feature of a matrix, under 0.1% of its bytes) is left out.
QuantSpec gptq_spec(const json& q, const std::string& where) {
  QuantSpec s;
  const int64_t bits = int_field(q, "bits", 4, where);
  if (bits != 4 && bits != 8) throw InputError(where + ".bits", "4 or 8 (GPTQ)", std::to_string(bits));
  const int64_t group = int_field(q, "group_size", 128, where);
  s.format = {.kind = bits == 4 ? WeightFormatKind::kInt4 : WeightFormatKind::kInt8,
              .group = group > 0 ? group : 0,
              .zero_points = true,
              .scale_bytes = 2,
              .weight_only = true};
  read_patterns(q, "modules_to_not_convert", Syntax::kTransformers, where, s.excluded);
  return s;
}

QuantSpec quant_spec(const json& q, const std::string& where) {
  if (!q.is_object()) throw InputError(where, "an object", q.dump());
  auto m = q.find("quant_method");
  // ModelOpt's own export may write no quant_method (Qwen/Qwen3-32B-FP8-Static-PerTensor: quant_algo and
  // producer "modelopt" only).
  if (m == q.end() && q.contains("quant_algo") && q["quant_algo"].is_string()) {
    QuantSpec s = modelopt_spec(q, where);
    s.source = where;
    return s;
  }
  if (m == q.end() || !m->is_string())
    throw InputError(where + ".quant_method", kSupportedMethods, m == q.end() ? "no such field" : m->dump());
  const std::string method = m->get<std::string>();
  QuantSpec s;
  if (method == "fp8") {
    s = fp8_spec(q, where);
  } else if (method == "fbgemm_fp8") {
    s.format.kind = WeightFormatKind::kFp8PerChannel;
    read_patterns(q, "modules_to_not_convert", Syntax::kTransformers, where, s.excluded);
  } else if (method == "mxfp4") {
    s.format.kind = WeightFormatKind::kMxfp4;
    read_patterns(q, "modules_to_not_convert", Syntax::kTransformers, where, s.excluded);
  } else if (method == "mxfp8") {
    s = mxfp8_spec(q, where);
  } else if (method == "modelopt" || method == "modelopt_fp4") {
    auto inner = q.find("quantization");
    s = inner != q.end() && inner->is_object() ? modelopt_spec(*inner, where + ".quantization")
                                               : modelopt_spec(q, where);
  } else if (method == "compressed-tensors") {
    s = compressed_tensors_spec(q, where);
  } else if (method == "awq") {
    s = awq_spec(q, where);
  } else if (method == "gptq") {
    s = gptq_spec(q, where);
  } else {
    throw InputError(where + ".quant_method", kSupportedMethods, "'" + method + "'");
  }
  s.source = where;
  return s;
}

// ModelOpt's hf_quant_config.json beside config.json, when there is one.
std::optional<QuantSpec> hf_quant_file_spec(const CheckpointFiles& files) {
  if (files.quant_path.empty()) return std::nullopt;
  const std::string& path = files.quant_path;
  const json j = parse_checkpoint_json(files.quant, path);
  auto q = j.is_object() ? j.find("quantization") : j.end();
  if (!j.is_object() || q == j.end() || !q->is_object())
    throw InputError(path + ": quantization", "an object (ModelOpt's quant_algo, exclude_modules)",
                     j.is_object() ? "no such field" : j.type_name());
  QuantSpec s = modelopt_spec(*q, path + ": quantization");
  s.source = "hf_quant_config.json";
  return s;
}

WeightFormat unquantized_format(const json& config, const json& wrapper, const std::string& path) {
  for (const json* j : {&config, &wrapper}) {
    for (const char* key : {"torch_dtype", "dtype"}) {
      auto it = j->find(key);
      if (it == j->end() || it->is_null()) continue;
      if (!it->is_string()) throw InputError(path + ": " + key, "a dtype name", it->dump());
      const std::string t = it->get<std::string>();
      if (t == "float16") return {.kind = WeightFormatKind::kFp16};
      if (t == "float32") return {.kind = WeightFormatKind::kFp32};
      return {.kind = WeightFormatKind::kBf16};
    }
  }
  return {.kind = WeightFormatKind::kBf16};
}

// Linear modules of one layer, by group, with their parameters.
struct Module {
  WeightGroup group;
  std::string name;
  double params;
};

// A Gated DeltaNet mixer's Linear modules (Qwen3.5's names; its conv1d is not a Linear).
void gdn_modules(const ModelConfig& c, const std::string& at, std::vector<Module>& out) {
  const double h = double(c.hidden);
  const double key = double(c.gdn.key_heads) * double(c.gdn.key_head_dim);
  const double value = double(c.gdn.value_heads) * double(c.gdn.value_head_dim);
  const WeightGroup g = WeightGroup::kAttention;
  out.push_back({g, at + "linear_attn.in_proj_qkv", h * (2 * key + value)});
  out.push_back({g, at + "linear_attn.in_proj_z", h * value});
  out.push_back({g, at + "linear_attn.in_proj_a", h * c.gdn.value_heads});
  out.push_back({g, at + "linear_attn.in_proj_b", h * c.gdn.value_heads});
  out.push_back({g, at + "linear_attn.out_proj", value * h});
}

// A Kimi Delta Attention mixer's Linear modules (modeling_kimi.py KimiDeltaAttention; its short convs are not
// Linear layers).
void kda_modules(const ModelConfig& c, const std::string& at, std::vector<Module>& out) {
  const KdaShape& k = c.kda;
  const double h = double(c.hidden), p = double(k.width()), d = double(k.head_dim);
  const WeightGroup g = WeightGroup::kAttention;
  for (const char* proj : {"q_proj", "k_proj", "v_proj"}) out.push_back({g, at + proj, h * p});
  out.push_back({g, at + "f_a_proj", h * d});
  out.push_back({g, at + "f_b_proj", d * p});
  out.push_back({g, at + "b_proj", h * k.heads});
  if (k.full_rank_gate) {
    out.push_back({g, at + "g_proj", h * p});
  } else {
    out.push_back({g, at + "g_a_proj", h * d});
    out.push_back({g, at + "g_b_proj", d * p});
  }
  out.push_back({g, at + "o_proj", p * h});
}

// A Mamba-2 mixer's Linear modules (Nemotron-H's mixer.in_proj and mixer.out_proj; its conv1d is not a
// Linear).
void mamba2_modules(const ModelConfig& c, const std::string& at, std::vector<Module>& out) {
  const Mamba2Shape& m = c.mamba;
  const double h = double(c.hidden), inner = double(m.inner());
  out.push_back({WeightGroup::kAttention, at + "in_proj",
                 h * (2 * inner + 2.0 * m.groups * double(m.state_size) + m.heads)});
  out.push_back({WeightGroup::kAttention, at + "out_proj", inner * h});
}

// full_layer: a full-attention layer, of its own shape where the model's full layers differ (Gemma 4: its
// head width and KV heads, and no v_proj where keys double as values).
void attention_modules(const ModelConfig& c, const std::string& layer, std::string_view prefix, WeightGroup g,
                       bool full_layer, std::vector<Module>& out) {
  const std::string at = layer + std::string(prefix);
  const double h = double(c.hidden);
  if (c.attention == AttentionKind::kGqa) {
    const double hd = double(full_layer ? c.full_layer_head_dim() : c.head_dim);
    const int kv_heads = full_layer ? c.full_layer_kv_heads() : c.kv_heads;
    out.push_back({g, at + "q_proj", h * c.heads * hd * (c.attn_output_gate ? 2 : 1)});
    const double vd = double(c.gqa_value_dim(full_layer));
    out.push_back({g, at + "k_proj", h * kv_heads * hd});
    if (!(full_layer && c.full_k_eq_v)) out.push_back({g, at + "v_proj", h * kv_heads * vd});
    out.push_back({g, at + "o_proj", double(c.heads) * vd * h});
    return;
  }
  const double qk = double(c.qk_nope_head_dim + c.qk_rope_head_dim);
  if (c.q_lora_rank > 0) {
    out.push_back({g, at + "q_a_proj", h * double(c.q_lora_rank)});
    out.push_back({g, at + "q_b_proj", double(c.q_lora_rank) * c.heads * qk});
  } else {
    out.push_back({g, at + "q_proj", h * c.heads * qk});
  }
  out.push_back({g, at + "kv_a_proj_with_mqa", h * double(c.kv_lora_rank + c.qk_rope_head_dim)});
  out.push_back(
      {g, at + "kv_b_proj", double(c.kv_lora_rank) * c.heads * double(c.qk_nope_head_dim + c.v_head_dim)});
  out.push_back({g, at + "o_proj", double(c.heads) * double(c.v_head_dim) * h});
  if (c.attn_output_gate) out.push_back({g, at + "g_proj", h * c.heads * double(c.v_head_dim)});
}

// A DeepSeek-V4 layer's Linear modules of ratio r (its reference code's names under attn.): wq_a, wq_b,
// wkv, wo_b; the compressor's wkv and wgate (r != 0); the CSA indexer's wq_b and its compressor's (r == 4).
// wo_a, an einsum weight kept in BF16, and the indexer's weights_proj are not quantized Linear layers
// (aiconfigurator's DeepSeek-V4 weights: BF16 elements).
void compressed_modules(const ModelConfig& c, const std::string& at, int ratio, WeightGroup g,
                        std::vector<Module>& out) {
  const CompressedAttention& a = c.compressed;
  const double h = double(c.hidden), q = double(c.q_lora_rank), hd = double(c.head_dim);
  out.push_back({g, at + "wq_a", h * q});
  out.push_back({g, at + "wq_b", q * c.heads * hd});
  out.push_back({g, at + "wkv", h * hd});
  out.push_back({g, at + "wo_b", double(a.o_groups) * double(a.o_lora_rank) * h});
  if (ratio == 0) return;
  const double mult = ratio == 4 ? 2 : 1;
  for (const char* w : {"compressor.wkv", "compressor.wgate"}) out.push_back({g, at + w, h * mult * hd});
  if (ratio != 4) return;
  const WeightGroup ig = g == WeightGroup::kMtp ? g : WeightGroup::kIndexer;
  const double ihd = double(a.index_head_dim);
  out.push_back({ig, at + "indexer.wq_b", q * a.index_heads * ihd});
  for (const char* w : {"indexer.compressor.wkv", "indexer.compressor.wgate"})
    out.push_back({ig, at + w, h * 2 * ihd});
}

void moe_modules(const ModelConfig& c, const ModuleNaming& n, const std::string& at, bool mtp,
                 std::vector<Module>& out) {
  const double expert = c.mlp_params(c.moe_intermediate);
  for (const auto& [proj, share] : n.expert_projs) {
    if (proj.empty()) continue;
    out.push_back({mtp ? WeightGroup::kMtp : WeightGroup::kRoutedExperts,
                   at + std::string(n.experts) + std::string(proj),
                   c.expert_params() * share * c.routed_experts});
  }
  // A latent MoE's two projections (Nemotron 3 Super: mixer.fc1_latent_proj, mixer.fc2_latent_proj), counted
  // with the shared experts (ParamCounts::latent_proj).
  if (c.moe_latent > 0) {
    for (const std::string_view proj : n.latent_projs)
      if (!proj.empty())
        out.push_back({mtp ? WeightGroup::kMtp : WeightGroup::kSharedExperts, at + std::string(proj),
                       c.latent_proj_params() / 2});
  }
  if (c.shared_experts > 0) {
    for (const char* proj : {"gate_proj", "up_proj", "down_proj"}) {
      if (c.mlp_projections == 2 && proj[0] == 'g') continue;  // a plain MLP: up and down only
      out.push_back({mtp ? WeightGroup::kMtp : WeightGroup::kSharedExperts, at + std::string(n.shared) + proj,
                     expert / c.mlp_projections * c.shared_experts});
    }
  }
}

std::vector<Module> layer_modules(const ModelConfig& c, const ModuleNaming& n, int layer) {
  std::vector<Module> out;
  const double h = double(c.hidden);
  if (layer >= c.layers) {  // an MTP layer (DeepSeek-V3 names it model.layers.<num_hidden_layers + i>)
    const std::string at = n.mtp.empty() ? std::string(n.layers) + std::to_string(layer) + "."
                                         : std::string(n.mtp) + std::to_string(layer - c.layers) + ".";
    if (c.attention == AttentionKind::kCompressed)
      compressed_modules(c, at + std::string(n.attention), c.compressed.mtp_ratio, WeightGroup::kMtp, out);
    else
      attention_modules(c, at, n.attention, WeightGroup::kMtp, true, out);
    out.push_back({WeightGroup::kMtp, at + "eh_proj", 2 * h * h});
    moe_modules(c, n, at, true, out);
    return out;
  }
  const std::string at = std::string(n.layers) + std::to_string(layer) + ".";
  const bool mixer = c.mixers.empty() || c.mixers[size_t(layer)] != MixerKind::kNone;
  if (c.linear_layer(layer) && c.mixers[size_t(layer)] == MixerKind::kMamba2) {
    mamba2_modules(c, at + std::string(n.attention), out);
  } else if (c.linear_layer(layer) && c.mixers[size_t(layer)] == MixerKind::kKda) {
    kda_modules(c, at + std::string(n.attention), out);
  } else if (c.linear_layer(layer)) {
    gdn_modules(c, at, out);
  } else if (c.attention == AttentionKind::kCompressed) {
    compressed_modules(c, at + std::string(n.attention), c.compressed.ratios[size_t(layer)],
                       WeightGroup::kAttention, out);
  } else if (mixer) {
    attention_modules(c, at, n.attention, WeightGroup::kAttention, !c.window_layer(layer), out);
  }
  if (c.indexer_full_layer(layer)) {
    const double q_in = double(c.q_lora_rank > 0 ? c.q_lora_rank : c.hidden);
    const double dim = double(c.indexer_head_dim);
    out.push_back({WeightGroup::kIndexer, at + "self_attn.indexer.wq_b", q_in * c.indexer_heads * dim});
    out.push_back({WeightGroup::kIndexer, at + "self_attn.indexer.wk", h * dim});
    out.push_back({WeightGroup::kIndexer, at + "self_attn.indexer.weights_proj", h * c.indexer_heads});
  }
  if (!c.mixers.empty() && c.mixers[size_t(layer)] == MixerKind::kBlockSparse) {  // MiniMax-M3's indexer
    const double dim = double(c.block_sparse.index_dim);
    out.push_back({WeightGroup::kIndexer, at + std::string(n.attention) + "index_q_proj",
                   h * c.block_sparse.index_heads * dim});
    out.push_back({WeightGroup::kIndexer, at + std::string(n.attention) + "index_k_proj", h * dim});
  }
  // Dense layers first (DeepSeek's first_k_dense_replace; Qwen3-MoE's mlp_only_layers counted the same),
  // or each layer's own FFN kind where the model lists them (Llama 4, Nemotron-H).
  const FfnKind ffn = !c.ffns.empty()                         ? c.ffns[size_t(layer)]
                      : !c.is_moe() || layer < c.dense_layers ? FfnKind::kDense
                                                              : FfnKind::kMoe;
  if (ffn == FfnKind::kNone) return out;
  if (ffn == FfnKind::kDense) {
    for (const char* proj : {"gate_proj", "up_proj", "down_proj"})
      if (c.mlp_projections == 3 || proj[0] != 'g')  // a plain MLP: up and down only
        out.push_back(
            {WeightGroup::kDenseMlp, at + std::string(n.mlp) + proj, h * double(c.dense_intermediate)});
  } else {
    moe_modules(c, n, at, false, out);
  }
  return out;
}

}  // namespace

WeightFormats read_weight_formats(const json& config, const json& wrapper, const CheckpointFiles& files,
                                  const ModelConfig& model, const ModuleNaming& naming) {
  const std::string& config_path = files.config_path;
  WeightFormats w;
  w.per_group = true;
  w.unquantized = unquantized_format(config, wrapper, config_path);
  w.quantized = w.unquantized;
  w.source = "torch_dtype";
  std::optional<QuantSpec> spec;
  for (const json* j : {&config, &wrapper}) {
    auto q = j->find("quantization_config");
    if (q == j->end() || q->is_null()) continue;
    spec = quant_spec(*q, config_path + ": quantization_config");
    spec->source = "quantization_config";
    break;
  }
  if (!spec) spec = hf_quant_file_spec(files);
  if (!spec) return w;
  w.quantized = spec->format;
  w.source = spec->source;
  w.kv_cache_quant_algo = spec->kv_cache_quant_algo;
  std::array<double, kWeightGroupCount> quantized{};
  // Parameters per format and group (MIXED_PRECISION holds several).
  std::vector<std::pair<WeightFormat, std::array<double, kWeightGroupCount>>> by_format;
  for (int layer = 0; layer < model.layers + model.mtp_layers; ++layer) {
    for (const Module& m : layer_modules(model, naming, layer)) {
      const std::optional<WeightFormat> f = spec->format_of(m.name);
      if (!f) continue;
      const size_t g = static_cast<size_t>(m.group);
      quantized[g] += m.params;
      auto it =
          std::find_if(by_format.begin(), by_format.end(), [&](const auto& e) { return e.first == *f; });
      if (it == by_format.end()) it = by_format.insert(by_format.end(), {*f, {}});
      it->second[g] += m.params;
    }
  }
  const ParamCounts p = count_params(model);
  for (size_t g = 0; g < kWeightGroupCount; ++g) {
    const double total = group_params(p, static_cast<WeightGroup>(g));
    w.quantized_share[g] = total > 0 ? std::min(1.0, quantized[g] / total) : 0;
  }
  if (!spec->per_module.empty()) {
    // Each group in the format most of its quantized parameters are in; the headline format the model's.
    w.mixed = true;
    double most = 0;
    for (const auto& [f, params] : by_format) {
      double sum = 0;
      for (const double v : params) sum += v;
      if (sum > most) most = sum, w.quantized = f;
    }
    for (size_t g = 0; g < kWeightGroupCount; ++g) {
      double best = 0;
      w.group_quantized[g] = w.quantized;
      for (const auto& [f, params] : by_format)
        if (params[g] > best) best = params[g], w.group_quantized[g] = f;
    }
  }
  return w;
}

std::string weight_formats_summary(const ModelConfig& m) {
  const WeightFormats& w = m.weights;
  if (!w.per_group)
    return weight_format_name(weight_format_of(m.weight_dtype)) + " (every weight, as the seed counts)";
  if (w.quantized == w.unquantized) return weight_format_name(w.unquantized);
  if (w.mixed) {  // "fp8 (attention 100%), nvfp4-w4a16 (routed_experts 100%, ...), bf16 elsewhere"
    std::vector<std::pair<WeightFormat, std::string>> held;
    for (size_t g = 0; g < kWeightGroupCount; ++g) {
      const double s = w.quantized_share[g];
      if (s <= 0) continue;
      auto it = std::find_if(held.begin(), held.end(),
                             [&](const auto& e) { return e.first == w.group_quantized[g]; });
      if (it == held.end()) it = held.insert(held.end(), {w.group_quantized[g], ""});
      char pct[16];
      std::snprintf(pct, sizeof pct, " %.0f%%", s * 100);
      it->second += (it->second.empty() ? "" : ", ") +
                    std::string(weight_group_name(static_cast<WeightGroup>(g))) + pct;
    }
    std::string out;
    for (const auto& [f, groups] : held) out += weight_format_name(f) + " (" + groups + "), ";
    return out + weight_format_name(w.unquantized) + " elsewhere";
  }
  std::string held;
  for (size_t g = 0; g < kWeightGroupCount; ++g) {
    const double s = w.quantized_share[g];
    if (s <= 0) continue;
    char pct[16];
    std::snprintf(pct, sizeof pct, " %.0f%%", s * 100);
    held += (held.empty() ? "" : ", ") + std::string(weight_group_name(static_cast<WeightGroup>(g))) + pct;
  }
  return weight_format_name(w.quantized) + " (" + (held.empty() ? "no module" : held) + "), " +
         weight_format_name(w.unquantized) + " elsewhere";
}

}  // namespace tokenline
