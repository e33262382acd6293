// AMX wake-up probe: what the first tile products cost after the core did
// other work for a while. The tile unit powers down when idle; a kernel that
// follows non-AMX work (an epilogue, a gather, the Python call) pays for its
// first products at a fraction of the unit's rate. Prints TSC ticks per
// `tdpbusd` (four accumulators against register-held tiles: no memory
// traffic) for bursts of 16 to 16384 products after idle gaps of 0 to 2000 us
// (scalar work), the mean of 20 bursts each. Session 29, Xeon model 207:
// 12-16 ticks warm; after >= 5 us of other work, 16 products take ~240 each and
// 64 70-110: about 4,000-6,000 ticks (2-3 us) lost per kernel, 10,000 after 2 ms.
//
//   cc -O2 -mamx-tile -mamx-int8 benchmarks/amx_wakeup.c -o /tmp/amx_wakeup && /tmp/amx_wakeup
#include <immintrin.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <x86intrin.h>

#define ARCH_REQ_XCOMP_PERM 0x1023
#define XFEATURE_XTILEDATA 18

struct TileConfig {
  uint8_t palette, startRow, reserved[14];
  uint16_t colBytes[16];
  uint8_t rows[16];
} __attribute__((packed));

static int8_t tileData[16 * 64] __attribute__((aligned(64)));
static volatile double sink;

// Scalar work for `us` microseconds (TSC ticks at an assumed 2 GHz: only the
// order of magnitude of the gap matters).
static void otherWork(double us) {
  uint64_t t0 = __rdtsc();
  double x = 1.0;
  while (__rdtsc() - t0 < us * 2000.0)
    x = x * 1.0000001 + 1e-9;
  sink = x;
}

__attribute__((target("amx-tile,amx-int8"))) static uint64_t burst(int products) {
  uint64_t t0 = __rdtsc();
  for (int i = 0; i < products; i += 4) {
    _tile_dpbusd(0, 4, 5);
    _tile_dpbusd(1, 4, 5);
    _tile_dpbusd(2, 4, 5);
    _tile_dpbusd(3, 4, 5);
  }
  _tile_stored(0, tileData, 64); // waits for the last product of accumulator 0
  return __rdtsc() - t0;
}

__attribute__((target("amx-tile,amx-int8"))) int main(void) {
  if (syscall(SYS_arch_prctl, ARCH_REQ_XCOMP_PERM, XFEATURE_XTILEDATA) != 0) {
    printf("no AMX tile state from the kernel (not an AMX host?)\n");
    return 0;
  }
  struct TileConfig config;
  memset(&config, 0, sizeof config);
  config.palette = 1;
  for (int t = 0; t < 8; ++t) {
    config.colBytes[t] = 64;
    config.rows[t] = 16;
  }
  _tile_loadconfig(&config);
  _tile_loadd(4, tileData, 64);
  _tile_loadd(5, tileData, 64);
  _tile_zero(0);
  _tile_zero(1);
  _tile_zero(2);
  _tile_zero(3);
  burst(100000);
  const int sizes[] = {16, 64, 256, 1024, 4096, 16384};
  const double gaps[] = {0, 5, 20, 100, 500, 2000};
  printf("TSC ticks per tdpbusd, by burst size (columns) after a gap of other work (rows)\n%9s", "gap us");
  for (int j = 0; j < 6; ++j)
    printf("%9d", sizes[j]);
  printf("\n");
  for (int i = 0; i < 6; ++i) {
    printf("%9.0f", gaps[i]);
    for (int j = 0; j < 6; ++j) {
      uint64_t total = 0;
      for (int r = 0; r < 20; ++r) {
        otherWork(gaps[i]);
        total += burst(sizes[j]);
      }
      printf("%9.1f", (double)total / 20 / sizes[j]);
    }
    printf("\n");
  }
  _tile_release();
  return 0;
}
