/* Node's C http_parser (Debian libhttp-parser-dev) as a differential oracle
   for Httpz.Request.parse: one call parses one request head held in an
   OCaml string and returns the verdict and the facts it parsed (see
   hp.mli for the shape of the result).

   The parser is paused from on_headers_complete, so it never reads the
   body: the head alone is compared, as Httpz.Request sees it.

   Built with -DHAVE_HTTP_PARSER only when the header and library are
   present (see dune); otherwise the result says "unavailable" and the fuzz
   test fails with a message naming the missing package. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <caml/mlvalues.h>
#include <caml/memory.h>
#include <caml/alloc.h>

#define UNAVAILABLE (-2)

#ifdef HAVE_HTTP_PARSER
#include <http_parser.h>

/* More than the generator ever makes (30 fields plus duplicates); a head
   with more is reported as a harness error, not as a verdict. */
#define MAX_FIELDS 256

enum last_cb { NONE, FIELD, VALUE };

struct facts {
  const char *base;
  int url_off, url_len, url_seen;
  int n;
  int overflow;
  enum last_cb last;
  int complete;
  /* Copied in on_headers_complete: the flags and length are final there. */
  int flags, keep_alive, uses_te, method, major, minor;
  uint64_t content_length;
  int name_off[MAX_FIELDS], name_len[MAX_FIELDS];
  int value_off[MAX_FIELDS], value_len[MAX_FIELDS];
};

/* With the whole input in one execute call a callback may still deliver an
   element in pieces (http_parser flushes at some state changes), so pieces
   extend the current span. */
static int on_url(http_parser *p, const char *at, size_t len)
{
  struct facts *s = p->data;
  if (!s->url_seen) { s->url_off = (int)(at - s->base); s->url_seen = 1; }
  s->url_len = (int)(at - s->base) + (int)len - s->url_off;
  return 0;
}

static int on_header_field(http_parser *p, const char *at, size_t len)
{
  struct facts *s = p->data;
  if (s->last != FIELD) {
    if (s->n == MAX_FIELDS) { s->overflow = 1; return 1; }
    s->name_off[s->n] = (int)(at - s->base);
    s->name_len[s->n] = 0;
    s->value_off[s->n] = -1;
    s->value_len[s->n] = 0;
    s->n++;
    s->last = FIELD;
  }
  s->name_len[s->n - 1] = (int)(at - s->base) + (int)len - s->name_off[s->n - 1];
  return 0;
}

static int on_header_value(http_parser *p, const char *at, size_t len)
{
  struct facts *s = p->data;
  int i;
  if (s->n == 0) return 1;
  i = s->n - 1;
  if (s->last != VALUE) {
    s->value_off[i] = (int)(at - s->base);
    s->last = VALUE;
  }
  s->value_len[i] = (int)(at - s->base) + (int)len - s->value_off[i];
  return 0;
}

static int on_headers_complete(http_parser *p)
{
  struct facts *s = p->data;
  s->complete = 1;
  s->flags = p->flags;
  s->keep_alive = http_should_keep_alive(p);
  s->uses_te = p->uses_transfer_encoding;
  s->method = p->method;
  s->major = p->http_major;
  s->minor = p->http_minor;
  s->content_length = p->content_length;
  http_parser_pause(p, 1);
  return 0;
}

static const http_parser_settings settings = {
  .on_url = on_url,
  .on_header_field = on_header_field,
  .on_header_value = on_header_value,
  .on_headers_complete = on_headers_complete,
};

static struct facts facts;
#endif

/* The result block, in the order of Hp.raw's fields. */
enum {
  R_STATUS, R_ERRNO, R_USED, R_METHOD, R_URL_OFF, R_URL_LEN, R_MAJOR, R_MINOR,
  R_CL, R_FLAGS, R_KEEP_ALIVE, R_USES_TE, R_FIELDS, R_SIZE
};

value httpz_fuzz_hp_parse(value vs)
{
  CAMLparam1(vs);
  CAMLlocal4(r, str, fields, f);
#ifdef HAVE_HTTP_PARSER
  http_parser p;
  size_t len = caml_string_length(vs);
  size_t used;
  int i, status, e;
  char cl[24];
  memset(&facts, 0, sizeof facts);
  http_parser_init(&p, HTTP_REQUEST);
  p.data = &facts;
  facts.base = String_val(vs);
  used = http_parser_execute(&p, &settings, String_val(vs), len);
  e = HTTP_PARSER_ERRNO(&p);
  if (facts.complete) status = 0;           /* paused right after the head */
  else if (e != HPE_OK) status = 2;
  else status = 1;                          /* everything read, head not done */
  if (facts.overflow) status = 3;
  r = caml_alloc_tuple(R_SIZE);
  Store_field(r, R_STATUS, Val_int(status));
  str = caml_copy_string(facts.complete ? "HPE_OK" : http_errno_name(e));
  Store_field(r, R_ERRNO, str);
  Store_field(r, R_USED, Val_long((long)used));
  str = caml_copy_string(facts.complete ? http_method_str(facts.method) : "");
  Store_field(r, R_METHOD, str);
  Store_field(r, R_URL_OFF, Val_int(facts.url_seen ? facts.url_off : 0));
  Store_field(r, R_URL_LEN, Val_int(facts.url_seen ? facts.url_len : 0));
  Store_field(r, R_MAJOR, Val_int(facts.major));
  Store_field(r, R_MINOR, Val_int(facts.minor));
  /* As a decimal string: a uint64 does not fit OCaml's int. */
  if (facts.flags & F_CONTENTLENGTH)
    snprintf(cl, sizeof cl, "%llu", (unsigned long long)facts.content_length);
  else
    cl[0] = '\0';
  str = caml_copy_string(cl);
  Store_field(r, R_CL, str);
  Store_field(r, R_FLAGS, Val_int(facts.flags));
  Store_field(r, R_KEEP_ALIVE, Val_bool(facts.keep_alive));
  Store_field(r, R_USES_TE, Val_bool(facts.uses_te));
  fields = facts.n == 0 ? Atom(0) : caml_alloc_tuple((mlsize_t)facts.n);
  for (i = 0; i < facts.n; i++) {
    f = caml_alloc_tuple(4);
    Store_field(f, 0, Val_int(facts.name_off[i]));
    Store_field(f, 1, Val_int(facts.name_len[i]));
    Store_field(f, 2, Val_int(facts.value_off[i]));
    Store_field(f, 3, Val_int(facts.value_len[i]));
    Store_field(fields, i, f);
  }
  Store_field(r, R_FIELDS, fields);
  CAMLreturn(r);
#else
  (void)vs;
  r = caml_alloc_tuple(R_SIZE);
  Store_field(r, R_STATUS, Val_int(UNAVAILABLE));
  str = caml_copy_string("unavailable");
  Store_field(r, R_ERRNO, str);
  for (int i = R_USED; i < R_SIZE; i++) Store_field(r, i, Val_int(0));
  str = caml_copy_string("");
  Store_field(r, R_METHOD, str);
  Store_field(r, R_CL, str);
  Store_field(r, R_FIELDS, Atom(0));
  CAMLreturn(r);
#endif
}
