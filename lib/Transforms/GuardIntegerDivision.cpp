//===- GuardIntegerDivision.cpp - integer division never traps -------------===//
// x86's idiv raises SIGFPE on a zero divisor and on INT_MIN / -1: a model that
// divides integer tensors (floor_divide, remainder, index arithmetic on data)
// would take the whole process down. Eager PyTorch raises "ZeroDivisionError"
// for the first and wraps for the second. So each integer division whose
// divisor is not a constant known to be safe divides by a safe divisor
// instead, yields eager's wrapped value for INT_MIN / -1, and reports a zero
// divisor through the runtime (cuvil_runtime_error), which the caller turns
// into an error after the call (the library's other results are then
// garbage, never a crash).
// It runs on tensors, in the raise step: in a linalg body (where no side
// effect may be) the check is a reduction over the divisor tensor next to the
// op. After vectorization it could not tell a zero divisor from the padding
// of a masked vector tail.
//===----------------------------------------------------------------------===//
#include "RuntimeErrors.h"
#include "cuvil/Transforms/Passes.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/Matchers.h"

namespace mlir::cuvil {
#define GEN_PASS_DEF_CUVILGUARDINTEGERDIVISION
#include "cuvil/Dialect/CuvilPasses.h.inc"
} // namespace mlir::cuvil

using namespace mlir;

namespace {

using cuvil::RuntimeError;

bool isSigned(Operation *op) { return isa<arith::DivSIOp, arith::RemSIOp, arith::FloorDivSIOp, arith::CeilDivSIOp>(op); }
bool isRemainder(Operation *op) { return isa<arith::RemSIOp, arith::RemUIOp>(op); }

/// Whether every value of the constant divisor `d` is safe: non-zero, and
/// for signed ops not -1 (INT_MIN / -1 overflows).
bool isSafeConstant(Value d, bool isSignedOp) {
  auto safe = [&](const APInt &v) { return !v.isZero() && !(isSignedOp && v.isAllOnes()); };
  APInt scalar;
  if (matchPattern(d, m_ConstantInt(&scalar)))
    return safe(scalar);
  DenseIntElementsAttr dense;
  if (matchPattern(d, m_Constant(&dense)))
    return llvm::all_of(dense.getValues<APInt>(), safe);
  return false;
}

Value constantLike(OpBuilder &b, Location loc, Type type, const APInt &v) {
  if (auto vt = dyn_cast<VectorType>(type))
    return arith::ConstantOp::create(b, loc, DenseElementsAttr::get(vt, v));
  return arith::ConstantOp::create(b, loc, IntegerAttr::get(type, v));
}

/// An i1 that is true when any lane of `mask` is (a scalar i1 as it is).
Value anyTrue(OpBuilder &b, Location loc, Value mask) {
  auto vt = dyn_cast<VectorType>(mask.getType());
  if (!vt)
    return mask;
  if (vt.getRank() != 1)
    mask = vector::ShapeCastOp::create(b, loc, VectorType::get({vt.getNumElements()}, vt.getElementType()), mask);
  return vector::ReductionOp::create(b, loc, vector::CombiningKind::OR, mask);
}

/// Rewrites `op` to divide by a safe divisor and give eager's wrapped value
/// for INT_MIN / -1; returns the i1 (or i1 vector) "divisor is 0".
Value makeSafe(Operation *op) {
  Location loc = op->getLoc();
  OpBuilder b(op);
  Value n = op->getOperand(0), d = op->getOperand(1);
  Type type = d.getType();
  unsigned width = getElementTypeOrSelf(type).getIntOrFloatBitWidth();
  Value zero = constantLike(b, loc, type, APInt::getZero(width));
  Value one = constantLike(b, loc, type, APInt(width, 1));
  Value isZero = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, d, zero);
  Value replace = isZero, overflow;
  if (isSigned(op)) {
    Value minusOne = constantLike(b, loc, type, APInt::getAllOnes(width));
    Value min = constantLike(b, loc, type, APInt::getSignedMinValue(width));
    overflow = arith::AndIOp::create(b, loc, arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, d, minusOne),
                                     arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, n, min));
    replace = arith::OrIOp::create(b, loc, isZero, overflow);
  }
  op->setOperand(1, arith::SelectOp::create(b, loc, replace, one, d));
  if (overflow) {
    // Eager's wrapped value: INT_MIN / -1 = INT_MIN (0 - INT_MIN), INT_MIN % -1 = 0.
    b.setInsertionPointAfter(op);
    Value result = op->getResult(0);
    Value wrapped = isRemainder(op) ? zero : Value(arith::SubIOp::create(b, loc, zero, n));
    auto sel = arith::SelectOp::create(b, loc, overflow, wrapped, result);
    result.replaceAllUsesExcept(sel, sel);
  }
  return isZero;
}

bool isIntegerDivision(Operation *op) {
  if (!isa<arith::DivSIOp, arith::DivUIOp, arith::RemSIOp, arith::RemUIOp, arith::FloorDivSIOp,
           arith::CeilDivSIOp, arith::CeilDivUIOp>(op))
    return false;
  // Index arithmetic (shapes, tiling) divides by sizes, not data.
  return !getElementTypeOrSelf(op->getResult(0).getType()).isIndex() &&
         !isSafeConstant(op->getOperand(1), isSigned(op));
}

struct CuvilGuardIntegerDivisionPass
    : cuvil::impl::CuvilGuardIntegerDivisionBase<CuvilGuardIntegerDivisionPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<Operation *> divisions;
    module.walk([&](Operation *op) {
      if (isIntegerDivision(op))
        divisions.push_back(op);
    });
    for (Operation *op : divisions) {
      Value divisor = op->getOperand(1);
      Value isZero = makeSafe(op);
      auto generic = dyn_cast<linalg::GenericOp>(op->getParentOp());
      if (!generic) {
        // Outside linalg bodies (scalars on the host side): report in place.
        if (!cuvil::dependsOnCallInputs(divisor))
          continue;
        OpBuilder b(op);
        b.setInsertionPointAfter(op);
        cuvil::reportIf(b, op->getLoc(), anyTrue(b, op->getLoc(), isZero), RuntimeError::IntegerDivisionByZero,
                        cuvil::getOrDeclareRuntimeError(module));
        continue;
      }
      // Inside a body no side effect may happen: report from the divisor
      // tensor itself when the divisor is one of the op's inputs (torch's
      // //, %, div(rounding_mode=) on tensors); a divisor computed in the body
      // divides safely without a report.
      auto arg = dyn_cast<BlockArgument>(divisor);
      if (arg && arg.getOwner() == generic.getBody() && arg.getArgNumber() < generic.getNumDpsInputs() &&
          cuvil::dependsOnCallInputs(generic.getDpsInputOperand(arg.getArgNumber())->get())) {
        auto isZeroElement = [](OpBuilder &b, Location l, ValueRange divisor) -> Value {
          Value zero = arith::ConstantOp::create(b, l, IntegerAttr::get(divisor[0].getType(), 0));
          return arith::CmpIOp::create(b, l, arith::CmpIPredicate::eq, divisor[0], zero);
        };
        cuvil::reportIfAny(generic, {generic.getDpsInputOperand(arg.getArgNumber())}, isZeroElement,
                           RuntimeError::IntegerDivisionByZero, cuvil::getOrDeclareRuntimeError(module));
      }
    }
  }
};

} // namespace
