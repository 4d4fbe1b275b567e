#pragma once
// Overflow-checked arithmetic for numbers read from users and from cluster output, which may be
// anything: a sum or product that does not fit gives nothing instead of undefined behaviour.

#include <optional>

namespace rv {

// a + b, or nothing when the sum does not fit T.
template <class T>
std::optional<T> checked_add(T a, T b)
{
  T sum{};
  if (__builtin_add_overflow(a, b, &sum)) {
    return std::nullopt;
  }
  return sum;
}

// a * b, or nothing when the product does not fit T.
template <class T>
std::optional<T> checked_mul(T a, T b)
{
  T product{};
  if (__builtin_mul_overflow(a, b, &product)) {
    return std::nullopt;
  }
  return product;
}

} // namespace rv
