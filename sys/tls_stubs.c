/* OpenSSL 3 (Debian's libssl) for httpz's TLS transport: one libssl call per
   stub, results as integers, nothing raised.

   Handles cross into OCaml as immediate integers: an SSL_CTX* or SSL* is a
   user-space address, below 2^62, so Val_long keeps it exactly and the
   stubs on the per-request path ([hz_tls_read], [hz_tls_write], ...) are
   [@@noalloc]. 0 is "no handle".

   Results of I/O stubs: n > 0 bytes; 0 the peer closed (close_notify, or a
   plain EOF: HTTP frames its own messages, so a missing close_notify loses
   nothing); HZ_TLS_WANT_READ / HZ_TLS_WANT_WRITE: retry when the socket is
   readable / writable; HZ_TLS_FAILED: a protocol or socket error, the
   connection is over. After a failure the thread's error queue is emptied
   (SSL_get_error needs it empty before every call) and its first reason is
   kept for [hz_tls_error].

   Layout as in httpz_stubs.c: [hz_*] are plain C (test/server/syscall/asan_driver.c
   includes this file with -DHTTPZ_NO_OCAML), the [httpz_*] OCaml stubs at
   the end unpack values and call them. */

#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <sys/types.h>
#include <time.h>
#include <openssl/bio.h>
#include <openssl/core_names.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>

#define HZ_TLS_WANT_READ (-1)
#define HZ_TLS_WANT_WRITE (-2)
#define HZ_TLS_FAILED (-3)

/* ------------------------------------------------------------------------ */
/* Errors */

static char hz_tls_errbuf[256];

/* The last failure was a client speaking plain HTTP (or a proxy's CONNECT)
   to the TLS port: OpenSSL recognised the first bytes as a request line. */
static int hz_tls_plain_http_seen;

/* Keeps the most specific reason of the queue (the last one pushed), then
   empties the queue. */
static void hz_tls_note(const char *what) {
  unsigned long e = ERR_peek_last_error();
  hz_tls_plain_http_seen =
      e != 0 && ERR_GET_LIB(e) == ERR_LIB_SSL &&
      (ERR_GET_REASON(e) == SSL_R_HTTP_REQUEST || ERR_GET_REASON(e) == SSL_R_HTTPS_PROXY_REQUEST);
  if (e != 0) {
    char reason[200];
    ERR_error_string_n(e, reason, sizeof reason);
    snprintf(hz_tls_errbuf, sizeof hz_tls_errbuf, "%s: %s", what, reason);
  } else if (errno != 0) {
    snprintf(hz_tls_errbuf, sizeof hz_tls_errbuf, "%s: %s", what, strerror(errno));
  } else {
    snprintf(hz_tls_errbuf, sizeof hz_tls_errbuf, "%s", what);
  }
  ERR_clear_error();
}

static const char *hz_tls_error(void) { return hz_tls_errbuf; }

/* ------------------------------------------------------------------------ */
/* Session tickets: keys shared by every worker of a server, rotated.

   A 32-byte master secret is drawn once, in the process that forks the
   workers, before it forks: every worker (and every restarted one)
   inherits it. The key of each period of [hz_ticket_period] seconds is
   derived from it (HMAC-SHA256 of the period number), so workers agree on
   the current key without talking to each other. A ticket is encrypted
   with the current period's key and accepted for that period and the one
   before (then renewed), so it lives between one and two periods. The
   key name carries the period number and a tag derived from the secret:
   a ticket of another server, or a forged one, falls back to a full
   handshake. */

static unsigned char hz_master[32];
static int hz_master_ready;
static long hz_ticket_period = 3600;

struct hz_tkey {
  uint64_t period;
  int valid;
  unsigned char name[16];
  unsigned char aes[32];
  unsigned char mac[32];
};

static struct hz_tkey hz_tkeys[2];

static int hz_tls_init_tickets(long period) {
  if (period > 0) hz_ticket_period = period;
  hz_tkeys[0].valid = hz_tkeys[1].valid = 0;
  if (RAND_bytes(hz_master, sizeof hz_master) != 1) {
    hz_tls_note("RAND_bytes");
    return -1;
  }
  hz_master_ready = 1;
  return 0;
}

static void hz_put_be64(unsigned char *p, uint64_t v) {
  for (int i = 7; i >= 0; i--) {
    p[i] = (unsigned char)(v & 0xff);
    v >>= 8;
  }
}

static uint64_t hz_get_be64(const unsigned char *p) {
  uint64_t v = 0;
  for (int i = 0; i < 8; i++) v = (v << 8) | p[i];
  return v;
}

static int hz_kdf(uint64_t period, char label, unsigned char out[32]) {
  unsigned char msg[17];
  unsigned int len = 32;
  memcpy(msg, "httpz-tk", 8);
  hz_put_be64(msg + 8, period);
  msg[16] = (unsigned char)label;
  return HMAC(EVP_sha256(), hz_master, sizeof hz_master, msg, sizeof msg, out, &len) != NULL;
}

/* The key of [period], derived once and cached for the two live periods. */
static const struct hz_tkey *hz_tkey_for(uint64_t period) {
  struct hz_tkey *k = &hz_tkeys[period & 1];
  if (k->valid && k->period == period) return k;
  unsigned char tag[32];
  if (!hz_kdf(period, 'n', tag) || !hz_kdf(period, 'a', k->aes) || !hz_kdf(period, 'm', k->mac)) {
    k->valid = 0;
    return NULL;
  }
  hz_put_be64(k->name, period);
  memcpy(k->name + 8, tag, 8);
  k->period = period;
  k->valid = 1;
  return k;
}

