/* Monotonic clock for the benchmarks. [@@noalloc] + [@untagged]: the
   OCaml side gets a raw int in a register, so timing an operation adds
   one vDSO call and allocates nothing (Unix.gettimeofday boxes a float). */
#include <time.h>
#include <caml/mlvalues.h>

intnat httpz_bench_now_ns(value unit)
{
  struct timespec ts;
  (void)unit;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (intnat)ts.tv_sec * 1000000000 + (intnat)ts.tv_nsec;
}

value httpz_bench_now_ns_byte(value unit)
{
  return Val_long(httpz_bench_now_ns(unit));
}
