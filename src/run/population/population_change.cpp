#include <cflrun/run/population/population_change.hpp>

#include <map>
#include <set>

#include <boost/algorithm/string.hpp>
#include <boost/lexical_cast.hpp>

#include <cflrun/core/error.hpp>

namespace cflrun::run {
namespace {

constexpr const char* kGrammar =
    "write events as 'drift round=R fraction=F', 'drift round=R clients=A,B to=C', 'shift "
    "round=R cluster=C', 'appear round=R', 'merge round=R clusters=A,B' or 'split round=R "
    "cluster=C [fraction=F]', separated by ';'";

struct KindKeys {
  ChangeKind kind;
  std::set<std::string> keys;  // the keys the kind takes; "round" is always required
};

const std::map<std::string, KindKeys>& kind_table() {
  static const std::map<std::string, KindKeys> table{
      {"drift", {ChangeKind::kDrift, {"round", "fraction", "clients", "to"}}},
      {"shift", {ChangeKind::kShift, {"round", "cluster"}}},
      {"appear", {ChangeKind::kAppear, {"round"}}},
      {"merge", {ChangeKind::kMerge, {"round", "clusters"}}},
      {"split", {ChangeKind::kSplit, {"round", "cluster", "fraction"}}},
  };
  return table;
}

[[noreturn]] void refuse(const std::string& event, const std::string& problem) {
  throw ConfigError("--changes event '" + event + "': " + problem + "; " + kGrammar);
}

template <typename T>
T number(const std::string& event, const std::string& key, const std::string& text) {
  try {
    return boost::lexical_cast<T>(text);
  } catch (const boost::bad_lexical_cast&) {
    refuse(event,
           key + "=" + text + " is not a " + (std::is_integral_v<T> ? "whole number" : "number"));
  }
}

std::vector<int> id_list(const std::string& event, const std::string& key,
                         const std::string& text) {
  std::vector<std::string> items;
  boost::split(items, text, boost::is_any_of(","));
  std::vector<int> ids;
  for (const auto& item : items) {
    const int id = number<int>(event, key, boost::trim_copy(item));
    if (id < 0) {
      refuse(event, key + " holds " + item + ", but ids start at 0");
    }
    ids.push_back(id);
  }
  return ids;
}

/// The key=value pairs after the kind word, checked against what the kind takes.
std::map<std::string, std::string> event_keys(const std::string& event,
                                              const std::vector<std::string>& words,
                                              const KindKeys& kind) {
  std::map<std::string, std::string> keys;
  for (std::size_t i = 1; i < words.size(); ++i) {
    const auto equals = words[i].find('=');
    if (equals == std::string::npos || equals == 0 || equals + 1 == words[i].size()) {
      refuse(event, "'" + words[i] + "' is not key=value");
    }
    const auto key = words[i].substr(0, equals);
    if (kind.keys.count(key) == 0) {
      refuse(event, words[0] + " takes no key '" + key + "'");
    }
    if (!keys.emplace(key, words[i].substr(equals + 1)).second) {
      refuse(event, "key '" + key + "' is given twice");
    }
  }
  if (keys.count("round") == 0) {
    refuse(event, "round= is missing");
  }
  return keys;
}

void check_drift(const std::string& event, const PopulationChange& change, bool has_fraction) {
  if (has_fraction == !change.clients.empty()) {
    refuse(event, "a drift takes either fraction= or clients= with to=, not both or neither");
  }
  if (!change.clients.empty() && change.to < 0) {
    refuse(event, "a drift of listed clients needs to=, the cluster they move to");
  }
  if (has_fraction && change.to >= 0) {
    refuse(event, "to= goes with clients=; a drift by fraction draws each client's new cluster");
  }
}

void require(const std::string& event, const std::map<std::string, std::string>& keys,
             const std::string& key) {
  if (keys.count(key) == 0) {
    refuse(event, key + "= is missing");
  }
}

PopulationChange parse_event(const std::string& event) {
  std::vector<std::string> words;
  boost::split(words, event, boost::is_space(), boost::token_compress_on);
  const auto kind = kind_table().find(words.at(0));
  if (kind == kind_table().end()) {
    refuse(event, "unknown kind '" + words[0] + "'");
  }
  const auto keys = event_keys(event, words, kind->second);
  PopulationChange change;
  change.kind = kind->second.kind;
  change.round = number<int>(event, "round", keys.at("round"));
  if (change.round < 1) {
    refuse(event, "round=" + keys.at("round") + " is below 1 (rounds are 1-based)");
  }
  if (keys.count("fraction") > 0) {
    change.fraction = number<double>(event, "fraction", keys.at("fraction"));
    if (!(change.fraction >= 0.0 && change.fraction <= 1.0)) {
      refuse(event, "fraction=" + keys.at("fraction") + " is outside [0, 1]");
    }
  }
  if (keys.count("clients") > 0) {
    change.clients = id_list(event, "clients", keys.at("clients"));
  }
  if (keys.count("to") > 0) {
    change.to = id_list(event, "to", keys.at("to")).at(0);
  }
  if (keys.count("cluster") > 0) {
    change.cluster = id_list(event, "cluster", keys.at("cluster")).at(0);
  }
  switch (change.kind) {
    case ChangeKind::kDrift:
      check_drift(event, change, keys.count("fraction") > 0);
      break;
    case ChangeKind::kShift:
      require(event, keys, "cluster");
      break;
    case ChangeKind::kSplit:
      require(event, keys, "cluster");
      change.fraction = change.fraction < 0.0 ? 0.5 : change.fraction;
      break;
    case ChangeKind::kMerge: {
      require(event, keys, "clusters");
      const auto pair = id_list(event, "clusters", keys.at("clusters"));
      if (pair.size() != 2 || pair[0] == pair[1]) {
        refuse(event, "clusters= must name two different clusters, the one that stays first");
      }
      change.cluster = pair[0];
      change.merged = pair[1];
      break;
    }
    case ChangeKind::kAppear:
      break;
  }
  return change;
}

}  // namespace

std::string change_kind_name(ChangeKind kind) {
  for (const auto& [name, entry] : kind_table()) {
    if (entry.kind == kind) {
      return name;
    }
  }
  return "unknown";
}

std::vector<PopulationChange> parse_population_changes(const std::string& text) {
  std::vector<std::string> items;
  boost::split(items, text, boost::is_any_of(";"));
  std::vector<PopulationChange> changes;
  for (auto& item : items) {
    boost::trim(item);
    if (!item.empty()) {
      changes.push_back(parse_event(item));
    }
  }
  return changes;
}

}  // namespace cflrun::run
