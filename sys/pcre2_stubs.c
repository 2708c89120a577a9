/* Regular expressions through PCRE2 (the engine nginx uses), with its JIT
   where the machine has one: compile once at start-up (allocates), match
   per request without allocating. A compiled pattern owns its match data,
   so a pattern is used by one thread at a time (a worker's loop). */

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>
#include <string.h>

#define CAML_NAME_SPACE
#include <caml/alloc.h>
#include <caml/bigarray.h>
#include <caml/custom.h>
#include <caml/fail.h>
#include <caml/memory.h>
#include <caml/mlvalues.h>

struct hz_re { pcre2_code *code; pcre2_match_data *md; int jit; };

/* One match context for every pattern of the process: bounds on the work
   one match may do (a pattern that backtracks catastrophically on a
   hostile path costs at most this, then counts as an error, never as "no
   match"), and the JIT's stack. Made at the first compile (start-up). */
static pcre2_match_context *hz_mctx;

static void hz_mctx_init(void) {
  if (hz_mctx) return;
  hz_mctx = pcre2_match_context_create(NULL);
  if (!hz_mctx) return;
  pcre2_set_match_limit(hz_mctx, 100000);
  pcre2_set_depth_limit(hz_mctx, 10000);
  pcre2_set_heap_limit(hz_mctx, 1024); /* KiB */
  pcre2_jit_stack *js = pcre2_jit_stack_create(32 * 1024, 512 * 1024, NULL);
  if (js) pcre2_jit_stack_assign(hz_mctx, NULL, js);
}

#define Re_val(v) ((struct hz_re *)Data_custom_val(v))

static void hz_re_finalize(value v) {
  struct hz_re *r = Re_val(v);
  if (r->md) pcre2_match_data_free(r->md);
  if (r->code) pcre2_code_free(r->code);
  r->md = NULL; r->code = NULL;
}

static struct custom_operations hz_re_ops = {
  "httpz.pcre2", hz_re_finalize, custom_compare_default, custom_hash_default,
  custom_serialize_default, custom_deserialize_default, custom_compare_ext_default,
  custom_fixed_length_default};

/* [httpz_pcre2_compile pattern caseless]: Ok re | Error (message, offset),
   built here (0 = Ok, 1 = Error). UTF-8 mode is off: paths are bytes. */
CAMLprim value httpz_pcre2_compile(value pattern, value caseless) {
  CAMLparam2(pattern, caseless);
  CAMLlocal3(res, re, err);
  int errcode; PCRE2_SIZE erroff;
  hz_mctx_init();
  uint32_t opts = Bool_val(caseless) ? PCRE2_CASELESS : 0;
  pcre2_code *code = pcre2_compile((PCRE2_SPTR)String_val(pattern), caml_string_length(pattern), opts,
                                   &errcode, &erroff, NULL);
  if (code == NULL) {
    PCRE2_UCHAR buf[256];
    if (pcre2_get_error_message(errcode, buf, sizeof buf) < 0) strcpy((char *)buf, "malformed pattern");
    err = caml_alloc_tuple(2);
    Store_field(err, 0, caml_copy_string((const char *)buf));
    Store_field(err, 1, Val_long((long)erroff));
    res = caml_alloc(1, 1);
    Store_field(res, 0, err);
    CAMLreturn(res);
  }
  pcre2_match_data *md = pcre2_match_data_create_from_pattern(code, NULL);
  if (md == NULL) { pcre2_code_free(code); caml_raise_out_of_memory(); }
  int jit = pcre2_jit_compile(code, PCRE2_JIT_COMPLETE) == 0;
  re = caml_alloc_custom(&hz_re_ops, sizeof(struct hz_re), 0, 1);
  Re_val(re)->code = code; Re_val(re)->md = md; Re_val(re)->jit = jit;
  res = caml_alloc(1, 0);
  Store_field(res, 0, re);
  CAMLreturn(res);
}

CAMLprim value httpz_pcre2_captures(value re) {
  uint32_t n = 0;
  pcre2_pattern_info(Re_val(re)->code, PCRE2_INFO_CAPTURECOUNT, &n);
  return Val_long(n);
}

CAMLprim value httpz_pcre2_jit(value re) { return Val_bool(Re_val(re)->jit); }

/* [httpz_pcre2_match re buf off len ovec]: the number of pairs set in
   [ovec] (offsets relative to [off]; an unset group is -1, -1), 0 when
   there is no match, or a PCRE2 error code (< 0; the match limit, say).
   [ovec] holds 2 * (captures + 1) ints at least, or fewer pairs are
   written. Allocates nothing: [noalloc] on the OCaml side. */
CAMLprim value httpz_pcre2_match(value re, value buf, value voff, value vlen, value ovec) {
  struct hz_re *r = Re_val(re);
  const unsigned char *s = (const unsigned char *)Caml_ba_data_val(buf) + Long_val(voff);
  PCRE2_SIZE len = Long_val(vlen);
  int rc = r->jit ? pcre2_jit_match(r->code, s, len, 0, 0, r->md, hz_mctx)
                  : pcre2_match(r->code, s, len, 0, 0, r->md, hz_mctx);
  if (rc == PCRE2_ERROR_NOMATCH) return Val_long(0);
  if (rc < 0) return Val_long(rc);
  PCRE2_SIZE *ov = pcre2_get_ovector_pointer(r->md);
  uint32_t pairs = pcre2_get_ovector_count(r->md);
  mlsize_t room = Wosize_val(ovec) / 2;
  if (pairs > room) pairs = room;
  if (pairs == 0) return Val_long(-100); /* no room for the match itself: a caller's error */
  if (rc == 0 || (uint32_t)rc > pairs) rc = pairs; /* ovector too small for every group */
  for (uint32_t i = 0; i < pairs; i++) {
    long a = ov[2 * i] == PCRE2_UNSET ? -1 : (long)ov[2 * i];
    long b = ov[2 * i + 1] == PCRE2_UNSET ? -1 : (long)ov[2 * i + 1];
    Field(ovec, 2 * i) = Val_long(a);
    Field(ovec, 2 * i + 1) = Val_long(b);
  }
  return Val_long(rc);
}
