//===- M2NProperties.cpp - m2n.move's typed properties --------------------===//

#include "m2n/Dialect/M2N/IR/M2NProperties.h"

#include "mlir/IR/BuiltinAttributes.h"

using namespace mlir;

namespace m2n {
namespace {
/// The integers of a fixed-size record ([rank, index], ...).
Attribute integers(MLIRContext *context, ArrayRef<int64_t> values) {
  return DenseI64ArrayAttr::get(context, values);
}

/// The `size` integers of `attr`, or a diagnostic naming `what`.
FailureOr<ArrayRef<int64_t>> integersOf(Attribute attr, size_t size,
                                        const char *what,
                                        PropertyDiagnostic diag) {
  auto array = llvm::dyn_cast_if_present<DenseI64ArrayAttr>(attr);
  if (!array || array.size() != static_cast<int64_t>(size)) {
    if (diag)
      diag() << "expected " << what << " as array<i64: " << size
             << " values>";
    return failure();
  }
  return array.asArrayRef();
}

LogicalResult readInts(DialectBytecodeReader &reader,
                       MutableArrayRef<int64_t> values) {
  for (int64_t &value : values)
    if (failed(reader.readSignedVarInt(value)))
      return failure();
  return success();
}

void writeInts(DialectBytecodeWriter &writer, ArrayRef<int64_t> values) {
  for (int64_t value : values)
    writer.writeSignedVarInt(value);
}
} // namespace

Attribute convertToAttribute(MLIRContext *context, Mechanism mechanism) {
  return StringAttr::get(context, toString(mechanism));
}
Attribute convertToAttribute(MLIRContext *context, const CounterRef &counter) {
  return integers(context, {counter.rank, counter.index});
}
Attribute convertToAttribute(MLIRContext *context, const CounterWait &wait) {
  return integers(context, {wait.counter.rank, wait.counter.index,
                            static_cast<int64_t>(wait.value)});
}
Attribute convertToAttribute(MLIRContext *context, const Repeat &repeat) {
  return integers(context, {repeat.count, repeat.srcStride, repeat.dstStride,
                            repeat.dim, repeat.entryStride});
}
Attribute convertToAttribute(MLIRContext *context, const BlockLookup &lookup) {
  return integers(context, {lookup.entry, lookup.phase, lookup.width});
}

LogicalResult convertFromAttribute(Mechanism &mechanism, Attribute attr,
                                   PropertyDiagnostic diag) {
  auto name = llvm::dyn_cast_if_present<StringAttr>(attr);
  std::optional<Mechanism> parsed;
  if (name)
    parsed = parseMechanism(name.getValue());
  if (!parsed) {
    if (diag)
      diag() << "expected a mechanism: \"bulk\", \"tile\", \"vector\", "
                "\"engine\" or \"network\"";
    return failure();
  }
  mechanism = *parsed;
  return success();
}
LogicalResult convertFromAttribute(CounterRef &counter, Attribute attr,
                                   PropertyDiagnostic diag) {
  FailureOr<ArrayRef<int64_t>> values =
      integersOf(attr, 2, "a counter [rank, index]", diag);
  if (failed(values))
    return failure();
  counter = {(*values)[0], (*values)[1]};
  return success();
}
LogicalResult convertFromAttribute(CounterWait &wait, Attribute attr,
                                   PropertyDiagnostic diag) {
  FailureOr<ArrayRef<int64_t>> values =
      integersOf(attr, 3, "a wait [rank, index, value]", diag);
  if (failed(values))
    return failure();
  wait = {{(*values)[0], (*values)[1]}, static_cast<uint64_t>((*values)[2])};
  return success();
}
LogicalResult convertFromAttribute(Repeat &repeat, Attribute attr,
                                   PropertyDiagnostic diag) {
  FailureOr<ArrayRef<int64_t>> values =
      integersOf(attr, 5,
                 "a repeat [count, source stride, destination stride, dim, "
                 "entry stride]",
                 diag);
  if (failed(values))
    return failure();
  repeat = {(*values)[0], (*values)[1], (*values)[2], (*values)[3]};
  repeat.entryStride = (*values)[4];
  return success();
}
LogicalResult convertFromAttribute(BlockLookup &lookup, Attribute attr,
                                   PropertyDiagnostic diag) {
  FailureOr<ArrayRef<int64_t>> values =
      integersOf(attr, 3, "a block lookup [entry, phase, width]", diag);
  if (failed(values))
    return failure();
  lookup = {(*values)[0], (*values)[1], (*values)[2]};
  return success();
}

void writeToMlirBytecode(DialectBytecodeWriter &writer, Mechanism mechanism) {
  writer.writeVarInt(static_cast<uint64_t>(mechanism));
}
void writeToMlirBytecode(DialectBytecodeWriter &writer,
                         const CounterRef &counter) {
  writeInts(writer, {counter.rank, counter.index});
}
void writeToMlirBytecode(DialectBytecodeWriter &writer,
                         const CounterWait &wait) {
  writeInts(writer, {wait.counter.rank, wait.counter.index,
                     static_cast<int64_t>(wait.value)});
}
void writeToMlirBytecode(DialectBytecodeWriter &writer, const Repeat &repeat) {
  writeInts(writer, {repeat.count, repeat.srcStride, repeat.dstStride,
                     repeat.dim, repeat.entryStride});
}
void writeToMlirBytecode(DialectBytecodeWriter &writer,
                         const BlockLookup &lookup) {
  writeInts(writer, {lookup.entry, lookup.phase, lookup.width});
}

LogicalResult readFromMlirBytecode(DialectBytecodeReader &reader,
                                   Mechanism &mechanism) {
  uint64_t value;
  if (failed(reader.readVarInt(value)) || value >= kMechanismCount)
    return failure();
  mechanism = static_cast<Mechanism>(value);
  return success();
}
LogicalResult readFromMlirBytecode(DialectBytecodeReader &reader,
                                   CounterRef &counter) {
  int64_t values[2];
  if (failed(readInts(reader, values)))
    return failure();
  counter = {values[0], values[1]};
  return success();
}
LogicalResult readFromMlirBytecode(DialectBytecodeReader &reader,
                                   CounterWait &wait) {
  int64_t value;
  if (failed(readFromMlirBytecode(reader, wait.counter)) ||
      failed(reader.readSignedVarInt(value)))
    return failure();
  wait.value = static_cast<uint64_t>(value);
  return success();
}
LogicalResult readFromMlirBytecode(DialectBytecodeReader &reader,
                                   Repeat &repeat) {
  int64_t values[5];
  if (failed(readInts(reader, values)))
    return failure();
  repeat = {values[0], values[1], values[2], values[3]};
  repeat.entryStride = values[4];
  return success();
}
LogicalResult readFromMlirBytecode(DialectBytecodeReader &reader,
                                   BlockLookup &lookup) {
  int64_t values[3];
  if (failed(readInts(reader, values)))
    return failure();
  lookup = {values[0], values[1], values[2]};
  return success();
}

} // namespace m2n
