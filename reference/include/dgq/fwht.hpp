#pragma once
// The unnormalised fast Walsh-Hadamard transform in the butterfly order of docs/spec.md
// ("Hadamard rotation"): stages h = 1, 2, ..., n/2, each pair (x[j], x[j+h]) with (j & h) == 0
// becoming (x[j] + x[j+h], x[j] - x[j+h]) (rules::hadamard_butterfly). Every output element
// is one fp32 add or subtract of the same two inputs, so cpu/'s AVX2 transform and this one
// give the same bits (tests/cpu/test_ggml_blocks_fast.cpp checks it).
namespace dgq {

// n a power of two >= 1.
void fwht_in_place(float* x, int n);

// fwht_in_place, then every element multiplied by scale (one fp32 multiply each): the
// rotation's H_n with its 1/sqrt(n) (rules::hadamard_scale).
void fwht_scaled_in_place(float* x, int n, float scale);

// The rule written out literally, one butterfly at a time (the tests' reference).
void fwht_in_place_scalar(float* x, int n);

}  // namespace dgq
