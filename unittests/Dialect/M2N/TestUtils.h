//===- TestUtils.h - helpers for m2n dialect unit tests ---------*- C++ -*-===//

#ifndef M2N_UNITTESTS_DIALECT_M2N_TESTUTILS_H
#define M2N_UNITTESTS_DIALECT_M2N_TESTUTILS_H

#include "m2n/Dialect/M2N/IR/M2NDialect.h"

#include "mlir/AsmParser/AsmParser.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"

#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

namespace m2n_test {

/// A context with the m2n dialect loaded that records every diagnostic.
class M2NTest : public ::testing::Test {
protected:
  M2NTest() : handler(&ctx, [this](mlir::Diagnostic &diag) {
                diagnostics.push_back(diag.str());
              }) {
    ctx.getOrLoadDialect<mlir::m2n::M2NDialect>();
  }

  mlir::Attribute parseAttr(const std::string &text) {
    return mlir::parseAttribute(text, &ctx);
  }
  mlir::Type parseType(const std::string &text) {
    return mlir::parseType(text, &ctx);
  }
  mlir::InFlightDiagnostic emitError() {
    return mlir::emitError(mlir::UnknownLoc::get(&ctx));
  }
  /// An error emitter for the generated `getChecked` builders.
  llvm::function_ref<mlir::InFlightDiagnostic()> emitter() {
    return errorEmitter;
  }
  /// The last diagnostic, or "" when there was none.
  std::string lastDiagnostic() const {
    return diagnostics.empty() ? std::string() : diagnostics.back();
  }

  mlir::MLIRContext ctx;
  std::function<mlir::InFlightDiagnostic()> errorEmitter = [this] {
    return emitError();
  };
  std::vector<std::string> diagnostics;
  mlir::ScopedDiagnosticHandler handler;
};

} // namespace m2n_test

#endif // M2N_UNITTESTS_DIALECT_M2N_TESTUTILS_H
