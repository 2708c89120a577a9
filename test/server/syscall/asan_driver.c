/* Exercises the C helpers of sys/httpz_stubs.c and of lib/simd_stubs.c
   (the request parser's SIMD kernel) directly, built with
   -fsanitize=address,undefined by asan_test.sh. The stubs file is included
   whole with HTTPZ_NO_OCAML, so no OCaml runtime is involved and the static
   helpers are in scope. Buffers are malloc'ed to their exact size so that a
   helper reading or writing one byte past a span is an ASan error (the C
   analogue of pico's guard page).

   Prints one line per check and ends with "N passed, N failed". */

#define HTTPZ_NO_OCAML 1
#include "httpz_stubs.c"
#include "simd_stubs.c"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>

#include "asan_check.h"

static void write_file(int dirfd, const char *name, const char *content) {
  int fd = openat(dirfd, name, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) abort();
  if (write(fd, content, strlen(content)) != (ssize_t)strlen(content)) abort();
  close(fd);
}

static void test_constants(void) {
  long v = 0;
  check(hz_constant("EAGAIN", &v) == 0 && v == EAGAIN, "constant EAGAIN");
  check(hz_constant("EPOLLET", &v) == 0 && v == (long)EPOLLET && v > 0, "constant EPOLLET positive");
  check(hz_constant("NOPE", &v) == -1, "unknown constant");
  check(hz_errno_name(EXDEV) != NULL && strcmp(hz_errno_name(EXDEV), "EXDEV") == 0, "errno name EXDEV");
  check(hz_errno_name(4000) == NULL, "unnamed errno");
}

static void test_spans(void) {
  check(hz_span_ok(8, 0, 8), "span whole");
  check(hz_span_ok(8, 8, 0), "span empty at end");
  check(!hz_span_ok(8, 9, 0), "span past end");
  check(!hz_span_ok(8, -1, 1), "negative off");
  check(!hz_span_ok(8, 0, -1), "negative len");
  check(!hz_span_ok(8, 1, LONG_MAX), "len overflowing off + len");
  check(!hz_span_ok(8, LONG_MAX, LONG_MAX), "both huge");
  check(hz_span_ok(0, 0, 0), "empty buffer, empty span");
}

static void test_io(void) {
  int p[2];
  if (pipe2(p, O_CLOEXEC | O_NONBLOCK) < 0) abort();
  unsigned char *src = exact("xxhello", 7);
  unsigned char *dst = malloc(5);
  check_eq(hz_write(p[1], src, 7, 2, 5), 5, "write span at the end of its buffer");
  check_eq(hz_read(p[0], dst, 5, 0, 5), 5, "read exactly the buffer");
  check(memcmp(dst, "hello", 5) == 0, "bytes round-trip");
  check_eq(hz_read(p[0], dst, 5, 0, 5), -EAGAIN, "empty pipe: -EAGAIN");
  check_eq(hz_read(p[0], dst, 5, 1, 5), -EINVAL, "read span one past the end");
  check_eq(hz_write(p[1], src, 7, 7, 1), -EINVAL, "write span past the end");
  unsigned char *head = exact("HEAD", 4), *body = exact("BODY!", 5);
  int sp[2];
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0, sp) < 0) abort();
  check_eq(hz_sendv2(sp[0], head, 4, 0, 4, body, 5, 1, 4, 0), 8, "sendv2");
  unsigned char *both = malloc(8);
  check_eq(hz_read(sp[1], both, 8, 0, 8), 8, "read sendv2 output");
  check(memcmp(both, "HEADODY!", 8) == 0, "sendv2 order");
  check_eq(hz_sendv2(sp[0], head, 4, 0, 4, body, 5, 1, 5, 0), -EINVAL, "sendv2 bad second span");
  check_eq(hz_send(p[1], head, 4, 0, 4, 0), -ENOTSOCK, "send on a pipe");
  hz_close(sp[0]);
  hz_close(sp[1]);
  check_eq(hz_close(p[0]), 0, "close");
  check_eq(hz_close(p[0]), -EBADF, "close twice");
  check_eq(hz_write(p[1], src, 7, 0, 1), -EPIPE, "write to a pipe without reader: -EPIPE");
  hz_close(p[1]);
  free(src);
  free(dst);
  free(head);
  free(body);
  free(both);
}

