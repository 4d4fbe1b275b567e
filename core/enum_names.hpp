#pragma once
// One table of names per enum: the name an enum value is stored and shown as, and the value a
// name stands for. Used for every enum rv writes into records and reads from its config.

#include <array>
#include <cstddef>
#include <optional>
#include <string_view>
#include <utility>

namespace rv {

template <class E, std::size_t N>
class EnumNames {
public:
  constexpr explicit EnumNames(std::array<std::pair<E, std::string_view>, N> names) : m_names(names) {}

  // The name of `value` ("" for a value the table lacks).
  constexpr std::string_view name(E value) const
  {
    for (const auto& [v, n] : m_names) {
      if (v == value) {
        return n;
      }
    }
    return {};
  }

  // The value named `name`, or nullopt.
  constexpr std::optional<E> parse(std::string_view name) const
  {
    for (const auto& [v, n] : m_names) {
      if (n == name) {
        return v;
      }
    }
    return std::nullopt;
  }

private:
  std::array<std::pair<E, std::string_view>, N> m_names;
};

} // namespace rv
