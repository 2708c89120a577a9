/* Random bytes from the kernel (getrandom(2)) and HMAC-SHA256 (OpenSSL's
   one-shot HMAC()), for session tokens and signed cookies. One call per
   stub; results as integers, negative = -errno. The stubs are [@@noalloc]:
   they neither allocate, raise nor release the runtime lock, so the OCaml
   strings and bytes they get cannot move while they run. */

#define _GNU_SOURCE
#include <errno.h>
#include <string.h>
#include <sys/random.h>

#include <openssl/evp.h>
#include <openssl/hmac.h>

#define CAML_NAME_SPACE
#include <caml/mlvalues.h>

/* getrandom into buf[off .. off+len); the caller checked the range. With
   flags 0 it blocks only until the pool is initialised at boot, and reads
   of up to 256 bytes are never short, but EINTR is possible for more. */
CAMLprim value httpz_random_getrandom(value buf, intnat off, intnat len) {
  ssize_t r = getrandom(Bytes_val(buf) + off, (size_t)len, 0);
  return Val_long(r < 0 ? -errno : r);
}
CAMLprim value httpz_random_getrandom_byte(value buf, value off, value len) {
  return httpz_random_getrandom(buf, Long_val(off), Long_val(len));
}

/* HMAC-SHA256(key, msg) into out[0 .. 32); 32, or -1 when OpenSSL fails. */
CAMLprim value httpz_hmac_sha256(value key, value msg, value out) {
  unsigned int n = 0;
  unsigned char *r = HMAC(EVP_sha256(), String_val(key), (int)caml_string_length(key),
                          (const unsigned char *)String_val(msg), caml_string_length(msg),
                          Bytes_val(out), &n);
  return Val_long(r == NULL || n != 32 ? -1 : 32);
}
