#include "fixture_checks.hpp"
#include "check_failure.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <functional>
#include <iostream>
#include <sstream>
#include <stdexcept>
#include <vector>

#include <cflrun/io/result_reader.hpp>
#include <cflrun/io/result_schema.hpp>

namespace cflrun::checks {
namespace {

namespace schema = io::schema;

/// Every dataset a run's behaviour shows in (timings are left out: they differ between runs).
const char* const kDatasets[] = {
    schema::kTrueCluster,    schema::kAssignment,     schema::kAri,         schema::kAccuracy,
    schema::kAccuracyWeighted,
    schema::kTestLoss,       schema::kTrainLoss,      schema::kBytesSent,   schema::kBytesReceived,
    schema::kClientAccuracy, schema::kClientTestLoss, schema::kLossVectors, schema::kMixture,
    schema::kImportance,     schema::kSourceAccuracy, schema::kSourceLoss};

const char* const kSummaryFigures[] = {"final_accuracy",      "final_accuracy_weighted", "final_test_loss",
                                       "final_ari",           "ari_round10_percent",
                                       "first_round_ari_0_9", "stability_switch_round"};

/// The first line of /proc/cpuinfo that starts with `key`, without the key.
std::string cpuinfo(const std::string& key) {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(key, 0) == 0) {
      return line.substr(line.find(':') + 1);
    }
  }
  return "unknown";
}

/// What decides the low bits of a run's floats: the CPU and the LibTorch build with its kernels,
/// as the run recorded them in /config (so that this checker needs no LibTorch of its own: it
/// starts in milliseconds). MKL and oneDNN pick kernels by the instruction set (the flags) and
/// block their loops by the CPU model and cache sizes, so two virtual machines that both call
/// themselves "Intel(R) Xeon(R) Processor" with the same flags can still differ in the low bits:
/// the family, model, stepping and cache size tell them apart.
std::string machine(const io::ResultReader& reader) {
  std::ostringstream text;
  text << "# machine: cpu" << cpuinfo("model name") << " (family" << cpuinfo("cpu family")
       << ", model" << cpuinfo("model\t") << ", stepping" << cpuinfo("stepping") << ", cache"
       << cpuinfo("cache size") << "); flags " << std::hash<std::string>{}(cpuinfo("flags"))
       << "; LibTorch " << reader.config_value("torch_version") << "; "
       << reader.config_value("cpu_kernels");
  return text.str();
}

std::string number(double value) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.17g", value);
  return buffer;
}

void append_dataset(const io::ResultReader& reader, const std::string& name,
                    std::ostringstream& text) {
  std::vector<std::size_t> shape;
  const auto values = reader.read_f64(name, &shape);
  text << name;
  for (auto extent : shape) {
    text << ' ' << extent;
  }
  const std::size_t row =
      shape.size() > 1 ? values.size() / std::max<std::size_t>(shape[0], 1) : values.size();
  for (std::size_t i = 0; i < values.size(); ++i) {
    text << (i % std::max<std::size_t>(row, 1) == 0 ? "\n" : " ") << number(values[i]);
  }
  text << '\n';
}

/// The first value of a line (a [T] dataset's first round).
std::string first_word(const std::string& line) { return line.substr(0, line.find(' ')); }

std::vector<std::string> lines_of(std::istream& in) {
  std::vector<std::string> lines;
  std::string line;
  while (std::getline(in, line)) {
    lines.push_back(line);
  }
  return lines;
}

/// Absolute tolerance of floats recorded on another machine: a low-bit difference of the trained
/// model can flip one borderline test sample, and one sample of a 100-sample client is 0.01 of its
/// accuracy. Counts (assignments, cluster ids, bytes) are still compared exactly.
constexpr double kOtherMachineAbsolute = 0.011;

