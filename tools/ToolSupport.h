//===- ToolSupport.h - what every m2n tool's command line shares -*- C++ -*-===//
//
// Each tool puts its options in its own category and hides LLVM's (so
// --help lists only them), and --version prints m2n's version and the
// commit it was configured from.
//
//===----------------------------------------------------------------------===//

#ifndef M2N_TOOLS_TOOLSUPPORT_H
#define M2N_TOOLS_TOOLSUPPORT_H

#include "m2n/Version.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/raw_ostream.h"

namespace m2n::tools {

/// The category of the tool's own options.
inline llvm::cl::OptionCategory &category() {
  static llvm::cl::OptionCategory options("m2n options");
  return options;
}

/// "m2n 0.1 (commit 1a2b3c4)".
inline const char *versionString() {
  return "m2n " M2N_VERSION " (commit " M2N_COMMIT ")";
}

/// Parses the command line with only the tool's own options in --help.
inline void parseCommandLine(int argc, char **argv, const char *overview) {
  llvm::cl::HideUnrelatedOptions(category());
  llvm::cl::SetVersionPrinter(
      [](llvm::raw_ostream &os) { os << versionString() << '\n'; });
  llvm::cl::ParseCommandLineOptions(argc, argv, overview);
}

/// Whether the user asked for the failing op's text with diagnostics
/// (--mlir-print-op-on-diagnostic): m2n's messages name the problem, so
/// the tools leave the (often huge) op out unless asked.
inline bool printOpOnDiagnosticRequested() {
  auto &options = llvm::cl::getRegisteredOptions();
  auto it = options.find("mlir-print-op-on-diagnostic");
  return it != options.end() && it->second->getNumOccurrences() > 0;
}

} // namespace m2n::tools

#endif // M2N_TOOLS_TOOLSUPPORT_H
