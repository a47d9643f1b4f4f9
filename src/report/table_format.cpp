#include <cflrun/report/table_format.hpp>

#include <iomanip>
#include <sstream>

#include <cflrun/core/error.hpp>

namespace cflrun::report {
namespace {

/// Significant digits of CSV numbers: enough for any table, short enough to read.
constexpr int kCsvPrecision = 10;

/// `value` with `decimals` digits after the point, never "-0.0".
std::string fixed(double value, int decimals) {
  std::ostringstream text;
  text << std::fixed << std::setprecision(decimals) << value;
  auto result = text.str();
  if (result.front() == '-' && result.find_first_not_of("-0.") == std::string::npos) {
    result.erase(0, 1);
  }
  return result;
}

std::string csv_number(double value) {
  std::ostringstream text;
  text << std::setprecision(kCsvPrecision) << value;
  return text.str();
}

std::string csv_field(const std::string& text) {
  if (text.find_first_of(",\"\n") == std::string::npos) {
    return text;
  }
  std::string quoted = "\"";
  for (const char c : text) {
    quoted += c == '"' ? std::string("\"\"") : std::string(1, c);
  }
  return quoted + "\"";
}

std::string markdown_escape(const std::string& text) {
  std::string escaped;
  for (const char c : text) {
    escaped += c == '|' ? std::string("\\|") : std::string(1, c);
  }
  return escaped;
}

std::string latex_escape(const std::string& text) {
  std::string escaped;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '>' && i + 1 < text.size() && text[i + 1] == '=') {
      escaped += "$\\geq$";
      ++i;
    } else if (std::string("&%$#_{}").find(c) != std::string::npos) {
      escaped += std::string("\\") + c;
    } else if (c == '\\') {
      escaped += "\\textbackslash{}";
    } else if (c == '~' || c == '^' || c == '<' || c == '>') {
      escaped += c == '~'   ? "\\textasciitilde{}"
                 : c == '^' ? "\\textasciicircum{}"
                 : c == '<' ? "\\textless{}"
                            : "\\textgreater{}";
    } else {
      escaped += c;
    }
  }
  return escaped;
}

std::string escape(const std::string& text, Format format) {
  return format == Format::kLatex ? latex_escape(text) : markdown_escape(text);
}

/// A cell as Markdown or LaTeX text.
std::string cell_text(const Cell& cell, Format format) {
  if (const auto* statistic = std::get_if<StatisticCell>(&cell)) {
    return format_statistic(*statistic, format);
  }
  return escape(std::get<std::string>(cell), format);
}

void check_shape(const Table& table) {
  for (const auto& row : table.rows) {
    if (row.size() != table.columns.size()) {
      throw ShapeError("report table: a row has " + std::to_string(row.size()) +
                       " cells, expected one per column (" + std::to_string(table.columns.size()) +
                       ")");
    }
  }
}

std::string markdown_row(const std::vector<std::string>& cells) {
  std::string line = "|";
  for (const auto& cell : cells) {
    line += " " + cell + " |";
  }
  return line + "\n";
}

std::string markdown(const Table& table) {
  std::string text;
  for (const auto& line : table.caption) {
    text += line + "\n";
  }
  text += table.caption.empty() ? "" : "\n";
  std::vector<std::string> header;
  for (const auto& column : table.columns) {
    header.push_back(markdown_escape(column.title));
  }
  text += markdown_row(header) + markdown_row(std::vector<std::string>(header.size(), "---"));
  for (const auto& row : table.rows) {
    std::vector<std::string> cells;
    for (const auto& cell : row) {
      cells.push_back(cell_text(cell, Format::kMarkdown));
    }
    text += markdown_row(cells);
  }
  return text;
}

std::string latex_row(const std::vector<std::string>& cells) {
  std::string line;
  for (std::size_t i = 0; i < cells.size(); ++i) {
    line += (i == 0 ? "" : " & ") + cells[i];
  }
  return line + " \\\\\n";
}

