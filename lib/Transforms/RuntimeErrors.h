//===- RuntimeErrors.h - reporting errors from compiled code ----*- C++ -*-===//
// Compiled code reports what eager PyTorch raises on (a zero integer divisor,
// an index out of range) by calling the C runtime's cuvil_runtime_error(code)
// (runtime_support.c); the caller raises after the call (cuvil.execution's
// RUNTIME_ERRORS has the same codes).
//===----------------------------------------------------------------------===//
#ifndef CUVIL_TRANSFORMS_RUNTIMEERRORS_H
#define CUVIL_TRANSFORMS_RUNTIMEERRORS_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/BuiltinOps.h"

namespace mlir::cuvil {

enum class RuntimeError : int32_t { IntegerDivisionByZero = 1, IndexOutOfRange = 2 };

/// The private declaration of cuvil_runtime_error(i32) in `module`.
func::FuncOp getOrDeclareRuntimeError(ModuleOp module);

/// `if (flag) cuvil_runtime_error(code)` at the builder's insertion point.
void reportIf(OpBuilder &b, Location loc, Value flag, RuntimeError code, func::FuncOp reporter);

/// Right after `generic` (which must have a result): a reduction over
/// `generic`'s iteration space of
/// the i1 computed by `condition` (given a builder inside the reduction's
/// body, the values of `inputs`' elements and the body's loop indices
/// available through linalg.index), then `reportIf` of "any was true". A
/// linalg body may have no side effects: this is how a check inside one
/// reaches the host side.
void reportIfAny(linalg::GenericOp generic, ArrayRef<OpOperand *> inputs,
                 function_ref<Value(OpBuilder &, Location, ValueRange)> condition, RuntimeError code,
                 func::FuncOp reporter);

/// Whether `v` may change from call to call: it depends on an argument of
/// its function that is not one of the model's tensors (cuvil.kind other
/// than user_input). Checks of values computed from weights only (BERT's
/// position ids) would be hoisted into main_prepack with no way to report
/// from there: they are not checked (the reads stay clamped).
bool dependsOnCallInputs(Value v);

} // namespace mlir::cuvil

#endif
