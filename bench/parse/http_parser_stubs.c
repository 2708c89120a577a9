/* Node's C http_parser (Debian libhttp-parser-dev) as the C peer of
   Httpz.Request.parse in bench_parse.

   Comparable work: httpz records the target and every header name/value
   as spans in a reusable state, so the callbacks here record the same
   spans (offset and length into the caller's buffer) into a reusable
   struct; nothing is copied. The timed loop runs inside C and reads the
   clock itself, so the figure excludes any OCaml-to-C call overhead.

   Built with -DHAVE_HTTP_PARSER only when the header and library are
   present (see dune); otherwise every entry point reports -2
   ("unavailable") and the benchmark leaves http_parser out. */
#include <stddef.h>
#include <stdint.h>
#include <time.h>
#include <caml/mlvalues.h>
#include <caml/bigarray.h>

#define UNAVAILABLE (-2)

#ifdef HAVE_HTTP_PARSER
#include <http_parser.h>

/* httpz's default max_headers is 100; headers50 needs 50. */
#define MAX_FIELDS 128

enum last_cb { NONE, FIELD, VALUE };

struct spans {
  const char *base;
  int url_off, url_len;
  int n;                       /* header fields seen */
  enum last_cb last;
  int complete;                /* on_headers_complete ran */
  int name_off[MAX_FIELDS], name_len[MAX_FIELDS];
  int value_off[MAX_FIELDS], value_len[MAX_FIELDS];
};

/* A callback may deliver one element in several pieces (only when the
   input is split across execute calls, never here), so pieces extend the
   current span rather than starting a new one. */
static int on_url(http_parser *p, const char *at, size_t len)
{
  struct spans *s = p->data;
  if (s->url_len == 0) s->url_off = (int)(at - s->base);
  s->url_len += (int)len;
  return 0;
}

static int on_header_field(http_parser *p, const char *at, size_t len)
{
  struct spans *s = p->data;
  if (s->last != FIELD) {
    if (s->n == MAX_FIELDS) return 1;
    s->name_off[s->n] = (int)(at - s->base);
    s->name_len[s->n] = 0;
    s->value_off[s->n] = s->name_off[s->n];
    s->value_len[s->n] = 0;
    s->n++;
    s->last = FIELD;
  }
  s->name_len[s->n - 1] += (int)len;
  return 0;
}

static int on_header_value(http_parser *p, const char *at, size_t len)
{
  struct spans *s = p->data;
  if (s->n == 0) return 1;
  if (s->last != VALUE) {
    s->value_off[s->n - 1] = (int)(at - s->base);
    s->last = VALUE;
  }
  s->value_len[s->n - 1] += (int)len;
  return 0;
}

static int on_headers_complete(http_parser *p)
{
  struct spans *s = p->data;
  s->complete = 1;
  return 0;
}

static const http_parser_settings settings = {
  .on_url = on_url,
  .on_header_field = on_header_field,
  .on_header_value = on_header_value,
  .on_headers_complete = on_headers_complete,
};

/* One request head: the header count, or -1 when http_parser rejects it
   or does not reach the end of the head. A request with a body (large.http
   is a POST whose body is not in the corpus) leaves the parser waiting for
   the body, which is fine: the head is what is compared. */
static int parse_once(http_parser *p, struct spans *s, const char *buf, size_t len)
{
  size_t used;
  http_parser_init(p, HTTP_REQUEST);
  p->data = s;
  s->base = buf;
  s->url_len = 0;
  s->n = 0;
  s->last = NONE;
  s->complete = 0;
  used = http_parser_execute(p, &settings, buf, len);
  if (used != len || HTTP_PARSER_ERRNO(p) != HPE_OK || !s->complete) return -1;
  return s->n;
}

static http_parser parser;
static struct spans spans;

static intnat now_ns(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (intnat)ts.tv_sec * 1000000000 + (intnat)ts.tv_nsec;
}
#endif

/* Parses bytes [0, len) of the bigstring n times; the elapsed ns, or -1
   if any parse failed. */
intnat httpz_bench_hp_loop(value vbuf, intnat len, intnat n)
{
#ifdef HAVE_HTTP_PARSER
  const char *buf = (const char *)Caml_ba_data_val(vbuf);
  int bad = 0;
  intnat i, t0, t1;
  if (len < 0 || len > Caml_ba_array_val(vbuf)->dim[0]) return -1;
  t0 = now_ns();
  for (i = 0; i < n; i++) bad |= parse_once(&parser, &spans, buf, (size_t)len) < 0;
  t1 = now_ns();
  return bad ? -1 : t1 - t0;
#else
  (void)vbuf; (void)len; (void)n;
  return UNAVAILABLE;
#endif
}

value httpz_bench_hp_loop_byte(value vbuf, value vlen, value vn)
{
  return Val_long(httpz_bench_hp_loop(vbuf, Long_val(vlen), Long_val(vn)));
}

/* The header count of one parse, -1 on a parse failure. */
intnat httpz_bench_hp_headers(value vbuf, intnat len)
{
#ifdef HAVE_HTTP_PARSER
  if (len < 0 || len > Caml_ba_array_val(vbuf)->dim[0]) return -1;
  return parse_once(&parser, &spans, (const char *)Caml_ba_data_val(vbuf), (size_t)len);
#else
  (void)vbuf; (void)len;
  return UNAVAILABLE;
#endif
}

value httpz_bench_hp_headers_byte(value vbuf, value vlen)
{
  return Val_long(httpz_bench_hp_headers(vbuf, Long_val(vlen)));
}

/* The span of header [i] of the last parse, packed as off lsl 31 lor len
   (name when which = 0, value otherwise), for the cross-check against
   httpz; -1 when out of range. */
intnat httpz_bench_hp_span(intnat which, intnat i)
{
#ifdef HAVE_HTTP_PARSER
  if (i < 0 || i >= spans.n) return -1;
  if (which == 0) return ((intnat)spans.name_off[i] << 31) | spans.name_len[i];
  return ((intnat)spans.value_off[i] << 31) | spans.value_len[i];
#else
  (void)which; (void)i;
  return -1;
#endif
}

value httpz_bench_hp_span_byte(value w, value i)
{
  return Val_long(httpz_bench_hp_span(Long_val(w), Long_val(i)));
}
