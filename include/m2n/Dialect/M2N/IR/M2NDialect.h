//===- M2NDialect.h - m2n dialect, attributes and types ---------*- C++ -*-===//

#ifndef M2N_DIALECT_M2N_IR_M2NDIALECT_H
#define M2N_DIALECT_M2N_IR_M2NDIALECT_H

#include "m2n/Artifact/Artifact.h"
#include "m2n/Base/Scaling.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/DialectImplementation.h"

#include "m2n/Dialect/M2N/IR/M2NDialect.h.inc"
#include "m2n/Dialect/M2N/IR/M2NEnums.h.inc"

#include "m2n/Dialect/M2N/IR/M2NAttrInterfaces.h.inc"

#define GET_ATTRDEF_CLASSES
#include "m2n/Dialect/M2N/IR/M2NAttrs.h.inc"

#define GET_TYPEDEF_CLASSES
#include "m2n/Dialect/M2N/IR/M2NTypes.h.inc"

#endif // M2N_DIALECT_M2N_IR_M2NDIALECT_H
