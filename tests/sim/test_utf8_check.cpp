// The UTF-8 check of text files before tokenizing (sim/model/src/tokenizer/utf8_check.cpp): valid text
// of every sequence length passes, each malformed form is found at its first byte.
#include <catch2/catch.hpp>

#include <string>

#include "tokenizer/tokenizer.hpp"

using dgq::sim::tokenizer::first_invalid_utf8;

TEST_CASE("utf8: empty, ASCII and sequences of 2, 3 and 4 bytes are valid", "[tokenizer]") {
  CHECK_FALSE(first_invalid_utf8("").has_value());
  CHECK_FALSE(first_invalid_utf8("plain ascii\n\t").has_value());
  CHECK_FALSE(first_invalid_utf8("caf\xC3\xA9 \xE5\xBA\x8A \xF0\x9F\x99\x82 \xF4\x8F\xBF\xBF")
                  .has_value());  // é 床 🙂 U+10FFFF
}

TEST_CASE("utf8: each malformed form is found at its first byte", "[tokenizer]") {
  CHECK(first_invalid_utf8("caf\xE9 au lait") == 3u);    // latin-1 é: a lead byte without continuation
  CHECK(first_invalid_utf8("ab\x80") == 2u);             // a stray continuation byte
  CHECK(first_invalid_utf8("\xC0\x80") == 0u);           // overlong NUL (lead byte never valid)
  CHECK(first_invalid_utf8("x\xE0\x80\x80") == 1u);      // overlong 3-byte form
  CHECK(first_invalid_utf8("x\xF0\x80\x80\x80") == 1u);  // overlong 4-byte form
  CHECK(first_invalid_utf8("\xED\xA0\x80") == 0u);       // a UTF-16 surrogate
  CHECK(first_invalid_utf8("\xF4\x90\x80\x80") == 0u);   // beyond U+10FFFF
  CHECK(first_invalid_utf8("\xF5\x80\x80\x80") == 0u);   // a lead byte beyond F4
  CHECK(first_invalid_utf8("ok\xE5\xBA") == 2u);         // cut at the end of the text
}
