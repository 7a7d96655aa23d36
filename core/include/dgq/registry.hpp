#pragma once
// The scheme registry: every scheme family registers itself, from its own file, under its name
// and the device it runs on, with its parameters (defaults, ranges, help) and a factory. A spec
// "family[:key=value,...]" is parsed once, here, into typed parameters (SchemeArgs) that the
// factory reads; the CLI's help, `dgq memory`, `dgq schemes` (the docs table), the sweep
// grammar and the conformance tests (tests/reference/test_scheme_conformance.cpp) all list the
// families from here. How to add a family: docs/adding-a-scheme.md.
//
// Registration runs from static initializers in the family's own file. Nothing else refers to
// that file, so a plain static-library link would drop it; dgq_reference, dgq_cpu and dgq_cuda
// are therefore linked whole-archive (reference/CMakeLists.txt says why).
//
// Three devices. `reference` is the literal rules of docs/spec.md (reference/: scalar, the
// oracle); `cpu` is what a user gets on the CPU (the default): the family's fast implementation
// when cpu/ registers one, else its reference; `cuda` is the GPU (cuda/). Why a device of its
// own for the reference rather than a flag of the cpu entry: the oracle must be reachable on
// purpose (make_scheme(spec, Device::reference)) exactly as the GPU is, so that one conformance
// test compares any implementation with it the same way (tests/reference for cpu,
// tests/gpu for cuda), and a fast path is then one more registration, never a branch inside
// the reference. A family registered only for `reference` is listed (and found) for `cpu` too,
// as the same entry under Device::cpu; cpu/'s registration of the name replaces that entry.
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "dgq/scheme.hpp"
#include "dgq/stored_format.hpp"
#include "dgq/stored_layout.hpp"

namespace dgq {

enum class Device : std::uint8_t { cpu, cuda, reference };
std::string_view device_name(Device d);  // "cpu", "cuda", "reference"

// One key of a family's spec, e.g. win in "dgq:win=16".
struct SchemeParam {
  enum class Kind : std::uint8_t {
    integer,  // decimal integer in [min, max], checked by the parser
    number,   // finite decimal float; its range (`range`, in words) is checked by the family
    word,     // text; `check` (if any) rejects what the family does not know
  };
  std::string_view key;
  Kind kind = Kind::integer;
  std::string_view default_text;  // the value when the key is absent, spelled as in a spec
  int min = 0, max = 0;           // integer only
  std::string_view range;         // number and word: the accepted values in words, for help
  std::string_view help;
  void (*check)(std::string_view value) = nullptr;  // word only: throws ParameterError
};

// A spec's parameters, parsed and range-checked: every parameter the family declares, given or
// defaulted. Reading a key the family did not declare (or as another kind) is a programming
// error and throws std::logic_error.
class SchemeArgs {
 public:
  using Value = std::variant<int, float, std::string>;
  using Values = std::map<std::string, Value, std::less<>>;
  SchemeArgs(std::string family, Values values) : family_(std::move(family)), values_(std::move(values)) {}

  const std::string& family() const { return family_; }
  int integer(std::string_view key) const;
  float number(std::string_view key) const;
  const std::string& word(std::string_view key) const;