static void test_sockets(void) {
  long lfd = hz_socket_bind("127.0.0.1", 0, 1);
  check(lfd >= 0, "socket_bind");
  check_eq(hz_accept4((int)lfd), -EINVAL, "accept4 before listen");
  check_eq(hz_listen((int)lfd, 8), 0, "listen");
  long port = hz_local_port((int)lfd);
  check(port > 0 && port < 65536, "local_port");
  check_eq(hz_accept4((int)lfd), -EAGAIN, "accept4 on empty queue");
  check_eq(hz_socket_bind("not-an-ip", 0, 0), -EINVAL, "bad host");
  check_eq(hz_socket_bind("127.0.0.1", 70000, 0), -EINVAL, "bad port");
  int c = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  struct sockaddr_in sin;
  memset(&sin, 0, sizeof sin);
  sin.sin_family = AF_INET;
  sin.sin_port = htons((uint16_t)port);
  sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  check(connect(c, (struct sockaddr *)&sin, sizeof sin) == 0, "connect");
  long s = hz_accept4((int)lfd);
  check(s >= 0, "accept4");
  check((fcntl((int)s, F_GETFL) & O_NONBLOCK) != 0, "accepted fd is non-blocking");
  check((fcntl((int)s, F_GETFD) & FD_CLOEXEC) != 0, "accepted fd is close-on-exec");
  check_eq(hz_setsockopt((int)s, 0, 1), 0, "setsockopt TCP_NODELAY");
  check_eq(hz_getsockopt((int)s, 0), 1, "getsockopt TCP_NODELAY");
  check_eq(hz_setsockopt((int)s, 1, 16384), 0, "setsockopt TCP_NOTSENT_LOWAT");
  check_eq(hz_getsockopt((int)s, 1), 16384, "getsockopt TCP_NOTSENT_LOWAT");
  check_eq(hz_setsockopt((int)s, 3, 1), -EINVAL, "setsockopt unknown option");
  check_eq(hz_getsockopt((int)s, -1), -EINVAL, "getsockopt unknown option");
  check_eq(hz_setsockopt((int)s, 1, 1L << 40), -EINVAL, "setsockopt value beyond int");
  /* MSG_MORE sends, released by the shutdown: the peer reads all, then EOF. */
  const unsigned char head[] = "HEAD", body[] = "xBODY";
  check_eq(hz_send((int)s, head, 4, 0, 4, 1), 4, "send with MSG_MORE");
  check_eq(hz_sendv2((int)s, head, 4, 1, 3, body, 5, 1, 4, 1), 7, "sendv2 with MSG_MORE");
  check_eq(hz_send((int)s, head, 4, 2, 3, 0), -EINVAL, "send span past the end");
  check_eq(hz_sendv2((int)s, head, 4, 0, 4, body, 5, -1, 1, 0), -EINVAL, "sendv2 negative offset");
  check_eq(hz_shutdown_write((int)s), 0, "shutdown_write");
  char got[16];
  size_t n = 0;
  for (;;) {
    ssize_t r = read(c, got + n, sizeof got - n);
    if (r <= 0) break;
    n += (size_t)r;
  }
  check_eq((long)n, 11, "peer reads what the MSG_MORE sends held");
  check(memcmp(got, "HEADEADBODY", 11) == 0, "in order");
  char b;
  check_eq(read(c, &b, 1), 0, "peer sees EOF");

  /* epoll, with the stack batch and clamp. */
  long ep = hz_epoll_create();
  check(ep >= 0, "epoll_create");
  struct epoll_event evs[HZ_EPOLL_BATCH];
  check_eq(hz_epoll_ctl((int)ep, EPOLL_CTL_ADD, (int)s, EPOLLIN, 1234567890123L), 0, "epoll add");
  check_eq(hz_epoll_wait((int)ep, evs, 4, 0), 0, "nothing ready");
  if (write(c, "x", 1) != 1) abort();
  check_eq(hz_epoll_wait((int)ep, evs, 4, 100), 1, "ready");
  check_eq((long)evs[0].data.u64, 1234567890123L, "token");
  check((evs[0].events & EPOLLIN) != 0, "mask");
  check_eq(hz_epoll_clamp(100000, 3), 3, "clamp to capacity");
  check_eq(hz_epoll_clamp(100000, 100000), HZ_EPOLL_BATCH, "clamp to batch");
  check_eq(hz_epoll_clamp(2, 8), 2, "max below both");
  check_eq(hz_epoll_ctl((int)ep, EPOLL_CTL_DEL, (int)s, 0, 0), 0, "epoll del");
  hz_close((int)ep);
  hz_close((int)s);
  close(c);
  hz_close((int)lfd);
}

