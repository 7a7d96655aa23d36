// dgq/errors.hpp: the helpers every boundary uses to report errors.
#include <catch2/catch.hpp>

#include <string>

#include "dgq/errors.hpp"

using namespace dgq;

TEST_CASE("one_line turns every ASCII control character into a space and keeps everything else", "[errors]") {
  CHECK(one_line("") == "");
  CHECK(one_line("plain text: 1, 2") == "plain text: 1, 2");
  std::string controls;
  for (int c = 0; c < 0x20; ++c) controls += static_cast<char>(c);
  controls += '\x7f';
  CHECK(one_line(controls) == std::string(33, ' '));
  CHECK(one_line("a\nb\rc\vd\fe\x1c"
                 "f") == "a b c d e f");
  const std::string utf8 = "caf\xc3\xa9 \xe2\x86\x92 ok";  // bytes >= 0x80 are text, not controls
  CHECK(one_line(utf8) == utf8);
}

TEST_CASE("rethrow_with_context puts the context first and keeps a ParameterError one", "[errors]") {
  const auto rethrown = [](const std::exception_ptr& e) {
    try {
      rethrow_with_context(e, "file.h5: /layers/3: ");
    } catch (const ParameterError& p) {
      return "ParameterError: " + std::string(p.what());
    } catch (const InputError& i) {
      return "InputError: " + std::string(i.what());
    }
    return std::string("nothing");
  };
  CHECK(rethrown(std::make_exception_ptr(ParameterError("bits=9 is out of range"))) ==
        "ParameterError: file.h5: /layers/3: bits=9 is out of range");
  CHECK(rethrown(std::make_exception_ptr(Error("short read"))) == "InputError: file.h5: /layers/3: short read");
  CHECK_THROWS_AS(rethrow_with_context(std::make_exception_ptr(std::bad_alloc()), "x: "), std::bad_alloc);
}
