#pragma once
/// @file
/// The run options by kind (core::OptionKind), read off their declarations (RunOptions::visit), for
/// the parts of cflrun that treat options by what they are to an experiment: --skip-complete and
/// --resume (run/output_files.cpp), `cflrun report`'s grouping (report/group_statistics.cpp).

#include <initializer_list>
#include <map>
#include <set>
#include <string>

#include <cflrun/core/option_visitor.hpp>

namespace cflrun::cli {

/// The names of the run options whose kind is one of `kinds`: their flags without "--", which are
/// also their /config names. Algorithm options (of kind experiment) count too, and so do the
/// options /config does not record (--quiet, --dry-run). Not --help and --version, which are no run
/// options.
/// @return  the names, sorted; empty if `kinds` is.
std::set<std::string> option_names(std::initializer_list<core::OptionKind> kinds);

/// The options of every registered algorithm but `algorithm` that are not also `algorithm`'s own
/// (e.g. --pacfl-beta, and CLoVE's --kmeans-restarts, for ifca): builds before 2026-11-28 recorded
/// them in every run's /config, so `cflrun report` leaves them out of a run's group key.
/// @throws ConfigError if `algorithm` names no registered algorithm.
std::set<std::string> other_algorithms_options(const std::string& algorithm);

/// Every recorded option's default, as /config writes it, every algorithm's options included. An
/// option that a result file or checkpoint lacks was made by a build before the option existed
/// (which behaved as its default) or belongs to another algorithm than the file's: --skip-complete,
/// --resume and `cflrun report` read the missing value as this one.
const std::map<std::string, std::string>& default_option_values();

}  // namespace cflrun::cli
