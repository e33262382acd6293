#!/usr/bin/env python3
"""Emit small linalg-on-tensors test functions (all named @matmul, with
llvm.emit_c_interface so they can be called through _mlir_ciface_matmul).

  gen_mlir.py KIND M N K  > out.mlir
KIND:
  mm     C = A[MxK] @ B[KxN]                       (fill + linalg.matmul)
  mm_bt  C = A @ W^T, W[NxK]; torch-mlir nn.Linear form: linalg.transpose + linalg.matmul
  mm_bias_relu / mm_bias : relu(A @ B + bias[N]) / A @ B + bias[N]
                           (fill + linalg.matmul + elementwise linalg.generic)
"""
import sys


def mm(M, N, K):
    return f'''func.func @matmul(%A: tensor<{M}x{K}xf32>, %B: tensor<{K}x{N}xf32>) -> tensor<{M}x{N}xf32> attributes {{llvm.emit_c_interface}} {{
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<{M}x{N}xf32>
  %C = linalg.fill ins(%zero : f32) outs(%e : tensor<{M}x{N}xf32>) -> tensor<{M}x{N}xf32>
  %0 = linalg.matmul ins(%A, %B : tensor<{M}x{K}xf32>, tensor<{K}x{N}xf32>) outs(%C : tensor<{M}x{N}xf32>) -> tensor<{M}x{N}xf32>
  return %0 : tensor<{M}x{N}xf32>
}}
'''


def mm_bt(M, N, K):
    return f'''func.func @matmul(%A: tensor<{M}x{K}xf32>, %W: tensor<{N}x{K}xf32>) -> tensor<{M}x{N}xf32> attributes {{llvm.emit_c_interface}} {{
  %zero = arith.constant 0.0 : f32
  %et = tensor.empty() : tensor<{K}x{N}xf32>
  %Wt = linalg.transpose ins(%W : tensor<{N}x{K}xf32>) outs(%et : tensor<{K}x{N}xf32>) permutation = [1, 0]
  %e = tensor.empty() : tensor<{M}x{N}xf32>
  %C = linalg.fill ins(%zero : f32) outs(%e : tensor<{M}x{N}xf32>) -> tensor<{M}x{N}xf32>
  %0 = linalg.matmul ins(%A, %Wt : tensor<{M}x{K}xf32>, tensor<{K}x{N}xf32>) outs(%C : tensor<{M}x{N}xf32>) -> tensor<{M}x{N}xf32>
  return %0 : tensor<{M}x{N}xf32>
}}
'''


def mm_bias(M, N, K, relu):
    act = ('    %r = arith.maximumf %s, %zero : f32\n    linalg.yield %r : f32' if relu
           else '    linalg.yield %s : f32')
    return f'''func.func @matmul(%A: tensor<{M}x{K}xf32>, %B: tensor<{K}x{N}xf32>, %bias: tensor<{N}xf32>) -> tensor<{M}x{N}xf32> attributes {{llvm.emit_c_interface}} {{
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<{M}x{N}xf32>
  %C = linalg.fill ins(%zero : f32) outs(%e : tensor<{M}x{N}xf32>) -> tensor<{M}x{N}xf32>
  %mm = linalg.matmul ins(%A, %B : tensor<{M}x{K}xf32>, tensor<{K}x{N}xf32>) outs(%C : tensor<{M}x{N}xf32>) -> tensor<{M}x{N}xf32>
  %e2 = tensor.empty() : tensor<{M}x{N}xf32>
  %out = linalg.generic {{indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (j)>, affine_map<(i, j) -> (i, j)>],
                         iterator_types = ["parallel", "parallel"]}}
      ins(%mm, %bias : tensor<{M}x{N}xf32>, tensor<{N}xf32>) outs(%e2 : tensor<{M}x{N}xf32>) {{
  ^bb0(%in: f32, %b: f32, %o: f32):
    %s = arith.addf %in, %b : f32
{act}
  }} -> tensor<{M}x{N}xf32>
  return %out : tensor<{M}x{N}xf32>
}}
'''


def emit(kind, M, N, K):
    if kind == 'mm':
        return mm(M, N, K)
    if kind == 'mm_bt':
        return mm_bt(M, N, K)
    if kind in ('mm_bias_relu', 'mm_bias'):
        return mm_bias(M, N, K, kind == 'mm_bias_relu')
    raise SystemExit(f'unknown kind {kind}')


if __name__ == '__main__':
    kind, M, N, K = sys.argv[1], *map(int, sys.argv[2:5])
    sys.stdout.write(emit(kind, M, N, K))
