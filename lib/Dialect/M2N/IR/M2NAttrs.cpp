//===- M2NAttrs.cpp - meshes, placements, layouts, topologies ---------------===//

#include "m2n/Dialect/M2N/IR/M2NDialect.h"
#include "AsmUtils.h"
#include "m2n/Dialect/M2N/IR/LayoutInterop.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::m2n;

#include "m2n/Dialect/M2N/IR/M2NEnums.cpp.inc"

#include "m2n/Dialect/M2N/IR/M2NAttrInterfaces.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "m2n/Dialect/M2N/IR/M2NAttrs.cpp.inc"

void M2NDialect::registerAttributes() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "m2n/Dialect/M2N/IR/M2NAttrs.cpp.inc"
      >();
}

//===----------------------------------------------------------------------===//
// MeshAttr
//===----------------------------------------------------------------------===//

/// Largest mesh accepted; rank arithmetic stays far from int64 overflow.
// The same bound as the runtime's (m2n::kMaxCommunicatorRanks, Layout.h).
static constexpr int64_t kMaxMeshRanks = int64_t(1) << 31;

Attribute MeshAttr::parse(AsmParser &parser, Type) {
  SMLoc startLoc = parser.getCurrentLocation();
  SmallVector<int64_t> shape, ranks;
  int64_t base = 0;
  bool hasBase = false, hasRanks = false;
  if (parser.parseLess() || parseInt64List(parser, shape))
    return {};
  while (succeeded(parser.parseOptionalComma())) {
    SMLoc loc = parser.getCurrentLocation();
    StringRef key;
    if (parser.parseKeyword(&key) || parser.parseEqual())
      return {};
    if (key == "base" && !hasBase) {
      hasBase = true;
      if (parser.parseInteger(base))
        return {};
    } else if (key == "ranks" && !hasRanks) {
      hasRanks = true;
      if (parseInt64List(parser, ranks))
        return {};
    } else if (key == "base" || key == "ranks") {
      parser.emitError(loc, "mesh parameter '") << key << "' given twice";
      return {};
    } else {
      parser.emitError(loc, "unknown mesh parameter '")
          << key << "'; expected 'base' or 'ranks'";
      return {};
    }
  }
  if (parser.parseGreater())
    return {};
  if (hasBase && hasRanks) {
    parser.emitError(startLoc,
                     "a mesh takes either a base rank or an explicit rank "
                     "list, not both");
    return {};
  }
  return parser.getChecked<MeshAttr>(parser.getContext(), shape, base, ranks);
}

void MeshAttr::print(AsmPrinter &printer) const {
  printer << '<';
  printInt64List(printer, getShape());
  if (!getRanks().empty()) {
    printer << ", ranks = ";
    printInt64List(printer, getRanks());
  } else if (getBase() != 0) {
    printer << ", base = " << getBase();
  }
  printer << '>';
}

LogicalResult MeshAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                               ArrayRef<int64_t> shape, int64_t base,
                               ArrayRef<int64_t> ranks) {
  if (shape.empty())
    return emitError() << "mesh must have at least one axis";
  int64_t numRanks = 1;
  for (auto [axis, size] : llvm::enumerate(shape)) {
    if (size <= 0)
      return emitError() << "mesh axis " << axis << " has size " << size
                         << "; every mesh axis needs at least one rank";
    if (size > kMaxMeshRanks / numRanks)
      return emitError() << "mesh has more than " << kMaxMeshRanks
                         << " ranks";
    numRanks *= size;
  }
  if (numRanks > ::m2n::Mesh::kMaxSize)
    return emitError() << "mesh of " << numRanks << " ranks: m2n lays out "
                       << "meshes of at most " << ::m2n::Mesh::kMaxSize
                       << " ranks (2^20; their ranks may be numbered up to "
                       << kMaxMeshRanks - 1 << ")";
  if (ranks.empty()) {
    if (base < 0)
      return emitError() << "mesh base rank must be non-negative, got "
                         << base;
    // Ranks are communicator ranks: they stay below the same bound.
    if (base > kMaxMeshRanks - numRanks)
      return emitError() << "mesh of " << numRanks << " ranks from base "
                         << base << " reaches past rank "
                         << kMaxMeshRanks - 1;
    return success();
  }
  if (base != 0)
    return emitError()
           << "a mesh takes either a base rank or an explicit rank list, "
              "not both";
  if (static_cast<int64_t>(ranks.size()) != numRanks)
    return emitError() << "mesh of " << numRanks << " ranks has a rank list of "
                       << ranks.size() << " entries";
  llvm::DenseSet<int64_t> seen;
  for (int64_t rank : ranks) {
    if (rank < 0)
      return emitError() << "mesh rank list contains negative rank " << rank;
    if (rank >= kMaxMeshRanks)
      return emitError() << "mesh rank list contains rank " << rank
                         << ", past rank " << kMaxMeshRanks - 1;
    if (!seen.insert(rank).second)
      return emitError() << "mesh rank list contains rank " << rank
                         << " more than once";
  }
  return success();
}

