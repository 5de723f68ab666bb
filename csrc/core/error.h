// Error types and checking macros. Every user-facing error is one of these classes; the bindings
// translate each to the Python exception a PyTorch user expects (see bindings/errors.cpp).
// Messages start with the op in brackets: "[view] ...".
#pragma once
#include <sstream>
#include <stdexcept>
#include <string>

namespace ember {

class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};
class IndexError : public Error {  // -> IndexError
 public:
  using Error::Error;
};
class ValueError : public Error {  // -> ValueError
 public:
  using Error::Error;
};
class TypeError : public Error {  // -> TypeError
 public:
  using Error::Error;
};
class NotImplementedError : public Error {  // -> NotImplementedError
 public:
  using Error::Error;
};
class OutOfMemoryError : public Error {  // -> MemoryError
 public:
  using Error::Error;
};
// A singular, non-positive-definite or otherwise failed factorization -> ember.linalg.LinAlgError
// (a RuntimeError subclass, as torch.linalg.LinAlgError).
class LinAlgError : public Error {
 public:
  using Error::Error;
};
// Plain Error -> RuntimeError.

namespace detail {
inline void append(std::ostringstream&) {}
template <typename T, typename... Rest>
void append(std::ostringstream& os, const T& v, const Rest&... rest) {
  os << v;
  append(os, rest...);
}
}  // namespace detail

template <typename... Args>
std::string str_cat(const Args&... args) {
  std::ostringstream os;
  detail::append(os, args...);
  return os.str();
}

}  // namespace ember

// EMBER_CHECK(cond, "[op] message ", value, ...) throws ember::Error (RuntimeError) when cond
// fails.
#define EMBER_CHECK(cond, ...)                                                             \
  do {                                                                                     \
    if (__builtin_expect(!(cond), 0)) throw ::ember::Error(::ember::str_cat(__VA_ARGS__)); \
  } while (0)

// Same with an explicit error class: EMBER_CHECK_T(IndexError, cond, ...).
#define EMBER_CHECK_T(ErrorClass, cond, ...)                                                    \
  do {                                                                                          \
    if (__builtin_expect(!(cond), 0)) throw ::ember::ErrorClass(::ember::str_cat(__VA_ARGS__)); \
  } while (0)

#define EMBER_THROW(ErrorClass, ...) throw ::ember::ErrorClass(::ember::str_cat(__VA_ARGS__))
