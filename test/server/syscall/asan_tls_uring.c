/* Exercises the C helpers of sys/tls_stubs.c (OpenSSL) and
   sys/uring_stubs.c (liburing) directly, built with
   -fsanitize=address,undefined by asan_test.sh: both files are included
   whole with HTTPZ_NO_OCAML, so the static helpers are in scope and no
   OCaml runtime is involved. Buffers are malloc'ed to their exact size, so
   a helper touching one byte past a span is an ASan error.

   argv[1], argv[2]: a PEM certificate and its key (asan_test.sh makes
   them). Prints one line per check and ends with "N passed, N failed". */

#define HTTPZ_NO_OCAML 1
#include "tls_stubs.c"
#include "uring_stubs.c"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

#include "asan_check.h"

static char *slurp(const char *path, size_t *n) {
  FILE *f = fopen(path, "rb");
  if (f == NULL) abort();
  fseek(f, 0, SEEK_END);
  long len = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *b = malloc((size_t)len);
  if (b == NULL || fread(b, 1, (size_t)len, f) != (size_t)len) abort();
  fclose(f);
  *n = (size_t)len;
  return b;
}

/* ------------------------------------------------------------------------ */
/* TLS */

/* Drives both ends of a handshake over a non-blocking socket pair. */
static int handshake_pair(SSL *server, SSL *client) {
  for (int i = 0; i < 200; i++) {
    long s = hz_tls_handshake(server);
    int c = SSL_do_handshake(client);
    if (s == 1 && c == 1) return 1;
    if (s == HZ_TLS_FAILED) return 0;
    if (c <= 0) {
      int e = SSL_get_error(client, c);
      if (e != SSL_ERROR_WANT_READ && e != SSL_ERROR_WANT_WRITE) return 0;
    }
  }
  return 0;
}

struct pair {
  int fds[2];
  SSL *server, *client;
};

static int open_pair(struct pair *p, SSL_CTX *sctx, SSL_CTX *cctx, SSL_SESSION *sess) {
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, p->fds) < 0) abort();
  p->server = hz_tls_new(sctx, p->fds[0]);
  p->client = SSL_new(cctx);
  SSL_set_fd(p->client, p->fds[1]);
  SSL_set_connect_state(p->client);
  if (sess != NULL) SSL_set_session(p->client, sess);
  return handshake_pair(p->server, p->client);
}

static void close_pair(struct pair *p) {
  /* A client that frees its connection without shutting it down marks its
     session not resumable (OpenSSL's rule): shut down as a client should. */
  SSL_shutdown(p->client);
  SSL_free(p->server);
  SSL_free(p->client);
  close(p->fds[0]);
  close(p->fds[1]);
}

/* Bytes waiting on the client's socket, without reading them. */
static int peer_has_bytes(int fd) {
  char c;
  return recv(fd, &c, 1, MSG_PEEK | MSG_DONTWAIT) > 0;
}

/* Reads and decrypts what the client can get now into [got] from [n]. */
static size_t client_drain(SSL *client, unsigned char *got, size_t n, size_t cap) {
  int r;
  while (n < cap && (r = SSL_read(client, got + n, (int)(cap - n))) > 0) n += (size_t)r;
  return n;
}

/* The write BIO's holding: records made while more follow wait until the
   write after the batch, then leave together; a socket that takes no more
   leaves the rest of one record waiting (counted by hz_tls_held, sent by
   hz_tls_flush), never more than a batch. Payloads arrive whole and in
   order. */
