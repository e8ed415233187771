//===- InlineList.h - a short list stored inline -----------------*- C++ -*-===//
//
// A list of a few trivially copyable values kept inside its owner up to N
// entries and on the heap past that. A lowered refit holds ~50k movements,
// each with a wait or two and a repeat level or two, converted between the
// IR and the artifact's C++ form several times per compile: as std::vectors
// they were ~150k heap allocations per conversion (half of its time). Plain
// C++, as the runtime builds without LLVM's SmallVector.
//
//===----------------------------------------------------------------------===//

#ifndef M2N_BASE_INLINELIST_H
#define M2N_BASE_INLINELIST_H

#include <algorithm>
#include <cstddef>
#include <initializer_list>
#include <type_traits>
#include <utility>
#include <vector>

namespace m2n {

template <typename T, size_t N> class InlineList {
  static_assert(std::is_trivially_copyable_v<T> &&
                    std::is_default_constructible_v<T>,
                "InlineList keeps plain values");

public:
  using value_type = T;
  using iterator = T *;
  using const_iterator = const T *;

  InlineList() = default;
  InlineList(std::initializer_list<T> values)
      : InlineList(values.begin(), values.end()) {}
  InlineList(const std::vector<T> &values)
      : InlineList(values.begin(), values.end()) {}
  // Iterators only: (count, value) goes to the constructors that take them.
  template <typename It,
            typename = std::enable_if_t<!std::is_integral_v<It>>>
  InlineList(It first, It last) {
    assign(first, last);
  }

  template <typename It,
            typename = std::enable_if_t<!std::is_integral_v<It>>>
  void assign(It first, It last) {
    clear();
    for (; first != last; ++first)
      push_back(*first);
  }

  void assign(size_t n, const T &value) {
    clear();
    for (size_t i = 0; i < n; ++i)
      push_back(value);
  }

  size_t size() const { return count; }
  bool empty() const { return count == 0; }
  T *data() { return count <= N ? inlineValues : heap.data(); }
  const T *data() const { return count <= N ? inlineValues : heap.data(); }
  T *begin() { return data(); }
  T *end() { return data() + count; }
  const T *begin() const { return data(); }
  const T *end() const { return data() + count; }
  T &operator[](size_t i) { return data()[i]; }
  const T &operator[](size_t i) const { return data()[i]; }
  T &front() { return data()[0]; }
  const T &front() const { return data()[0]; }
  T &back() { return data()[count - 1]; }
  const T &back() const { return data()[count - 1]; }

  void push_back(const T &value) {
    if (count == N)
      heap.assign(inlineValues, inlineValues + N);
    if (count >= N)
      heap.push_back(value);
    else
      inlineValues[count] = value;
    ++count;
  }
  template <typename... Args> T &emplace_back(Args &&...args) {
    push_back(T{std::forward<Args>(args)...});
    return back();
  }
  void pop_back() {
    --count;
    if (count >= N)
      heap.pop_back();
    if (count == N) {
      std::copy(heap.begin(), heap.end(), inlineValues);
      heap.clear();
    }
  }
  void resize(size_t newCount, const T &value = T()) {
    while (count > newCount)
      pop_back();
    while (count < newCount)
      push_back(value);
  }
  void clear() {
    count = 0;
    heap.clear();
  }
  std::vector<T> vec() const { return {begin(), end()}; }

  bool operator==(const InlineList &other) const {
    return count == other.count && std::equal(begin(), end(), other.begin());
  }
  bool operator!=(const InlineList &other) const { return !(*this == other); }

private:
  size_t count = 0;
  T inlineValues[N] = {};
  std::vector<T> heap; // All entries, once there are more than N.
};

} // namespace m2n

#endif // M2N_BASE_INLINELIST_H
