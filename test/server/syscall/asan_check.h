/* The checks both ASan drivers print: one line per check, and the counts
   their summary line reports. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int passed, failed;

static void check(int cond, const char *what) {
  if (cond) {
    passed++;
    printf("ok   %s\n", what);
  } else {
    failed++;
    printf("FAIL %s\n", what);
  }
}

static void check_eq(long got, long want, const char *what) {
  if (got == want) {
    passed++;
    printf("ok   %s\n", what);
  } else {
    failed++;
    printf("FAIL %s: got %ld, want %ld\n", what, got, want);
  }
}

/* A heap copy of [s] with no terminator and no slack. */
static unsigned char *exact(const char *s, size_t n) {
  unsigned char *p = malloc(n == 0 ? 1 : n);
  if (p == NULL) abort();
  memcpy(p, s, n);
  return p;
}