static int hz_ticket_cb(SSL *s, unsigned char key_name[16], unsigned char *iv, EVP_CIPHER_CTX *ectx,
                        EVP_MAC_CTX *hctx, int enc) {
  (void)s;
  if (!hz_master_ready) return 0;
  uint64_t now = (uint64_t)time(NULL) / (uint64_t)hz_ticket_period;
  const struct hz_tkey *k;
  if (enc) {
    k = hz_tkey_for(now);
    if (k == NULL || RAND_bytes(iv, 16) != 1) return -1;
    memcpy(key_name, k->name, 16);
    if (EVP_EncryptInit_ex(ectx, EVP_aes_256_cbc(), NULL, k->aes, iv) != 1) return -1;
  } else {
    uint64_t period = hz_get_be64(key_name);
    if (period != now && period + 1 != now) return 0; /* expired or unknown: full handshake */
    k = hz_tkey_for(period);
    if (k == NULL || CRYPTO_memcmp(k->name, key_name, 16) != 0) return 0;
    if (EVP_DecryptInit_ex(ectx, EVP_aes_256_cbc(), NULL, k->aes, iv) != 1) return -1;
  }
  OSSL_PARAM params[3];
  params[0] = OSSL_PARAM_construct_octet_string(OSSL_MAC_PARAM_KEY, (void *)k->mac, sizeof k->mac);
  params[1] = OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_DIGEST, (char *)"SHA256", 0);
  params[2] = OSSL_PARAM_construct_end();
  if (EVP_MAC_CTX_set_params(hctx, params) != 1) return -1;
  /* 2: valid, but from the previous period: issue a fresh ticket. */
  return (!enc && k->period != now) ? 2 : 1;
}

/* ------------------------------------------------------------------------ */
/* Contexts */

/* ALPN: http/1.1 when the client offers it; a client that offers only
   other protocols (h2 alone) gets the no_application_protocol alert, as
   RFC 7301 §3.2 asks. A client that sends no ALPN is not asked. */
/* Whether ALPN may select "h2" (the server's HTTP/2 switch; one setting per
   process, set before any handshake). */
static int hz_alpn_h2 = 1;

/* Selects h2 when the client offers it and HTTP/2 is on (the server's
   preference, h2 first), else http/1.1. A client offering neither (or,
   with HTTP/2 off, only h2) gets the no_application_protocol alert
   (RFC 7301 §3.2). */
static int hz_alpn_cb(SSL *s, const unsigned char **out, unsigned char *outlen,
                      const unsigned char *in, unsigned int inlen, void *arg) {
  (void)s;
  (void)arg;
  const unsigned char *h1 = NULL;
  unsigned int i = 0;
  while (i < inlen) {
    unsigned int n = in[i];
    if (i + 1 + n > inlen) break;
    if (hz_alpn_h2 && n == 2 && memcmp(in + i + 1, "h2", 2) == 0) {
      *out = in + i + 1;
      *outlen = 2;
      return SSL_TLSEXT_ERR_OK;
    }
    if (n == 8 && memcmp(in + i + 1, "http/1.1", 8) == 0 && h1 == NULL) h1 = in + i + 1;
    i += 1 + n;
  }
  if (h1 != NULL) {
    *out = h1;
    *outlen = 8;
    return SSL_TLSEXT_ERR_OK;
  }
  return SSL_TLSEXT_ERR_ALERT_FATAL;
}

/* An encrypted key is refused rather than prompting on a terminal. */
static int hz_no_passphrase(char *buf, int size, int rwflag, void *u) {
  (void)buf;
  (void)size;
  (void)rwflag;
  (void)u;
  return -1;
}

/* Mozilla's "intermediate" configuration (v5.7): TLS 1.2 with forward-secret
   AEAD suites, and TLS 1.3's three suites. */
static const char hz_ciphers12[] =
    "ECDHE-ECDSA-AES128-GCM-SHA256:ECDHE-RSA-AES128-GCM-SHA256:"
    "ECDHE-ECDSA-AES256-GCM-SHA384:ECDHE-RSA-AES256-GCM-SHA384:"
    "ECDHE-ECDSA-CHACHA20-POLY1305:ECDHE-RSA-CHACHA20-POLY1305:"
    "DHE-RSA-AES128-GCM-SHA256:DHE-RSA-AES256-GCM-SHA384:DHE-RSA-CHACHA20-POLY1305";
static const char hz_ciphers13[] =
    "TLS_AES_128_GCM_SHA256:TLS_AES_256_GCM_SHA384:TLS_CHACHA20_POLY1305_SHA256";

