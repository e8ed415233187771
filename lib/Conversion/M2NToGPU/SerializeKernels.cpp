//===- SerializeKernels.cpp - kernel modules to binaries, kept by text -----===//
//
// gpu-module-to-binary runs LLVM's NVPTX backend (about 70 ms on the
// transfer kernel) on every compile, though the kernel module of one
// configuration is the same text for every reshard: the binary is kept
// under a hash of that text, in the process and, with cache-dir, on disk.
//
//===----------------------------------------------------------------------===//

#include "m2n/Conversion/M2NToGPU/M2NToGPU.h"
#include "m2n/Version.h"

#include "mlir/AsmParser/AsmParser.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/IR/OperationSupport.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Config/llvm-config.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Support/xxhash.h"

#include <mutex>

namespace mlir::m2n {
#define GEN_PASS_DEF_SERIALIZEKERNELS
#include "m2n/Conversion/Passes.h.inc"
} // namespace mlir::m2n

using namespace mlir;

namespace {

/// The binaries built in this process, as the text of their objects
/// attribute (contexts come and go; the text does not).
struct ProcessCache {
  std::mutex mutex;
  llvm::StringMap<std::string> objects;
};

ProcessCache &processCache() {
  static ProcessCache cache;
  return cache;
}

/// The key of `module` built as `format`: 32 hex digits.
std::string keyOf(gpu::GPUModuleOp module, llvm::StringRef format) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << "m2n " M2N_VERSION ", LLVM " LLVM_VERSION_STRING ", format " << format
     << "\n";
  module->print(os, OpPrintingFlags().useLocalScope());
  llvm::XXH128_hash_t hash = llvm::xxh3_128bits(llvm::arrayRefFromStringRef(text));
  return llvm::formatv("{0:x-16}{1:x-16}", hash.high64, hash.low64).str();
}

std::string cachePath(llvm::StringRef dir, llvm::StringRef key) {
  llvm::SmallString<256> path(dir);
  llvm::sys::path::append(path, key + ".objects");
  return std::string(path);
}

/// Writes `text` to `path` whole or not at all (a temporary file, then a
/// rename), so that a process reading the cache never sees half a binary.
void writeAtomically(llvm::StringRef path, llvm::StringRef text) {
  llvm::SmallString<256> temporary;
  int fd;
  if (llvm::sys::fs::createUniqueFile(path + ".%%%%%%.tmp", fd, temporary))
    return;
  {
    llvm::raw_fd_ostream os(fd, /*shouldClose=*/true);
    os << text;
    if (os.has_error()) {
      os.clear_error();
      llvm::sys::fs::remove(temporary);
      return;
    }
  }
  if (llvm::sys::fs::rename(temporary, path))
    llvm::sys::fs::remove(temporary);
}

/// `objects` without the build's timings (LLVMIRToISATimeInMs and the
/// like): the output is the same bytes whether the binary was built or
/// kept.
ArrayAttr withoutTimings(ArrayAttr objects) {
  llvm::SmallVector<Attribute> result;
  for (Attribute attr : objects) {
    auto object = llvm::dyn_cast<gpu::ObjectAttr>(attr);
    if (!object || !object.getProperties()) {
      result.push_back(attr);
      continue;
    }
    llvm::SmallVector<NamedAttribute> properties;
    for (NamedAttribute property : object.getProperties())
      if (!property.getName().strref().ends_with("TimeInMs"))
        properties.push_back(property);
    result.push_back(gpu::ObjectAttr::get(
        object.getContext(), object.getTarget(), object.getFormat(),
        object.getObject(),
        properties.empty()
            ? DictionaryAttr()
            : DictionaryAttr::get(object.getContext(), properties),
        object.getKernels()));
  }
  return ArrayAttr::get(objects.getContext(), result);
}

struct SerializeKernelsPass
    : public mlir::m2n::impl::SerializeKernelsBase<SerializeKernelsPass> {
  using SerializeKernelsBase::SerializeKernelsBase;

  /// The objects kept under `key`, parsed, or null.
  ArrayAttr lookup(llvm::StringRef key) {
    std::string text;
    {
      ProcessCache &cache = processCache();
      std::lock_guard<std::mutex> lock(cache.mutex);
      auto it = cache.objects.find(key);
      if (it != cache.objects.end())
        text = it->second;
    }
    // Built earlier in this process: the directory keeps it too.
    if (!text.empty() && !cacheDir.empty() &&
        !llvm::sys::fs::exists(cachePath(cacheDir, key)) &&
        !llvm::sys::fs::create_directories(cacheDir))
      writeAtomically(cachePath(cacheDir, key), text);
    if (text.empty() && !cacheDir.empty()) {
      auto file = llvm::MemoryBuffer::getFile(cachePath(cacheDir, key));
      if (!file)
        return nullptr;
      text = (*file)->getBuffer().str();
    }
    if (text.empty())
      return nullptr;
    // A file from elsewhere that does not parse is rebuilt, quietly.
    ScopedDiagnosticHandler quiet(&getContext(),
                                  [](Diagnostic &) { return success(); });
    return llvm::dyn_cast_or_null<ArrayAttr>(
        parseAttribute(text, &getContext()));
  }

  void keep(llvm::StringRef key, ArrayAttr objects) {
    std::string text;
    llvm::raw_string_ostream os(text);
    objects.print(os);
    if (!cacheDir.empty() &&
        !llvm::sys::fs::create_directories(cacheDir))
      writeAtomically(cachePath(cacheDir, key), text);
    ProcessCache &cache = processCache();
    std::lock_guard<std::mutex> lock(cache.mutex);
    cache.objects[key] = std::move(text);
  }

  void runOnOperation() override {
    ModuleOp module = getOperation();
    // Modules without targets are gpu-module-to-binary's to refuse.
    llvm::SmallVector<std::pair<gpu::GPUModuleOp, std::string>> modules;
    for (auto kernels : module.getOps<gpu::GPUModuleOp>())
      if (kernels.getTargetsAttr() && !kernels.getTargetsAttr().empty())
        modules.push_back({kernels, keyOf(kernels, format)});
    OpBuilder builder(&getContext());
    llvm::SmallVector<std::pair<std::string, std::string>> toBuild;
    for (auto &[kernels, key] : modules) {
      ArrayAttr objects = lookup(key);
      if (!objects) {
        toBuild.push_back({kernels.getName().str(), key});
        continue;
      }
      builder.setInsertionPoint(kernels);
      gpu::BinaryOp::create(builder, kernels.getLoc(), kernels.getName(),
                            kernels.getOffloadingHandlerAttr(), objects);
      kernels.erase();
      ++reused;
    }
    if (toBuild.empty())
      return;
    OpPassManager build(ModuleOp::getOperationName());
    GpuModuleToBinaryPassOptions options;
    options.compilationTarget = format;
    build.addPass(createGpuModuleToBinaryPass(options));
    if (failed(runPipeline(build, module)))
      return signalPassFailure();
    for (const auto &[name, key] : toBuild)
      if (auto binary = module.lookupSymbol<gpu::BinaryOp>(name)) {
        binary.setObjectsAttr(withoutTimings(binary.getObjectsAttr()));
        keep(key, binary.getObjectsAttr());
        ++built;
      }
  }
};

} // namespace
