#include <cflrun/core/option_visitor.hpp>

#include <cmath>
#include <sstream>

namespace cflrun::core {

bool Range::contains(double value) const {
  const bool above_min = min_open ? value > min : value >= min;
  const bool below_max = max_open ? value < max : value <= max;
  return above_min && below_max;  // false for NaN
}

std::string Range::describe() const {
  std::ostringstream text;
  const bool has_min = std::isfinite(min);
  const bool has_max = std::isfinite(max);
  if (has_min && has_max && !min_open && !max_open) {
    text << "between " << min << " and " << max;
  } else if (has_min && has_max) {
    text << "in " << (min_open ? "(" : "[") << min << ", " << max << (max_open ? ")" : "]");
  } else if (has_min) {
    text << (min_open ? "> " : ">= ") << min;
  } else if (has_max) {
    text << (max_open ? "< " : "<= ") << max;
  } else {
    text << "a number";
  }
  return text.str();
}

}  // namespace cflrun::core
