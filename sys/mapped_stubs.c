/* Bigstrings over anonymous mappings, for the buffer pool (Mapped, for server/buffer_pool.ml).
   A bigstring made by Bigarray.create lives in malloc's heap and is freed
   only when the major GC finalizes it; a worker whose loop allocates nothing
   never runs that GC, and glibc keeps large freed blocks anyway. These are
   mapped with mmap(2) and given back with munmap(2) the moment the pool
   drops them, so a request's body memory ends with the request. */

#define _GNU_SOURCE
#include <errno.h>
#include <stdint.h>
#include <sys/mman.h>

#define CAML_NAME_SPACE
#include <caml/bigarray.h>
#include <caml/fail.h>
#include <caml/memory.h>
#include <caml/mlvalues.h>

/* mmap of [len] > 0 bytes, wrapped as an external bigstring (its finalizer
   frees nothing: httpz_buffer_unmap does). Raises Out_of_memory when the
   mapping fails. Allocates the bigarray header on the OCaml heap. */
static value map_anonymous(value vlen, int sharing, const char *empty) {
  intnat len = Long_val(vlen);
  if (len <= 0) caml_invalid_argument(empty);
  void *p = mmap(NULL, (size_t)len, PROT_READ | PROT_WRITE, sharing | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) caml_raise_out_of_memory();
  return caml_ba_alloc_dims(CAML_BA_CHAR | CAML_BA_C_LAYOUT | CAML_BA_EXTERNAL, 1, p, len);
}

CAMLprim value httpz_buffer_map(value vlen) {
  return map_anonymous(vlen, MAP_PRIVATE, "Buffer_pool: mapping of no bytes");
}

/* munmap of a bigstring made by httpz_buffer_map; it is left with length 0
   and no data, so a checked access to it after this fails instead of
   touching unmapped memory. Idempotent. 0, or -errno. */
CAMLprim value httpz_buffer_unmap(value b) {
  struct caml_ba_array *ba = Caml_ba_array_val(b);
  int r = 0;
  if (ba->data != NULL && ba->dim[0] > 0 && munmap(ba->data, (size_t)ba->dim[0]) < 0) r = -errno;
  ba->data = NULL;
  ba->dim[0] = 0;
  return Val_long(r);
}

/* A zero-filled MAP_SHARED anonymous mapping: after fork(2), parent and
   children see the same bytes (counters several workers write). */
CAMLprim value httpz_buffer_map_shared(value vlen) {
  return map_anonymous(vlen, MAP_SHARED, "Mapped.map_shared: mapping of no bytes");
}

/* Atomic compare-and-swap of the aligned 64-bit word at [off]: 1 when it
   held [expected] and now holds [desired], else 0 (also for an offset out
   of range or not 8-aligned). */
CAMLprim intnat httpz_buffer_cas64(value b, intnat off, intnat expected, intnat desired) {
  struct caml_ba_array *ba = Caml_ba_array_val(b);
  if (off < 0 || (off & 7) != 0 || (uintnat)off + 8 > (uintnat)ba->dim[0]) return 0;
  int64_t *p = (int64_t *)((char *)ba->data + off);
  int64_t e = (int64_t)expected;
  return __atomic_compare_exchange_n(p, &e, (int64_t)desired, 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
}
CAMLprim value httpz_buffer_cas64_byte(value b, value off, value expected, value desired) {
  return Val_long(httpz_buffer_cas64(b, Long_val(off), Long_val(expected), Long_val(desired)));
}
