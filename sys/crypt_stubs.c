/* Password hashes (bcrypt $2b$/$2y$/$2a$, SHA-crypt $5$/$6$) through
   libcrypt's reentrant crypt: one call per stub. The runtime lock is
   released while it runs (a bcrypt of cost 10 takes tens of ms). */

#define _GNU_SOURCE
#include <crypt.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define CAML_NAME_SPACE
#include <caml/alloc.h>
#include <caml/memory.h>
#include <caml/mlvalues.h>
#include <caml/signals.h>

/* [httpz_crypt key setting]: Ok hash | Error errno (as an OCaml result
   built here: 0 = Ok of string, 1 = Error of int). crypt_rn returns NULL
   with errno set on failure (EINVAL for an unknown or malformed setting,
   ERANGE for a passphrase too long, ENOMEM). */
CAMLprim value httpz_crypt(value key, value setting) {
  CAMLparam2(key, setting);
  CAMLlocal2(res, s);
  size_t klen = caml_string_length(key), slen = caml_string_length(setting);
  char *k = malloc(klen + 1), *st = malloc(slen + 1);
  struct crypt_data *data = calloc(1, sizeof *data);
  int err = 0;
  char out[CRYPT_OUTPUT_SIZE];
  out[0] = 0;
  if (!k || !st || !data) err = ENOMEM;
  else if (memchr(String_val(key), 0, klen) || memchr(String_val(setting), 0, slen)) err = EINVAL;
  else {
    memcpy(k, String_val(key), klen + 1);
    memcpy(st, String_val(setting), slen + 1);
    caml_enter_blocking_section();
    errno = 0;
    char *h = crypt_rn(k, st, data, (int)sizeof *data);
    if (h == NULL) err = errno ? errno : EINVAL;
    else {
      strncpy(out, h, sizeof out - 1);
      out[sizeof out - 1] = 0;
    }
    caml_leave_blocking_section();
  }
  if (k) { explicit_bzero(k, klen); free(k); }
  free(st);
  if (data) { explicit_bzero(data, sizeof *data); free(data); }
  if (err) {
    res = caml_alloc(1, 1);
    Store_field(res, 0, Val_int(err));
  } else {
    s = caml_copy_string(out);
    res = caml_alloc(1, 0);
    Store_field(res, 0, s);
  }
  CAMLreturn(res);
}
