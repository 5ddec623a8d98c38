#include "topologies/gpu_price.h"

#include <cmath>

#include "common/input_error.h"
#include "common/number_text.h"
#include "topologies/preset_source.h"
#include "topologies/spec_fields.h"

namespace tokenline {

GpuPrice load_gpu_price(const std::string& name_or_path) {
  const PresetSource src = resolve_preset(name_or_path, "hardware");
  const nlohmann::json doc = spec::parse_document(src.text, src.file);
  GpuPrice price;
  if (!doc.contains("price")) return price;
  const spec::Where root{src.file, ""};
  const spec::Where at = root.child("price");
  const nlohmann::json& block = spec::require_object(doc, "price", root);
  spec::reject_unknown_keys(block, {"usd_per_gpu_hour"}, at);
  const spec::Where usd_at = at.child("usd_per_gpu_hour");
  const nlohmann::json& usd = spec::require_object(block, "usd_per_gpu_hour", at);
  spec::reject_unknown_keys(usd, {"value", "source", "date"}, usd_at);
  if (!usd.contains("value") || !usd["value"].is_number() || !(usd["value"].get<double>() > 0) ||
      !std::isfinite(usd["value"].get<double>()))
    throw InputError(usd_at.child("value").text(), "a price in USD > 0",
                     usd.contains("value") ? usd["value"].dump() : "nothing");
  price.usd_per_gpu_hour = usd["value"].get<double>();
  price.source = spec::require_string(usd, "source", usd_at);
  price.date = spec::require_string(usd, "date", usd_at);
  return price;
}

}  // namespace tokenline
