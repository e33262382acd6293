//===- CuvilDialect.cpp - dialect registration ----------------------------===//
#include "cuvil/Dialect/CuvilDialect.h"
#include "cuvil/Dialect/CuvilOps.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::cuvil;

#include "cuvil/Dialect/CuvilDialect.cpp.inc"

void CuvilDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "cuvil/Dialect/CuvilOps.cpp.inc"
      >();
  registerAttributes();
}

/// Folds produce dense splats/elements; they become arith.constant.
Operation *CuvilDialect::materializeConstant(OpBuilder &builder, Attribute value,
                                             Type type, Location loc) {
  if (auto typed = dyn_cast<TypedAttr>(value))
    if (arith::ConstantOp::isBuildableWith(typed, type))
      return arith::ConstantOp::create(builder, loc, type, typed);
  return nullptr;
}

//===----------------------------------------------------------------------===//
// Discardable attributes
//===----------------------------------------------------------------------===//

ArrayRef<StringLiteral> CuvilDialect::getArgKinds() {
  // The importer's kinds (cuvil/importer.py), one per torch.export input kind.
  static constexpr StringLiteral kinds[] = {"user_input", "parameter", "buffer",
                                            "buffer_nonpersistent", "constant"};
  return kinds;
}

std::optional<StringRef> CuvilDialect::getArgKind(FunctionOpInterface fn, unsigned index) {
  if (auto kind = fn.getArgAttrOfType<StringAttr>(index, getKindAttrName()))
    return kind.getValue();
  return std::nullopt;
}

bool CuvilDialect::isWeight(FunctionOpInterface fn, unsigned index) {
  return static_cast<bool>(fn.getArgAttr(index, getWeightAttrName()));
}

void CuvilDialect::setWeight(FunctionOpInterface fn, unsigned index) {
  fn.setArgAttr(index, getWeightAttrName(), UnitAttr::get(fn->getContext()));
}

NamedAttribute CuvilDialect::getPackedAttr(Builder &b, int64_t index) {
  return b.getNamedAttr(getPackedAttrName(), b.getI64IntegerAttr(index));
}

std::optional<int64_t> CuvilDialect::getPackedIndex(FunctionOpInterface fn, unsigned index) {
  if (auto packed = fn.getArgAttrOfType<IntegerAttr>(index, getPackedAttrName()))
    return packed.getInt();
  return std::nullopt;
}

std::optional<int64_t> CuvilDialect::getKernelId(Operation *fn) {
  if (auto id = fn->getAttrOfType<IntegerAttr>(getKernelAttrName()))
    return id.getInt();
  return std::nullopt;
}

void CuvilDialect::setKernelId(Operation *fn, int64_t id) {
  fn->setAttr(getKernelAttrName(), Builder(fn->getContext()).getI64IntegerAttr(id));
}

namespace {

bool isArgAttrName(StringRef name) {
  return name == CuvilDialect::getArgAttrName() || name == CuvilDialect::getKindAttrName() ||
         name == CuvilDialect::getWeightAttrName() || name == CuvilDialect::getPackedAttrName();
}

/// An index or id: the profiler and the runtime index arrays with it.
bool isNonNegativeI64(Attribute attr) {
  auto integer = dyn_cast<IntegerAttr>(attr);
  return integer && integer.getType().isSignlessInteger(64) && !integer.getValue().isNegative();
}

} // namespace

// Function-like ops, not only func.func: convert-func-to-llvm copies function
// and argument attributes onto the llvm.func it creates. Names of the dialect
// not listed here are left alone.
LogicalResult CuvilDialect::verifyRegionArgAttribute(Operation *op, unsigned regionIndex,
                                                     unsigned argIndex, NamedAttribute attribute) {
  StringRef name = attribute.getName().getValue();
  Attribute value = attribute.getValue();
  if (name == getKernelAttrName())
    return op->emitError() << "'" << name << "' is a function attribute, not an argument attribute";
  if (!isArgAttrName(name))
    return success();
  if (!isa<FunctionOpInterface>(op) || regionIndex != 0)
    return op->emitError() << "'" << name << "' is only valid on the arguments of a function";
  auto fail = [&]() { return op->emitError() << "'" << name << "' on argument #" << argIndex << " "; };
  if (name == getWeightAttrName() && !isa<UnitAttr>(value))
    return fail() << "must be a unit attribute, got " << value;
  if (name == getPackedAttrName() && !isNonNegativeI64(value))
    return fail() << "must be a non-negative i64 (a prepack result index), got " << value;
  if (name == getArgAttrName() && !isa<StringAttr>(value))
    return fail() << "must be a string (the model tensor's name), got " << value;
  if (name == getKindAttrName()) {
    auto kind = dyn_cast<StringAttr>(value);
    if (!kind || !llvm::is_contained(getArgKinds(), kind.getValue())) {
      InFlightDiagnostic diag = fail() << "must be one of ";
      llvm::interleaveComma(getArgKinds(), diag, [&](StringRef k) { diag << "\"" << k << "\""; });
      return diag << ", got " << value;
    }
  }
  return success();
}

LogicalResult CuvilDialect::verifyOperationAttribute(Operation *op, NamedAttribute attribute) {
  StringRef name = attribute.getName().getValue();
  if (isArgAttrName(name))
    return op->emitError() << "'" << name << "' is an argument attribute: put it on a function argument";
  if (name != getKernelAttrName())
    return success();
  if (!isa<FunctionOpInterface>(op))
    return op->emitError() << "'" << name << "' is only valid on a function";
  if (!isNonNegativeI64(attribute.getValue()))
    return op->emitError() << "'" << name << "' must be a non-negative i64 (the kernel id), got "
                           << attribute.getValue();
  return success();
}