/* Loads a certificate chain (leaf first) and its key from PEM text. */
static int hz_load_pem(SSL_CTX *ctx, const char *cert, size_t cert_len, const char *key,
                       size_t key_len) {
  BIO *b = BIO_new_mem_buf(cert, (int)cert_len);
  if (b == NULL) return 0;
  X509 *leaf = PEM_read_bio_X509_AUX(b, NULL, hz_no_passphrase, NULL);
  if (leaf == NULL || SSL_CTX_use_certificate(ctx, leaf) != 1) {
    X509_free(leaf);
    BIO_free(b);
    hz_tls_note("certificate");
    return 0;
  }
  X509_free(leaf);
  SSL_CTX_clear_chain_certs(ctx);
  X509 *ca;
  while ((ca = PEM_read_bio_X509(b, NULL, hz_no_passphrase, NULL)) != NULL) {
    if (SSL_CTX_add0_chain_cert(ctx, ca) != 1) {
      X509_free(ca);
      BIO_free(b);
      hz_tls_note("certificate chain");
      return 0;
    }
  }
  /* The loop ends on "no start line": the end of the file, not an error. */
  unsigned long e = ERR_peek_last_error();
  if (ERR_GET_LIB(e) == ERR_LIB_PEM && ERR_GET_REASON(e) == PEM_R_NO_START_LINE)
    ERR_clear_error();
  BIO_free(b);
  if (ERR_peek_error() != 0) {
    hz_tls_note("certificate chain");
    return 0;
  }
  b = BIO_new_mem_buf(key, (int)key_len);
  if (b == NULL) return 0;
  EVP_PKEY *pk = PEM_read_bio_PrivateKey(b, NULL, hz_no_passphrase, NULL);
  BIO_free(b);
  if (pk == NULL || SSL_CTX_use_PrivateKey(ctx, pk) != 1) {
    EVP_PKEY_free(pk);
    hz_tls_note("private key (PEM, not encrypted)");
    return 0;
  }
  EVP_PKEY_free(pk);
  if (SSL_CTX_check_private_key(ctx) != 1) {
    hz_tls_note("the private key does not match the certificate");
    return 0;
  }
  return 1;
}

static SSL_CTX *hz_tls_ctx_create(const char *cert, size_t cert_len, const char *key,
                                  size_t key_len, int ktls) {
  ERR_clear_error();
  errno = 0;
  SSL_CTX *ctx = SSL_CTX_new(TLS_server_method());
  if (ctx == NULL) {
    hz_tls_note("SSL_CTX_new");
    return NULL;
  }
  /* The server's order of suites (AES-128-GCM first: the cheapest with
     AES instructions), except that a client that prefers ChaCha20 (no AES
     hardware: phones) gets it. testssl.sh counts a missing server order as
     a flaw; every suite offered is strong either way. */
  uint64_t opts = SSL_OP_NO_RENEGOTIATION | SSL_OP_NO_COMPRESSION | SSL_OP_IGNORE_UNEXPECTED_EOF |
                  SSL_OP_CIPHER_SERVER_PREFERENCE | SSL_OP_PRIORITIZE_CHACHA;
#ifdef SSL_OP_ENABLE_KTLS
  if (ktls) opts |= SSL_OP_ENABLE_KTLS;
#else
  (void)ktls;
#endif
  SSL_CTX_set_options(ctx, opts);
  /* Record buffers are freed whenever they are empty: an idle keep-alive
     connection holds none. Partial writes let one call send one record;
     the write buffer may move between a blocked write and its retry (the
     bytes are the same, copied by the server). */
  SSL_CTX_set_mode(ctx, SSL_MODE_RELEASE_BUFFERS | SSL_MODE_ENABLE_PARTIAL_WRITE |
                            SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
  /* One read(2) fetches whatever records arrived, not a 5-byte header and
     then the rest. */
  SSL_CTX_set_read_ahead(ctx, 1);
  if (SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION) != 1 ||
      SSL_CTX_set_max_proto_version(ctx, TLS1_3_VERSION) != 1 ||
      SSL_CTX_set_cipher_list(ctx, hz_ciphers12) != 1 ||
      SSL_CTX_set_ciphersuites(ctx, hz_ciphers13) != 1 ||
      SSL_CTX_set1_groups_list(ctx, "X25519:P-256:P-384") != 1 ||
      SSL_CTX_set_dh_auto(ctx, 1) != 1) {
    hz_tls_note("TLS settings");
    SSL_CTX_free(ctx);
    return NULL;
  }
  /* Resumption by tickets alone (stateless, valid on every worker); no
     per-process session cache to grow or to miss on another worker. */
  SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_OFF);
  SSL_CTX_set_timeout(ctx, hz_ticket_period);
  SSL_CTX_set_tlsext_ticket_key_evp_cb(ctx, hz_ticket_cb);
  SSL_CTX_set_alpn_select_cb(ctx, hz_alpn_cb, NULL);
  /* One ticket per TLS 1.3 handshake, not OpenSSL's two: a client's
     parallel connections each get their own, and each ticket issued costs
     the server an encryption (5% of a full handshake's CPU, measured). */
  SSL_CTX_set_num_tickets(ctx, 1);
  if (!hz_load_pem(ctx, cert, cert_len, key, key_len)) {
    SSL_CTX_free(ctx);
    return NULL;
  }
  return ctx;
}

/* ------------------------------------------------------------------------ */
/* Connections */

/* The write side of a connection the kernel does not encrypt for: the
   socket BIO's write, except while the server says more records follow at
   once (hz_tls_set_more): then records are held here, and the first write
   after [more] is cleared sends them and itself with one sendmsg(2), as a
   plain connection gathers frames. A 16 KiB HTTP/2 response is two
   records (its last bytes and the next frames share the second): one
   system call, not two; ten of them, three or four.

   Records held here count as written for OpenSSL: they are the
   connection's pending output until sent (hz_tls_held says how many bytes
   wait, hz_tls_flush sends them; BIO_flush, which OpenSSL calls after a
   handshake flight or an alert, sends them too). Outside a batch, a record
   the socket did not take whole (or at all) waits here too, when nothing
   else does, so that OpenSSL's rule that a write be retried with the same
   bytes only comes up for the one after it. The holding is malloc'ed when
   needed and freed once sent: a connection whose output all left keeps
   none. Its data is the hz_wbio; it does not own the socket. */