static void test_holding(struct pair *p) {
  enum { REC = 16384, TOTAL = 8 * REC + 100 };
  unsigned char *src = malloc(TOTAL), *got = malloc(TOTAL);
  for (size_t i = 0; i < TOTAL; i++) src[i] = (unsigned char)(i * 7 + i / 251);
  size_t off = 0, n = 0;
  hz_tls_set_more(p->server, 1);
  for (int i = 0; i < 3; i++, off += REC)
    check_eq(hz_tls_write(p->server, src, TOTAL, (long)off, REC), REC, "a record held while more follow");
  check(!peer_has_bytes(p->fds[1]), "held records not sent");
  check(hz_tls_held(p->server) > 3 * REC, "three records held");
  check(hz_tls_held(p->server) < 3 * REC + 3 * 64, "and their overhead only");
  check_eq((long)hz_tls_wbio(p->server)->cap, HZ_HOLD_MAX, "past two records, the holding is a whole batch's");
  hz_tls_set_more(p->server, 0);
  check_eq(hz_tls_write(p->server, src, TOTAL, (long)off, 100), 100, "the write after the batch");
  off += 100;
  check_eq(hz_tls_held(p->server), 0, "sends it all");
  check(peer_has_bytes(p->fds[1]), "the batch reached the socket");
  hz_tls_set_more(p->server, 1);
  check_eq(hz_tls_write(p->server, src, TOTAL, (long)off, REC), REC, "a record taken while more follow");
  check(hz_tls_held(p->server) > REC, "and held");
  check_eq((long)hz_tls_wbio(p->server)->cap, 2 * HZ_RECORD_MAX, "a batch's holding starts at two records");
  off += REC;
  check_eq(BIO_flush(SSL_get_wbio(p->server)), 1, "BIO_flush (after a flight, an alert) sends it");
  check_eq(hz_tls_held(p->server), 0, "nothing held after BIO_flush");
  check_eq(hz_tls_write(p->server, src, TOTAL, (long)off, REC), REC, "one more record taken");
  check(hz_tls_held(p->server) > REC, "and held");
  off += REC;
  check(hz_tls_flush(p->server, 0) > REC, "flush sends it");
  check_eq(hz_tls_held(p->server), 0, "nothing held after flush");
  check_eq(hz_tls_write(p->server, src, TOTAL, (long)off, 100), 100, "the write after flush is sent at once");
  check_eq(hz_tls_held(p->server), 0, "not held: flush ended the batch");
  off += 100;
  n = client_drain(p->client, got, n, TOTAL);
  check_eq((long)n, (long)off, "the client reads the batch");
  check(memcmp(got, src, n) == 0, "in order");
  check_eq(hz_tls_flush(p->server, 0), 0, "nothing to flush");

  /* A small socket the client does not read. */
  int small = 4096;
  setsockopt(p->fds[0], SOL_SOCKET, SO_SNDBUF, &small, sizeof small);
  setsockopt(p->fds[1], SOL_SOCKET, SO_RCVBUF, &small, sizeof small);
  long r = 0;
  while (off < TOTAL && (r = hz_tls_write(p->server, src, TOTAL, (long)off, TOTAL - off < REC ? TOTAL - off : REC)) > 0)
    off += (size_t)r;
  check_eq(r, HZ_TLS_WANT_WRITE, "a full socket: want write");
  check(hz_tls_held(p->server) > 0 && hz_tls_held(p->server) <= HZ_RECORD_MAX, "at most a record waits");
  check_eq((long)hz_tls_wbio(p->server)->cap, HZ_RECORD_MAX, "outside a batch, the holding is one record's");
  check_eq(hz_tls_flush(p->server, 0), HZ_TLS_WANT_WRITE, "flush into a full socket: want write");
  BIO *wbio = SSL_get_wbio(p->server);
  check(BIO_flush(wbio) <= 0 && BIO_should_write(wbio), "BIO_flush (as after a handshake flight) into a full socket: retry write");
  /* The client reads; the server flushes and retries until all is out. */
  int rounds = 0, sane = 1;
  while ((off < TOTAL || hz_tls_held(p->server) > 0) && rounds++ < 10000) {
    n = client_drain(p->client, got, n, TOTAL);
    if (hz_tls_held(p->server) > 0) {
      long f = hz_tls_flush(p->server, 0);
      sane &= f > 0 || f == HZ_TLS_WANT_WRITE;
      continue;
    }
    r = hz_tls_write(p->server, src, TOTAL, (long)off, TOTAL - off < REC ? TOTAL - off : REC);
    if (r > 0) off += (size_t)r;
    else if (r != HZ_TLS_WANT_WRITE) break;
  }
  check(sane, "flush: progress or want write, each time");
  check_eq((long)off, TOTAL, "every byte taken");
  check_eq(hz_tls_held(p->server), 0, "nothing held at the end");
  check_eq(BIO_flush(wbio), 1, "BIO_flush with nothing held: done");
  n = client_drain(p->client, got, n, TOTAL);
  check_eq((long)n, TOTAL, "the client got every byte");
  check(memcmp(got, src, TOTAL) == 0, "in order, whole");

  /* A batch into a full socket keeps at most HZ_HOLD_MAX. */
  hz_tls_set_more(p->server, 1);
  off = 0;
  while ((r = hz_tls_write(p->server, src, TOTAL, (long)(off % (TOTAL - REC)), REC)) > 0 && off < 64 * REC)
    off += (size_t)r;
  check_eq(r, HZ_TLS_WANT_WRITE, "a batch into a full socket: want write");
  check(hz_tls_held(p->server) <= HZ_HOLD_MAX, "the holding stays bounded");
  /* The refused record waits in OpenSSL: retried with the same bytes once
     the client reads, it goes after the batch. */
  hz_tls_set_more(p->server, 0);
  unsigned char *sink = malloc(64 * REC + REC);
  n = 0;
  rounds = 0;
  int progress = 1;
  while ((r = hz_tls_write(p->server, src, TOTAL, (long)(off % (TOTAL - REC)), REC)) <= 0 && rounds++ < 100000) {
    progress &= r == HZ_TLS_WANT_WRITE;
    n = client_drain(p->client, sink, n, 64 * REC + REC);
  }
  check(progress && r == REC, "the refused record, retried, is taken");
  off += REC;
  rounds = 0;
  while (hz_tls_held(p->server) > 0 && rounds++ < 100000) {
    n = client_drain(p->client, sink, n, 64 * REC + REC);
    long f = hz_tls_flush(p->server, 0);
    progress &= f > 0 || f == HZ_TLS_WANT_WRITE;
  }
  check(progress, "batch flush: progress or want write, each time");
  n = client_drain(p->client, sink, n, 64 * REC + REC);
  check_eq((long)n, (long)off, "the batch arrives whole");
  free(sink);
  free(src);
  free(got);
}

