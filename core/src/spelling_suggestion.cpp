#include "dgq/spelling_suggestion.hpp"

#include <algorithm>
#include <cctype>
#include <tuple>

namespace dgq {
namespace {

std::string normalized(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (const char c : s) out += c == '_' ? '-' : static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// Leading dashes are an option's syntax, not part of what the user was trying to spell: "--g"
// must not count as a three-letter abbreviation of every long option.
std::size_t letters_typed(std::string_view s) {
  const std::size_t first = s.find_first_not_of('-');
  return first == std::string_view::npos ? 0 : s.size() - first;
}

// Short abbreviations begin too many names for the guess to mean anything.
constexpr std::size_t kMinAbbreviation = 3;

}  // namespace

std::size_t spelling_distance(std::string_view a, std::string_view b) {
  // Three rows suffice for adjacent transpositions.
  std::vector<std::size_t> before(b.size() + 1), previous(b.size() + 1), current(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) previous[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    current[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t substitution = a[i - 1] == b[j - 1] ? 0 : 1;
      current[j] = std::min({previous[j] + 1, current[j - 1] + 1, previous[j - 1] + substitution});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
        current[j] = std::min(current[j], before[j - 2] + 1);
    }
    std::swap(before, previous);
    std::swap(previous, current);
  }
  return previous[b.size()];
}

std::string closest_spelling(std::string_view typed, const std::vector<std::string>& candidates) {
  const std::string want = normalized(typed);
  if (want.empty() || letters_typed(want) == 0) return "";
  const std::size_t near_enough = std::max<std::size_t>(1, (letters_typed(want) + 1) / 3);
  // (class, distance, index), lowest wins: class 0 near in edits, 1 an abbreviation either way.
  using Rank = std::tuple<int, std::size_t, std::size_t>;
  const Rank none{2, 0, 0};
  Rank best = none;
  for (std::size_t i = 0; i < candidates.size(); ++i) {
    const std::string have = normalized(candidates[i]);
    const std::size_t d = spelling_distance(want, have);
    const bool abbreviation = std::min(letters_typed(want), letters_typed(have)) >= kMinAbbreviation &&
                              (have.starts_with(want) || want.starts_with(have));
    Rank rank = none;
    // An edit of every letter typed ("-x" -> "-h") is a replacement, not a correction.
    if (d <= near_enough && d < letters_typed(want)) {
      rank = {0, d, i};
    } else if (abbreviation) {
      rank = {1, d, i};
    }
    best = std::min(best, rank);
  }
  return best == none ? "" : candidates[std::get<2>(best)];
}

}  // namespace dgq
