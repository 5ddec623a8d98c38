// The pieces of `tokenline calibrate` that the one-file calibration (calibration.cpp) and the joint fit
// across files (joint_calibration.cpp) share: the search's start, the layouts the tables print, one bounded
// fit, the JSON of groups and fitted parameters, and the rows set apart for their prefill load.
#pragma once

#include <cstdio>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "calibrate/bounded_search.h"
#include "calibrate/calibration_report.h"
#include "calibrate/e2e_point.h"
#include "calibrate/fit_parameter.h"
#include "calibrate/point_evaluator.h"
#include "calibrate/point_models.h"

namespace tokenline {

// 0, 1, ..., n - 1.
std::vector<size_t> all_indices(size_t n);

// The fitted parameters' values in the base hardware or the profile (embedded or a directory; else the
// profile format's default), clamped into their bounds: the search's start.
std::vector<double> start_values(const std::vector<FitParameter>& fit, const std::string& hardware,
                                 const std::string& profile);

// Each point's layout as the tables show it (MTP runs apart); a bad layout throws InputError naming
// path:line.
std::vector<std::string> point_layouts(const std::vector<E2ePoint>& points, const std::string& path);

// Coordinate descent of `objective` over the parameters' bounds from `start` (deterministic).
std::vector<double> fit_values(const std::function<double(const std::vector<double>&)>& objective,
                               const std::vector<FitParameter>& fit, const std::vector<double>& start,
                               const SearchOptions& search);

// "a=1 b=2" for the tables.
std::string values_text(const std::vector<FitParameter>& fit, const std::vector<double>& values);

// The groups as calibration.json records them.
nlohmann::ordered_json groups_json(const std::vector<GroupError>& groups);

// One fitted parameter as calibration.json (and a profile copy) records it.
nlohmann::ordered_json parameter_json(const FitParameter& p, double start, double value);

// Marks the points whose measured rate needs more than kMaxPrefillLoad times the prefill their instance
// has on `hardware` priced by `profile` (prefill_load.h) and prints each to `out`: they are reported apart
// and not fitted, unless `keep_overloaded`.
void mark_prefill_overloaded(std::FILE* out, std::vector<E2ePoint>& points, const PointModels& models,
                             const std::string& hardware, const std::string& profile, bool keep_overloaded);

}  // namespace tokenline