static void test_files(void) {
  char tmpl[] = "/tmp/httpz-asan-XXXXXX";
  if (mkdtemp(tmpl) == NULL) abort();
  int base = open(tmpl, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (mkdirat(base, "root", 0755) < 0 || mkdirat(base, "root/sub", 0755) < 0) abort();
  write_file(base, "secret", "secret");
  write_file(base, "root/a.txt", "hello");
  if (symlinkat("../secret", base, "root/out") < 0 || symlinkat("a.txt", base, "root/in") < 0 ||
      mkfifoat(base, "root/fifo", 0644) < 0)
    abort();
  int root = (int)hz_open_dir(tmpl);
  check(root >= 0, "open_dir");
  hz_close(root);
  root = openat(base, "root", O_RDONLY | O_DIRECTORY | O_CLOEXEC);

  for (int mode = 0; mode < 2; mode++) {
    hz_force_fallback = mode;
    const char *m = mode ? " (fallback)" : " (openat2)";
    char what[128];
#define T(path, want)                                                           \
  do {                                                                          \
    unsigned char *p_ = exact(path, strlen(path));                              \
    long r_ = hz_openat2_beneath(root, p_, strlen(path), 0, (long)strlen(path), 0); \
    snprintf(what, sizeof what, "open %s%s", path, m);                          \
    if ((want) == 0) {                                                          \
      check(r_ >= 0, what);                                                     \
      if (r_ >= 0) hz_close((int)r_);                                           \
    } else                                                                      \
      check_eq(r_, (want), what);                                               \
    free(p_);                                                                   \
  } while (0)
    T("a.txt", 0);
    T("sub", 0);
    T("fifo", 0);
    T("../secret", -EXDEV);
    T("/etc/passwd", -EXDEV);
    T("out", mode ? -ELOOP : -EXDEV);
    T("in", mode ? -ELOOP : 0);
    T("missing", -ENOENT);
    T("a.txt/x", -ENOTDIR);
    T("", -ENOENT);
#undef T
    /* Path flush against the end of an exact-size buffer, at an offset. */
    unsigned char *g = exact("garbage/a.txt", 13);
    long r = hz_openat2_beneath(root, g, 13, 8, 5, 0);
    snprintf(what, sizeof what, "path at the end of its buffer%s", m);
    check(r >= 0, what);
    if (r >= 0) {
      long st[HZ_ST_FIELDS];
      check_eq(hz_fstat((int)r, st), 0, "fstat");
      check_eq(st[HZ_ST_KIND], 0, "regular");
      check_eq(st[HZ_ST_SIZE], 5, "size");
      check(st[HZ_ST_MTIME_NS] >= 0 && st[HZ_ST_MTIME_NS] < 1000000000L, "mtime ns range");
      hz_close((int)r);
    }
    free(g);
    /* A component of NAME_MAX bytes is fine; one more is refused before
       it can overflow the walker's component buffer. */
    char *comp = malloc(NAME_MAX + 1);
    memset(comp, 'c', NAME_MAX + 1);
    snprintf(what, sizeof what, "component of NAME_MAX bytes%s", m);
    check_eq(hz_openat2_beneath(root, (unsigned char *)comp, NAME_MAX + 1, 0, NAME_MAX, 0), -ENOENT,
             what);
    snprintf(what, sizeof what, "component of NAME_MAX+1 bytes%s", m);
    check_eq(hz_openat2_beneath(root, (unsigned char *)comp, NAME_MAX + 1, 0, NAME_MAX + 1, 0),
             -ENAMETOOLONG, what);
    free(comp);
    /* Paths of PATH_MAX - 1 bytes fit the stack buffer with its NUL;
       PATH_MAX bytes do not. */
    unsigned char *big = malloc(PATH_MAX);
    for (int i = 0; i < PATH_MAX; i++) big[i] = (i % 2) ? '/' : 'd';
    r = hz_openat2_beneath(root, big, PATH_MAX, 0, PATH_MAX - 1, 0);
    snprintf(what, sizeof what, "PATH_MAX-1 path reaches the kernel%s", m);
    check(r == -ENOENT || r == -ENAMETOOLONG, what);
    snprintf(what, sizeof what, "PATH_MAX path refused%s", m);
    check_eq(hz_openat2_beneath(root, big, PATH_MAX, 0, PATH_MAX, 0), -ENAMETOOLONG, what);
    free(big);
    unsigned char *nul = exact("a.txt\0../x", 10);
    snprintf(what, sizeof what, "NUL in path%s", m);
    check_eq(hz_openat2_beneath(root, nul, 10, 0, 10, 0), -EINVAL, what);
    snprintf(what, sizeof what, "span past end%s", m);
    check_eq(hz_openat2_beneath(root, nul, 10, 5, 6, 0), -EINVAL, what);
    free(nul);
  }
  hz_force_fallback = 0;
  check(hz_openat2_available() == 1, "openat2 available on this kernel");

  /* sendfile from the file into a pipe, at an offset. */
  int f = openat(root, "a.txt", O_RDONLY | O_CLOEXEC);
  int p[2];
  if (pipe2(p, O_CLOEXEC) < 0) abort();
  check_eq(hz_sendfile(p[1], f, 1, 100), 4, "sendfile short at EOF");
  char out[8];
  check_eq(read(p[0], out, sizeof out), 4, "read sendfile");
  check(memcmp(out, "ello", 4) == 0, "sendfile bytes");
  check_eq(lseek(f, 0, SEEK_CUR), 0, "file offset untouched");
  check_eq(hz_sendfile(p[1], f, -1, 1), -EINVAL, "negative offset");
  /* pread into an exact-size buffer: a read past the span is an ASan
     error. */
  unsigned char *dst = exact("....", 4);
  check_eq(hz_pread(f, dst, 4, 1, 3, 2), 3, "pread 3 bytes at file offset 2");
  check(memcmp(dst, ".llo", 4) == 0, "pread bytes at the buffer offset");
  check_eq(hz_pread(f, dst, 4, 0, 4, 5), 0, "pread at end of file");
  check_eq(hz_pread(f, dst, 4, 1, 4, 0), -EINVAL, "pread span past the buffer");
  check_eq(hz_pread(f, dst, 4, 0, 1, -1), -EINVAL, "pread negative file offset");
  check_eq(lseek(f, 0, SEEK_CUR), 0, "pread leaves the file offset");
  free(dst);
  close(p[0]);
  close(p[1]);
  close(f);

  unlinkat(root, "a.txt", 0);
  unlinkat(root, "out", 0);
  unlinkat(root, "in", 0);
  unlinkat(root, "fifo", 0);
  unlinkat(root, "sub", AT_REMOVEDIR);
  close(root);
  unlinkat(base, "root", AT_REMOVEDIR);
  unlinkat(base, "secret", 0);
  close(base);
  rmdir(tmpl);
}

static void test_misc(void) {
  long a = hz_clock_ns(CLOCK_MONOTONIC), b = hz_clock_ns(CLOCK_MONOTONIC);
  check(a > 0 && b >= a, "monotonic");
  check(hz_clock_s(CLOCK_REALTIME) > 1600000000L, "realtime seconds");
  long soft = hz_getrlimit_nofile(0), hard = hz_getrlimit_nofile(1);
  check(soft > 0 && soft <= hard, "rlimits");
  check_eq(hz_setrlimit_nofile(soft), 0, "setrlimit to the same value");
  check_eq(hz_setrlimit_nofile(-1), -EINVAL, "setrlimit negative");
  check_eq(hz_set_pdeathsig(0), 0, "pdeathsig 0");
  check_eq(hz_set_pdeathsig(100000), -EINVAL, "pdeathsig bad signal");
}

/* {1 The SIMD kernel at the edges of its buffer}
   Its windows are 16-byte loads: a load that starts less than 16 bytes
   before the end of an exact-size buffer, or before its start, is an ASan
   error here. Every scan runs to the buffer's end ([stop] = size) from
   every start, in buffers of every size around the window's. */

static int ref_target_stop(uint8_t c) { return c <= 0x20 || c == 0x7f || c == '#'; }
static int ref_hostname(uint8_t c) { return isalnum(c) || c == '-' || c == '.'; }

/* A deterministic byte mix: mostly ordinary bytes, some of each kind that
   stops a scan. */
static uint8_t mix(unsigned *seed) {
  static const char kinds[] = "aZ09-.:;_~#\t\r\n \x7f\x80\xff\x00,/";
  *seed = *seed * 1103515245u + 12345u;
  unsigned r = (*seed >> 16) & 0x7fff;
  return r % 3 == 0 ? (uint8_t)kinds[r % (sizeof kinds - 1)] : (uint8_t)('a' + r % 26);
}

static void test_simd_scanners(void) {
  int bad = 0;
  unsigned seed = 1;
  for (long size = 0; size <= 80; size++) {
    for (int round = 0; round < 8; round++) {
      unsigned char *b = malloc(size == 0 ? 1 : (size_t)size);
      if (b == NULL) abort();
      for (long i = 0; i < size; i++) b[i] = mix(&seed);
      for (long pos = 0; pos <= size; pos++) {
        long t = pos, h = pos;
        while (t < size && !ref_target_stop(b[t])) t++;
        while (h < size && ref_hostname(b[h])) h++;
        if (hz_target_end(b, pos, size) != t) bad++;
        if (hz_hostname_end(b, pos, size) != h) bad++;
      }
      free(b);
    }
  }
  check_eq(bad, 0, "simd: target and hostname scans match byte loops, every start, exact-size buffers");
  check(hz_simd_available() == 1, "simd: kernel compiled in on x86-64");
}

/* At [level] (1: SSE2 windows, 2: AVX2 windows where the CPU has them).
   The spans come back as OCaml ints (2n + 1). */
static void test_simd_lines_at(int level) {
  static const char head[] =
    "GET /index.html HTTP/1.1\r\nHost: www.example.com\r\nX-Custom-Header-1: value-1\r\n"
    "Accept: text/html,application/xhtml+xml\r\nA: b\r\n\r\n";
  const long n = (long)strlen(head), first = (long)strlen("GET /index.html HTTP/1.1\r\n");
  intptr_t names[8], values[8];
  char what[128];
  int bad = 0;
  int got = hz_set_level(level);
  snprintf(what, sizeof what, "simd level %d: in force (%d)", level, got);
  check(got >= 1 && got <= level, what);
  /* Every prefix, in a buffer of exactly its size, from every start: the
     kernel must stop inside the buffer whatever it finds there. */
  for (long len = 0; len <= n; len++) {
    unsigned char *b = exact(head, (size_t)len);
    for (long pos = 0; pos <= len; pos++) {
      intptr_t r = hz_field_lines(b, pos, len, names, values, 0, 8);
      long lines = (long)(r >> 32), at = (long)(r & 0xffffffff);
      if (at < pos || at > len || lines < 0 || lines > 4) bad++;
    }
    free(b);
  }
  snprintf(what, sizeof what, "simd level %d: field lines stop inside every prefix, from every start", level);
  check_eq(bad, 0, what);
  unsigned char *b = exact(head, (size_t)n);
  intptr_t r = hz_field_lines(b, first, n, names, values, 0, 8);
  check_eq((long)(r >> 32), 4, "simd: four field lines");
  check_eq((long)(r & 0xffffffff), n - 2, "simd: stops at the empty line");
  check_eq((long)((names[0] >> 1) >> 31), first, "simd: first name offset");
  check_eq((long)((names[0] >> 1) & 0x7fffffff), 4, "simd: first name length");
  check_eq((long)((values[3] >> 1) & 0x7fffffff), 1, "simd: last value length");
  r = hz_field_lines(b, first, n, names, values, 0, 2);
  check_eq((long)(r >> 32), 2, "simd: stops at the limit");
  free(b);
  /* Under 16 bytes the kernel takes nothing (the portable loop does). */
  b = exact("A: b\r\n\r\n", 8);
  r = hz_field_lines(b, 0, 8, names, values, 0, 8);
  check_eq((long)(r >> 32), 0, "simd: buffer under 16 bytes left alone");
  free(b);
}

static void test_simd_lines(void) {
  test_simd_lines_at(1);
  test_simd_lines_at(2);
}

int main(void) {
  setvbuf(stdout, NULL, _IOLBF, 0);
  signal(SIGPIPE, SIG_IGN); /* as the server does: EPIPE instead of death */
  test_constants();
  test_spans();
  test_io();
  test_sockets();
  test_files();
  test_misc();
  test_simd_scanners();
  test_simd_lines();
  printf("%d passed, %d failed\n", passed, failed);
  return failed == 0 ? 0 : 1;
}
