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
#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <malloc.h>
#include <sys/mman.h>
#include <thread>
#include <vector>
#endif

// Under a sanitizer, malloc is the sanitizer's: glibc's knobs and heap
// layout do not apply (and a 512 MiB block would be poisoned byte by byte).
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define M2N_TOOL_OWN_ALLOCATOR 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) ||     \
    __has_feature(memory_sanitizer)
#define M2N_TOOL_OWN_ALLOCATOR 1
#endif
#endif

namespace m2n::tools {

/// Keeps the memory a tool's process frees for its next allocation instead
/// of handing it back to the kernel, and backs the heap with transparent
/// huge pages. glibc returns the top of a heap past 128 KiB free and serves
/// blocks past its mmap threshold with their own mapping: a compile that
/// builds and drops a whole refit's schedules (200 MB at peak) faulted each
/// page in again and again. Even kept, each 4 KiB page faults once: ~24k
/// faults, a quarter of an m2n-opt run on DeepSeek-V3 on the CI machine
/// (a VM, where a fault is dear). Where the kernel gives huge pages only on
/// request (transparent_hugepage=madvise, Debian's default), the tool asks
/// for them: for the main heap (a 512 MiB stretch reserved and freed at
/// start, kept by the trim threshold; untouched pages cost nothing) and for
/// the heaps glibc gives other threads (64 MiB aligned, reused by later
/// threads once a thread exits): ~4k faults instead. A tool exits after one
/// job, so it keeps what it took; libraries (the compiler API in a user's
/// process) leave the allocator alone.
inline void keepFreedMemory() {
#if defined(__GLIBC__) && !defined(M2N_TOOL_OWN_ALLOCATOR)
  mallopt(M_MMAP_THRESHOLD, 1 << 30);
  mallopt(M_TRIM_THRESHOLD, 1 << 30);
  mallopt(M_TOP_PAD, 64 << 20);
  constexpr uintptr_t kHugePage = uintptr_t(2) << 20;
  auto adviseHugePages = [](uintptr_t begin, uintptr_t end) {
    begin = (begin + kHugePage - 1) & ~(kHugePage - 1);
    end &= ~(kHugePage - 1);
    // Only a hint: an error (no THP in this kernel) changes nothing.
    if (end > begin)
      madvise(reinterpret_cast<void *>(begin), end - begin, MADV_HUGEPAGE);
  };
  constexpr size_t kMainHeap = size_t(512) << 20; // Below the trim threshold.
  if (void *block = std::malloc(kMainHeap)) {
    uintptr_t begin = reinterpret_cast<uintptr_t>(block);
    adviseHugePages(begin, begin + kMainHeap);
    std::free(block);
  }
  // glibc's per-thread heaps are HEAP_MAX_SIZE (64 MiB) aligned regions;
  // as many as MLIR's thread pool has threads, each made by a thread that
  // waits for the others (an exited thread's heap goes to the next one).
  constexpr uintptr_t kThreadHeap = uintptr_t(64) << 20;
  const unsigned count = std::thread::hardware_concurrency();
  std::atomic<unsigned> allocated{0};
  std::vector<std::thread> threads;
  for (unsigned t = 0; t < count; ++t)
    threads.emplace_back([&] {
      void *probe = std::malloc(64);
      uintptr_t heap = reinterpret_cast<uintptr_t>(probe) & ~(kThreadHeap - 1);
      adviseHugePages(heap, heap + kThreadHeap);
      ++allocated;
      while (allocated.load() < count)
        std::this_thread::yield();
      std::free(probe);
    });
  for (std::thread &thread : threads)
    thread.join();
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
