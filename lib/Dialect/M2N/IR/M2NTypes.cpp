//===- M2NTypes.cpp - communicator and distributed tensor types -------------===//

#include "m2n/Dialect/M2N/IR/M2NDialect.h"
#include "m2n/Dialect/M2N/IR/LayoutInterop.h"
#include "m2n/Base/CheckedMath.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/InterleavedRange.h"
#include "llvm/Support/MathExtras.h"

using namespace mlir;
using namespace mlir::m2n;

#define GET_TYPEDEF_CLASSES
#include "m2n/Dialect/M2N/IR/M2NTypes.cpp.inc"

void M2NDialect::registerTypes() {
  addTypes<
#define GET_TYPEDEF_LIST
#include "m2n/Dialect/M2N/IR/M2NTypes.cpp.inc"
      >();
}

LogicalResult CommType::verify(function_ref<InFlightDiagnostic()> emitError,
                               int64_t size) {
  if (size <= 0)
    return emitError() << "communicator must have at least one rank, got "
                       << size;
  // Ranks are 31-bit everywhere (meshes, artifacts, the runtime's int ranks).
  if (size > (int64_t(1) << 31))
    return emitError() << "communicator of " << size
                       << " ranks has more than 2^31";
  return success();
}

Type DistType::parse(AsmParser &parser) {
  SmallVector<int64_t> shape;
  Type elementType;
  LayoutAttr layout;
  // Dynamic sizes parse so that the verifier can explain why they are wrong.
  if (parser.parseLess() ||
      parser.parseDimensionList(shape, /*allowDynamic=*/true,
                                /*withTrailingX=*/true) ||
      parser.parseType(elementType) || parser.parseComma() ||
      parser.parseAttribute(layout) || parser.parseGreater())
    return {};
  return parser.getChecked<DistType>(parser.getContext(), shape, elementType,
                                     canonicalLayout(layout, shape));
}

void DistType::print(AsmPrinter &printer) const {
  printer << '<';
  for (int64_t size : getShape())
    printer << size << 'x';
  printer << getElementType() << ", ";
  printer.printAttribute(getLayout());
  printer << '>';
}

/// Element types every stage moves: exactly those with an executor.
static bool isSupportedElementType(Type type) {
  return toElementType(type).has_value();
}

LogicalResult DistType::verify(function_ref<InFlightDiagnostic()> emitError,
                               ArrayRef<int64_t> shape, Type elementType,
                               LayoutAttr layout) {
  for (int64_t size : shape)
    if (ShapedType::isDynamic(size) || size < 0)
      return emitError() << "distributed tensor must have a static global "
                            "shape";
  if (!elementType || !isSupportedElementType(elementType))
    return emitError() << "element type " << elementType
                       << " is not supported; expected i8, i16, i32, i64, "
                          "f16, bf16, f32, f64, f8E4M3FN, f8E5M2, ui8 or "
                          "f8E8M0FNU "
                          "(wider unsigned integers are not moved)";
  if (!layout)
    return emitError() << "distributed tensor needs a layout";
  // Byte offsets and sizes are 64-bit everywhere downstream: the tensor's
  // size in bytes must fit.
  if (!::m2n::checkedProduct(
          shape, llvm::divideCeil(elementType.getIntOrFloatBitWidth(), 8)))
    return emitError() << "distributed tensor of "
                         << llvm::interleaved(shape, "x") << " "
                         << elementType
                         << " elements has more than 2^63 - 1 bytes";
  if (!::m2n::isReducible(*toElementType(elementType)) &&
      !layout.getPartialAxes().empty())
    return emitError() << "partial placements of " << elementType
                       << " would need a reduction in 8 bits; reduce in "
                          "bf16 or f32 and cast";
  int64_t rank = shape.size();
  bool hasBoundaries = false;
  for (auto [axis, placement] : llvm::enumerate(layout.getPlacements())) {
    auto shard = dyn_cast<ShardAttr>(placement);
    if (shard && shard.getDim() >= rank)
      return emitError() << "mesh axis " << axis << " shards tensor dimension "
                         << shard.getDim() << ", but the tensor has rank "
                         << rank;
    if (!shard || shard.getBoundaries().empty())
      continue;
    hasBoundaries = true;
    if (int64_t end = shard.getBoundaries().back(); end != shape[shard.getDim()])
      return emitError() << "mesh axis " << axis
                         << ": the boundaries of dimension " << shard.getDim()
                         << " end at " << end << ", not at its extent "
                         << shape[shard.getDim()];
  }
  // One spelling of every partition (the parser writes this one).
  if (hasBoundaries && canonicalLayout(layout, shape) != layout)
    return emitError() << "explicit boundaries equal to torch.chunk's must "
                          "be written shard<d> (canonicalLayout)";
  return success();
}