static void test_tls(const char *certfile, const char *keyfile) {
  size_t cl, kl;
  char *cert = slurp(certfile, &cl), *key = slurp(keyfile, &kl);
  check_eq(hz_tls_init_tickets(3600), 0, "ticket secret drawn");
  SSL_CTX *bad = hz_tls_ctx_create("junk", 4, key, kl, 0);
  check(bad == NULL && strstr(hz_tls_error(), "certificate") != NULL, "junk certificate refused, with a reason");
  bad = hz_tls_ctx_create(cert, cl, cert, cl, 0);
  check(bad == NULL, "a certificate as the key refused");
  SSL_CTX *ctx = hz_tls_ctx_create(cert, cl, key, kl, 0);
  check(ctx != NULL, "context from PEM certificate and key");
  if (ctx == NULL) return;

  SSL_CTX *cctx = SSL_CTX_new(TLS_client_method());
  SSL_CTX_set_session_cache_mode(cctx, SSL_SESS_CACHE_CLIENT);
  struct pair p;
  check(open_pair(&p, ctx, cctx, NULL), "handshake over a socket pair");
  check(!hz_tls_ktls_send(p.server), "no kTLS on a Unix socket");
  check_eq(hz_tls_sendfile(p.server, 0, 0, 1), HZ_TLS_FAILED, "sendfile without kTLS refused");
  ERR_clear_error();

  unsigned char *req = exact("GET / HTTP/1.1\r\n\r\n", 18);
  check_eq(SSL_write(p.client, req, 18), 18, "client writes a request");
  unsigned char *buf = malloc(18);
  check_eq(hz_tls_read(p.server, buf, 18, 0, 18), 18, "read into an exact-size buffer");
  check(memcmp(buf, req, 18) == 0, "decrypted bytes");
  check_eq(hz_tls_read(p.server, buf, 18, 0, 18), HZ_TLS_WANT_READ, "nothing more: want read");
  check_eq(hz_tls_read(p.server, buf, 18, 10, 9), HZ_TLS_FAILED, "span past the buffer refused");
  check_eq(hz_tls_read(p.server, buf, 18, -1, 2), HZ_TLS_FAILED, "negative offset refused");
  check_eq(SSL_write(p.client, req, 18), 18, "second request");
  check_eq(hz_tls_read(p.server, buf, 18, 9, 9), 9, "read half at an offset");
  check(SSL_has_pending(p.server) != 0, "the other half waits inside OpenSSL");
  check_eq(hz_tls_read(p.server, buf, 18, 0, 9), 9, "then the rest");
  check_eq(hz_tls_write(p.server, req, 18, 2, 16), 16, "write a span of an exact-size buffer");
  check_eq(hz_tls_write(p.server, req, 18, 2, 17), HZ_TLS_FAILED, "write span past the buffer refused");
  unsigned char got[32];
  int n = 0, r;
  while ((r = SSL_read(p.client, got + n, (int)sizeof got - n)) > 0) n += r;
  check_eq(n, 16, "client reads the response");
  check(memcmp(got, req + 2, 16) == 0, "response bytes");
  free(buf);

  test_holding(&p);

  /* A session ticket from this connection resumes the next one. */
  SSL_SESSION *sess = SSL_get1_session(p.client);
  hz_tls_close_notify(p.server);
  check(SSL_get_shutdown(p.server) & SSL_SENT_SHUTDOWN, "close_notify sent");
  check_eq(SSL_read(p.client, got, sizeof got), 0, "client sees the close_notify");
  close_pair(&p);
  check(sess != NULL && SSL_SESSION_has_ticket(sess), "a ticket was issued");
  check(open_pair(&p, ctx, cctx, sess), "second handshake with the ticket");
  check(SSL_session_reused(p.client), "session resumed by ticket");
  close_pair(&p);
  SSL_SESSION_free(sess);

  /* ALPN: h2 is preferred, then http/1.1; with HTTP/2 off (--no-http2)
     h2 alone is refused and h2, http/1.1 gives http/1.1. */
  static const unsigned char h2[] = "\x02h2";
  static const unsigned char both[] = "\x02h2\x08http/1.1";
  const unsigned char *sel;
  unsigned int sel_len;
  SSL_CTX_set_alpn_protos(cctx, h2, sizeof h2 - 1);
  check(open_pair(&p, ctx, cctx, NULL), "ALPN h2 alone: handshake");
  SSL_get0_alpn_selected(p.server, &sel, &sel_len);
  check(sel_len == 2 && memcmp(sel, "h2", 2) == 0, "h2 selected");
  close_pair(&p);
  SSL_CTX_set_alpn_protos(cctx, both, sizeof both - 1);
  check(open_pair(&p, ctx, cctx, NULL), "ALPN h2, http/1.1: handshake");
  SSL_get0_alpn_selected(p.server, &sel, &sel_len);
  check(sel_len == 2 && memcmp(sel, "h2", 2) == 0, "h2 preferred to http/1.1");
  close_pair(&p);
  hz_alpn_h2 = 0;
  SSL_CTX_set_alpn_protos(cctx, h2, sizeof h2 - 1);
  check(!open_pair(&p, ctx, cctx, NULL), "HTTP/2 off, ALPN h2 alone: handshake refused");
  ERR_clear_error();
  close_pair(&p);
  SSL_CTX_set_alpn_protos(cctx, both, sizeof both - 1);
  check(open_pair(&p, ctx, cctx, NULL), "HTTP/2 off, ALPN h2, http/1.1: handshake");
  SSL_get0_alpn_selected(p.server, &sel, &sel_len);
  check(sel_len == 8 && memcmp(sel, "http/1.1", 8) == 0, "HTTP/2 off: http/1.1 selected");
  close_pair(&p);
  hz_alpn_h2 = 1;

  /* A peer that closes without close_notify: end of stream, not an error. */
  SSL_CTX_set_alpn_protos(cctx, NULL, 0);
  check(open_pair(&p, ctx, cctx, NULL), "third handshake");
  unsigned char drain[256];
  while (SSL_read(p.client, drain, sizeof drain) > 0) {
  }
  /* The tickets read, the client's socket closes without unread bytes
     (which would make it a reset). */
  close(p.fds[1]);
  unsigned char *one = malloc(1);
  check_eq(hz_tls_read(p.server, one, 1, 0, 1), 0, "EOF without close_notify reads 0");
  free(one);
  SSL_free(p.server);
  SSL_free(p.client);
  close(p.fds[0]);

  free(req);
  SSL_CTX_free(cctx);
  SSL_CTX_free(ctx);
  free(cert);
  free(key);
}