int64_t MeshAttr::getNumRanks() const {
  int64_t numRanks = 1;
  for (int64_t size : getShape())
    numRanks *= size;
  return numRanks;
}

int64_t MeshAttr::getRank(int64_t linearIndex) const {
  assert(linearIndex >= 0 && linearIndex < getNumRanks() &&
         "grid position out of range");
  return getRanks().empty() ? getBase() + linearIndex : getRanks()[linearIndex];
}

std::optional<int64_t> MeshAttr::getLinearIndex(int64_t rank) const {
  if (getRanks().empty()) {
    int64_t index = rank - getBase();
    if (index < 0 || index >= getNumRanks())
      return std::nullopt;
    return index;
  }
  const auto *it = llvm::find(getRanks(), rank);
  if (it == getRanks().end())
    return std::nullopt;
  return it - getRanks().begin();
}

int64_t MeshAttr::getMaxRank() const {
  if (getRanks().empty())
    return getBase() + getNumRanks() - 1;
  return *llvm::max_element(getRanks());
}

SmallVector<int64_t> MeshAttr::delinearize(int64_t linearIndex) const {
  SmallVector<int64_t> coords(getShape().size());
  for (int64_t axis = getMeshRank() - 1; axis >= 0; --axis) {
    coords[axis] = linearIndex % getShape()[axis];
    linearIndex /= getShape()[axis];
  }
  return coords;
}

bool MeshAttr::isSameGrid(MeshAttr other) const {
  if (getShape() != other.getShape())
    return false;
  for (int64_t i = 0, e = getNumRanks(); i < e; ++i)
    if (getRank(i) != other.getRank(i))
      return false;
  return true;
}

//===----------------------------------------------------------------------===//
// Placements
//===----------------------------------------------------------------------===//

LogicalResult ShardAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                                int64_t dim, ArrayRef<int64_t> boundaries) {
  if (dim < 0)
    return emitError() << "shard dimension must be non-negative, got " << dim;
  // A layout checks the count and the order (checkBoundaries): they depend
  // on the mesh axes that shard the dimension.
  if (boundaries.size() == 1)
    return emitError() << "shard<" << dim
                       << "> has one boundary; give one more than its parts";
  return success();
}

//===----------------------------------------------------------------------===//
// LayoutAttr
//===----------------------------------------------------------------------===//

Attribute LayoutAttr::parse(AsmParser &parser, Type) {
  MeshAttr mesh;
  SmallVector<PlacementAttrInterface> placements;
  if (parser.parseLess() || parser.parseAttribute(mesh) || parser.parseComma())
    return {};
  auto parsePlacement = [&]() -> ParseResult {
    SMLoc loc = parser.getCurrentLocation();
    StringRef keyword;
    Attribute placement;
    if (succeeded(parser.parseOptionalKeyword(&keyword))) {
      if (keyword == ReplicateAttr::getMnemonic())
        placement = ReplicateAttr::get(parser.getContext());
      else if (keyword == ShardAttr::getMnemonic())
        placement = ShardAttr::parse(parser, Type());
      else if (keyword == PartialAttr::getMnemonic())
        placement = PartialAttr::parse(parser, Type());
      else
        return parser.emitError(loc, "expected a placement (shard<d>, "
                                     "replicate or partial<op>), got '")
               << keyword << "'";
      if (!placement)
        return failure();
      placements.push_back(cast<PlacementAttrInterface>(placement));
      return success();
    }
    return parser.emitError(loc, "expected a placement (shard<d>, replicate "
                                 "or partial<op>) without the '#m2n.' "
                                 "prefix");
  };
  if (parser.parseCommaSeparatedList(AsmParser::Delimiter::Square,
                                     parsePlacement) ||
      parser.parseGreater())
    return {};
  return parser.getChecked<LayoutAttr>(parser.getContext(), mesh, placements);
}

