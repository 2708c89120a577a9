/* Raw deflate streams (RFC 1951) for WebSocket permessage-deflate, one
   zlib call per stub. camlzip (Debian's libzip-ocaml-dev) is not used: its
   Zlib.deflate_init has no window-bits parameter (RFC 7692's
   server_max_window_bits needs one) and it works on bytes, not
   bigstrings. Handles are the z_stream's address as an immediate int, as
   in tls_stubs.c. */
#include <stdlib.h>
#include <string.h>
#include <zlib.h>
#define CAML_NAME_SPACE
#include <caml/mlvalues.h>
#include <caml/bigarray.h>

/* [deflate] != 0: a compressor of window 2^wbits at [level]; else a
   decompressor. 0 when zlib refuses (memory). */
CAMLprim value httpz_zstream_create(value deflate, value wbits, value level) {
  z_stream *z = calloc(1, sizeof(z_stream));
  int r;
  if (z == NULL) return Val_long(0);
  if (Int_val(deflate))
    r = deflateInit2(z, Int_val(level), Z_DEFLATED, -Int_val(wbits), 8, Z_DEFAULT_STRATEGY);
  else
    r = inflateInit2(z, -Int_val(wbits));
  if (r != Z_OK) {
    free(z);
    return Val_long(0);
  }
  /* zlib's default allocator (zalloc was NULL) ignores [opaque]: it
     marks the kind of stream. */
  z->opaque = Int_val(deflate) ? (voidpf)1 : (voidpf)0;
  return Val_long((intnat)z);
}

#define ZS(v) ((z_stream *)Long_val(v))

CAMLprim value httpz_zstream_free(value h) {
  z_stream *z = ZS(h);
  if (z == NULL) return Val_unit;
  if (z->opaque) deflateEnd(z); else inflateEnd(z);
  free(z);
  return Val_unit;
}

CAMLprim value httpz_zstream_reset(value h) {
  z_stream *z = ZS(h);
  if (z->opaque) deflateReset(z); else inflateReset(z);
  return Val_unit;
}

/* One deflate() or inflate() over src[soff, soff+slen) into
   dst[doff, doff+dlen): the result packs the zlib status class (0 ok,
   1 stream end, 2 no progress possible, 3 error) in bits 0-1, the bytes
   used of src in bits 2-31 and the bytes written in bits 32-61 (callers
   keep each call under 2^29 bytes). */
CAMLprim value httpz_zstream_step(value h, value src, value soff, value slen, value dst, value doff,
                                  value dlen, value flush) {
  z_stream *z = ZS(h);
  unsigned char *s = (unsigned char *)Caml_ba_data_val(src) + Long_val(soff);
  unsigned char *d = (unsigned char *)Caml_ba_data_val(dst) + Long_val(doff);
  int r, cls;
  z->next_in = s;
  z->avail_in = (uInt)Long_val(slen);
  z->next_out = d;
  z->avail_out = (uInt)Long_val(dlen);
  r = z->opaque ? deflate(z, Int_val(flush)) : inflate(z, Int_val(flush));
  cls = r == Z_OK ? 0 : r == Z_STREAM_END ? 1 : r == Z_BUF_ERROR ? 2 : 3;
  intnat used_in = Long_val(slen) - (intnat)z->avail_in;
  intnat used_out = Long_val(dlen) - (intnat)z->avail_out;
  return Val_long(cls | (used_in << 2) | (used_out << 32));
}

CAMLprim value httpz_zstream_step_byte(value *argv, int argn) {
  (void)argn;
  return httpz_zstream_step(argv[0], argv[1], argv[2], argv[3], argv[4], argv[5], argv[6], argv[7]);
}