/* SNI: the name the client sends picks the context (and so the
   certificate) of the table; no name or an unknown one keeps the default. */
static SSL_CTX *sni_pick(SSL_CTX *def, SSL_CTX *cctx, const char *name) {
  struct pair p;
  SSL_CTX *picked = NULL;
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, p.fds) < 0) abort();
  p.server = hz_tls_new(def, p.fds[0]);
  p.client = SSL_new(cctx);
  SSL_set_fd(p.client, p.fds[1]);
  SSL_set_connect_state(p.client);
  if (name != NULL) SSL_set_tlsext_host_name(p.client, name);
  if (handshake_pair(p.server, p.client)) picked = SSL_get_SSL_CTX(p.server);
  close_pair(&p);
  return picked;
}

static void test_sni(const char *certfile, const char *keyfile) {
  size_t cl, kl;
  char *cert = slurp(certfile, &cl), *key = slurp(keyfile, &kl);
  SSL_CTX *def = hz_tls_ctx_create(cert, cl, key, kl, 0);
  SSL_CTX *b = hz_tls_ctx_create(cert, cl, key, kl, 0);
  SSL_CTX *w = hz_tls_ctx_create(cert, cl, key, kl, 0);
  SSL_CTX *ww = hz_tls_ctx_create(cert, cl, key, kl, 0);
  check(def && b && w && ww, "four contexts");
  struct hz_sni *t = hz_sni_create();
  check(t != NULL, "SNI table");
  /* Names are copied: the caller's buffer may go. */
  char *name = malloc(6);
  memcpy(name, "B.test", 6);
  check_eq(hz_sni_add(t, name, 6, b), 0, "exact name added");
  free(name);
  check_eq(hz_sni_add(t, "*.w.test", 8, w), 0, "wildcard added");
  check_eq(hz_sni_add(t, "*.x.w.test", 10, ww), 0, "longer wildcard added");
  check_eq(hz_sni_add(t, "", 0, b), -1, "empty name refused");
  check_eq(hz_sni_add(t, "a\0b", 3, b), -1, "a NUL in a name refused");
  for (int i = 0; i < 20; i++) {
    char n[16];
    int k = snprintf(n, sizeof n, "h%d.test", i);
    if (hz_sni_add(t, n, (size_t)k, def) != 0) check(0, "the table grows");
  }
  hz_sni_attach(def, t);
  SSL_CTX *cctx = SSL_CTX_new(TLS_client_method());
  check(sni_pick(def, cctx, "b.test") == b, "exact name: its context");
  check(sni_pick(def, cctx, "B.TEST.") == b, "any case, a trailing dot");
  check(sni_pick(def, cctx, "a.w.test") == w, "wildcard");
  check(sni_pick(def, cctx, "y.x.w.test") == ww, "the longest wildcard");
  check(sni_pick(def, cctx, "w.test") == def, "a wildcard does not match its bare suffix");
  check(sni_pick(def, cctx, "nobody.test") == def, "unknown name: the default");
  check(sni_pick(def, cctx, NULL) == def, "no name: the default");
  SSL_CTX_free(cctx);
  SSL_CTX_free(def);
  SSL_CTX_free(b);
  SSL_CTX_free(w);
  SSL_CTX_free(ww);
  hz_sni_free(t);
  free(cert);
  free(key);
}

