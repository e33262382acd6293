/* Loads an exported Cuvil model, runs it on input.bin (float32) and writes
 * output.bin; prints the first values. Links only the model library + libc. */
#include "model.h"
#include <stdio.h>
#include <stdlib.h>

static void *read_file(const char *path, size_t *size) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  *size = (size_t)ftell(f);
  fseek(f, 0, SEEK_SET);
  void *data = malloc(*size);
  if (fread(data, 1, *size, f) != *size) { free(data); data = NULL; }
  fclose(f);
  return data;
}

int main(int argc, char **argv) {
  if (argc != 5) {
    fprintf(stderr, "usage: %s weights.bin input.bin output.bin output_floats\n", argv[0]);
    return 2;
  }
  cuvil_model *model = cuvil_model_load(argv[1]);
  if (!model) return 1;
  size_t in_size = 0;
  void *input = read_file(argv[2], &in_size);
  if (!input) { fprintf(stderr, "cannot read %s\n", argv[2]); return 1; }
  long n_out = atol(argv[4]);
  float *output = malloc(sizeof(float) * (size_t)n_out);
  const void *inputs[] = {input};
  void *outputs[] = {output};
  cuvil_model_run(model, inputs, outputs);
  FILE *f = fopen(argv[3], "wb");
  fwrite(output, sizeof(float), (size_t)n_out, f);
  fclose(f);
  printf("output[0..3] = %f %f %f\n", output[0], output[1], output[2]);
  cuvil_model_free(model);
  free(input);
  free(output);
  return 0;
}
