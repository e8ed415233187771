//===- ToolSupport.h - what every m2n tool's command line shares -*- C++ -*-===//
//
// Each tool puts its options in its own category and hides LLVM's (so
// --help lists only them; m2n-opt, built on MlirOptMain, hides all but the
// options its users need), and --version prints m2n's version and the
// commit it was configured from.
//
//===----------------------------------------------------------------------===//

#ifndef M2N_TOOLS_TOOLSUPPORT_H
#define M2N_TOOLS_TOOLSUPPORT_H

#include "m2n/Version.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/raw_ostream.h"

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace m2n::tools {

/// Keeps the memory a tool's process frees for its next allocation instead
/// of handing it back to the kernel. glibc returns the top of a heap past
/// 128 KiB free and serves blocks past its mmap threshold with their own
/// mapping: a compile that builds and drops a whole refit's schedules
/// (hundreds of MB over its run, 200 MB at peak) faulted each page in
/// again and again, ~35k page faults and 10% of an m2n-opt run on
/// DeepSeek-V3. A tool exits after one job, so it keeps what it took;
/// libraries (the compiler API in a user's process) leave the allocator
/// alone.
inline void keepFreedMemory() {
#if defined(__GLIBC__)
  mallopt(M_MMAP_THRESHOLD, 1 << 30);
  mallopt(M_TRIM_THRESHOLD, 1 << 30);
  mallopt(M_TOP_PAD, 64 << 20);
#endif
}

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

/// Hides every registered option from --help (--help-hidden still lists
/// them) except `visible` and the pass list, the option that `passListOf`,
/// a registered pass's name, belongs to. For tools built on MlirOptMain,
/// whose options are all in LLVM's general category.
inline void hideMlirOptionsExcept(std::initializer_list<llvm::StringRef> visible,
                                  llvm::StringRef passListOf) {
  auto &options = llvm::cl::getRegisteredOptions();
  llvm::cl::Option *passList = options.lookup(passListOf);
  for (auto &entry : options) {
    auto [name, option] = entry;
    bool keep = option == passList ||
                llvm::is_contained(visible, name) ||
                name == "help" || name == "version";
    if (!keep && option->getOptionHiddenFlag() == llvm::cl::NotHidden)
      option->setHiddenFlag(llvm::cl::Hidden);
  }
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