/* ------------------------------------------------------------------------ */
/* io_uring */

static long wait_one(int64_t *ud, int64_t *res, int64_t *flags) {
  for (int i = 0; i < 50; i++) {
    long n = hz_uring_submit_wait(100000000L);
    if (n < 0) return n;
    if (n > 0) return hz_uring_reap(ud, res, flags, 1);
  }
  return 0;
}

static void test_uring(void) {
  check_eq(hz_uring_setup(64, 4, 3, 64), -EINVAL, "buffer count must be a power of two");
  long r = hz_uring_setup(64, 4, 4, 16);
  check_eq(r, 0, "ring set up");
  if (r != 0) return;
  check_eq(hz_uring_setup(64, 4, 4, 16), -EBUSY, "one ring per process");
  int sv[2];
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, sv) < 0) abort();
  check_eq(hz_uring_recv(sv[0], 42), 0, "multishot receive armed");
  check_eq(write(sv[1], "hello, ring!", 12), 12, "peer writes");
  int64_t ud, res, flags;
  check_eq(wait_one(&ud, &res, &flags), 1, "one completion");
  check(ud == 42 && res == 12 && (flags & IORING_CQE_F_BUFFER) && (flags & IORING_CQE_F_MORE),
        "12 bytes in a provided buffer, receive goes on");
  unsigned bid = (unsigned)(flags >> 16);
  unsigned char *dst = malloc(12);
  check_eq(hz_uring_copy_buf(bid, 0, dst, 12, 0, 12), 12, "copy into an exact-size buffer");
  check(memcmp(dst, "hello, ring!", 12) == 0, "received bytes");
  check_eq(hz_uring_copy_buf(bid, 0, dst, 12, 1, 12), -EINVAL, "copy past the destination refused");
  check_eq(hz_uring_copy_buf(bid, 10, dst, 12, 0, 7), -EINVAL, "copy past the provided buffer refused");
  check_eq(hz_uring_copy_buf(99, 0, dst, 12, 0, 1), -EINVAL, "unknown buffer refused");
  check_eq(hz_uring_recycle(bid), 0, "buffer given back");
  check_eq(hz_uring_recycle(99), -EINVAL, "unknown buffer not given back");

  unsigned char *a = exact("head:", 5), *b = exact("body", 4);
  check_eq(hz_uring_send2(0, sv[0], a, 5, 0, 5, b, 4, 0, 4, 0, 7), 0, "sendmsg of two spans queued");
  check_eq(wait_one(&ud, &res, &flags), 1, "send completes");
  check(ud == 7 && res == 9, "9 bytes sent");
  char got[16];
  check_eq(read(sv[1], got, sizeof got), 9, "peer reads them");
  check(memcmp(got, "head:body", 9) == 0, "in order");
  check_eq(hz_uring_send2(0, sv[0], a, 5, 3, 3, b, 4, 0, 0, 0, 7), -EINVAL, "span past a buffer refused");
  check_eq(hz_uring_send2(9, sv[0], a, 5, 0, 1, b, 4, 0, 0, 0, 7), -EINVAL, "slot out of range refused");

  check_eq(hz_uring_cancel(42), 0, "cancel by user data queued");
  check_eq(wait_one(&ud, &res, &flags), 1, "the receive ends");
  check(ud == 42 && res == -ECANCELED && !(flags & IORING_CQE_F_MORE), "cancelled, no more");

  check_eq(hz_uring_poll(sv[0], POLLOUT, 0, 5), 0, "poll for writability queued");
  check_eq(wait_one(&ud, &res, &flags), 1, "poll completes");
  check(ud == 5 && (res & POLLOUT), "writable");
  /* Multishot accept on a listening socket, then cancel by descriptor. */
  int l = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
  socklen_t sl = sizeof sa;
  if (l < 0 || bind(l, (struct sockaddr *)&sa, sizeof sa) < 0 || listen(l, 8) < 0 ||
      getsockname(l, (struct sockaddr *)&sa, &sl) < 0)
    abort();
  check_eq(hz_uring_accept(l, 3), 0, "multishot accept armed");
  int c = socket(AF_INET, SOCK_STREAM, 0);
  check_eq(connect(c, (struct sockaddr *)&sa, sizeof sa), 0, "client connects");
  check_eq(wait_one(&ud, &res, &flags), 1, "accept completes");
  check(ud == 3 && res >= 0 && (flags & IORING_CQE_F_MORE), "a descriptor, accepting goes on");
  if (res >= 0) close((int)res);
  check_eq(hz_uring_cancel_fd(l), 0, "cancel by descriptor queued");
  check_eq(wait_one(&ud, &res, &flags), 1, "the accept ends");
  check(ud == 3 && res == -ECANCELED, "cancelled");
  close(c);
  close(l);
  hz_uring_exit();
  check_eq(hz_uring_setup(64, 4, 4, 16), 0, "set up again after exit");
  hz_uring_exit();
  free(dst);
  free(a);
  free(b);
  close(sv[0]);
  close(sv[1]);
}

int main(int argc, char **argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: %s CERT KEY\n", argv[0]);
    return 2;
  }
  test_tls(argv[1], argv[2]);
  test_sni(argv[1], argv[2]);
  test_uring();
  printf("%d passed, %d failed\n", passed, failed);
  return failed == 0 ? 0 : 1;
}
