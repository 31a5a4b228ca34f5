/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A C program built against an installed wyjit through pkg-config, using only wyjit/wyjit.h:
 * builds, checks and reads a variant's canonical name, compiles the variant with NVRTC into a
 * fresh cache, checks launch arguments and the errors the C API reports (all of that needs no
 * GPU), and where a CUDA device exists launches one small verify and checks it against a plain
 * CPU loop.
 *
 *   consumer CACHE_DIR
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <wyjit/wyjit.h>

#define CHECK(call)                                                                      \
  do {                                                                                   \
    const wyjit_status check_status_ = (call);                                           \
    if (check_status_ != WYJIT_OK) {                                                     \
      fprintf(stderr, "FAILED: %s -> %s: %s\n", #call, wyjit_status_name(check_status_), \
              wyjit_last_error());                                                       \
      exit(1);                                                                           \
    }                                                                                    \
  } while (0)

#define EXPECT(cond)                                              \
  do {                                                            \
    if (!(cond)) {                                                \
      fprintf(stderr, "FAILED: %s (line %d)\n", #cond, __LINE__); \
      exit(1);                                                    \
    }                                                             \
  } while (0)

enum { kBatch = 2, kK = 2, kD = 64 };
static const char* const kVariant = "gdn_verify.k2.io_f32.st_f32.strided.vk.d64";

static unsigned long long g_rng = 12345;
static float uniform(float lo, float hi) {
  g_rng = g_rng * 6364136223846793005ULL + 1442695040888963407ULL;
  return lo + (hi - lo) * (float)((g_rng >> 40) & 0xffffff) / (float)0x1000000;
}

static void unit_row(float* row, int n) {
  double norm = 0;
  int i;
  for (i = 0; i < n; ++i) {
    row[i] = uniform(-1.0f, 1.0f);
    norm += (double)row[i] * row[i];
  }
  for (i = 0; i < n; ++i) row[i] = (float)(row[i] / sqrt(norm));
}

static double max_rel_err(const float* got, const double* want, int n) {
  double err = 0, ref = 1e-30;
  int i;
  for (i = 0; i < n; ++i) {
    const double e = fabs((double)got[i] - want[i]);
    if (!(e <= err)) err = e; /* NaN propagates */
    if (fabs(want[i]) > ref) ref = fabs(want[i]);
  }
  return err / ref;
}

/* One strided launch of kVariant over the given buffers, HK = HV = 1. */
static void verify_args(wyjit_gdn_verify_args* args, const void* q, const void* k, const void* v,
                        const void* g, const void* beta, void* out, void* state, void* inter) {
  wyjit_gdn_verify_args_init(args);
  args->batch = kBatch;
  args->num_k_heads = 1;
  args->num_v_heads = 1;
  args->k = kK;
  args->dk = kD;
  args->dv = kD;
  args->scale = (float)(1.0 / sqrt((double)kD));
  args->q = q;
  args->k_in = k;
  args->v = v;
  args->g = (const float*)g;
  args->beta = (const float*)beta;
  args->out = out;
  args->qk_stride = kD;
  args->v_stride = kD;
  args->gb_stride = 1;
  args->o_stride = kD;
  /* S_b = state + b*state_seq_stride, then the final state written there; the state after
   * token t < K-1 at inter + b*inter_seq_stride + t*inter_tok_stride */
  args->states.state = state;
  args->states.state_seq_stride = kD * kD;
  args->states.inter = inter;
  args->states.inter_seq_stride = (kK - 1) * kD * kD;
  args->states.inter_tok_stride = kD * kD;
}

/* The variant's launch checks without a GPU: good arguments pass, bad ones are named. */
static void check_without_gpu(void) {
  /* Host memory: the checks read the argument values only, never the memory. */
  static float rows[kBatch * kK][kD], gates[kBatch * kK], tiles[kBatch * kK][kD * kD];
  wyjit_gdn_verify_args args;
  verify_args(&args, rows, rows, rows, gates, gates, rows, tiles[0], tiles[kBatch]);
  CHECK(wyjit_check_gdn_verify(kVariant, &args));
  args.states.inter_tok_stride = 1;
  EXPECT(wyjit_check_gdn_verify(kVariant, &args) == WYJIT_ERROR_INVALID_ARGUMENT);
  EXPECT(strstr(wyjit_last_error(), "inter_tok_stride") != NULL);
  args.states.inter_tok_stride = kD * kD;
  /* Another family's variant, and a struct of another size, are refused. */
  EXPECT(wyjit_check_gdn_verify("conv1d_update.k4.io_bf16.w4.wt_bf16.window.slot.silu", &args) ==
         WYJIT_ERROR_INVALID_ARGUMENT);
  EXPECT(strstr(wyjit_last_error(), "conv1d_update") != NULL);
  args.struct_size -= 8;
  EXPECT(wyjit_check_gdn_verify(kVariant, &args) == WYJIT_ERROR_INVALID_ARGUMENT);
  EXPECT(strstr(wyjit_last_error(), "struct_size") != NULL);
  printf("launch checks: good arguments pass, bad ones are named\n");
}

static void* device_copy(const void* host, size_t bytes) {
  void* p = NULL;
  CHECK(wyjit_mem_alloc(bytes, &p));
  CHECK(wyjit_memcpy_htod(p, host, bytes));
  return p;
}

/* One launch of kVariant on device 0, checked against the sequential recurrence in double. */
static void launch_and_check(wyjit_jit* jit) {
  enum { kRows = kBatch * kK, kTile = kD * kD };
  static float q[kRows][kD], k[kRows][kD], v[kRows][kD], g[kRows], beta[kRows];
  static float state[kBatch][kTile], inter[kBatch][kK - 1][kTile], out[kRows][kD];
  static double want_out[kRows][kD], want_state[kBatch][kTile], want_inter[kBatch][kK - 1][kTile];
  const float scale = (float)(1.0 / sqrt((double)kD));
  int r, b, t, i, j;
  void *d_q, *d_k, *d_v, *d_g, *d_beta, *d_state, *d_inter, *d_out;
  wyjit_kernel* kernel = NULL;
  wyjit_gdn_verify_args args;
  char name[128];

  for (r = 0; r < kRows; ++r) {
    unit_row(q[r], kD);
    unit_row(k[r], kD);
    for (j = 0; j < kD; ++j) v[r][j] = uniform(-1.0f, 1.0f);
    g[r] = uniform(-1.0f, -0.01f);
    beta[r] = uniform(0.05f, 0.95f);
  }
  for (b = 0; b < kBatch; ++b)
    for (i = 0; i < kTile; ++i) state[b][i] = uniform(-0.5f, 0.5f);

  /* Reference. Layout vk: element (i over dk, j over dv) of a state at j*dk + i. */
  for (b = 0; b < kBatch; ++b) {
    static double s[kTile];
    for (i = 0; i < kTile; ++i) s[i] = state[b][i];
    for (t = 0; t < kK; ++t) {
      double u[kD];
      r = b * kK + t;
      for (i = 0; i < kTile; ++i) s[i] *= exp((double)g[r]);
      for (j = 0; j < kD; ++j) {
        double pred = 0;
        for (i = 0; i < kD; ++i) pred += s[j * kD + i] * k[r][i];
        u[j] = beta[r] * (v[r][j] - pred);
      }
      for (j = 0; j < kD; ++j)
        for (i = 0; i < kD; ++i) s[j * kD + i] += k[r][i] * u[j];
      for (j = 0; j < kD; ++j) {
        double o = 0;
        for (i = 0; i < kD; ++i) o += s[j * kD + i] * scale * q[r][i];
        want_out[r][j] = o;
      }
      for (i = 0; i < kTile; ++i) {
        if (t < kK - 1)
          want_inter[b][t][i] = s[i];
        else
          want_state[b][i] = s[i];
      }
    }
  }

  CHECK(wyjit_device_make_current(0));
  for (r = 0; r < kRows; ++r)
    for (j = 0; j < kD; ++j) out[r][j] = NAN;
  d_q = device_copy(q, sizeof q);
  d_k = device_copy(k, sizeof k);
  d_v = device_copy(v, sizeof v);
  d_g = device_copy(g, sizeof g);
  d_beta = device_copy(beta, sizeof beta);
  d_state = device_copy(state, sizeof state);
  d_inter = device_copy(inter, sizeof inter);
  d_out = device_copy(out, sizeof out);

  CHECK(wyjit_jit_get_kernel(jit, kVariant, &kernel));
  CHECK(wyjit_kernel_name(kernel, name, sizeof name, NULL));
  EXPECT(strcmp(name, kVariant) == 0);
  verify_args(&args, d_q, d_k, d_v, d_g, d_beta, d_out, d_state, d_inter);
  EXPECT(args.scale == scale);
  CHECK(wyjit_launch_gdn_verify(kernel, &args, NULL));
  CHECK(wyjit_device_synchronize());
  CHECK(wyjit_memcpy_dtoh(out, d_out, sizeof out));
  CHECK(wyjit_memcpy_dtoh(state, d_state, sizeof state));
  CHECK(wyjit_memcpy_dtoh(inter, d_inter, sizeof inter));
  {
    const double e_out = max_rel_err(&out[0][0], &want_out[0][0], kRows * kD);
    const double e_state = max_rel_err(&state[0][0], &want_state[0][0], kBatch * kTile);
    const double e_inter =
        max_rel_err(&inter[0][0][0], &want_inter[0][0][0], kBatch * (kK - 1) * kTile);
    printf("launch: relative error out %.3g, final state %.3g, intermediate states %.3g\n", e_out,
           e_state, e_inter);
    EXPECT(e_out <= 1e-4 && e_state <= 1e-4 && e_inter <= 1e-4);
  }
  /* A bad launch is refused with a message naming the argument. */
  args.q = NULL;
  EXPECT(wyjit_launch_gdn_verify(kernel, &args, NULL) == WYJIT_ERROR_INVALID_ARGUMENT);
  EXPECT(strstr(wyjit_last_error(), "args.q is null") != NULL);
  CHECK(wyjit_mem_free(d_q));
  CHECK(wyjit_mem_free(d_k));
  CHECK(wyjit_mem_free(d_v));
  CHECK(wyjit_mem_free(d_g));
  CHECK(wyjit_mem_free(d_beta));
  CHECK(wyjit_mem_free(d_state));
  CHECK(wyjit_mem_free(d_inter));
  CHECK(wyjit_mem_free(d_out));
}

int main(int argc, char** argv) {
  static const char* const kFields[] = {"k", "io", "dk", "dv"};
  static const char* const kValues[] = {"2", "f32", "64", "64"};
  static const char* const kBadK[] = {"40"};
  const char* names[1];
  wyjit_status statuses[1] = {WYJIT_ERROR_INTERNAL};
  wyjit_jit_options options;
  wyjit_jit* jit = NULL;
  wyjit_counters counters;
  wyjit_field_info field;
  char name[128];
  size_t length = 0, count = 0, i;
  int32_t devices = 0;
  int found = 0;

  if (argc != 2) {
    fprintf(stderr, "usage: %s CACHE_DIR\n", argv[0]);
    return 2;
  }
  printf("wyjit %s (header %d.%d.%d)\n", wyjit_version_string(), WYJIT_VERSION_MAJOR,
         WYJIT_VERSION_MINOR, WYJIT_VERSION_PATCH);
  EXPECT(wyjit_version() == WYJIT_VERSION);

  /* The families, and one family's fields as the library describes them. */
  for (i = 0; i < wyjit_family_count(); ++i) {
    if (strcmp(wyjit_family_name(i), "gdn_verify") == 0) found = 1;
  }
  EXPECT(found && wyjit_family_name(wyjit_family_count()) == NULL);
  CHECK(wyjit_family_field_count("gdn_verify", &count));
  EXPECT(count > 2);
  field.struct_size = sizeof field;
  CHECK(wyjit_family_field("gdn_verify", 0, &field));
  EXPECT(strcmp(field.name, "k") == 0 && field.kind == WYJIT_FIELD_INTEGER && field.min == 1);
  CHECK(wyjit_family_field("gdn_verify", 1, &field));
  EXPECT(strcmp(field.name, "io") == 0 && field.kind == WYJIT_FIELD_CHOICE);
  EXPECT(field.default_value >= 0 && (size_t)field.default_value < field.num_choices);
  printf("gdn_verify has %u fields; io is one of %u dtypes, default %s\n", (unsigned)count,
         (unsigned)field.num_choices, field.choices[field.default_value]);
  EXPECT(wyjit_family_field_count("gdn_replay_nope", &count) == WYJIT_ERROR_INVALID_SPEC);

  /* A name from field values (the others at their defaults); text out asks for the length
   * first; a bad name or value is refused with the field named. */
  CHECK(wyjit_spec_build("gdn_verify", kFields, kValues, 4, NULL, 0, &length));
  EXPECT(length == strlen(kVariant));
  EXPECT(wyjit_spec_build("gdn_verify", kFields, kValues, 4, name, length, NULL) ==
         WYJIT_ERROR_INVALID_ARGUMENT);
  CHECK(wyjit_spec_build("gdn_verify", kFields, kValues, 4, name, sizeof name, NULL));
  EXPECT(strcmp(name, kVariant) == 0);
  CHECK(wyjit_spec_validate(kVariant));
  CHECK(wyjit_spec_field(kVariant, "k", name, sizeof name, NULL));
  EXPECT(strcmp(name, "2") == 0);
  CHECK(wyjit_spec_field(kVariant, "family", name, sizeof name, NULL));
  EXPECT(strcmp(name, "gdn_verify") == 0);
  EXPECT(wyjit_spec_validate("gdn_verify.k40.io_f32.st_f32.strided.vk.d64") ==
         WYJIT_ERROR_INVALID_SPEC);
  EXPECT(strstr(wyjit_last_error(), "K is 40") != NULL);
  EXPECT(wyjit_spec_build("gdn_verify", kFields, kBadK, 1, name, sizeof name, NULL) ==
         WYJIT_ERROR_INVALID_SPEC);
  EXPECT(strstr(wyjit_last_error(), "K is 40") != NULL);

  check_without_gpu();

  /* NVRTC compile into a fresh cache: needs no GPU. */
  wyjit_jit_options_init(&options);
  options.cache_dir = argv[1];
  options.no_jit = 0;
  CHECK(wyjit_jit_create(&options, &jit));
  names[0] = kVariant;
  CHECK(wyjit_precompile(jit, names, 1, "sm_90", 1, statuses));
  EXPECT(statuses[0] == WYJIT_OK);
  wyjit_counters_init(&counters);
  CHECK(wyjit_jit_get_counters(jit, &counters));
  printf("compiled %s for sm_90 in %.0f ms into %s\n", kVariant, counters.compile_ms_total,
         wyjit_jit_cache_dir(jit));
  EXPECT(counters.compiles == 1);

  CHECK(wyjit_device_count(&devices));
  if (devices == 0) {
    printf("no CUDA device (%s): launch skipped\n", wyjit_device_unavailable_reason());
  } else {
    launch_and_check(jit);
  }
  wyjit_jit_destroy(jit);
  printf("C consumer: OK\n");
  return 0;
}