 private:
  const Value& at(std::string_view key) const;
  std::string family_;
  Values values_;
};

struct SchemeFamily {
  std::string_view name;  // "dgq", "q8_0", ...
  Device device = Device::cpu;
  // Where the family is listed (help, `dgq memory`, `dgq schemes`, docs): lower first. The
  // built-in families use 10, 20, ..., 90; a new family takes the next free multiple of 10.
  int order = 0;
  std::string_view summary;             // one line: what it stores
  std::span<const SchemeParam> params;  // read (and their errors reported) in this order
  // A std::function rather than a plain pointer so that one family class can be registered for
  // the reference and for cpu/ with the kernels of each bound in (dgq/kernels/cpu_kernels.hpp).
  std::function<std::unique_ptr<Scheme>(const SchemeArgs& args)> make;
  // The head dims (channels) the family can compress; nullptr: any (0 included). compress of
  // another channel count throws InputError naming it. The conformance tests use it to pick
  // shapes the family takes and to check that the others are refused.
  bool (*accepts_channels)(std::int64_t channels) = nullptr;
  // Channels per block of the deployed cache this family reproduces, when that deployment takes
  // whole blocks only: llama.cpp refuses a cache type whose block does not divide head_dim (32
  // for q8_0, q4_0, ...). dgq's compress pads the last block instead (docs/schemes.md), so this is
  // not accepts_channels; `dgq memory`, which sizes deployed caches, refuses such a head_dim.
  // 0: no such rule.
  int deployed_block = 0;
  // What Scheme::planned_bytes promises: the stored bytes of every tensor of that shape
  // (exact), or, for a family whose data decides its size (DGQ v1's segment count), the most
  // they can be (at_most). The conformance tests check whichever is declared.
  enum class StoredSize : std::uint8_t { exact, at_most };
  StoredSize stored_size = StoredSize::exact;
  // The family stores its input's bytes as they are (fp16): a caller that wants, say, an fp16
  // cache of fp32 activations converts them to fp16 first, as ggml's f16 cache does
  // (sim's SchemeCache). Replaces comparing family names.
  bool stores_input_bytes = false;
  // Other tools' names for this family, accepted wherever a spec is (llama.cpp's `-ctk f16`,
  // vLLM's `--kv-cache-dtype fp8`); a scheme made from one prints the family's own name.
  std::span<const std::string_view> aliases = {};
  // How the decode kernels read a stored head in place (dgq/stored_layout.hpp): the layout
  // picks the reader, so that no backend compares family names; unreadable families are
  // refused. stored_format: the codes' format where the family alone fixes it (a ggml_blocks
  // family's block type, KIVI's width); a layout whose format follows the spec (dgq2's widths
  // per role, TurboQuant's bits, a preset's K and V) leaves it empty and its reader derives it.
  StoredLayout stored_layout = StoredLayout::unreadable;
  std::optional<StoredFormat> stored_format = std::nullopt;
};

// Adds f (its params must outlive the program: a static array). Returns true, so that a family
// file registers with `const bool registered_<family> = register_scheme_family({...});` (named
// for the family: unity builds put several family files in one translation unit). Registering
// one (name, device) twice aborts with a message at start-up (cpu/'s registration of a name
// that so far had only its reference is not a second one: it replaces the derived cpu entry).
bool register_scheme_family(const SchemeFamily& f);

// A key that every family accepts and that is applied around the family's scheme, such as a
// rotation of the input (rot=hadamard) before any scheme. make_scheme reads it (after the
// family's own keys, before the unknown-key check); when its value is not default_value, the
// family's scheme is handed to wrap, whose Scheme must print the key in its spec()
// (spec_with_key) so that the canonical spec still round-trips. Registered from the modifier's
// own file, as a family is: `const bool registered_<key> = register_scheme_modifier({...});`.
struct SchemeModifier {
  std::string_view key;
  std::string_view default_value;  // leaves the scheme as the family made it
  std::string_view values;         // the accepted values in words, for help
  std::string_view help;
  void (*check)(std::string_view value) = nullptr;  // throws ParameterError for an unknown value
  // device: the one make_scheme was asked for, so that the wrapper computes with that
  // backend's kernels (the reference's for Device::reference, cpu/'s otherwise).
  std::unique_ptr<Scheme> (*wrap)(std::unique_ptr<Scheme> inner, const std::string& value, Device device) = nullptr;
  // Where the wrapper goes when several are given: lower orders wrap first (innermost), so a
  // spec means the same whichever file registered first (rot=hadamard 10, sink 20: the sinks
  // are kept unrotated). Equal orders keep registration order.
  int order = 0;
};
bool register_scheme_modifier(const SchemeModifier& m);     // aborts at start-up on a key given twice
const std::vector<SchemeModifier>& scheme_modifier_list();  // by order, innermost first
// spec with ",key=value" appended (":key=value" when spec has no parameters).
std::string spec_with_key(std::string_view spec, std::string_view key, std::string_view value);

// "integer", "number" or "word" (help, `dgq schemes`, the Python bindings).
std::string_view param_kind_name(SchemeParam::Kind kind);

// Every registered family, sorted by (order, name, device); every family has a Device::cpu
// entry (its fast implementation, or its reference's entry under Device::cpu).
const std::vector<SchemeFamily>& scheme_family_list();
// nullptr when (name, device) is not registered; name may be one of the family's aliases.
const SchemeFamily* find_scheme_family(std::string_view name, Device device);
// True when cpu/ registered its own implementation of the family for Device::cpu (a fast
// path), false when Device::cpu runs the family's reference. The conformance tests compare the
// two registrations of every family for which it is true.
bool has_fast_cpu_implementation(std::string_view name);
// The family name of a spec: the text before ':' without surrounding spaces; of a K/V pair
// (dgq/kv_pair.hpp), "K_FAMILY/V_FAMILY".
std::string scheme_family_of(std::string_view spec);

// Parses spec for `device`'s implementation of its family: malformed lists, unknown families
// and keys, and out-of-range values throw ParameterError naming the family, key and value.
// A K/V pair "K_SPEC/V_SPEC" (dgq/kv_pair.hpp) gives each side's scheme, paired unless the two
// are the same once canonical.
// make_scheme(spec) (dgq/scheme.hpp) is make_scheme(spec, Device::cpu); make_scheme(spec,
// Device::reference) runs the oracle.
std::unique_ptr<Scheme> make_scheme(std::string_view spec, Device device);

// make_scheme's parse without a Scheme, for callers that need a family's typed parameters
// (dgq_v1_params_from_spec): `use` runs where make_scheme runs the factory, between reading the
// declared keys and rejecting unknown ones, so the errors come in the same order.
void parse_scheme_args(std::string_view spec, std::span<const SchemeParam> params,
                       const std::function<void(const SchemeArgs&)>& use);

// One scheme's spec read as make_scheme reads it, without making the scheme: the family, its
// typed parameters and every registered modifier's value (its default where the spec has none;
// a family that declares a modifier's key itself, as dgq2 and dgq3 do rot, reads it in `args`
// and the modifier keeps its default). For readers of stored data that must know what a spec
// stores (decode attention reads the parts of a rotated scheme in the rotated basis).
struct ParsedSpec {
  const SchemeFamily* family = nullptr;
  SchemeArgs args;
  std::vector<std::pair<std::string, std::string>> modifiers;  // (key, value), scheme_modifier_list's order

  // The value of a registered modifier's key; std::logic_error for a key no modifier has.
  const std::string& modifier(std::string_view key) const;
  // The keys of the modifiers whose value is not their default ("rot", "sink"), in order.
  std::vector<std::string> applied_modifiers() const;
};
// make_scheme's errors for a malformed spec, an unknown family or key, an out-of-range value;
// a K/V pair or a layer plan (not one scheme) is a ParameterError too. The family's own
// validation (its factory) does not run.
ParsedSpec parse_spec(std::string_view spec, Device device = Device::cpu);

// Help text for the registered families of `device`: one block per family with its summary
// and parameters (key, kind and range, default, help).
std::string scheme_help(Device device = Device::cpu);
// The same as a Markdown table (docs/schemes.md's generated table).
std::string scheme_table_markdown();

}  // namespace dgq
