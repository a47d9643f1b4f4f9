#include <cflrun/run/progress.hpp>

#include <cmath>
#include <cstdio>

namespace cflrun::run {
namespace {

std::string duration_text(double seconds) {
  const auto total = static_cast<long>(std::lround(seconds));
  char text[32];
  if (total >= 3600) {
    std::snprintf(text, sizeof(text), "%ldh%02ldm", total / 3600, (total % 3600) / 60);
  } else {
    std::snprintf(text, sizeof(text), "%ldm%02lds", total / 60, total % 60);
  }
  return text;
}

}  // namespace

std::string progress_line(int round, int rounds, double ari, double accuracy, double test_loss,
                          double seconds, double mean_seconds) {
  char ari_text[16];
  if (std::isnan(ari)) {
    std::snprintf(ari_text, sizeof(ari_text), "    -");
  } else {
    std::snprintf(ari_text, sizeof(ari_text), "%5.3f", ari);
  }
  char accuracy_text[32] = "";
  if (!std::isnan(accuracy)) {  // regression and unsupervised runs have no accuracy
    std::snprintf(accuracy_text, sizeof(accuracy_text), "  accuracy %.4f", accuracy);
  }
  char line[192];
  std::snprintf(line, sizeof(line), "round %4d/%d  ARI %s%s  test loss %.4f  %.2f s  ETA %s", round,
                rounds, ari_text, accuracy_text, test_loss, seconds,
                duration_text(mean_seconds * (rounds - round)).c_str());
  return line;
}

}  // namespace cflrun::run
