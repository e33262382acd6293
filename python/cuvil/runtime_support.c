/* Runtime support linked into every Cuvil library (in-process and exported):
 * the one MLIR runtime entry point lowered code may call, implemented here so
 * that artifacts depend on nothing but libc (not on libMLIR.so). */
#include <stdint.h>
#include <string.h>

typedef struct {
  int64_t rank;
  void *descriptor;
} CuvilUnrankedMemRef;

typedef struct {
  char *allocated;
  char *aligned;
  int64_t offset;
  int64_t sizesAndStrides[];
} CuvilStridedMemRef;

/* Strided copy of `elemSize`-byte elements from src to dst (same shape). */
void memrefCopy(int64_t elemSize, CuvilUnrankedMemRef *srcArg, CuvilUnrankedMemRef *dstArg) {
  int64_t rank = srcArg->rank;
  CuvilStridedMemRef *src = (CuvilStridedMemRef *)srcArg->descriptor;
  CuvilStridedMemRef *dst = (CuvilStridedMemRef *)dstArg->descriptor;
  const int64_t *sizes = src->sizesAndStrides;
  const int64_t *srcStrides = src->sizesAndStrides + rank;
  const int64_t *dstStrides = dst->sizesAndStrides + rank;
  char *s = src->aligned + src->offset * elemSize;
  char *d = dst->aligned + dst->offset * elemSize;
  if (rank == 0) {
    memcpy(d, s, elemSize);
    return;
  }
  for (int64_t i = 0; i < rank; ++i)
    if (sizes[i] == 0)
      return;
  int64_t index[64] = {0};
  int64_t sOff = 0, dOff = 0;
  for (;;) {
    memcpy(d + dOff * elemSize, s + sOff * elemSize, elemSize);
    int64_t axis = rank - 1;
    for (; axis >= 0; --axis) {
      if (++index[axis] < sizes[axis]) {
        sOff += srcStrides[axis];
        dOff += dstStrides[axis];
        break;
      }
      sOff -= (sizes[axis] - 1) * srcStrides[axis];
      dOff -= (sizes[axis] - 1) * dstStrides[axis];
      index[axis] = 0;
    }
    if (axis < 0)
      return;
  }
}