typedef struct {
  int fd;
  int more;
  unsigned char *held; /* bytes [sent, len) of [cap] wait to be sent */
  size_t sent, len, cap;
} hz_wbio;

/* While more records follow, they are held until this much waits; then
   all go at once, with MSG_MORE. A batch that the socket does not take
   keeps at most HZ_HOLD_MAX here; past that, OpenSSL keeps its one record
   and the write waits for the socket. Outside a batch, at most one record
   (HZ_RECORD_MAX: 16 KiB of data and its expansion) waits. */
#define HZ_HOLD_SEND (128 * 1024)
#define HZ_RECORD_MAX 16896
#define HZ_HOLD_MAX (HZ_HOLD_SEND + 2 * HZ_RECORD_MAX)

static BIO_METHOD *hz_more_method;
static int hz_more_type;

static inline size_t hz_held(const hz_wbio *w) { return w->len - w->sent; }

static void hz_hold_free(hz_wbio *w) {
  free(w->held);
  w->held = NULL;
  w->sent = w->len = w->cap = 0;
}

/* Appends [len] bytes behind what waits; 0 when they do not fit. The
   holding grows in two steps: two records (a 16 KiB response's) when a
   batch starts, else one; then at once to a whole batch's worth, so that
   a longer batch copies what waits once, not at each doubling. */
static int hz_hold(hz_wbio *w, const unsigned char *data, size_t len) {
  size_t rest = hz_held(w);
  if (rest + len > HZ_HOLD_MAX) return 0;
  if (w->sent > 0) {
    memmove(w->held, w->held + w->sent, rest);
    w->sent = 0;
    w->len = rest;
  }
  if (w->len + len > w->cap) {
    /* One record's worth outside a batch; in one, two records (a 16 KiB
       response), then the whole batch's worth. */
    size_t need = w->len + len;
    size_t cap = need <= HZ_RECORD_MAX && !w->more ? HZ_RECORD_MAX
                 : need <= 2 * HZ_RECORD_MAX ? 2 * HZ_RECORD_MAX : HZ_HOLD_MAX;
    unsigned char *b = realloc(w->held, cap);
    if (b == NULL) return 0;
    w->held = b;
    w->cap = cap;
  }
  memcpy(w->held + w->len, data, len);
  w->len += len;
  return 1;
}

/* Sends what waits, and then [len] bytes of [data], in one sendmsg:
   the count sent, or -1 with errno. */
static ssize_t hz_send_held(hz_wbio *w, const unsigned char *data, size_t len, int more) {
  struct iovec iov[2];
  int n = 0;
  if (hz_held(w) > 0) {
    iov[n].iov_base = w->held + w->sent;
    iov[n].iov_len = hz_held(w);
    n++;
  }
  if (len > 0) {
    iov[n].iov_base = (void *)data;
    iov[n].iov_len = len;
    n++;
  }
  struct msghdr m;
  memset(&m, 0, sizeof m);
  m.msg_iov = iov;
  m.msg_iovlen = n;
  return sendmsg(w->fd, &m, MSG_NOSIGNAL | (more ? MSG_MORE : 0));
}

static inline int hz_again(void) { return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR; }

/* Takes [k] sent bytes off the holding; frees it once empty. */
static void hz_held_sent(hz_wbio *w, size_t k) {
  w->sent += k;
  if (w->sent >= w->len) hz_hold_free(w);
}

/* One record from OpenSSL: held while more follow, else sent with what
   waits. Returns [len] once the record is sent or held (OpenSSL is done
   with it), a short count, or -1 with the retry flag when it must wait
   in OpenSSL for the socket. */
static int hz_more_write(BIO *b, const char *data, int len) {
  hz_wbio *w = BIO_get_data(b);
  const unsigned char *d = (const unsigned char *)data;
  BIO_clear_retry_flags(b);
  if (len <= 0) return 0;
  size_t before = hz_held(w);
  if (w->more && before + (size_t)len <= HZ_HOLD_SEND && hz_hold(w, d, (size_t)len)) return len;
  ssize_t n = hz_send_held(w, d, (size_t)len, w->more);
  if (n < 0) {
    if (!hz_again()) return -1;
    n = 0;
  }
  if ((size_t)n < before) {
    hz_held_sent(w, (size_t)n);
    /* The socket is full and a batch waits: while more follow, this
       record waits with it, up to HZ_HOLD_MAX; else in OpenSSL. */
    if (w->more && hz_hold(w, d, (size_t)len)) return len;
    BIO_set_retry_write(b);
    return -1;
  }
  hz_held_sent(w, before);
  size_t k = (size_t)n - before;
  if (k == (size_t)len || hz_hold(w, d + k, (size_t)len - k)) return len;
  if (k > 0) return (int)k;
  BIO_set_retry_write(b);
  return -1;
}

static int hz_more_read(BIO *b, char *data, int len) {
  (void)b; (void)data; (void)len;
  return -1; /* write side only */
}