/// Two values of one line agree: the same text, or (tolerant) numbers within a relative 1e-4 or an
/// absolute kOtherMachineAbsolute, of which at most one is not an integer-valued count.
bool agree(const std::string& a, const std::string& b, bool tolerant) {
  if (a == b) {
    return true;
  }
  if (!tolerant) {
    return false;
  }
  double x = 0.0;
  double y = 0.0;
  try {
    x = std::stod(a);
    y = std::stod(b);
  } catch (const std::logic_error&) {  // differing words, not numbers
    return false;
  }
  const bool integers = std::floor(x) == x && std::floor(y) == y &&
                        a.find('.') == std::string::npos && b.find('.') == std::string::npos &&
                        a.find('e') == std::string::npos;
  return !integers && std::fabs(x - y) <= std::max(kOtherMachineAbsolute,
                                                   1e-4 * std::max(std::fabs(x), std::fabs(y)));
}

/// The first disagreement between two lines, or "" if none.
std::string line_difference(const std::string& a, const std::string& b, bool tolerant) {
  std::istringstream sa(a);
  std::istringstream sb(b);
  std::string va;
  std::string vb;
  for (std::size_t at = 0;; ++at) {
    const bool more_a = static_cast<bool>(sa >> va);
    const bool more_b = static_cast<bool>(sb >> vb);
    if (!more_a || !more_b) {
      return more_a == more_b ? "" : "different lengths";
    }
    if (!agree(va, vb, tolerant)) {
      return "value " + std::to_string(at) + ": " + va + " (fixture " + vb + ")";
    }
  }
}

}  // namespace

std::string fixture_text(const std::string& file) {
  const io::ResultReader reader(file);
  std::ostringstream text;
  text << machine(reader) << '\n';
  text << "status " << reader.status() << "\ncompleted_rounds " << reader.completed_rounds()
       << '\n';
  for (const char* name : kDatasets) {
    if (reader.has_dataset(name)) {
      append_dataset(reader, name, text);
    }
  }
  for (const char* figure : kSummaryFigures) {
    text << "summary " << figure << ' '
         << number(reader.read_f64_attribute(schema::kSummaryGroup, figure)) << '\n';
  }
  return text.str();
}

int matches_fixture(const std::string& file, const std::string& fixture) {
  std::ifstream in(fixture);
  if (!in) {
    return fail("cannot open fixture " + fixture + "; record it with: check_results dump " + file +
                " > " + fixture);
  }
  const auto expected = lines_of(in);
  std::istringstream made(fixture_text(file));
  const auto found = lines_of(made);
  const bool other_machine = expected.empty() || expected[0] != found[0];
  std::cout << file << " vs " << fixture << ": "
            << (other_machine
                    ? "recorded on another machine (" + (expected.empty() ? "?" : expected[0]) +
                          "); training diverges in the low bits there, so only the first round is "
                          "compared, floats to a relative 1e-4 or an absolute 0.011"
                    : "same machine, compared bit for bit")
            << std::endl;
  if (expected.size() != found.size()) {
    return fail(file + " has " + std::to_string(found.size()) + " lines of fixture text, " +
                fixture + " " + std::to_string(expected.size()));
  }
  std::string dataset;
  bool per_round = false;  // the current dataset has one row per round
  std::size_t row = 0;     // rows of the current dataset seen so far
  for (std::size_t i = 1; i < found.size(); ++i) {
    const bool header = !found[i].empty() && found[i][0] == '/';
    if (header) {
      dataset = found[i];
      per_round = dataset.rfind(io::schema::kTrueCluster, 0) != 0 &&
                  dataset.rfind(io::schema::kMixture, 0) != 0;
      row = 0;
    }
    const bool summary = found[i].rfind("summary ", 0) == 0;
    const bool first_round_only = other_machine && !header && per_round;
    if (other_machine && (summary || (first_round_only && row++ > 0))) {
      continue;  // later rounds and final figures: bit-exact only on the recording machine
    }
    const auto difference =
        first_round_only && dataset.find(' ') == dataset.rfind(' ')
            ? line_difference(first_word(found[i]), first_word(expected[i]), true)
            : line_difference(found[i], expected[i], other_machine);
    if (!difference.empty()) {
      return fail(file + " differs from " + fixture + " at line " + std::to_string(i + 1) +
                  " (in " + dataset + "): " + difference);
    }
  }
  return 0;
}

}  // namespace cflrun::checks
