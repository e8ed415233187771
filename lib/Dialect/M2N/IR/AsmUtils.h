//===- AsmUtils.h - shared pieces of the m2n parsers and printers -*- C++ -*-===//

#ifndef M2N_LIB_DIALECT_M2N_IR_ASMUTILS_H
#define M2N_LIB_DIALECT_M2N_IR_ASMUTILS_H

#include "mlir/IR/OpImplementation.h"
#include "llvm/ADT/SmallString.h"
#include <charconv>
#include <type_traits>

namespace mlir::m2n {

/// Parses `[a, b, ...]`; the list may be empty.
inline ParseResult parseInt64List(AsmParser &parser,
                                  SmallVectorImpl<int64_t> &values) {
  return parser.parseCommaSeparatedList(AsmParser::Delimiter::Square, [&] {
    return parser.parseInteger(values.emplace_back());
  });
}

/// Prints `[a, b, ...]`.
inline void printInt64List(AsmPrinter &printer, ArrayRef<int64_t> values) {
  printer << '[';
  llvm::interleaveComma(values, printer);
  printer << ']';
}

/// One op's text, built in a buffer and written to the stream at once: an
/// op printed in bulk (a refit prints ~50k moves, each twice: once for
/// aliases, once for the text) spends most of its time in raw_ostream's
/// per-insertion path and integer formatting.
class TextLine {
public:
  TextLine &operator<<(llvm::StringRef text) {
    buffer.append(text);
    return *this;
  }
  TextLine &operator<<(const char *text) { return *this << llvm::StringRef(text); }
  TextLine &operator<<(char c) {
    buffer.push_back(c);
    return *this;
  }
  template <typename Integer,
            typename = std::enable_if_t<std::is_integral_v<Integer> &&
                                        !std::is_same_v<Integer, char>>>
  TextLine &operator<<(Integer value) {
    char digits[24];
    auto [end, error] = std::to_chars(digits, digits + sizeof(digits), value);
    (void)error; // 24 characters hold every 64-bit integer
    buffer.append(digits, end);
    return *this;
  }
  /// Writes `first, second, ...`.
  TextLine &commaSeparated(llvm::ArrayRef<int64_t> values) {
    llvm::interleave(values, [&](int64_t value) { *this << value; },
                     [&] { buffer.append(", "); });
    return *this;
  }
  void writeTo(llvm::raw_ostream &os) const { os << buffer.str(); }

private:
  llvm::SmallString<192> buffer;
};

} // namespace mlir::m2n

#endif // M2N_LIB_DIALECT_M2N_IR_ASMUTILS_H