std::string latex(const Table& table) {
  std::string text;
  for (const auto& line : table.caption) {
    text += "% " + line + "\n";
  }
  std::string spec;
  std::vector<std::string> header;
  for (const auto& column : table.columns) {
    spec += column.statistic ? "c" : "l";
    header.push_back(latex_escape(column.title));
  }
  text += "\\begin{tabular}{" + spec + "}\n\\hline\n" + latex_row(header) + "\\hline\n";
  for (const auto& row : table.rows) {
    std::vector<std::string> cells;
    for (const auto& cell : row) {
      cells.push_back(cell_text(cell, Format::kLatex));
    }
    text += latex_row(cells);
  }
  return text + "\\hline\n\\end{tabular}\n";
}

std::string csv_line(const std::vector<std::string>& fields) {
  std::string line;
  for (std::size_t i = 0; i < fields.size(); ++i) {
    line += (i == 0 ? "" : ",") + fields[i];
  }
  return line + "\n";
}

void append_csv_statistic(const Cell& cell, std::vector<std::string>& fields) {
  const auto* statistic = std::get_if<StatisticCell>(&cell);
  if (statistic == nullptr || statistic->statistic.defined == 0) {
    fields.insert(fields.end(), {"", "", statistic ? "0" : ""});
    return;
  }
  const auto& s = statistic->statistic;
  fields.insert(fields.end(), {csv_number(s.mean), csv_number(s.std), std::to_string(s.defined)});
}

std::string csv(const Table& table) {
  std::vector<std::string> header;
  for (const auto& column : table.columns) {
    if (column.statistic) {
      header.insert(header.end(),
                    {csv_field(column.csv_name + "_mean"), csv_field(column.csv_name + "_std"),
                     csv_field(column.csv_name + "_n")});
    } else {
      header.push_back(csv_field(column.csv_name));
    }
  }
  std::string text = csv_line(header);
  for (const auto& row : table.rows) {
    std::vector<std::string> fields;
    for (std::size_t c = 0; c < row.size(); ++c) {
      if (table.columns[c].statistic) {
        append_csv_statistic(row[c], fields);
      } else {
        const auto* text_cell = std::get_if<std::string>(&row[c]);
        fields.push_back(csv_field(
            text_cell ? *text_cell
                      : format_statistic(std::get<StatisticCell>(row[c]), Format::kMarkdown)));
      }
    }
    text += csv_line(fields);
  }
  return text;
}

}  // namespace

Format parse_format(const std::string& name) {
  if (name == "markdown") {
    return Format::kMarkdown;
  }
  if (name == "csv") {
    return Format::kCsv;
  }
  if (name == "latex") {
    return Format::kLatex;
  }
  throw ConfigError("--format must be one of markdown | csv | latex, but got '" + name + "'");
}

std::string format_statistic(const StatisticCell& cell, Format format) {
  const auto& s = cell.statistic;
  const auto& info = metric_info(cell.metric);
  std::string text = "-";
  if (s.defined > 0) {
    const auto mean = fixed(s.mean, info.decimals);
    const auto spread = fixed(s.std, info.decimals);
    text = format == Format::kLatex ? "$" + mean + " \\pm " + spread + "$" : mean + " +- " + spread;
    if (s.defined < s.total) {
      text += " (" + std::to_string(s.total - s.defined) + "/" + std::to_string(s.total) + " " +
              info.missing_word + ")";
    }
  } else if (s.total > 0 && cell.metric == Metric::kRecoveryRounds) {
    // Recovery cells count only the runs that recover or never do: none recovered.
    text = "never (" + std::to_string(s.total) + "/" + std::to_string(s.total) + ")";
  }
  if (cell.show_count) {
    text += " [n=" + std::to_string(s.total) + "]";
  }
  return text;
}

std::string format_tables(const std::vector<Table>& tables, Format format) {
  std::string text;
  for (std::size_t i = 0; i < tables.size(); ++i) {
    check_shape(tables[i]);
    text += i == 0 ? "" : "\n";
    text += format == Format::kCsv     ? csv(tables[i])
            : format == Format::kLatex ? latex(tables[i])
                                       : markdown(tables[i]);
  }
  return text;
}

}  // namespace cflrun::report