void LayoutAttr::print(AsmPrinter &printer) const {
  printer << '<';
  printer.printAttribute(getMesh());
  printer << ", [";
  llvm::interleaveComma(getPlacements(), printer,
                        [&](PlacementAttrInterface placement) {
                          // Short form: the mnemonic without `#m2n.`.
                          (void)generatedAttributePrinter(placement, printer);
                        });
  printer << "]>";
}

LogicalResult
LayoutAttr::verify(function_ref<InFlightDiagnostic()> emitError, MeshAttr mesh,
                   ArrayRef<PlacementAttrInterface> placements) {
  if (!mesh)
    return emitError() << "layout needs a mesh";
  if (static_cast<int64_t>(placements.size()) != mesh.getMeshRank())
    return emitError() << "layout has " << placements.size()
                       << " placements but its mesh has "
                       << mesh.getMeshRank()
                       << " axes; give one placement per mesh axis";
  std::optional<std::pair<int64_t, ReductionKind>> firstPartial;
  bool hasBoundaries = false;
  for (auto [axis, placement] : llvm::enumerate(placements)) {
    if (!placement)
      return emitError() << "layout placement " << axis << " is null";
    if (auto shard = dyn_cast<ShardAttr>(placement);
        shard && !shard.getBoundaries().empty())
      hasBoundaries = true;
    auto partial = dyn_cast<PartialAttr>(placement);
    if (!partial)
      continue;
    if (!firstPartial) {
      firstPartial = {axis, partial.getReduction()};
      continue;
    }
    if (firstPartial->second != partial.getReduction())
      return emitError() << "partial placements on mesh axes "
                         << firstPartial->first << " and " << axis
                         << " use different reductions ("
                         << stringifyReductionKind(firstPartial->second)
                         << " and "
                         << stringifyReductionKind(partial.getReduction())
                         << ")";
  }
  if (hasBoundaries)
    if (std::optional<std::string> wrong =
            ::m2n::checkBoundaries(toLayout(mesh, placements)))
      return emitError() << *wrong;
  return success();
}

std::optional<ReductionKind> LayoutAttr::getPartialReduction() const {
  for (PlacementAttrInterface placement : getPlacements())
    if (auto partial = dyn_cast<PartialAttr>(placement))
      return partial.getReduction();
  return std::nullopt;
}

SmallVector<int64_t> LayoutAttr::getPartialAxes() const {
  SmallVector<int64_t> axes;
  for (auto [axis, placement] : llvm::enumerate(getPlacements()))
    if (isa<PartialAttr>(placement))
      axes.push_back(axis);
  return axes;
}

std::optional<int64_t> LayoutAttr::getShardDim(int64_t axis) const {
  if (auto shard = dyn_cast<ShardAttr>(getPlacements()[axis]))
    return shard.getDim();
  return std::nullopt;
}

LayoutAttr
LayoutAttr::withPlacements(ArrayRef<PlacementAttrInterface> placements) const {
  return LayoutAttr::get(getContext(), getMesh(), placements);
}

//===----------------------------------------------------------------------===//
// TopologyAttr
//===----------------------------------------------------------------------===//

