// make_scheme's parsing of specs, and decompress of another scheme's data. The contract every
// registered family shares (planned bytes, empty tensors, NaN/Inf, corrupt parts, inputs left
// unchanged) is in test_scheme_conformance.cpp, which enumerates the registry.
#include "test_scheme_support.hpp"

#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include "dgq/errors.hpp"
#include "dgq/registry.hpp"

using namespace dgq;
using namespace dgq::test;
using Catch::Matchers::Contains;
using Catch::Matchers::EndsWith;
using Catch::Matchers::StartsWith;

TEST_CASE("an unknown family gets the registry's closest name, case and separator aside",
          "[scheme][registry][errors]") {
  CHECK_THROWS_WITH(make_scheme("int3"), !Contains("did you mean"));
  CHECK_THROWS_WITH(make_scheme("fp8-e5m2"),
                    Contains("unknown scheme family 'fp8-e5m2': did you mean 'fp8") && Contains("(known: dgq, "));
  CHECK_THROWS_WITH(make_scheme("FP8_E4M3"), Contains("did you mean 'fp8"));  // the family or its vLLM alias
  CHECK_THROWS_WITH(make_scheme("Q8_0"), Contains("did you mean 'q8_0'?"));
  CHECK_THROWS_WITH(make_scheme("Q8_0:rot=hadamard", Device::reference), Contains("did you mean 'q8_0'?"));
}

TEST_CASE("an unknown parameter gets the family's closest key and the list of them", "[scheme][registry][errors]") {
  CHECK_THROWS_WITH(
      make_scheme("dgq:group=0.5"),
      StartsWith("dgq: unknown parameter 'group': did you mean 'group_ratio'? (dgq takes win, group_ratio, "));
  CHECK_THROWS_WITH(make_scheme("kivi-4:Residual=8"), Contains("did you mean 'residual'?"));
  // The modifiers' keys are valid in every family, so they are suggested and listed too.
  CHECK_THROWS_WITH(make_scheme("q8_0:rotation=hadamard"), Contains("did you mean 'rot'?"));
  CHECK_THROWS_WITH(make_scheme("fp16:bits=4"), Contains("(fp16 takes ") && EndsWith("rot, sink)"));
}

TEST_CASE("make_scheme rejects unknown families and keys by name", "[scheme][registry][errors]") {
  CHECK_THROWS_WITH(make_scheme("int3"), Contains("unknown scheme family 'int3'"));
  CHECK_THROWS_AS(make_scheme(""), ParameterError);
  CHECK_THROWS_WITH(make_scheme("fp16:bits=4"), Contains("unknown parameter 'bits'"));
  CHECK_THROWS_WITH(make_scheme("kivi-2:groups=32"), Contains("unknown parameter 'groups'"));
  CHECK_THROWS_WITH(make_scheme("kivi-4:group=0"), Contains("'group'"));
  CHECK_THROWS_WITH(make_scheme("kivi-4:group=abc"), Contains("is not an integer"));
  CHECK_THROWS_WITH(make_scheme("kivi-4:residual=-1"), Contains("'residual'"));
  CHECK_THROWS_WITH(make_scheme("kivi-4:group=32,group=16"), Contains("given twice"));
  CHECK_THROWS_WITH(make_scheme("kivi-4:group"), Contains("not key=value"));
  CHECK_THROWS_WITH(make_scheme("kivi-4:=3"), Contains("has no key"));
  CHECK_THROWS_AS(make_scheme("kivi-4:group=32,"), ParameterError);
}

TEST_CASE("kivi spec records its parameters and keeps non-default ones", "[scheme][registry]") {
  CHECK(make_scheme("kivi-2")->spec() == "kivi-2:group=32,residual=32");
  const auto s = make_scheme("kivi-4: residual=128 , group=16");
  CHECK(s->spec() == "kivi-4:group=16,residual=128");
  CHECK(make_scheme(s->spec())->spec() == s->spec());
}

TEST_CASE("parse_spec reads a spec's family, typed parameters and modifiers as make_scheme does",
          "[scheme][registry]") {
  // Every canonical spec a scheme prints parses back to its family, with its modifiers.
  const ParsedSpec kivi = parse_spec(make_scheme("kivi-4:group=16,residual=0,rot=hadamard,sink=4")->spec());
  CHECK(kivi.family->name == "kivi-4");
  CHECK(kivi.args.integer("group") == 16);
  CHECK(kivi.args.integer("residual") == 0);
  CHECK(kivi.modifier("rot") == "hadamard");
  CHECK(kivi.modifier("sink") == "4");
  CHECK(kivi.applied_modifiers() == std::vector<std::string>{"rot", "sink"});
  // Defaults fill what the spec leaves out; an unmodified spec applies none.
  const ParsedSpec plain = parse_spec("kivi-2");
  CHECK(plain.args.integer("group") == 32);
  CHECK(plain.modifier("rot") == "none");
  CHECK(plain.applied_modifiers().empty());
  // A family that declares a modifier's key reads it itself; the modifier keeps its default.
  const ParsedSpec dgq2 = parse_spec("dgq2:bits=4,rot=hadamard");
  CHECK(dgq2.args.word("rot") == "hadamard");
  CHECK(dgq2.applied_modifiers().empty());
  // make_scheme's errors, and a pair or a layer plan is not one scheme.
  CHECK_THROWS_WITH(parse_spec("kivi-4:groups=32"), Contains("unknown parameter 'groups'"));
  CHECK_THROWS_WITH(parse_spec("int3"), Contains("unknown scheme family 'int3'"));
  CHECK_THROWS_WITH(parse_spec("kivi-4:rot=givens"), Contains("givens"));
  CHECK_THROWS_WITH(parse_spec("q8_0/q4_0"), Contains("not one scheme"));
  CHECK_THROWS_WITH(parse_spec("q8_0;q4_0"), Contains("not one scheme"));
  CHECK_THROWS_AS(plain.modifier("rotation"), std::logic_error);
}

TEST_CASE("decompress rejects another scheme's data and a mismatched output", "[scheme][registry][errors]") {
  const OwnedTensor x = random_tensor(8, 32, 3);
  const Compressed c = make_scheme("int8-token")->compress(x.view(), TensorRole::key);
  OwnedTensor out(DType::f16, 8, 32);
  CHECK_THROWS_WITH(make_scheme("q8_0")->decompress(c, out.mut()), Contains("made by scheme 'int8-token'"));
  OwnedTensor wrong_shape(DType::f16, 8, 31);
  CHECK_THROWS_AS(make_scheme("int8-token")->decompress(c, wrong_shape.mut()), InputError);
  OwnedTensor wrong_dtype(DType::f32, 8, 32);
  CHECK_THROWS_AS(make_scheme("int8-token")->decompress(c, wrong_dtype.mut()), InputError);
}
