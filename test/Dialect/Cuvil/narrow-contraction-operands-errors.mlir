// RUN: cuvil-opt %s --pass-pipeline="builtin.module(func.func(cuvil-narrow-contraction-operands{element-type=f8}))" -verify-diagnostics

// expected-error @+1 {{cuvil-narrow-contraction-operands: element-type must be bf16, f16 or empty, got 'f8'}}
func.func @bad_option() {
  return
}