Attribute TopologyAttr::parse(AsmParser &parser, Type) {
  MLIRContext *ctx = parser.getContext();
  SMLoc startLoc = parser.getCurrentLocation();
  std::optional<ArrayAttr> domains;
  std::optional<int64_t> domainSize;
  std::optional<double> nvlink, network;
  auto parseEntry = [&]() -> ParseResult {
    SMLoc loc = parser.getCurrentLocation();
    StringRef key;
    if (parser.parseKeyword(&key) || parser.parseEqual())
      return failure();
    auto parseBandwidth = [&](std::optional<double> &slot) -> ParseResult {
      if (slot)
        return parser.emitError(loc, "topology parameter '")
               << key << "' given twice";
      double value;
      if (parser.parseFloat(value))
        return failure();
      slot = value;
      return success();
    };
    if (key == "domains") {
      if (domains)
        return parser.emitError(loc, "topology parameter 'domains' given twice");
      SmallVector<Attribute> list;
      if (parser.parseCommaSeparatedList(
              AsmParser::Delimiter::Square, [&]() -> ParseResult {
                SmallVector<int64_t> ranks;
                if (parseInt64List(parser, ranks))
                  return failure();
                list.push_back(DenseI64ArrayAttr::get(ctx, ranks));
                return success();
              }))
        return failure();
      domains = ArrayAttr::get(ctx, list);
      return success();
    }
    if (key == "domain_size") {
      if (domainSize)
        return parser.emitError(loc,
                                "topology parameter 'domain_size' given twice");
      int64_t size;
      if (parser.parseInteger(size))
        return failure();
      domainSize = size;
      return success();
    }
    if (key == "nvlink_gbps")
      return parseBandwidth(nvlink);
    if (key == "network_gbps")
      return parseBandwidth(network);
    return parser.emitError(loc, "unknown topology parameter '")
           << key
           << "'; expected 'domains', 'domain_size', 'nvlink_gbps' or "
              "'network_gbps'";
  };
  if (parser.parseLess() || parser.parseCommaSeparatedList(parseEntry) ||
      parser.parseGreater())
    return {};
  if (domains && domainSize) {
    parser.emitError(startLoc, "topology gives 'domains' and 'domain_size'; "
                               "give one of them");
    return {};
  }
  for (auto [present, name] :
       {std::pair<bool, StringRef>{domains || domainSize, "domains"},
        {nvlink.has_value(), "nvlink_gbps"},
        {network.has_value(), "network_gbps"}}) {
    if (!present) {
      parser.emitError(startLoc, "topology is missing parameter '")
          << name << "'";
      return {};
    }
  }
  return parser.getChecked<TopologyAttr>(
      ctx, domains.value_or(ArrayAttr::get(ctx, {})), llvm::APFloat(*nvlink),
      llvm::APFloat(*network), domainSize.value_or(0));
}

void TopologyAttr::print(AsmPrinter &printer) const {
  if (getDomainSize() > 0) {
    printer << "<domain_size = " << getDomainSize();
  } else {
    printer << "<domains = [";
    llvm::interleaveComma(
        llvm::seq<int64_t>(0, getNumDomains()), printer,
        [&](int64_t i) { printInt64List(printer, getDomain(i)); });
    printer << "]";
  }
  printer << ", nvlink_gbps = ";
  printer.printFloat(getNvlinkGBps());
  printer << ", network_gbps = ";
  printer.printFloat(getNetworkGBps());
  printer << '>';
}

LogicalResult TopologyAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                                   ArrayAttr domains, llvm::APFloat nvlinkGBps,
                                   llvm::APFloat networkGBps,
                                   int64_t domainSize) {
  if (domainSize < 0)
    return emitError() << "domain_size must be positive, got " << domainSize;
  if (domainSize > 0 && !domains.empty())
    return emitError() << "a topology lists its domains or gives "
                          "domain_size, not both";
  llvm::DenseMap<int64_t, int64_t> domainOfRank;
  for (auto [index, attr] : llvm::enumerate(domains)) {
    auto ranks = dyn_cast<DenseI64ArrayAttr>(attr);
    if (!ranks)
      return emitError() << "NVLink domain " << index
                         << " must be a list of ranks, got " << attr;
    if (ranks.empty())
      return emitError() << "NVLink domain " << index << " is empty";
    for (int64_t rank : ranks.asArrayRef()) {
      if (rank < 0)
        return emitError() << "NVLink domain " << index
                           << " contains negative rank " << rank;
      auto [it, inserted] = domainOfRank.try_emplace(rank, index);
      if (!inserted)
        return emitError() << "rank " << rank << " appears in NVLink domains "
                           << it->second << " and " << index
                           << "; domains must be disjoint";
    }
  }
  auto checkPositive = [&](const llvm::APFloat &value,
                           StringRef name) -> LogicalResult {
    if (value.isNaN() || value.isInfinity() || value.isNegative() ||
        value.isZero())
      return emitError() << name << " must be a positive finite bandwidth, got "
                         << value.convertToDouble();
    return success();
  };
  if (failed(checkPositive(nvlinkGBps, "nvlink_gbps")) ||
      failed(checkPositive(networkGBps, "network_gbps")))
    return failure();
  return success();
}

