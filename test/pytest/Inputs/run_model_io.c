/* Runs an exported Cuvil model on raw input files and writes raw output
 * files, for any number of inputs and outputs of any element type:
 *
 *   run_model_io weights.bin IN_0 .. IN_{N-1} OUT_0 BYTES_0 .. OUT_{M-1} BYTES_{M-1}
 *
 * N and M come from model.h (CUVIL_MODEL_NUM_INPUTS / _OUTPUTS); each IN_i is
 * input i's dense row-major bytes, BYTES_j the size of output j in bytes.
 * The model is run twice from one load, on output buffers filled with two
 * different byte patterns first: exit 3 unless both runs give the same bytes
 * (an element the model did not write, or a run that changes the loaded
 * model, shows up as a difference). Links only the model library + libc. */
#include "model.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void *read_file(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  size_t size = (size_t)ftell(f);
  fseek(f, 0, SEEK_SET);
  void *data = malloc(size ? size : 1);
  if (fread(data, 1, size, f) != size) { free(data); data = NULL; }
  fclose(f);
  return data;
}

int main(int argc, char **argv) {
  enum { N = CUVIL_MODEL_NUM_INPUTS, M = CUVIL_MODEL_NUM_OUTPUTS };
  if (argc != 2 + N + 2 * M) {
    fprintf(stderr, "usage: %s weights.bin <%d input files> <%d x (output file, bytes)>\n", argv[0], N, M);
    return 2;
  }
  cuvil_model *model = cuvil_model_load(argv[1]);
  if (!model) return 1;
  const void *inputs[N > 0 ? N : 1];
  void *outputs[M > 0 ? M : 1], *first[M > 0 ? M : 1];
  size_t bytes[M > 0 ? M : 1];
  for (int i = 0; i < N; ++i) {
    if (!(inputs[i] = read_file(argv[2 + i]))) {
      fprintf(stderr, "cannot read %s\n", argv[2 + i]);
      return 1;
    }
  }
  for (int j = 0; j < M; ++j) {
    bytes[j] = (size_t)atol(argv[3 + N + 2 * j]);
    outputs[j] = malloc(bytes[j] ? bytes[j] : 1);
    first[j] = malloc(bytes[j] ? bytes[j] : 1);
  }
  for (int run = 0; run < 2; ++run) {
    for (int j = 0; j < M; ++j) memset(outputs[j], run ? 0xA5 : 0x00, bytes[j]);
    if (cuvil_model_run(model, inputs, outputs) != 0) {
      fprintf(stderr, "cuvil_model_run failed\n");
      return 1;
    }
    for (int j = 0; j < M; ++j) {
      if (run == 0) {
        memcpy(first[j], outputs[j], bytes[j]);
      } else if (memcmp(first[j], outputs[j], bytes[j]) != 0) {
        fprintf(stderr, "output %d differs between two runs\n", j);
        return 3;
      }
    }
  }
  for (int j = 0; j < M; ++j) {
    const char *path = argv[2 + N + 2 * j];
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(outputs[j], 1, bytes[j], f) != bytes[j]) {
      fprintf(stderr, "cannot write %s\n", path);
      return 1;
    }
    fclose(f);
    free(outputs[j]);
    free(first[j]);
  }
  for (int i = 0; i < N; ++i) free((void *)inputs[i]);
  cuvil_model_free(model);
  printf("ran %d input(s) -> %d output(s)\n", N, M);
  return 0;
}
