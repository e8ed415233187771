//===- AsmUtils.h - shared pieces of the m2n parsers and printers -*- C++ -*-===//

#ifndef M2N_LIB_DIALECT_M2N_IR_ASMUTILS_H
#define M2N_LIB_DIALECT_M2N_IR_ASMUTILS_H

#include "mlir/IR/OpImplementation.h"

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

} // namespace mlir::m2n

#endif // M2N_LIB_DIALECT_M2N_IR_ASMUTILS_H