ArrayRef<int64_t> TopologyAttr::getDomain(int64_t index) const {
  return cast<DenseI64ArrayAttr>(getDomains()[index]).asArrayRef();
}

//===----------------------------------------------------------------------===//
// Launch
//===----------------------------------------------------------------------===//

// The fields alone; what a rank's items need of its launch is the RankOp's
// check, what the kernel allows the module's (m2n::checkLaunch, both).
LogicalResult LaunchAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                                 uint32_t threads, uint32_t walkers,
                                 uint64_t stageBytes) {
  if (std::optional<std::string> wrong = ::m2n::checkLaunch(
          ::m2n::RankLaunch{threads, walkers, stageBytes}, {}))
    return emitError() << *wrong;
  return success();
}

LogicalResult
KernelLaunchAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                         uint32_t ctas, uint32_t threads, uint32_t stages,
                         uint64_t stageBytes, uint32_t walkers) {
  ::m2n::KernelLaunch kernel;
  kernel.ctas = ctas;
  kernel.threads = threads;
  kernel.stages = stages;
  kernel.stageBytes = stageBytes;
  kernel.walkers = walkers;
  if (std::optional<std::string> wrong = ::m2n::checkKernelLaunch(kernel))
    return emitError() << *wrong;
  return success();
}

//===----------------------------------------------------------------------===//
// ScalingAttr
//===----------------------------------------------------------------------===//

// `<tensor>`, `<mx>`, `<block(R, C)>`: the spelling of ::m2n::Scaling::str,
// which the CLI and the Python API take too.
Attribute ScalingAttr::parse(AsmParser &parser, Type) {
  SMLoc loc = parser.getCurrentLocation();
  StringRef keyword;
  if (parser.parseLess() || parser.parseKeyword(&keyword))
    return {};
  std::optional<ScalingKind> kind = symbolizeScalingKind(keyword);
  if (!kind) {
    parser.emitError(loc, "unknown scaling '")
        << keyword << "'; expected tensor, block(R, C) or mx";
    return {};
  }
  int64_t rows = 0, cols = 0;
  if (*kind == ScalingKind::Block &&
      (parser.parseLParen() || parser.parseInteger(rows) ||
       parser.parseComma() || parser.parseInteger(cols) ||
       parser.parseRParen()))
    return {};
  if (parser.parseGreater())
    return {};
  return parser.getChecked<ScalingAttr>(loc, parser.getContext(), *kind, rows,
                                        cols);
}

void ScalingAttr::print(AsmPrinter &printer) const {
  printer << '<' << getValue().str() << '>';
}

LogicalResult ScalingAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                                  ScalingKind kind, int64_t blockRows,
                                  int64_t blockCols) {
  if (kind == ScalingKind::Block && (blockRows < 1 || blockCols < 1))
    return emitError() << "a scaling block needs positive sizes, not "
                       << blockRows << " x " << blockCols;
  if (kind != ScalingKind::Block && (blockRows != 0 || blockCols != 0))
    return emitError() << "only block scaling has block sizes";
  return success();
}

::m2n::Scaling ScalingAttr::getValue() const {
  switch (getKind()) {
  case ScalingKind::Tensor:
    return ::m2n::Scaling::tensor();
  case ScalingKind::Mx:
    return ::m2n::Scaling::mx();
  case ScalingKind::Block:
    break;
  }
  return ::m2n::Scaling::block(getBlockRows(), getBlockCols());
}
