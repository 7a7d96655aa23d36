#pragma once
// "Did you mean ...?" for a mistyped name (a scheme family, a spec parameter, a CLI option or
// command). Pure: the callers at the boundary own the candidate list (the scheme registry, a
// family's declared parameters, CLI11's option table) and the wording of the message.
#include <string>
#include <string_view>
#include <vector>

namespace dgq {

// The candidate `typed` most likely meant, or "" when none is close enough to be worth
// suggesting. Case and '-' versus '_' are ignored (Q8_0 -> q8_0, fp8_e4m3 -> fp8-e4m3): those
// are the slips users make and the registry's names mix both separators. Otherwise the nearest
// candidate by edit distance (a transposition counts once) within a third of the typed
// length (rounded to nearest), and short of rewriting all of it, wins; failing that, a candidate that begins with what
// was typed, or that what was typed begins with (fp8 -> fp8-e4m3, group -> group_ratio), since an abbreviation is far
// in edits from the full name. Ties go to the earlier candidate, so the caller's order (the registry's listing order)
// decides.
std::string closest_spelling(std::string_view typed, const std::vector<std::string>& candidates);

// The edit distance of closest_spelling (optimal string alignment: insertions, deletions,
// substitutions and adjacent transpositions cost 1), on the texts as given.
std::size_t spelling_distance(std::string_view a, std::string_view b);

}  // namespace dgq