static long hz_more_ctrl(BIO *b, int cmd, long num, void *ptr) {
  (void)num;
  hz_wbio *w = BIO_get_data(b);
  switch (cmd) {
    case BIO_CTRL_FLUSH:
      /* OpenSSL flushes a handshake flight before it reads, and an alert:
         what waits must reach the socket first, or the handshake would
         wait for a read while its last bytes sit here. */
      BIO_clear_retry_flags(b);
      if (w == NULL || hz_held(w) == 0) return 1;
      {
        ssize_t n = hz_send_held(w, NULL, 0, 0);
        if (n > 0) hz_held_sent(w, (size_t)n);
        if (hz_held(w) == 0) return 1;
        if (n >= 0 || hz_again()) BIO_set_retry_write(b);
        return 0;
      }
    case BIO_CTRL_WPENDING:
      return w == NULL ? 0 : (long)hz_held(w);
    case BIO_C_GET_FD:
      if (w == NULL) return -1;
      if (ptr != NULL) *(int *)ptr = w->fd;
      return w->fd;
    default:
      return 0;
  }
}

static int hz_more_create(BIO *b) {
  BIO_set_data(b, NULL);
  BIO_set_init(b, 1);
  return 1;
}

static int hz_more_destroy(BIO *b) {
  if (b == NULL) return 0;
  hz_wbio *w = BIO_get_data(b);
  if (w != NULL) {
    free(w->held);
    free(w);
    BIO_set_data(b, NULL);
  }
  return 1;
}

static BIO_METHOD *hz_more_bio_method(void) {
  if (hz_more_method == NULL) {
    int type = BIO_get_new_index() | BIO_TYPE_SOURCE_SINK | BIO_TYPE_DESCRIPTOR;
    BIO_METHOD *m = BIO_meth_new(type, "httpz socket write");
    if (m == NULL || !BIO_meth_set_write(m, hz_more_write) || !BIO_meth_set_read(m, hz_more_read)
        || !BIO_meth_set_ctrl(m, hz_more_ctrl) || !BIO_meth_set_create(m, hz_more_create)
        || !BIO_meth_set_destroy(m, hz_more_destroy)) {
      if (m != NULL) BIO_meth_free(m);
      return NULL;
    }
    hz_more_method = m;
    hz_more_type = type;
  }
  return hz_more_method;
}

/* Reads from the socket BIO; writes through the one above, unless the
   context asks for kTLS (OpenSSL switches only a socket BIO to it). */
static int hz_tls_set_bios(SSL_CTX *ctx, SSL *s, int fd) {
#ifdef SSL_OP_ENABLE_KTLS
  if (SSL_CTX_get_options(ctx) & SSL_OP_ENABLE_KTLS) return SSL_set_fd(s, fd);
#else
  (void)ctx;
#endif
  BIO_METHOD *m = hz_more_bio_method();
  if (m == NULL) return SSL_set_fd(s, fd);
  BIO *r = BIO_new_socket(fd, BIO_NOCLOSE);
  BIO *w = BIO_new(m);
  hz_wbio *d = calloc(1, sizeof *d);
  if (r == NULL || w == NULL || d == NULL) {
    BIO_free(r);
    BIO_free(w);
    free(d);
    return 0;
  }
  d->fd = fd;
  BIO_set_data(w, d);
  SSL_set_bio(s, r, w);
  return 1;
}

/* The connection's holding write BIO, or NULL (kTLS). */
static inline hz_wbio *hz_tls_wbio(SSL *s) {
  BIO *w = SSL_get_wbio(s);
  if (w != NULL && hz_more_method != NULL && BIO_method_type(w) == hz_more_type) return BIO_get_data(w);
  return NULL;
}

static inline void hz_tls_set_more(SSL *s, int more) {
  hz_wbio *w = hz_tls_wbio(s);
  if (w != NULL) w->more = more;
}

/* Bytes the write BIO holds (not yet given to the kernel). */
static inline long hz_tls_held(SSL *s) {
  hz_wbio *w = hz_tls_wbio(s);
  return w == NULL ? 0 : (long)hz_held(w);
}

/* Sends what the write BIO holds: the count sent (0 when nothing waits),
   HZ_TLS_WANT_WRITE or HZ_TLS_FAILED. [more]: MSG_MORE. */
static long hz_tls_flush(SSL *s, int more) {
  hz_wbio *w = hz_tls_wbio(s);
  if (w == NULL) return 0;
  w->more = more;
  if (hz_held(w) == 0) return 0;
  ssize_t n = hz_send_held(w, NULL, 0, more);
  if (n < 0) return hz_again() ? HZ_TLS_WANT_WRITE : HZ_TLS_FAILED;
  hz_held_sent(w, (size_t)n);
  return n > 0 ? (long)n : HZ_TLS_WANT_WRITE;
}

static SSL *hz_tls_new(SSL_CTX *ctx, int fd) {
  SSL *s = SSL_new(ctx);
  if (s == NULL) {
    hz_tls_note("SSL_new");
    return NULL;
  }
  if (hz_tls_set_bios(ctx, s, fd) != 1) {
    hz_tls_note("SSL_set_fd");
    SSL_free(s);
    return NULL;
  }
  SSL_set_accept_state(s);
  return s;
}

