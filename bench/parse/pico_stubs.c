/* picohttpparser (h2o's request parser) as a C peer of Httpz.Request.parse
   in bench_parse, in two builds:
     slot 0: Debian's, exported by libh2o-evloop.so (libh2o-evloop-dev),
             compiled without SSE4.2;
     slot 1: an SSE4.2 build of its C source, made at bench time by
             bench/parse/pico_sse42.sh (the path comes from the caller).
   Both are loaded with dlopen, so nothing is needed to build the benchmark
   and a missing build only removes its column. They export the same
   symbol names; RTLD_LOCAL and dlsym on each handle keep them apart.

   Comparable work: phr_parse_request records the method, path, minor
   version and every header name/value as pointer + length into a
   caller-provided array, as httpz records spans; nothing is copied. The
   timed loop and the clock run in C, as for http_parser. */
#include <dlfcn.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>
#include <caml/mlvalues.h>
#include <caml/bigarray.h>

/* picohttpparser.h's ABI (stable since 2014; Debian ships no header). */
struct phr_header {
  const char *name;
  size_t name_len;
  const char *value;
  size_t value_len;
};
typedef int (*parse_request_fn)(const char *buf, size_t len, const char **method,
                                size_t *method_len, const char **path, size_t *path_len,
                                int *minor_version, struct phr_header *headers,
                                size_t *num_headers, size_t last_len);

#define SLOTS 2
/* httpz's default max_headers is 100; headers50 needs 50. */
#define MAX_FIELDS 128
#define UNAVAILABLE (-2)

static parse_request_fn parse_request[SLOTS];
static struct phr_header headers[MAX_FIELDS];
static size_t num_headers;

/* Loads slot [which] from the shared library [path]: 0 on success, -1 if
   it cannot be loaded or has no phr_parse_request. */
value httpz_bench_pico_open(value which, value path)
{
  long w = Long_val(which);
  void *h, *f;
  if (w < 0 || w >= SLOTS) return Val_long(-1);
  h = dlopen(String_val(path), RTLD_NOW | RTLD_LOCAL);
  if (h == NULL) return Val_long(-1);
  f = dlsym(h, "phr_parse_request");
  if (f == NULL) return Val_long(-1);
  parse_request[w] = (parse_request_fn)f;
  return Val_long(0);
}

/* One request head: the header count, or -1 when the parser rejects it or
   the head is incomplete (it returns the head's length otherwise; a body
   after the head, as large.http announces, is not its business). */
static int parse_once(parse_request_fn f, const char *buf, size_t len)
{
  const char *method, *path;
  size_t method_len, path_len;
  int minor, r;
  num_headers = MAX_FIELDS;
  r = f(buf, len, &method, &method_len, &path, &path_len, &minor, headers, &num_headers, 0);
  return r > 0 ? (int)num_headers : -1;
}

static intnat now_ns(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (intnat)ts.tv_sec * 1000000000 + (intnat)ts.tv_nsec;
}

static parse_request_fn slot(intnat which)
{
  return which >= 0 && which < SLOTS ? parse_request[which] : NULL;
}

/* Parses bytes [0, len) of the bigstring n times with slot [which]: the
   elapsed ns, -1 if any parse failed, -2 if the slot is not loaded. */
intnat httpz_bench_pico_loop(intnat which, value vbuf, intnat len, intnat n)
{
  parse_request_fn f = slot(which);
  const char *buf = (const char *)Caml_ba_data_val(vbuf);
  int bad = 0;
  intnat i, t0, t1;
  if (f == NULL) return UNAVAILABLE;
  if (len < 0 || len > Caml_ba_array_val(vbuf)->dim[0]) return -1;
  t0 = now_ns();
  for (i = 0; i < n; i++) bad |= parse_once(f, buf, (size_t)len) < 0;
  t1 = now_ns();
  return bad ? -1 : t1 - t0;
}

value httpz_bench_pico_loop_byte(value w, value vbuf, value vlen, value vn)
{
  return Val_long(httpz_bench_pico_loop(Long_val(w), vbuf, Long_val(vlen), Long_val(vn)));
}

/* The header count of one parse, -1 on a failure, -2 if not loaded. */
intnat httpz_bench_pico_headers(intnat which, value vbuf, intnat len)
{
  parse_request_fn f = slot(which);
  if (f == NULL) return UNAVAILABLE;
  if (len < 0 || len > Caml_ba_array_val(vbuf)->dim[0]) return -1;
  return parse_once(f, (const char *)Caml_ba_data_val(vbuf), (size_t)len);
}

value httpz_bench_pico_headers_byte(value w, value vbuf, value vlen)
{
  return Val_long(httpz_bench_pico_headers(Long_val(w), vbuf, Long_val(vlen)));
}

/* The span of header [i] of the last parse of [vbuf], packed as
   off lsl 31 lor len (name when what = 0, value otherwise), for the
   cross-check against httpz; -1 when out of range. */
intnat httpz_bench_pico_span(value vbuf, intnat what, intnat i)
{
  const char *base = (const char *)Caml_ba_data_val(vbuf);
  if (i < 0 || (size_t)i >= num_headers) return -1;
  if (what == 0)
    return ((intnat)(headers[i].name - base) << 31) | (intnat)headers[i].name_len;
  return ((intnat)(headers[i].value - base) << 31) | (intnat)headers[i].value_len;
}

value httpz_bench_pico_span_byte(value vbuf, value w, value i)
{
  return Val_long(httpz_bench_pico_span(vbuf, Long_val(w), Long_val(i)));
}
