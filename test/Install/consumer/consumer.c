/* Compiles an uneven all-gather (11 floats over 2 ranks: 6 + 5) with the
 * installed compiler, runs it on the installed runtime's host backend and
 * checks every destination element. Exits 0 and prints PASS on success. */
#include "m2n-c/Compiler.h"
#include "m2n/runtime.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *kIR =
    "func.func @gather(%c: !m2n.comm<2>, %x: !m2n.dist<11xf32, "
    "#m2n.layout<#m2n.mesh<[2]>, [shard<0>]>>) {\n"
    "  %0 = m2n.reshard %x on %c : !m2n.comm<2>, !m2n.dist<11xf32, "
    "#m2n.layout<#m2n.mesh<[2]>, [shard<0>]>> -> !m2n.dist<11xf32, "
    "#m2n.layout<#m2n.mesh<[2]>, [replicate]>>\n"
    "  return\n"
    "}\n";

static int fail(const char *what) {
  fprintf(stderr, "consumer: %s: %s\n", what, m2n_last_error());
  return 1;
}

int main(void) {
  printf("%s\n", m2n_compiler_version());
  void *bytes = NULL;
  size_t size = 0;
  char *error = NULL;
  if (m2n_compile(kIR, "", NULL, &bytes, &size, &error) != 0) {
    fprintf(stderr, "consumer: compile failed: %s\n", error ? error : "?");
    return 1;
  }
  m2n_artifact artifact = NULL;
  if (m2n_artifact_load(bytes, size, &artifact) != M2N_SUCCESS)
    return fail("load");
  m2n_compiler_free(bytes);

  int ranks = 0;
  if (m2n_artifact_reshard_ranks(artifact, 0, &ranks) != M2N_SUCCESS ||
      ranks != 2)
    return fail("ranks");
  /* Buffers aligned to 16 bytes, as the default `buffer-align` assumes. */
  float *src[2], *dst[2];
  for (int r = 0; r < 2; ++r) {
    src[r] = aligned_alloc(16, 16 * sizeof(float));
    dst[r] = aligned_alloc(16, 16 * sizeof(float));
  }
  const void *srcs[2] = {src[0], src[1]};
  void *dsts[2] = {dst[0], dst[1]};
  size_t src_bytes[2], dst_bytes[2];
  int64_t offset = 0;
  for (int r = 0; r < 2; ++r) {
    int present = 0, dims = 0;
    int64_t shape[8];
    if (m2n_artifact_local_shape(artifact, 0, r, 1, &present, &dims, shape) !=
            M2N_SUCCESS ||
        !present || dims != 1)
      return fail("local shape");
    if (m2n_artifact_buffer_bytes(artifact, 0, r, &src_bytes[r],
                                  &dst_bytes[r]) != M2N_SUCCESS)
      return fail("buffer bytes");
    for (int64_t i = 0; i < shape[0]; ++i)
      src[r][i] = (float)(offset + i);
    offset += shape[0];
    memset(dst[r], 0xff, 16 * sizeof(float)); /* NaN poison */
  }
  if (offset != 11 || src_bytes[0] != 6 * sizeof(float) ||
      dst_bytes[1] != 11 * sizeof(float)) {
    fprintf(stderr, "consumer: unexpected buffer sizes\n");
    return 1;
  }
  m2n_context_options options = {0};
  options.version = M2N_RUNTIME_API_VERSION;
  options.backend = M2N_BACKEND_HOST;
  options.ranks = 2;
  m2n_context context = NULL;
  if (m2n_context_create(artifact, &options, &context) != M2N_SUCCESS)
    return fail("context");
  int reshard = 0, group = -1;
  m2n_buffers buffers = {srcs, src_bytes, dsts, dst_bytes, NULL, NULL};
  if (m2n_group_create(context, 1, &reshard, &group) != M2N_SUCCESS ||
      m2n_group_execute(context, group, &buffers, NULL) != M2N_SUCCESS)
    return fail("host execute");
  m2n_context_destroy(context);
  for (int r = 0; r < 2; ++r)
    for (int i = 0; i < 11; ++i)
      if (dst[r][i] != (float)i) {
        fprintf(stderr, "consumer: rank %d element %d is %g\n", r, i,
                dst[r][i]);
        return 1;
      }
  for (int r = 0; r < 2; ++r) {
    free(src[r]);
    free(dst[r]);
  }
  m2n_artifact_destroy(artifact);
  printf("PASS\n");
  return 0;
}
