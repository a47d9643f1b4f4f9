#include <cflrun/run/checkpoint.hpp>

#include <algorithm>
#include <system_error>

#include <torch/types.h>

#include <cflrun/core/error.hpp>
#include <cflrun/io/durable_rename.hpp>
#include <cflrun/io/tensor_store.hpp>

namespace cflrun::run {
namespace {

constexpr const char* kRun = "run";
constexpr const char* kModels = "models";
constexpr const char* kAlgorithm = "algorithm";
constexpr const char* kServer = "server";
constexpr const char* kRankPrefix = "rank";
constexpr const char* kRows = "rows";

/// A result dataset path ("/rounds/ari") as a checkpoint dataset name ("|rounds|ari"), and back:
/// HDF5 would read '/' as groups.
std::string row_name(std::string path) {
  std::replace(path.begin(), path.end(), '/', '|');
  return path;
}
std::string row_path(std::string name) {
  std::replace(name.begin(), name.end(), '|', '/');
  return name;
}

/// "key=value" lines as a [n] int32 tensor of characters, and back.
torch::Tensor text_tensor(const std::vector<std::pair<std::string, std::string>>& pairs) {
  std::string text;
  for (const auto& [key, value] : pairs) {
    text += key + "=" + value + "\n";
  }
  std::vector<std::int32_t> codes(text.begin(), text.end());
  return torch::tensor(codes.empty() ? std::vector<std::int32_t>{0} : codes, torch::kInt32);
}

std::vector<std::pair<std::string, std::string>> text_pairs(const torch::Tensor& tensor) {
  const auto codes = tensor.to(torch::kInt32).contiguous();
  std::string text(codes.data_ptr<std::int32_t>(), codes.data_ptr<std::int32_t>() + codes.numel());
  std::vector<std::pair<std::string, std::string>> pairs;
  std::size_t start = 0;
  for (auto end = text.find('\n'); end != std::string::npos;
       start = end + 1, end = text.find('\n', start)) {
    const auto line = text.substr(start, end - start);
    const auto equals = line.find('=');
    pairs.emplace_back(line.substr(0, equals),
                       equals == std::string::npos ? "" : line.substr(equals + 1));
  }
  return pairs;
}

const torch::Tensor& required(const io::NamedTensors& group, const std::string& name,
                              const std::filesystem::path& path) {
  const auto found = group.find(name);
  if (found == group.end()) {
    throw DataError("checkpoint " + path.string() + " lacks '" + name +
                    "'; it is damaged or not a cflrun checkpoint");
  }
  return found->second;
}

}  // namespace

void write_checkpoint(const std::filesystem::path& path, const Checkpoint& checkpoint) {
  std::map<std::string, io::NamedTensors> groups;
  groups[kRun] = {
      {"next_round", torch::tensor({checkpoint.next_round}, torch::kInt64)},
      {"config", text_tensor(checkpoint.config)},
      {"ranks", torch::tensor({static_cast<std::int64_t>(checkpoint.ranks.size())}, torch::kInt64)},
      {"builds", text_tensor(checkpoint.builds)}};
  for (const auto& [path, rows] : checkpoint.rows) {
    groups[kRows][row_name(path)] = rows;
  }
  groups[kModels] = {{"states", checkpoint.models}};
  groups[kAlgorithm] = checkpoint.algorithm;
  groups[kServer] = checkpoint.server;
  for (std::size_t r = 0; r < checkpoint.ranks.size(); ++r) {
    groups[kRankPrefix + std::to_string(r)] = checkpoint.ranks[r];
  }
  const auto fresh = std::filesystem::path(path.string() + ".tmp");
  try {
    io::write_tensor_groups(fresh, groups);
  } catch (const Error& e) {
    std::error_code ignored;
    std::filesystem::remove(fresh,
                            ignored);  // the previous checkpoint stays the one to resume from
    throw Hdf5Error(std::string(e.what()) +
                    (std::filesystem::exists(path)
                         ? "; the previous checkpoint " + path.string() + " is kept"
                         : ""));
  }
  const auto error = io::durable_rename(fresh, path);
  if (error) {
    throw Hdf5Error("cannot rename the checkpoint " + fresh.string() + " to " + path.string() +
                    ": " + error.message());
  }
}

Checkpoint read_checkpoint(const std::filesystem::path& path) {
  std::map<std::string, io::NamedTensors> groups;
  try {
    groups = io::read_tensor_groups(path);
  } catch (const Error& e) {
    throw DataError("cannot use the checkpoint: " + std::string(e.what()) +
                    "; the run cannot continue from it");
  }
  Checkpoint checkpoint;
  const auto& run = groups[kRun];
  checkpoint.next_round = required(run, "next_round", path).item<std::int64_t>();
  checkpoint.config = text_pairs(required(run, "config", path));
  checkpoint.models = required(groups[kModels], "states", path);
  checkpoint.algorithm = groups[kAlgorithm];
  checkpoint.server = groups[kServer];
  checkpoint.builds = text_pairs(required(run, "builds", path));
  for (const auto& [name, rows] : groups[kRows]) {
    checkpoint.rows.emplace(row_path(name), rows);
  }
  const auto ranks = required(run, "ranks", path).item<std::int64_t>();
  for (std::int64_t r = 0; r < ranks; ++r) {
    checkpoint.ranks.push_back(groups[kRankPrefix + std::to_string(r)]);
  }
  return checkpoint;
}

std::vector<double> pack_state(const algo::AlgorithmState& state) {
  std::vector<double> packed{static_cast<double>(state.size())};
  for (const auto& [name, tensor] : state) {
    packed.push_back(static_cast<double>(name.size()));
    packed.insert(packed.end(), name.begin(), name.end());
    packed.push_back(static_cast<double>(tensor.scalar_type()));
    packed.push_back(static_cast<double>(tensor.dim()));
    packed.insert(packed.end(), tensor.sizes().begin(), tensor.sizes().end());
    const auto values = tensor.to(torch::kCPU).to(torch::kFloat64).contiguous();
    packed.insert(packed.end(), values.data_ptr<double>(),
                  values.data_ptr<double>() + values.numel());
  }
  return packed;
}

algo::AlgorithmState unpack_state(const std::vector<double>& packed, std::size_t& at) {
  const auto next = [&]() {
    if (at >= packed.size()) {
      throw DataError("a packed state ends early; it was not made by pack_state");
    }
    return packed[at++];
  };
  algo::AlgorithmState state;
  const auto count = static_cast<std::size_t>(next());
  for (std::size_t t = 0; t < count; ++t) {
    std::string name(static_cast<std::size_t>(next()), '\0');
    for (auto& c : name) {
      c = static_cast<char>(next());
    }
    const auto type = static_cast<torch::ScalarType>(static_cast<int>(next()));
    std::vector<std::int64_t> shape(static_cast<std::size_t>(next()));
    for (auto& extent : shape) {
      extent = static_cast<std::int64_t>(next());
    }
    auto values = torch::empty(shape, torch::kFloat64);
    for (std::int64_t i = 0; i < values.numel(); ++i) {
      values.data_ptr<double>()[i] = next();
    }
    state.emplace(name, values.to(type));
  }
  return state;
}

algo::AlgorithmState unpack_state(const std::vector<double>& packed) {
  std::size_t at = 0;
  return unpack_state(packed, at);
}

}  // namespace cflrun::run
