//===- KernelNames.h - how outlined kernels are named -----------*- C++ -*-===//
// cuvil-outline-kernels names each kernel function `cuvil_kernel_<N>_<op>`;
// cuvil-profile-kernels and the Python profiler (cuvil/profiling.py) read
// the N back as the kernel's counter index.
//===----------------------------------------------------------------------===//
#ifndef CUVIL_TRANSFORMS_KERNELNAMES_H
#define CUVIL_TRANSFORMS_KERNELNAMES_H

#include "llvm/ADT/StringRef.h"
#include <cstdint>
#include <optional>

namespace mlir::cuvil {

inline constexpr llvm::StringLiteral kKernelPrefix = "cuvil_kernel_";

/// The N of `cuvil_kernel_<N>_<op>`, or nothing for any other name.
inline std::optional<int64_t> kernelId(llvm::StringRef name) {
  if (!name.consume_front(kKernelPrefix))
    return std::nullopt;
  int64_t id;
  if (name.consumeInteger(10, id) || id < 0 || !name.starts_with("_"))
    return std::nullopt;
  return id;
}

} // namespace mlir::cuvil

#endif // CUVIL_TRANSFORMS_KERNELNAMES_H