static long hz_tls_result(SSL *s, int r, const char *what) {
  switch (SSL_get_error(s, r)) {
    case SSL_ERROR_WANT_READ:
      return HZ_TLS_WANT_READ;
    case SSL_ERROR_WANT_WRITE:
      return HZ_TLS_WANT_WRITE;
    case SSL_ERROR_ZERO_RETURN:
      return 0;
    case SSL_ERROR_SYSCALL:
      if (ERR_peek_error() == 0 && errno == 0) return 0; /* EOF */
      /* fall through */
    default:
      hz_tls_note(what);
      return HZ_TLS_FAILED;
  }
}

static long hz_tls_handshake(SSL *s) {
  errno = 0;
  hz_tls_plain_http_seen = 0;
  int r = SSL_do_handshake(s);
  if (r == 1) return 1;
  long e = hz_tls_result(s, r, "handshake");
  return e == 0 ? HZ_TLS_FAILED : e;
}

static long hz_tls_read(SSL *s, unsigned char *base, size_t cap, long off, long len) {
  if (off < 0 || len <= 0 || (size_t)off > cap || (size_t)len > cap - (size_t)off) return HZ_TLS_FAILED;
  if (len > 0x40000000) len = 0x40000000;
  errno = 0;
  int r = SSL_read(s, base + off, (int)len);
  return r > 0 ? r : hz_tls_result(s, r, "read");
}

static long hz_tls_write(SSL *s, const unsigned char *base, size_t cap, long off, long len) {
  if (off < 0 || len <= 0 || (size_t)off > cap || (size_t)len > cap - (size_t)off) return HZ_TLS_FAILED;
  if (len > 0x40000000) len = 0x40000000;
  errno = 0;
  int r = SSL_write(s, base + off, (int)len);
  if (r > 0) return r;
  long e = hz_tls_result(s, r, "write");
  return e == 0 ? HZ_TLS_FAILED : e;
}

/* kTLS: the kernel encrypts, so a file goes out with sendfile(2). */
static int hz_tls_ktls_send(SSL *s) {
#ifdef SSL_OP_ENABLE_KTLS
  return BIO_get_ktls_send(SSL_get_wbio(s)) ? 1 : 0;
#else
  (void)s;
  return 0;
#endif
}

static long hz_tls_sendfile(SSL *s, int fd, long off, long len) {
#ifdef SSL_OP_ENABLE_KTLS
  errno = 0;
  ossl_ssize_t r = SSL_sendfile(s, fd, (off_t)off, (size_t)len, 0);
  if (r > 0) return (long)r;
  if (errno == EAGAIN) {
    ERR_clear_error();
    return HZ_TLS_WANT_WRITE;
  }
  hz_tls_note("sendfile");
  return HZ_TLS_FAILED;
#else
  (void)s;
  (void)fd;
  (void)off;
  (void)len;
  return HZ_TLS_FAILED;
#endif
}

/* Sends close_notify once the handshake is done (best effort: the socket
   is non-blocking and the connection is ending anyway). */
static void hz_tls_close_notify(SSL *s) {
  hz_tls_set_more(s, 0);
  if (SSL_is_init_finished(s) && !(SSL_get_shutdown(s) & SSL_SENT_SHUTDOWN)) {
    errno = 0;
    if (SSL_shutdown(s) < 0) ERR_clear_error();
  }
}

/* ------------------------------------------------------------------------ */
/* SNI: several certificates, picked by the name the client asks for.

   A table of (name, context) pairs hangs on the default context as the
   argument of its servername callback; the callback switches the
   connection to the context of the name (an exact name first, then the
   longest "*.suffix" wildcard, ASCII case-insensitively), and leaves the
   default context (its certificate) for a client that sends no name or
   one the table does not have, as nginx does with its default server.
   Every context is made by [hz_tls_ctx_create], so the ALPN and ticket
   callbacks are the same whichever is picked. The table does not own the
   contexts: their owner frees them, and the table after them. */

struct hz_sni_entry {
  char *name; /* lower case; a wildcard is stored as its suffix ".example.com" */
  int wildcard;
  SSL_CTX *ctx;
};

struct hz_sni {
  int n, cap;
  struct hz_sni_entry *e;
};

static struct hz_sni *hz_sni_create(void) {
  struct hz_sni *t = calloc(1, sizeof *t);
  if (t == NULL) snprintf(hz_tls_errbuf, sizeof hz_tls_errbuf, "SNI table: out of memory");
  return t;
}

/* 0, or -1 (out of memory, or a name that is empty or too long). */
static int hz_sni_add(struct hz_sni *t, const char *name, size_t len, SSL_CTX *ctx) {
  int wildcard = len > 2 && name[0] == '*' && name[1] == '.';
  if (wildcard) {
    name++;
    len--;
  }
  if (len == 0 || len > 255 || memchr(name, 0, len) != NULL) {
    snprintf(hz_tls_errbuf, sizeof hz_tls_errbuf, "SNI: not a host name");
    return -1;
  }
  if (t->n == t->cap) {
    int cap = t->cap ? 2 * t->cap : 8;
    struct hz_sni_entry *e = realloc(t->e, (size_t)cap * sizeof *e);
    if (e == NULL) {
      snprintf(hz_tls_errbuf, sizeof hz_tls_errbuf, "SNI table: out of memory");
      return -1;
    }
    t->e = e;
    t->cap = cap;
  }
  char *copy = malloc(len + 1);
  if (copy == NULL) {
    snprintf(hz_tls_errbuf, sizeof hz_tls_errbuf, "SNI table: out of memory");
    return -1;
  }
  for (size_t i = 0; i < len; i++) copy[i] = (char)tolower((unsigned char)name[i]);
  copy[len] = 0;
  t->e[t->n].name = copy;
  t->e[t->n].wildcard = wildcard;
  t->e[t->n].ctx = ctx;
  t->n++;
  return 0;
}

