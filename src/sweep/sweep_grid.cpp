#include <cflrun/sweep/sweep_grid.hpp>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <set>
#include <sstream>

#include <cflrun/core/error.hpp>

namespace cflrun::sweep {
namespace {

constexpr const char* kSafePunctuation = "._+-/:@%=";
constexpr const char* kNamePunctuation = "._+-";
constexpr const char* kNoVaryingAxisName = "run";

bool is_alnum(char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0; }

/// A cflrun option name: [a-z][a-z0-9-]*.
bool is_option_name(const std::string& name) {
  if (name.empty() || name.front() < 'a' || name.front() > 'z') {
    return false;
  }
  return std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-';
  });
}

bool is_number(const std::string& text) {
  char* end = nullptr;
  std::strtod(text.c_str(), &end);
  return !text.empty() && *end == '\0';
}

std::vector<std::string> split_values(const std::string& list) {
  std::vector<std::string> values;
  std::istringstream stream(list);
  for (std::string value; std::getline(stream, value, ',');) {
    values.push_back(value);
  }
  if (!list.empty() && list.back() == ',') {
    values.emplace_back();  // getline drops a trailing empty field
  }
  return values;
}

void check_value(const std::string& text, const std::string& name, const std::string& value) {
  if (value.empty()) {
    throw ConfigError("--set " + text + ": empty value for " + name +
                      "; write NAME=V1,V2 without empty entries");
  }
  if (!is_safe_word(value)) {
    throw ConfigError("--set " + text + ": value '" + value + "' of " + name +
                      " may only hold letters, digits and " + kSafePunctuation +
                      " (no spaces or quotes), so that a manifest line splits into arguments");
  }
}

std::string file_name_part(const std::string& text) {
  std::string part = text;
  const std::string kept = kNamePunctuation;
  std::replace_if(
      part.begin(), part.end(),
      [&](char c) { return !is_alnum(c) && kept.find(c) == std::string::npos; }, '-');
  return part;
}

}  // namespace

bool is_safe_word(const std::string& text) {
  return !text.empty() && std::all_of(text.begin(), text.end(), [](char c) {
    return is_alnum(c) || std::string(kSafePunctuation).find(c) != std::string::npos;
  });
}

GridAxis parse_grid_axis(const std::string& text) {
  const auto equals = text.find('=');
  if (equals == std::string::npos) {
    throw ConfigError("--set must be NAME=V1,V2,... (e.g. --set seed=1,2,3), but got '" + text +
                      "'");
  }
  GridAxis axis{text.substr(0, equals), split_values(text.substr(equals + 1))};
  if (!is_option_name(axis.option)) {
    throw ConfigError("--set " + text + ": '" + axis.option +
                      "' is not a cflrun option name (lower-case letters, digits and '-', "
                      "without the leading --, e.g. data-seed); see cflrun --help");
  }
  if (axis.values.empty()) {
    throw ConfigError("--set " + text + ": no value for " + axis.option + "; write NAME=V1,V2,...");
  }
  std::set<std::string> seen;
  for (const auto& value : axis.values) {
    check_value(text, axis.option, value);
    if (!seen.insert(value).second) {
      throw ConfigError("--set " + text + ": value '" + value +
                        "' is given twice; runs would repeat");
    }
  }
  return axis;
}

std::vector<GridPoint> expand_grid(const std::vector<GridAxis>& axes) {
  std::set<std::string> options;
  for (const auto& axis : axes) {
    if (!options.insert(axis.option).second) {
      throw ConfigError("--set " + axis.option +
                        "=... is given twice; give all its values in one "
                        "--set (e.g. --set " +
                        axis.option + "=a,b)");
    }
  }
  std::vector<GridPoint> points;
  if (!axes.empty()) {
    points.emplace_back();
  }
  for (const auto& axis : axes) {  // each axis multiplies the points; later axes vary faster
    std::vector<GridPoint> next;
    for (const auto& point : points) {
      for (const auto& value : axis.values) {
        next.push_back(point);
        next.back().emplace_back(axis.option, value);
      }
    }
    points = std::move(next);
  }
  return points;
}

std::string run_name(const GridPoint& point, const std::vector<GridAxis>& axes) {
  std::string name;
  for (std::size_t i = 0; i < point.size() && i < axes.size(); ++i) {
    if (axes[i].values.size() < 2) {
      continue;
    }
    const auto& [option, value] = point[i];
    name += name.empty()
                ? ""
                : "_";  // appended piecewise: GCC 12 warns falsely on "_" + std::string in C++20
    name += file_name_part(is_number(value) ? option + value : value);
  }
  return name.empty() ? kNoVaryingAxisName : name;
}

}  // namespace cflrun::sweep
