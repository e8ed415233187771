//===- TopologySource.cpp - where a pass finds the topology -----------------===//

#include "m2n/Dialect/M2N/Transforms/TopologySource.h"

#include "m2n/Dialect/M2N/IR/LayoutInterop.h"

#include "llvm/Support/MemoryBuffer.h"

namespace mlir::m2n {

FailureOr<::m2n::Topology> resolveTopology(Operation *op, StringRef file,
                                           int64_t commSize) {
  ::m2n::Topology topology = ::m2n::Topology::singleDomain(commSize);
  std::string origin = "the default topology";
  if (!file.empty()) {
    auto buffer = llvm::MemoryBuffer::getFile(file);
    if (!buffer)
      return op->emitError() << "cannot read topology file '" << file
                             << "': " << buffer.getError().message();
    if (std::optional<std::string> error = ::m2n::Topology::parseJson(
            (*buffer)->getBuffer().str(), topology))
      return op->emitError() << "topology file '" << file << "': " << *error;
    origin = "topology file '" + file.str() + "'";
  } else {
    for (Operation *scope = op; scope; scope = scope->getParentOp()) {
      if (auto attr = scope->getAttrOfType<TopologyAttr>(
              M2NDialect::getTopologyAttrName())) {
        topology = toTopology(attr);
        origin = "the m2n.topology attribute";
        break;
      }
    }
  }
  if (std::optional<std::string> error = topology.validate(commSize))
    return op->emitError() << origin << " does not fit the communicator: "
                           << *error;
  return topology;
}

} // namespace mlir::m2n
