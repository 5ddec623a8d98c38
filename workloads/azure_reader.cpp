#include "workloads/azure_reader.h"

#include <charconv>
#include <limits>
#include <utility>

#include "common/input_error.h"

namespace tokenline {
namespace {

constexpr int64_t kNsPerSecond = 1'000'000'000;
constexpr int64_t kSecondsPerDay = 86'400;

// Days from 1970-01-01 to y-m-d in the proleptic Gregorian calendar (Howard Hinnant's days_from_civil
// algorithm, re-derived: eras of 400 years = 146,097 days, years starting in March).
int64_t days_from_civil(int64_t y, int64_t m, int64_t d) {
  y -= m <= 2 ? 1 : 0;
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const int64_t year_of_era = y - era * 400;
  const int64_t day_of_year = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const int64_t day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
  constexpr int64_t kDaysFromEpochToEra0 = 719'468;  // 0000-03-01 to 1970-01-01
  return era * 146'097 + day_of_era - kDaysFromEpochToEra0;
}

// Reads exactly `width` digits at text[pos] into `out`.
bool digits(std::string_view text, size_t pos, size_t width, int64_t& out) {
  if (pos + width > text.size()) return false;
  out = 0;
  for (size_t i = pos; i < pos + width; ++i) {
    if (text[i] < '0' || text[i] > '9') return false;
    out = out * 10 + (text[i] - '0');
  }
  return true;
}

bool parse_int(std::string_view text, int64_t& out) {
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, out);
  return ec == std::errc() && ptr == end && !text.empty();
}

}  // namespace

std::optional<int64_t> parse_wall_clock_ns(std::string_view t) {
  int64_t y = 0, mo = 0, d = 0, h = 0, mi = 0, s = 0;
  constexpr size_t kSecondsEnd = 19;  // "YYYY-MM-DD HH:MM:SS"
  if (t.size() < kSecondsEnd || t[4] != '-' || t[7] != '-' || t[10] != ' ' || t[13] != ':' || t[16] != ':')
    return std::nullopt;
  if (!digits(t, 0, 4, y) || !digits(t, 5, 2, mo) || !digits(t, 8, 2, d) || !digits(t, 11, 2, h) ||
      !digits(t, 14, 2, mi) || !digits(t, 17, 2, s))
    return std::nullopt;
  if (mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || s > 60) return std::nullopt;
  int64_t fraction_ns = 0;
  if (t.size() > kSecondsEnd) {
    const size_t width = t.size() - kSecondsEnd - 1;
    constexpr size_t kMaxFractionDigits = 9;  // nanoseconds
    if (t[kSecondsEnd] != '.' || width == 0 || width > kMaxFractionDigits ||
        !digits(t, kSecondsEnd + 1, width, fraction_ns))
      return std::nullopt;
    for (size_t i = width; i < kMaxFractionDigits; ++i) fraction_ns *= 10;
  }
  const int64_t seconds = days_from_civil(y, mo, d) * kSecondsPerDay + h * 3600 + mi * 60 + s;
  // int64 nanoseconds since 1970 end in 2262; within [0, that) a difference of two stamps cannot wrap.
  constexpr int64_t kLastSecond = std::numeric_limits<int64_t>::max() / kNsPerSecond - 1;
  if (seconds < 0 || seconds > kLastSecond) return std::nullopt;
  return seconds * kNsPerSecond + fraction_ns;
}

AzureReader::AzureReader(LineReader lines, ReaderOptions options)
    : TraceReader(std::move(lines), options, "azure") {}

void AzureReader::read_header(LineReader& lines) {
  std::string header;
  if (!lines.next(header))
    throw InputError(lines.name(), "the header line " + std::string(kHeader), "an empty file");
  if (!header.empty() && static_cast<unsigned char>(header[0]) == 0xEF) header.erase(0, 3);  // UTF-8 BOM
  if (header != kHeader)
    throw InputError(lines.where(), "the header " + std::string(kHeader), "'" + header + "'");
}

WorkloadRequest AzureReader::parse_line(const std::string& line) {
  const size_t c1 = line.find(',');
  const size_t c2 = c1 == std::string::npos ? c1 : line.find(',', c1 + 1);
  if (c2 == std::string::npos || line.find(',', c2 + 1) != std::string::npos)
    throw FieldError{"", "3 comma-separated fields (TIMESTAMP,ContextTokens,GeneratedTokens)",
                     "'" + line + "'"};
  const std::string_view text(line);
  const std::string_view stamp = text.substr(0, c1);
  const std::optional<int64_t> ns = parse_wall_clock_ns(stamp);
  if (!ns)
    throw FieldError{"TIMESTAMP", "YYYY-MM-DD HH:MM:SS.fffffff from 1970 to 2262",
                     "'" + std::string(stamp) + "'"};
  WorkloadRequest r;
  const std::string_view context = text.substr(c1 + 1, c2 - c1 - 1);
  const std::string_view generated = text.substr(c2 + 1);
  if (!parse_int(context, r.input_tokens) || r.input_tokens < 1)
    throw FieldError{"ContextTokens", "an integer >= 1", "'" + std::string(context) + "'"};
  if (!parse_int(generated, r.output_tokens) || r.output_tokens < 1)
    throw FieldError{"GeneratedTokens", "an integer >= 1", "'" + std::string(generated) + "'"};
  if (!first_ns_) first_ns_ = *ns;
  r.arrival_s = static_cast<double>(*ns - *first_ns_) / static_cast<double>(kNsPerSecond);
  return r;
}

}  // namespace tokenline
