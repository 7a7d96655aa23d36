#include "regimes.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "dgq/errors.hpp"
#include "prng.hpp"

namespace dgq::sim::synth {

namespace {
// Scales are jittered by up to +-jitter (relative) so that two seeds differ in more than noise.
double jittered(Rng& rng, double scale, double jitter) { return scale * (1.0 + jitter * (2.0 * rng.uniform() - 1.0)); }

// Splits [0, L) at the given fractions into named regimes.
std::vector<Regime> split(std::int64_t tokens, const std::vector<std::pair<std::string, double>>& parts,
                          const std::vector<double>& fractions_end) {
  std::vector<Regime> out;
  std::int64_t begin = 0;
  for (std::size_t i = 0; i < parts.size(); ++i) {
    const std::int64_t end = i + 1 == parts.size()
                                 ? tokens
                                 : std::clamp<std::int64_t>(std::llround(fractions_end[i] * tokens), begin, tokens);
    if (end > begin) out.push_back({parts[i].first, begin, end, parts[i].second, 0.0, 0});
    begin = end;
  }
  return out;
}

// Instruction header, parameters, then a code body of functions with different density.
std::vector<Regime> code_regimes(std::int64_t tokens, Rng& rng) {
  return split(tokens,
               {{"header", jittered(rng, 0.55, 0.1)},
                {"parameters", jittered(rng, 1.6, 0.1)},
                {"body-1", jittered(rng, 1.0, 0.05)},
                {"body-2", jittered(rng, 0.72, 0.05)},
                {"body-3", jittered(rng, 1.15, 0.05)}},
               {0.08 + 0.02 * rng.uniform(), 0.22 + 0.03 * rng.uniform(), 0.5 + 0.05 * rng.uniform(),
                0.75 + 0.05 * rng.uniform()});
}

// Prose: smooth drift, one gentle topic shift.
std::vector<Regime> prose_regimes(std::int64_t tokens, Rng& rng) {
  auto out = split(tokens, {{"paragraphs-1", jittered(rng, 1.0, 0.05)}, {"paragraphs-2", jittered(rng, 0.82, 0.05)}},
                   {0.55 + 0.1 * rng.uniform()});
  for (auto& r : out) {
    r.drift = 0.08;
    r.period = std::max<std::int64_t>(64, tokens / 3);
  }
  return out;
}

// Poetry: a short title, then regular verse lines repeating the same pattern.
std::vector<Regime> poetry_regimes(std::int64_t tokens, Rng& rng) {
  const double title_end = tokens > 0 ? std::min(0.5, 32.0 / static_cast<double>(tokens)) : 0.0;
  auto out = split(tokens, {{"title", jittered(rng, 0.6, 0.05)}, {"verse", jittered(rng, 1.0, 0.05)}}, {title_end});
  for (auto& r : out)
    if (r.name == "verse") r.period = 12;  // tokens per line
  return out;
}

// Legal: heading, then long uniform paragraphs alternating between two densities.
std::vector<Regime> legal_regimes(std::int64_t tokens, Rng& rng) {
  std::vector<std::pair<std::string, double>> parts = {{"heading", jittered(rng, 0.7, 0.05)}};
  std::vector<double> ends = {0.04};
  const int paragraphs = 5;
  for (int i = 0; i < paragraphs; ++i) {
    parts.emplace_back("clause-" + std::to_string(i + 1), jittered(rng, i % 2 ? 0.8 : 1.0, 0.03));
    ends.push_back(0.04 + 0.96 * (i + 1) / paragraphs);
  }
  return split(tokens, parts, ends);
}
}  // namespace

std::vector<Regime> make_regimes(const std::string& kind, std::int64_t tokens, std::uint64_t seed) {
  Rng rng(seed, {kStreamRegimes});
  if (kind == "code") return code_regimes(tokens, rng);
  if (kind == "prose") return prose_regimes(tokens, rng);
  if (kind == "poetry") return poetry_regimes(tokens, rng);
  if (kind == "legal") return legal_regimes(tokens, rng);
  throw ParameterError("unknown trace kind '" + kind + "' (expected code, prose, legal or poetry)");
}

double regime_scale_at(const Regime& r, std::int64_t t) {
  double scale = r.key_scale;
  if (r.drift > 0.0 && r.period > 0)
    scale *=
        1.0 + r.drift * std::sin(6.283185307179586 * static_cast<double>(t - r.begin) / static_cast<double>(r.period));
  else if (r.period > 0) {
    // Verse: the line's first token a little louder, its last (the rhyme/line break) quieter.
    const std::int64_t pos = (t - r.begin) % r.period;
    if (pos == 0) scale *= 1.1;
    if (pos == r.period - 1) scale *= 0.9;
  }
  return scale;
}

std::string describe_regimes(const std::vector<Regime>& regimes) {
  std::string out;
  for (const auto& r : regimes) {
    char buffer[160];
    std::snprintf(buffer, sizeof buffer, "%s%s [%lld,%lld) x%.2f", out.empty() ? "" : "; ", r.name.c_str(),
                  static_cast<long long>(r.begin), static_cast<long long>(r.end), r.key_scale);
    out += buffer;
  }
  return out;
}

}  // namespace dgq::sim::synth