static void hz_sni_free(struct hz_sni *t) {
  if (t == NULL) return;
  for (int i = 0; i < t->n; i++) free(t->e[i].name);
  free(t->e);
  free(t);
}

static SSL_CTX *hz_sni_lookup(const struct hz_sni *t, const char *name) {
  size_t len = strlen(name);
  if (len > 0 && name[len - 1] == '.') len--;
  SSL_CTX *best = NULL;
  size_t best_len = 0;
  for (int i = 0; i < t->n; i++) {
    const struct hz_sni_entry *e = &t->e[i];
    size_t k = strlen(e->name);
    if (!e->wildcard) {
      if (k == len && strncasecmp(e->name, name, len) == 0) return e->ctx;
    } else if (len > k && k > best_len && strncasecmp(e->name, name + len - k, k) == 0) {
      best = e->ctx;
      best_len = k;
    }
  }
  return best;
}

static int hz_sni_cb(SSL *s, int *alert, void *arg) {
  const char *name = SSL_get_servername(s, TLSEXT_NAMETYPE_host_name);
  if (name == NULL || arg == NULL) return SSL_TLSEXT_ERR_OK;
  SSL_CTX *ctx = hz_sni_lookup((const struct hz_sni *)arg, name);
  if (ctx != NULL && ctx != SSL_get_SSL_CTX(s) && SSL_set_SSL_CTX(s, ctx) == NULL) {
    *alert = SSL_AD_INTERNAL_ERROR;
    return SSL_TLSEXT_ERR_ALERT_FATAL;
  }
  return SSL_TLSEXT_ERR_OK;
}

static void hz_sni_attach(SSL_CTX *ctx, struct hz_sni *t) {
  SSL_CTX_set_tlsext_servername_callback(ctx, hz_sni_cb);
  SSL_CTX_set_tlsext_servername_arg(ctx, t);
}

#ifndef HTTPZ_NO_OCAML
/* ------------------------------------------------------------------------ */
/* OCaml stubs */

#include <caml/alloc.h>
#include <caml/bigarray.h>
#include <caml/memory.h>
#include <caml/mlvalues.h>

#define TLS_CTX(v) ((SSL_CTX *)Long_val(v))
#define TLS_SSL(v) ((SSL *)(intnat)(v))
#define BA_DATA(v) ((unsigned char *)Caml_ba_data_val(v))
#define BA_CAP(v) ((size_t)Caml_ba_array_val(v)->dim[0])

CAMLprim value httpz_tls_init_tickets(value period) {
  return Val_int(hz_tls_init_tickets(Long_val(period)));
}

CAMLprim value httpz_tls_error(value unit) {
  (void)unit;
  return caml_copy_string(hz_tls_error());
}

/* Not on the request path: runs at start-up and on SIGHUP. */
CAMLprim value httpz_tls_ctx_create(value cert, value key, value ktls) {
  SSL_CTX *ctx = hz_tls_ctx_create(String_val(cert), caml_string_length(cert), String_val(key),
                                   caml_string_length(key), Bool_val(ktls));
  return Val_long((intnat)ctx);
}

CAMLprim value httpz_tls_ctx_free(value ctx) {
  if (Long_val(ctx) != 0) SSL_CTX_free(TLS_CTX(ctx));
  return Val_unit;
}

CAMLprim intnat httpz_tls_new(intnat ctx, intnat fd) {
  return (intnat)hz_tls_new((SSL_CTX *)ctx, (int)fd);
}
CAMLprim value httpz_tls_new_byte(value ctx, value fd) {
  return Val_long(httpz_tls_new(Long_val(ctx), Long_val(fd)));
}

CAMLprim intnat httpz_tls_free(intnat s) {
  if (s != 0) SSL_free(TLS_SSL(s));
  return 0;
}
CAMLprim value httpz_tls_free_byte(value s) { return Val_long(httpz_tls_free(Long_val(s))); }

CAMLprim intnat httpz_tls_handshake(intnat s) { return hz_tls_handshake(TLS_SSL(s)); }
CAMLprim value httpz_tls_handshake_byte(value s) {
  return Val_long(httpz_tls_handshake(Long_val(s)));
}

/* Reads a flag: no libssl call, no system call. */
CAMLprim intnat httpz_tls_plain_http(value unit) {
  (void)unit;
  return hz_tls_plain_http_seen;
}
CAMLprim value httpz_tls_plain_http_byte(value unit) { return Val_long(httpz_tls_plain_http(unit)); }

CAMLprim intnat httpz_tls_read(intnat s, value buf, intnat off, intnat len) {
  return hz_tls_read(TLS_SSL(s), BA_DATA(buf), BA_CAP(buf), off, len);
}
CAMLprim value httpz_tls_read_byte(value s, value buf, value off, value len) {
  return Val_long(httpz_tls_read(Long_val(s), buf, Long_val(off), Long_val(len)));
}

CAMLprim intnat httpz_tls_write(intnat s, value buf, intnat off, intnat len) {
  return hz_tls_write(TLS_SSL(s), BA_DATA(buf), BA_CAP(buf), off, len);
}
CAMLprim value httpz_tls_write_byte(value s, value buf, value off, value len) {
  return Val_long(httpz_tls_write(Long_val(s), buf, Long_val(off), Long_val(len)));
}

