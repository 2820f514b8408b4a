// Run-time CPU feature detection and the LOOM_MAX_ISA cap.

#include "base/cpu_features.h"
#include "test_support.h"

static loom__cpu_features_t everything(void) {
  loom__cpu_features_t all = {true, true, true, true, true, true, true, true};
  return all;
}

static void detection_is_consistent(void** state) {
  (void)state;
  const loom__cpu_features_t* features = loom__cpu_features();
  assert_ptr_equal(features, loom__cpu_features());
  // Wider sets imply the narrower ones on every x86 CPU.
  if (features->avx512f) assert_true(features->avx2);
  if (features->avx2) assert_true(features->avx);
  if (features->avx) assert_true(features->sse4_2);
}

static void cap_avx2_drops_avx512_only(void** state) {
  (void)state;
  loom__cpu_features_t capped = loom__cpu_features_capped(everything(), "avx2");
  assert_false(capped.avx512f || capped.avx512bw || capped.avx512vl);
  assert_true(capped.avx2 && capped.fma && capped.avx && capped.sse4_2);
}

static void cap_sse2_drops_every_extension(void** state) {
  (void)state;
  loom__cpu_features_t capped = loom__cpu_features_capped(everything(), "sse2");
  assert_false(capped.sse4_2 || capped.avx || capped.avx2 || capped.fma ||
               capped.f16c || capped.avx512f);
}

static void cap_avx_keeps_avx_and_below(void** state) {
  (void)state;
  loom__cpu_features_t capped = loom__cpu_features_capped(everything(), "avx");
  assert_true(capped.avx && capped.sse4_2);
  assert_false(capped.avx2 || capped.fma || capped.avx512f);
}

static void unknown_or_missing_cap_changes_nothing(void** state) {
  (void)state;
  loom__cpu_features_t all = everything();
  loom__cpu_features_t a = loom__cpu_features_capped(all, "pentium");
  loom__cpu_features_t b = loom__cpu_features_capped(all, NULL);
  loom__cpu_features_t c = loom__cpu_features_capped(all, "avx512");
  assert_memory_equal(&a, &all, sizeof(all));
  assert_memory_equal(&b, &all, sizeof(all));
  assert_memory_equal(&c, &all, sizeof(all));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(detection_is_consistent),
      cmocka_unit_test(cap_avx2_drops_avx512_only),
      cmocka_unit_test(cap_sse2_drops_every_extension),
      cmocka_unit_test(cap_avx_keeps_avx_and_below),
      cmocka_unit_test(unknown_or_missing_cap_changes_nothing),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
