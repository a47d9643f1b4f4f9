#include <cflrun/report/report_command.hpp>

#include <algorithm>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include <boost/algorithm/string/replace.hpp>
#include <boost/program_options.hpp>

#include <cflrun/core/error.hpp>
#include <cflrun/core/subcommand.hpp>
#include <cflrun/report/group_statistics.hpp>
#include <cflrun/report/metric.hpp>
#include <cflrun/report/paper_references.hpp>
#include <cflrun/report/paper_values.hpp>
#include <cflrun/report/recovery_table.hpp>
#include <cflrun/report/run_rows_csv.hpp>
#include <cflrun/report/run_summary.hpp>
#include <cflrun/report/table_format.hpp>
#include <cflrun/report/table_layout.hpp>

namespace po = boost::program_options;

namespace cflrun::report {
namespace {

constexpr const char* kUsage =
    "Usage: cflrun report FILES_OR_DIRS... [--format markdown|csv|latex] [--filter KEY=VALUE]...\n"
    "                     [--rows KEY [--columns KEY] [--tables KEY[,KEY...]] [--metric NAME]]\n"
    "       cflrun report FILES_OR_DIRS... --recovery [--format FORMAT] "
    "[--filter KEY=VALUE]...\n"
    "\n"
    "Tables of final-round metrics, mean +- std over seeds (NumPy std, ddof 0), from cflrun\n"
    "result files, computed as the official CLoVE notebook computes the paper's Tables 1, 2, 4\n"
    "(clove-official-setup.md Sec. 12). A directory stands for the *.h5 files in it and its "
    "subdirectories.\n"
    "Runs whose /config differs only by seed and per-run bookkeeping (data-seed, out, threads,\n"
    "ranks, device, version, ...) form one group. Only complete runs count; incomplete, failed\n"
    "and unreadable files are listed on stderr.\n"
    "\n"
    "Metrics per run, then mean +- std over the group's runs:\n"
    "  accuracy             last-round mean test accuracy x 100 (unsupervised and linreg runs: "
    "test loss)\n"
    "  accuracy_weighted    last-round test accuracy x 100 as correct over test samples of all\n"
    "                       clients (PFLlib's and FlexCFL's definition; not in older files)\n"
    "  accuracy_train       last-round accuracy on the clients' training samples under the model\n"
    "                       the round starts from x 100 (runs with --train-accuracy; the CLoVE\n"
    "                       notebook's FedAvg definition)\n"
    "  test_loss            last-round mean test loss\n"
    "  ari                  last-round ARI ('-' where undefined: fedavg, local)\n"
    "  ari_round10          100 x ARI(round 10) / final ARI ('-' if fewer than 10 rounds)\n"
    "  first_round_ari_0.9  first round (1-based) with ARI >= 0.9; '(k/n never)' counts runs\n"
    "                       that never reach it\n"
    "\n"
    "Without --rows: one table, one row per group, the varying config keys as leading columns.\n"
    "With --rows algorithm --columns dataset --tables partition: the paper's layout, one table\n"
    "per partition, cells = --metric. Any other key varying within a cell is an error: select\n"
    "runs with --filter or add the key to --tables.\n"
    "\n"
    "With --paper [FILE]: one row per cell the CLoVE paper reports (Tables 1, 2, 4, 5, 9; FILE,\n"
    "default jobs/paper/paper_values.csv; Table 5's test loss for unsupervised runs), cflrun's\n"
    "value beside the paper's, the difference and the cell's class: within (see below),\n"
    "outside with evidence (evidence.csv beside FILE names it), outside. Accuracy is compared as\n"
    "the row's reference code computes it (accuracy_definitions.csv beside FILE: the mean over\n"
    "clients, correct over test samples, or the training-data accuracy). With --summary: only\n"
    "the counts per dataset and class, missing cells included.\n"
    "\n"
    "With --recovery: runs of a changing population (/population/change_rounds, issue 45), one\n"
    "row per group and change round r (1-based), mean +- std over the group's runs:\n"
    "  ARI before, after    ARI of round r - 1 and of round r\n"
    "  ARI recovery         rounds d >= 0 from r until ARI(r + d) >= 0.9; '(k/n never)' counts\n"
    "                       runs that never get there; '-' where ARI is undefined (fedavg)\n"
    "  accuracy recovery    rounds d >= 0 until accuracy(r + d) >= accuracy(r - 1) - 1 point\n"
    "                       (undefined for a change at round 1)\n"
    "  accuracy before      accuracy of round r - 1, percent; after: of round r; dip: the\n"
    "                       lowest from round r until the next change round (or the end)\n"
    "Both recoveries are searched until the run's end, past later changes. Runs without change\n"
    "rounds are listed on stderr and left out.\n"
    "\n"
    "Inputs may also be runs.csv files of per-run rows (results/run_summaries.py), e.g. the\n"
    "committed results/paper/*/runs.csv.\n"
    "\n"
    "Example: cflrun report results/sweep --rows algorithm --columns dataset --tables partition\n"
    "         cflrun report results/paper_fmnist --paper\n"
    "         cflrun report results/paper/fmnist_100_gpu/runs.csv --paper --summary\n"
    "         cflrun report results/drift --recovery\n";

/// What the command line asked for.
struct ReportOptions {
  std::vector<std::string> inputs;
  Format format = Format::kMarkdown;
  GridLayout layout;
  Metric metric = Metric::kAccuracy;
  bool metric_given = false;
  std::vector<std::string> filters;
  std::string paper;      ///< --paper: file of the paper's values; "" = not asked.
  bool summary = false;   ///< --summary: with --paper, the counts of cells per class only.
  bool recovery = false;  ///< --recovery: the recovery after each population change.
  bool help = false;
};

po::options_description describe(std::string& format, std::string& metric, ReportOptions& o,
                                 std::vector<std::string>& tables) {
  po::options_description options("Options");
  options.add_options()("format", po::value(&format)->default_value("markdown"),
                        "markdown | csv | latex")(
      "rows", po::value(&o.layout.rows), "config key whose values are the rows (e.g. algorithm)")(
      "columns", po::value(&o.layout.columns),
      "config key whose values are the columns (e.g. dataset); needs --rows")(
      "tables", po::value(&tables)->composing(),
      "config key(s) splitting tables, comma-separated or repeated (e.g. partition); needs --rows")(
      "metric", po::value(&metric)->default_value("accuracy"),
      "metric of the --rows cells (without --rows: the only metric column): accuracy | test_loss | "
      "ari | ari_round10 | first_round_ari_0.9 | clusters (models the algorithm maintained in the "
      "last round: CFL's count grows)")(
      "filter", po::value(&o.filters)->composing(),
      "keep runs whose config KEY equals VALUE (repeatable; values of one key are alternatives)")(
      "paper", po::value(&o.paper)->implicit_value(kDefaultPaperValues),
      "compare with the CLoVE paper: each cell it reports beside cflrun's, with the difference "
      "(file of the paper's values; default jobs/paper/paper_values.csv)")(
      "summary", po::bool_switch(&o.summary),
      "with --paper: only the counts of Table 1 and 2 cells per dataset and class (within, "
      "outside with evidence, outside, missing)")(
      "recovery", po::bool_switch(&o.recovery),
      "runs of a changing population: rounds until ARI and accuracy recover after each change "
      "round, and the accuracy before, after and at the dip (one row per group and change round)")(
      "help,h", "print this help and exit");
  return options;
}

std::vector<std::string> split_commas(const std::vector<std::string>& texts) {
  std::vector<std::string> items;
  for (const auto& text : texts) {
    std::istringstream stream(text);
    for (std::string item; std::getline(stream, item, ',');) {
      if (!item.empty()) {
        items.push_back(item);
      }
    }
  }
  return items;
}

/// @throws ConfigError for an unknown option or a bad value.
ReportOptions parse_options(int argc, const char* const argv[], std::string& help) {
  ReportOptions o;
  std::string format;
  std::string metric;
  std::vector<std::string> tables;
  auto visible = describe(format, metric, o, tables);
  po::options_description all;
  all.add(visible).add_options()("input", po::value(&o.inputs)->composing(), "result file or dir");
  po::positional_options_description positional;
  positional.add("input", -1);
  po::variables_map vm;
  try {
    po::store(po::command_line_parser(argc, argv).options(all).positional(positional).run(), vm);
    po::notify(vm);
  } catch (const po::error& e) {
    throw ConfigError(std::string(e.what()) + " (see cflrun report --help)");
  }
  std::ostringstream text;
  text << kUsage << "\nClass within, per metric:\n  "
       << boost::algorithm::replace_all_copy(within_rule_text(), "; ", "\n  ") << "\n\n"
       << visible;
  help = text.str();
  o.help = vm.count("help") != 0;
  o.format = parse_format(format);
  o.metric = parse_metric(metric);
  o.metric_given = !vm["metric"].defaulted();
  o.layout.tables = split_commas(tables);
  if (!o.help && o.inputs.empty()) {
    throw ConfigError("give result files or directories to report on (see cflrun report --help)");
  }
  if (!o.paper.empty() && (!o.layout.rows.empty() || o.metric_given)) {
    throw ConfigError(
        "--paper makes its own table (every metric the paper reports); leave out --rows and "
        "--metric");
  }
  if (o.summary && o.paper.empty()) {
    throw ConfigError("--summary counts the paper's cells; give it with --paper");
  }
  if (o.recovery && (!o.paper.empty() || !o.layout.rows.empty() || o.metric_given)) {
    throw ConfigError(
        "--recovery makes its own table (recovery after each change round); leave out --paper, "
        "--rows and --metric");
  }
  if (o.layout.rows.empty() && (!o.layout.columns.empty() || !o.layout.tables.empty())) {
    throw ConfigError("--columns and --tables need --rows KEY (e.g. --rows algorithm)");
  }
  return o;
}

std::string describe_incomplete(const RunSummary& run) {
  return run.path.string() + " (" + run.status + ", " + std::to_string(run.completed_rounds) + "/" +
         std::to_string(run.planned_rounds) + " rounds)";
}

/// Notes on `err` that `items` (files, with why) were left out as `what`, e.g. "unreadable
/// file(s)".
void note_left_out(std::ostream& err, const std::string& what,
                   const std::vector<std::string>& items) {
  if (items.empty()) {
    return;
  }
  err << "cflrun report: note: left out " << items.size() << " " << what << ": ";
  for (std::size_t i = 0; i < items.size(); ++i) {
    err << (i == 0 ? "" : "; ") << items[i];
  }
  err << "\n";
}

/// Reads every file; notes unreadable ones on `err`.
std::vector<RunSummary> read_runs(const std::vector<std::filesystem::path>& paths,
                                  std::ostream& err) {
  std::vector<RunSummary> runs;
  std::vector<std::string> unreadable;
  for (const auto& path : paths) {
    try {
      if (is_run_rows_csv(path)) {
        const auto rows = read_run_rows_csv(path);
        runs.insert(runs.end(), rows.begin(), rows.end());
      } else {
        runs.push_back(read_run_summary(path));
      }
    } catch (const Error& e) {
      unreadable.push_back(path.string() + " (" + e.what() + ")");
    }
  }
  note_left_out(err, "unreadable file(s)", unreadable);
  return runs;
}

/// The runs that `keep` accepts, in order; appends `describe(run)` of each other to `left_out`.
template <typename Keep, typename Describe>
std::vector<RunSummary> select_runs(const std::vector<RunSummary>& runs, Keep keep,
                                    Describe describe, std::vector<std::string>& left_out) {
  std::vector<RunSummary> kept;
  for (const auto& run : runs) {
    if (keep(run)) {
      kept.push_back(run);
    } else {
      left_out.push_back(describe(run));
    }
  }
  return kept;
}

/// The complete runs; notes the others on `err`.
std::vector<RunSummary> complete_runs(const std::vector<RunSummary>& runs, std::ostream& err) {
  std::vector<std::string> incomplete;
  const auto complete = select_runs(
      runs, [](const RunSummary& run) { return run.complete(); }, describe_incomplete, incomplete);
  const auto unverified = std::count_if(complete.begin(), complete.end(),
                                        [](const RunSummary& run) { return !run.verified; });
  if (unverified > 0) {
    err << "cflrun report: note: " << unverified
        << " complete file(s) carry no checksum (written by a cflrun "
        << "before checksums) and could not be verified\n";
  }
  note_left_out(err, "incomplete run(s)", incomplete);
  return complete;
}

/// The runs with at least one change round (--recovery); notes the others on `err`.
/// @throws DataError if none is left.
std::vector<RunSummary> changing_runs(const std::vector<RunSummary>& runs, std::ostream& err) {
  std::vector<std::string> fixed;
  const auto changing = select_runs(
      runs, [](const RunSummary& run) { return !run.recoveries.empty(); },
      [](const RunSummary& run) { return run.path.string(); }, fixed);
  note_left_out(err, "run(s) without change rounds (no /population/change_rounds, or none in it)",
                fixed);
  if (changing.empty()) {
    throw DataError("--recovery: none of the " + std::to_string(runs.size()) +
                    " complete run(s) has a change round; give runs made with --changes");
  }
  return changing;
}

/// The --paper table; notes the groups the paper has no value for on `err`.
Table paper_table(const ReportOptions& o, const std::vector<RunGroup>& groups, std::ostream& err) {
  const auto values = read_paper_values(o.paper);
  const auto references = read_paper_references(o.paper);
  if (o.summary) {
    return paper_summary_table(groups, values, references, o.paper);
  }
  int unmatched = 0;
  Table table = paper_comparison_table(groups, values, references, o.paper, unmatched);
  if (unmatched > 0) {
    err << "cflrun report: note: " << unmatched
        << " group(s) match no cell of the paper (partition, dataset, "
        << "algorithm) and are not shown\n";
  }
  return table;
}

std::vector<Table> build_tables(const ReportOptions& o, const std::vector<RunGroup>& groups,
                                std::ostream& err) {
  if (!o.paper.empty()) {
    return {paper_table(o, groups, err)};
  }
  if (o.recovery) {
    return {recovery_table(groups, varying_keys(groups))};
  }
  if (o.layout.rows.empty()) {
    const std::vector<Metric> metrics =
        o.metric_given ? std::vector<Metric>{o.metric}
                       : std::vector<Metric>{Metric::kAccuracy, Metric::kAri, Metric::kAriRound10,
                                             Metric::kFirstRoundAri09, Metric::kClusters};
    return {group_list_table(groups, varying_keys(groups), metrics)};
  }
  if (o.format == Format::kCsv) {
    return {grid_list_table(groups, o.layout, o.metric)};
  }
  return grid_tables(groups, o.layout, o.metric);
}

int report(const ReportOptions& o, std::ostream& out, std::ostream& err) {
  allow_reading_running_files();
  const auto runs =
      filter_runs(read_runs(expand_result_inputs(o.inputs), err), parse_filters(o.filters));
  const auto complete = complete_runs(runs, err);
  if (complete.empty()) {
    throw DataError("no complete run to report (" + std::to_string(runs.size()) +
                    " run(s) selected, none with status 'complete'); wait for the jobs or check "
                    "the inputs and --filter");
  }
  const auto groups = group_runs(o.recovery ? changing_runs(complete, err) : complete);
  for (const auto& note : duplicate_seed_notes(groups)) {
    err << "cflrun report: note: duplicate runs counted as separate seeds: " << note << "\n";
  }
  out << format_tables(build_tables(o, groups, err), o.format);
  return 0;
}

}  // namespace

int run_report_command(int argc, const char* const argv[], std::ostream& out, std::ostream& err) {
  return core::run_subcommand("report", err, [&] {
    std::string help;
    const auto options = parse_options(argc, argv, help);
    if (options.help) {
      out << help;
      return 0;
    }
    return report(options, out, err);
  });
}

int run_report_command(int argc, const char* const argv[]) {
  return run_report_command(argc, argv, std::cout, std::cerr);
}

}  // namespace cflrun::report