/* The string is not copied: the runtime lock is held, so the GC cannot move
   it during the call. */
CAMLprim intnat httpz_tls_write_string(intnat s, value str, intnat off, intnat len) {
  return hz_tls_write(TLS_SSL(s), (const unsigned char *)String_val(str), caml_string_length(str),
                      off, len);
}
CAMLprim value httpz_tls_write_string_byte(value s, value str, value off, value len) {
  return Val_long(httpz_tls_write_string(Long_val(s), str, Long_val(off), Long_val(len)));
}

CAMLprim value httpz_tls_set_alpn_h2(value on) {
  hz_alpn_h2 = Bool_val(on);
  return Val_unit;
}

/* 1 when ALPN selected "h2" on this connection. */
CAMLprim intnat httpz_tls_alpn_h2(intnat s) {
  const unsigned char *p = NULL;
  unsigned int n = 0;
  SSL_get0_alpn_selected(TLS_SSL(s), &p, &n);
  return n == 2 && p != NULL && p[0] == 'h' && p[1] == '2';
}
CAMLprim value httpz_tls_alpn_h2_byte(value s) { return Val_long(httpz_tls_alpn_h2(Long_val(s))); }

CAMLprim intnat httpz_tls_pending(intnat s) { return SSL_has_pending(TLS_SSL(s)); }

CAMLprim intnat httpz_tls_version(intnat s) { return SSL_version(TLS_SSL(s)); }
CAMLprim value httpz_tls_version_byte(value s) { return Val_long(httpz_tls_version(Long_val(s))); }
CAMLprim value httpz_tls_pending_byte(value s) { return Val_long(httpz_tls_pending(Long_val(s))); }

CAMLprim intnat httpz_tls_close_notify(intnat s) {
  hz_tls_close_notify(TLS_SSL(s));
  return 0;
}
CAMLprim value httpz_tls_close_notify_byte(value s) {
  return Val_long(httpz_tls_close_notify(Long_val(s)));
}

CAMLprim intnat httpz_tls_set_more(intnat s, intnat more) {
  hz_tls_set_more(TLS_SSL(s), more != 0);
  return 0;
}
CAMLprim value httpz_tls_set_more_byte(value s, value more) {
  return Val_long(httpz_tls_set_more(Long_val(s), Long_val(more)));
}

CAMLprim intnat httpz_tls_held(intnat s) { return hz_tls_held(TLS_SSL(s)); }
CAMLprim value httpz_tls_held_byte(value s) { return Val_long(httpz_tls_held(Long_val(s))); }

CAMLprim intnat httpz_tls_flush(intnat s, intnat more) { return hz_tls_flush(TLS_SSL(s), more != 0); }
CAMLprim value httpz_tls_flush_byte(value s, value more) {
  return Val_long(httpz_tls_flush(Long_val(s), Long_val(more)));
}

CAMLprim intnat httpz_tls_ktls_send(intnat s) { return hz_tls_ktls_send(TLS_SSL(s)); }
CAMLprim value httpz_tls_ktls_send_byte(value s) {
  return Val_long(httpz_tls_ktls_send(Long_val(s)));
}

CAMLprim intnat httpz_tls_sendfile(intnat s, intnat fd, intnat off, intnat len) {
  return hz_tls_sendfile(TLS_SSL(s), (int)fd, off, len);
}
CAMLprim value httpz_tls_sendfile_byte(value s, value fd, value off, value len) {
  return Val_long(httpz_tls_sendfile(Long_val(s), Long_val(fd), Long_val(off), Long_val(len)));
}

/* What was negotiated, for logs and tests: "TLSv1.3 TLS_AES_128_GCM_SHA256
   http/1.1 resumed" (allocates). */
CAMLprim value httpz_tls_describe(value sv) {
  CAMLparam1(sv);
  SSL *s = TLS_SSL(Long_val(sv));
  char buf[160];
  const unsigned char *alpn = NULL;
  unsigned int alpn_len = 0;
  SSL_get0_alpn_selected(s, &alpn, &alpn_len);
  snprintf(buf, sizeof buf, "%s %s %.*s%s", SSL_get_version(s),
           SSL_CIPHER_get_name(SSL_get_current_cipher(s)), (int)alpn_len,
           alpn ? (const char *)alpn : "", SSL_session_reused(s) ? " resumed" : "");
  CAMLreturn(caml_copy_string(buf));
}

/* SNI tables (start-up and SIGHUP only). A table is an address as an
   immediate, 0 when it could not be made. */
CAMLprim value httpz_tls_sni_create(value unit) {
  (void)unit;
  return Val_long((intnat)hz_sni_create());
}

CAMLprim value httpz_tls_sni_add(value table, value name, value ctx) {
  return Val_int(hz_sni_add((struct hz_sni *)Long_val(table), String_val(name), caml_string_length(name),
                            TLS_CTX(ctx)));
}

CAMLprim value httpz_tls_sni_attach(value ctx, value table) {
  hz_sni_attach(TLS_CTX(ctx), (struct hz_sni *)Long_val(table));
  return Val_unit;
}

CAMLprim value httpz_tls_sni_free(value table) {
  hz_sni_free((struct hz_sni *)Long_val(table));
  return Val_unit;
}
#endif
