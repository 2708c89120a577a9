/* httpz server syscall layer: one Linux syscall per stub.

   Every stub returns an integer: non-negative is the syscall's success value,
   negative is -errno. Nothing raises on the fast path, so EAGAIN costs no
   exception and the stubs can be [@@noalloc].

   Layout: the [hz_*] functions are plain C (no OCaml headers) so that
   test/server/syscall/asan_driver.c can #include this file with -DHTTPZ_NO_OCAML and
   exercise them under -fsanitize=address,undefined. The [httpz_*] functions
   at the end are the OCaml stubs: they unpack values and call the helpers.

   Stubs that are [@@noalloc] in syscall.ml must not allocate on the OCaml
   heap, raise, or release the runtime lock. Only [httpz_epoll_wait] releases
   the lock (when it may block), and it is not [@@noalloc]. */

#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/sendfile.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>
#include "hz_sockaddr.h"

#if defined(__has_include)
#if __has_include(<linux/openat2.h>)
#include <linux/openat2.h>
#define HZ_HAVE_OPENAT2_H 1
#endif
#endif

#ifndef HZ_HAVE_OPENAT2_H
/* Kernel ABI (include/uapi/linux/openat2.h), for older userspace headers. */
struct open_how {
  uint64_t flags;
  uint64_t mode;
  uint64_t resolve;
};
#define RESOLVE_NO_XDEV 0x01
#define RESOLVE_NO_MAGICLINKS 0x02
#define RESOLVE_NO_SYMLINKS 0x04
#define RESOLVE_BENEATH 0x08
#endif

#ifndef SYS_openat2
#if defined(__x86_64__) || defined(__aarch64__) || defined(__riscv)
#define SYS_openat2 437 /* same number on every architecture since 5.6 */
#endif
#endif

/* ------------------------------------------------------------------------ */
/* Constants, looked up by name so OCaml never hard-codes a number and a
   misspelt name fails loudly at module initialisation. */

struct hz_const {
  const char *name;
  long value;
  int is_errno;
};

#define HZ_E(x) {#x, x, 1}
#define HZ_C(x) {#x, (long)(x), 0}

static const struct hz_const hz_constants[] = {
    HZ_E(EAGAIN),       HZ_E(EWOULDBLOCK), HZ_E(EINTR),        HZ_E(ECONNRESET),
    HZ_E(EPIPE),        HZ_E(EMFILE),      HZ_E(ENFILE),       HZ_E(ENOENT),
    HZ_E(EACCES),       HZ_E(EPERM),       HZ_E(ELOOP),        HZ_E(EXDEV),
    HZ_E(ENOTDIR),      HZ_E(EISDIR),      HZ_E(ENXIO),        HZ_E(EINVAL),
    HZ_E(EBADF),        HZ_E(ENOMEM),      HZ_E(ENOBUFS),      HZ_E(ECONNABORTED),
    HZ_E(EPROTO),       HZ_E(ENAMETOOLONG), HZ_E(ENOSYS),      HZ_E(EADDRINUSE),
    HZ_E(EADDRNOTAVAIL), HZ_E(ENOTCONN),   HZ_E(ETIMEDOUT),    HZ_E(EFAULT),
    HZ_E(ECANCELED),
    HZ_E(EEXIST),       HZ_E(ENOSPC),      HZ_E(EIO),          HZ_E(EOVERFLOW),
    HZ_E(ESPIPE),       HZ_E(ENOTSOCK),    HZ_E(EOPNOTSUPP),   HZ_E(EHOSTUNREACH),
    HZ_E(ENETUNREACH),  HZ_E(ECONNREFUSED), HZ_E(ESRCH),
    HZ_C(EPOLLIN),      HZ_C(EPOLLOUT),    HZ_C(EPOLLERR),     HZ_C(EPOLLHUP),
    HZ_C(EPOLLRDHUP),   HZ_C(EPOLLPRI),    HZ_C(EPOLLET),      HZ_C(EPOLLONESHOT),
    HZ_C(EPOLLEXCLUSIVE),
    HZ_C(RESOLVE_BENEATH), HZ_C(RESOLVE_NO_SYMLINKS), HZ_C(RESOLVE_NO_MAGICLINKS),
    HZ_C(PATH_MAX),
};

#define HZ_NCONSTANTS (sizeof hz_constants / sizeof hz_constants[0])

/* 0 and *out set when [name] is known, -1 otherwise. */
static int hz_constant(const char *name, long *out) {
  for (size_t i = 0; i < HZ_NCONSTANTS; i++)
    if (strcmp(hz_constants[i].name, name) == 0) {
      *out = hz_constants[i].value;
      return 0;
    }
  return -1;
}

/* The symbolic name of errno [e] ("EAGAIN"), or NULL. EWOULDBLOCK aliases
   EAGAIN on Linux; the first entry wins. */
static const char *hz_errno_name(long e) {
  for (size_t i = 0; i < HZ_NCONSTANTS; i++)
    if (hz_constants[i].is_errno && hz_constants[i].value == e)
      return hz_constants[i].name;
  return NULL;
}

/* ------------------------------------------------------------------------ */
/* Buffer spans. A (base, cap, off, len) quadruple is valid iff the span lies
   inside [0, cap). Checked here, once, so no stub can be talked into reading
   or writing outside a bigstring. */

static int hz_span_ok(size_t cap, long off, long len) {
  return off >= 0 && len >= 0 && (size_t)off <= cap && (size_t)len <= cap - (size_t)off;
}

static long hz_neg_errno(long r) { return r < 0 ? -(long)errno : r; }

/* ------------------------------------------------------------------------ */
/* Sockets. */

/* socket + SO_REUSEADDR (+ SO_REUSEPORT) + bind, not listening yet: options
   that accepted sockets inherit can be set before any connection exists. */
static long hz_socket_bind(const char *host, int port, int reuseport) {
  struct sockaddr_storage ss;
  socklen_t slen;
  int family = hz_sockaddr(host, port, &ss, &slen);
  if (family < 0) return family;
  int fd = socket(family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) return -errno;
  int one = 1;
  if (setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) < 0) goto fail;
  if (reuseport && setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof one) < 0) goto fail;
  /* An IPv6 socket serves IPv6 only (as nginx does), whatever the
     net.ipv6.bindv6only sysctl says: [::]:80 and 0.0.0.0:80 can then be
     bound side by side, each family by its own socket. */
  if (family == AF_INET6 && setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof one) < 0)
    goto fail;
  if (bind(fd, (struct sockaddr *)&ss, slen) < 0) goto fail;
  return fd;
fail: {
  int e = errno;
  close(fd);
  return -e;
}
}

static long hz_listen(int fd, int backlog) { return hz_neg_errno(listen(fd, backlog)); }

static long hz_local_port(int fd) {
  struct sockaddr_storage ss;
  socklen_t slen = sizeof ss;
  if (getsockname(fd, (struct sockaddr *)&ss, &slen) < 0) return -errno;
  if (ss.ss_family == AF_INET) return ntohs(((struct sockaddr_in *)&ss)->sin_port);
  if (ss.ss_family == AF_INET6) return ntohs(((struct sockaddr_in6 *)&ss)->sin6_port);
  return -EINVAL;
}

static long hz_accept4(int lfd) {
  return hz_neg_errno(accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC));
}

/* The socket options httpz sets, in the order of Syscall.sockopt's
   constructors (an OCaml constant constructor is its index). */
static const struct {
  int level, name;
} hz_sockopts[] = {
    {IPPROTO_TCP, TCP_NODELAY},
    {IPPROTO_TCP, TCP_NOTSENT_LOWAT},
    {IPPROTO_TCP, TCP_DEFER_ACCEPT},
};
#define HZ_NSOCKOPTS ((long)(sizeof hz_sockopts / sizeof hz_sockopts[0]))

static long hz_setsockopt(int fd, long opt, long v) {
  if (opt < 0 || opt >= HZ_NSOCKOPTS || v < INT_MIN || v > INT_MAX) return -EINVAL;
  int iv = (int)v;
  return hz_neg_errno(
      setsockopt(fd, hz_sockopts[opt].level, hz_sockopts[opt].name, &iv, sizeof iv));
}

/* The option's value (never negative for these options), or -errno. */
static long hz_getsockopt(int fd, long opt) {
  if (opt < 0 || opt >= HZ_NSOCKOPTS) return -EINVAL;
  int iv = 0;
  socklen_t len = sizeof iv;
  if (getsockopt(fd, hz_sockopts[opt].level, hz_sockopts[opt].name, &iv, &len) < 0) return -errno;
  return iv;
}

static long hz_shutdown_write(int fd) { return hz_neg_errno(shutdown(fd, SHUT_WR)); }

static long hz_close(int fd) { return hz_neg_errno(close(fd)); }

/* ------------------------------------------------------------------------ */
/* Byte I/O on caller-owned buffers. */

static long hz_read(int fd, unsigned char *base, size_t cap, long off, long len) {
  if (!hz_span_ok(cap, off, len)) return -EINVAL;
  return hz_neg_errno(read(fd, base + off, (size_t)len));
}

static long hz_write(int fd, const unsigned char *base, size_t cap, long off, long len) {
  if (!hz_span_ok(cap, off, len)) return -EINVAL;
  return hz_neg_errno(write(fd, base + off, (size_t)len));
}

/* send(2)/sendmsg(2) of one or two spans, with MSG_NOSIGNAL and, when
   [more], MSG_MORE: the bytes may wait (as under TCP_CORK) for what follows
   at once, a sendfile body or the FIN of a shutdown. */
static int hz_send_flags(int more) { return MSG_NOSIGNAL | (more ? MSG_MORE : 0); }

static long hz_send(int fd, const unsigned char *base, size_t cap, long off, long len, int more) {
  if (!hz_span_ok(cap, off, len)) return -EINVAL;
  return hz_neg_errno(send(fd, base + off, (size_t)len, hz_send_flags(more)));
}

static long hz_sendv2(int fd, const unsigned char *b1, size_t cap1, long off1, long len1,
                      const unsigned char *b2, size_t cap2, long off2, long len2, int more) {
  struct iovec iov[2];
  struct msghdr m;
  if (!hz_span_ok(cap1, off1, len1) || !hz_span_ok(cap2, off2, len2)) return -EINVAL;
  iov[0].iov_base = (void *)(b1 + off1);
  iov[0].iov_len = (size_t)len1;
  iov[1].iov_base = (void *)(b2 + off2);
  iov[1].iov_len = (size_t)len2;
  memset(&m, 0, sizeof m);
  m.msg_iov = iov;
  m.msg_iovlen = 2;
  return hz_neg_errno(sendmsg(fd, &m, hz_send_flags(more)));
}

static long hz_pread(int fd, unsigned char *base, size_t cap, long off, long len, long file_off) {
  if (!hz_span_ok(cap, off, len) || file_off < 0) return -EINVAL;
  return hz_neg_errno(pread(fd, base + off, (size_t)len, (off_t)file_off));
}

static long hz_sendfile(int out_fd, int in_fd, long offset, long count) {
  if (offset < 0 || count < 0) return -EINVAL;
  off_t off = (off_t)offset;
  return hz_neg_errno(sendfile(out_fd, in_fd, &off, (size_t)count));
}

/* ------------------------------------------------------------------------ */
/* epoll. */

/* Events fetched per epoll_wait call at most: the stub reads them into a C
   stack array (the OCaml destination may move while the lock is released). */
#define HZ_EPOLL_BATCH 512

static long hz_epoll_create(void) { return hz_neg_errno(epoll_create1(EPOLL_CLOEXEC)); }

static long hz_epoll_ctl(int epfd, int op, int fd, long events, long token) {
  struct epoll_event ev;
  memset(&ev, 0, sizeof ev);
  ev.events = (uint32_t)events;
  ev.data.u64 = (uint64_t)token;
  return hz_neg_errno(epoll_ctl(epfd, op, fd, &ev));
}

static long hz_epoll_wait(int epfd, struct epoll_event *evs, int max, int timeout) {
  return hz_neg_errno(epoll_wait(epfd, evs, max, timeout));
}

/* Clamp a caller's [max] to what both destination and stack batch hold. */
static long hz_epoll_clamp(long max, long capacity) {
  if (max > capacity) max = capacity;
  if (max > HZ_EPOLL_BATCH) max = HZ_EPOLL_BATCH;
  return max;
}

/* ------------------------------------------------------------------------ */
/* Opening files beneath a root directory. */

#define HZ_O_FLAGS (O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY)

/* 0 = not tried yet, 1 = openat2 works, -1 = ENOSYS seen: use the fallback.
   [hz_force_fallback] is a test hook (see syscall.mli, hidden section). */
static int hz_openat2_state = 0;
static int hz_force_fallback = 0;

/* Copy the span into [out] (PATH_MAX bytes) and NUL-terminate it. A NUL
   inside the span would silently truncate the path the kernel sees, so it is
   refused, as are paths that do not fit. */
static long hz_path_copy(char *out, const unsigned char *base, size_t cap, long off, long len) {
  if (!hz_span_ok(cap, off, len)) return -EINVAL;
  if (len >= PATH_MAX) return -ENAMETOOLONG;
  if (len > 0 && memchr(base + off, 0, (size_t)len) != NULL) return -EINVAL;
  memcpy(out, base + off, (size_t)len);
  out[len] = '\0';
  return 0;
}

/* Fallback for kernels without openat2 (< 5.6): walk the path one component
   at a time with O_NOFOLLOW, so no symlink is ever followed (stricter than
   RESOLVE_BENEATH, which allows symlinks that stay inside), and refuse
   absolute paths and every ".." component with EXDEV, as openat2 does for
   escapes (again stricter: "a/../b" is refused too). */
static long hz_open_walk(int dirfd, const char *path) {
  char name[NAME_MAX + 1];
  const char *p = path;
  int cur = dirfd;
  long r;
  if (path[0] == '/') return -EXDEV;
  if (path[0] == '\0') return -ENOENT;
  for (;;) {
    while (*p == '/') p++;
    const char *s = p;
    while (*p != '\0' && *p != '/') p++;
    size_t n = (size_t)(p - s);
    const char *q = p;
    while (*q == '/') q++;
    int last = (*q == '\0');
    if (n == 2 && s[0] == '.' && s[1] == '.') {
      r = -EXDEV;
      break;
    }
    if (n > NAME_MAX) {
      r = -ENAMETOOLONG;
      break;
    }
    if (n == 0 || (n == 1 && s[0] == '.')) {
      if (!last) continue;
      name[0] = '.';
      name[1] = '\0';
    } else {
      memcpy(name, s, n);
      name[n] = '\0';
    }
    if (last) {
      int flags = HZ_O_FLAGS | O_NOFOLLOW | (q != p ? O_DIRECTORY : 0);
      r = hz_neg_errno(openat(cur, name, flags));
      break;
    }
    int nfd = openat(cur, name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (nfd < 0) {
      r = -errno;
      /* O_PATH|O_NOFOLLOW on a symlink used as a directory reports ENOTDIR;
         say ELOOP like the openat2 path with RESOLVE_NO_SYMLINKS does. */
      if (r == -ENOTDIR) {
        struct stat st;
        if (fstatat(cur, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode)) r = -ELOOP;
      }
      break;
    }
    if (cur != dirfd) close(cur);
    cur = nfd;
  }
  if (cur != dirfd) close(cur);
  return r;
}

static long hz_openat2_beneath(int dirfd, const unsigned char *base, size_t cap, long off,
                               long len, int no_symlinks) {
  char path[PATH_MAX];
  long r = hz_path_copy(path, base, cap, off, len);
  if (r < 0) return r;
#ifdef SYS_openat2
  if (hz_openat2_state >= 0 && !hz_force_fallback) {
    struct open_how how;
    memset(&how, 0, sizeof how);
    how.flags = HZ_O_FLAGS;
    how.resolve = RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS | (no_symlinks ? RESOLVE_NO_SYMLINKS : 0);
    /* EAGAIN: the kernel saw a concurrent rename and could not prove ".."
       stayed inside; openat2(2) says to retry. Bounded. */
    for (int tries = 0; tries < 4; tries++) {
      r = syscall(SYS_openat2, dirfd, path, &how, sizeof how);
      if (r >= 0) {
        hz_openat2_state = 1;
        return r;
      }
      r = -errno;
      if (r != -EAGAIN) break;
    }
    if (r != -ENOSYS) return r;
    hz_openat2_state = -1;
  }
#endif
  return hz_open_walk(dirfd, path);
}

static long hz_openat2_available(void) {
#ifdef SYS_openat2
  if (hz_openat2_state == 0) {
    struct open_how how;
    memset(&how, 0, sizeof how);
    how.flags = O_RDONLY | O_CLOEXEC | O_DIRECTORY;
    how.resolve = RESOLVE_BENEATH;
    long fd = syscall(SYS_openat2, AT_FDCWD, ".", &how, sizeof how);
    if (fd >= 0) {
      close((int)fd);
      hz_openat2_state = 1;
    } else if (errno == ENOSYS)
      hz_openat2_state = -1;
  }
  return hz_openat2_state > 0;
#else
  return 0;
#endif
}

static long hz_open_dir(const char *path) {
  return hz_neg_errno(open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC));
}

/* ------------------------------------------------------------------------ */
/* fstat into a fixed record of integers; the field order is shared with
   syscall.ml (stat_* accessors) and must not change independently. */

enum {
  HZ_ST_KIND,
  HZ_ST_SIZE,
  HZ_ST_MTIME_S,
  HZ_ST_MTIME_NS,
  HZ_ST_INO,
  HZ_ST_DEV,
  HZ_ST_PERM,
  HZ_ST_FIELDS
};

/* Kind codes: the constructor order of [Syscall.file_kind]. */
static long hz_kind_code(mode_t m) {
  if (S_ISREG(m)) return 0;
  if (S_ISDIR(m)) return 1;
  if (S_ISCHR(m)) return 2;
  if (S_ISBLK(m)) return 3;
  if (S_ISFIFO(m)) return 4;
  if (S_ISSOCK(m)) return 5;
  if (S_ISLNK(m)) return 6;
  return 7;
}

/* Values go through unsigned 62-bit masking so every field fits an OCaml
   immediate without UB: inode and device numbers above 2^62 lose their top
   bits (they are identifiers, used for equality and ETags only). */
#define HZ_INT_MASK ((uint64_t)0x3fffffffffffffffULL)

static long hz_fstat(int fd, long out[HZ_ST_FIELDS]) {
  struct stat st;
  if (fstat(fd, &st) < 0) return -errno;
  out[HZ_ST_KIND] = hz_kind_code(st.st_mode);
  out[HZ_ST_SIZE] = (long)st.st_size;
  out[HZ_ST_MTIME_S] = (long)st.st_mtim.tv_sec;
  out[HZ_ST_MTIME_NS] = (long)st.st_mtim.tv_nsec;
  out[HZ_ST_INO] = (long)((uint64_t)st.st_ino & HZ_INT_MASK);
  out[HZ_ST_DEV] = (long)((uint64_t)st.st_dev & HZ_INT_MASK);
  out[HZ_ST_PERM] = (long)(st.st_mode & 07777);
  return 0;
}

/* ------------------------------------------------------------------------ */
/* Clocks, limits, process. */

static long hz_clock_ns(clockid_t c) {
  struct timespec ts;
  clock_gettime(c, &ts);
  return (long)ts.tv_sec * 1000000000L + (long)ts.tv_nsec;
}

static long hz_clock_s(clockid_t c) {
  struct timespec ts;
  clock_gettime(c, &ts);
  return (long)ts.tv_sec;
}

/* RLIM_INFINITY is reported as LONG_MAX / 2, the largest value that is both
   a C long and an OCaml int, so [max_int] on the OCaml side. */
#define HZ_RLIM_INF (LONG_MAX / 2)

static long hz_getrlimit_nofile(int hard) {
  struct rlimit rl;
  if (getrlimit(RLIMIT_NOFILE, &rl) < 0) return -errno;
  rlim_t v = hard ? rl.rlim_max : rl.rlim_cur;
  if (v == RLIM_INFINITY || v > (rlim_t)HZ_RLIM_INF) return HZ_RLIM_INF;
  return (long)v;
}

static long hz_setrlimit_nofile(long soft) {
  struct rlimit rl;
  if (soft < 0) return -EINVAL;
  if (getrlimit(RLIMIT_NOFILE, &rl) < 0) return -errno;
  rl.rlim_cur = soft >= HZ_RLIM_INF ? RLIM_INFINITY : (rlim_t)soft;
  return hz_neg_errno(setrlimit(RLIMIT_NOFILE, &rl));
}

static long hz_set_pdeathsig(int signo) {
  return hz_neg_errno(prctl(PR_SET_PDEATHSIG, (unsigned long)signo, 0UL, 0UL, 0UL));
}

/* ======================================================================== */
/* OCaml stubs. Native versions take [@untagged] ints as [intnat] and return
   [intnat]; the _byte versions are for bytecode and tag/untag by hand. */

#ifndef HTTPZ_NO_OCAML

#define CAML_NAME_SPACE
#include <caml/alloc.h>
#include <caml/bigarray.h>
#include <caml/fail.h>
#include <caml/memory.h>
#include <caml/mlvalues.h>
#include <caml/signals.h>

/* Exported by the runtime (4.x and 5.x; the unix library calls it) but only
   declared under CAML_INTERNALS, which would expose far more than we need. */
CAMLextern int caml_convert_signal_number(int);

#define BA_DATA(v) ((unsigned char *)Caml_ba_data_val(v))
#define BA_CAP(v) ((size_t)Caml_ba_array_val(v)->dim[0])

/* Four shapes of stub: the native body once, the bytecode wrapper derived. */
#define HZ_BYTE1(name) \
  CAMLprim value name##_byte(value a) { return Val_long(name(Long_val(a))); }
#define HZ_BYTE0(name) \
  CAMLprim value name##_byte(value u) { return Val_long(name(u)); }

CAMLprim value httpz_constant(value v_name) {
  long v;
  if (caml_string_length(v_name) != strlen(String_val(v_name)) || hz_constant(String_val(v_name), &v) < 0)
    caml_invalid_argument("Httpz_server.Syscall: unknown C constant");
  return Val_long(v);
}

CAMLprim value httpz_errno_name(value v_errno) {
  long e = Long_val(v_errno);
  const char *n = hz_errno_name(e < 0 ? -e : e);
  return caml_copy_string(n != NULL ? n : "");
}

CAMLprim value httpz_strerror(value v_errno) {
  long e = Long_val(v_errno);
  return caml_copy_string(strerror((int)(e < 0 ? -e : e)));
}

CAMLprim value httpz_socket_bind(value v_host, value v_port, value v_reuseport) {
  if (caml_string_length(v_host) != strlen(String_val(v_host))) return Val_long(-EINVAL);
  return Val_long(hz_socket_bind(String_val(v_host), Int_val(v_port), Bool_val(v_reuseport)));
}

CAMLprim intnat httpz_listen(intnat fd, intnat backlog) {
  if (backlog < 0 || backlog > INT_MAX) return -EINVAL;
  return hz_listen((int)fd, (int)backlog);
}
CAMLprim value httpz_listen_byte(value fd, value backlog) {
  return Val_long(httpz_listen(Long_val(fd), Long_val(backlog)));
}

CAMLprim intnat httpz_local_port(intnat fd) { return hz_local_port((int)fd); }
HZ_BYTE1(httpz_local_port)
CAMLprim intnat httpz_accept4(intnat fd) { return hz_accept4((int)fd); }
HZ_BYTE1(httpz_accept4)
CAMLprim intnat httpz_setsockopt(intnat fd, value opt, intnat v) {
  return hz_setsockopt((int)fd, Long_val(opt), v);
}
CAMLprim value httpz_setsockopt_byte(value fd, value opt, value v) {
  return Val_long(httpz_setsockopt(Long_val(fd), opt, Long_val(v)));
}
CAMLprim intnat httpz_getsockopt(intnat fd, value opt) { return hz_getsockopt((int)fd, Long_val(opt)); }
CAMLprim value httpz_getsockopt_byte(value fd, value opt) {
  return Val_long(httpz_getsockopt(Long_val(fd), opt));
}
CAMLprim intnat httpz_shutdown_write(intnat fd) { return hz_shutdown_write((int)fd); }
HZ_BYTE1(httpz_shutdown_write)
CAMLprim intnat httpz_close(intnat fd) { return hz_close((int)fd); }
HZ_BYTE1(httpz_close)

CAMLprim intnat httpz_read(intnat fd, value buf, intnat off, intnat len) {
  return hz_read((int)fd, BA_DATA(buf), BA_CAP(buf), off, len);
}
CAMLprim value httpz_read_byte(value fd, value buf, value off, value len) {
  return Val_long(httpz_read(Long_val(fd), buf, Long_val(off), Long_val(len)));
}

CAMLprim intnat httpz_write(intnat fd, value buf, intnat off, intnat len) {
  return hz_write((int)fd, BA_DATA(buf), BA_CAP(buf), off, len);
}
CAMLprim value httpz_write_byte(value fd, value buf, value off, value len) {
  return Val_long(httpz_write(Long_val(fd), buf, Long_val(off), Long_val(len)));
}

CAMLprim intnat httpz_send(intnat fd, value b, intnat off, intnat len, intnat more) {
  return hz_send((int)fd, BA_DATA(b), BA_CAP(b), off, len, more != 0);
}
CAMLprim value httpz_send_byte(value fd, value b, value off, value len, value more) {
  return Val_long(httpz_send(Long_val(fd), b, Long_val(off), Long_val(len), Long_val(more)));
}

/* A gathered write: [out] from [sent] to [out_len], with pieces [first,
   count) of [bufs] inserted at their positions in it ([meta]: position,
   offset, length per piece, positions non-decreasing, the first at or after
   [sent]). */
#define HZ_GATHER_MAX 16

static long hz_sendv_gather(int fd, const unsigned char *out, size_t cap, long sent, long out_len,
                            value bufs, value meta, long first, long count, int more) {
  struct iovec iov[2 * HZ_GATHER_MAX + 1];
  struct msghdr m;
  int n = 0;
  long at = sent;
  if (!hz_span_ok(cap, sent, out_len - sent) || first < 0 || count < first
      || count - first > HZ_GATHER_MAX || (mlsize_t)count > Wosize_val(bufs)
      || (mlsize_t)(3 * count) > Wosize_val(meta))
    return -EINVAL;
  for (long i = first; i < count; i++) {
    long pos = Long_val(Field(meta, 3 * i));
    long off = Long_val(Field(meta, 3 * i + 1));
    long len = Long_val(Field(meta, 3 * i + 2));
    value b = Field(bufs, i);
    if (pos < at || pos > out_len || !hz_span_ok(BA_CAP(b), off, len)) return -EINVAL;
    if (pos > at) {
      iov[n].iov_base = (void *)(out + at);
      iov[n].iov_len = (size_t)(pos - at);
      n++;
      at = pos;
    }
    if (len > 0) {
      iov[n].iov_base = (void *)(BA_DATA(b) + off);
      iov[n].iov_len = (size_t)len;
      n++;
    }
  }
  if (out_len > at) {
    iov[n].iov_base = (void *)(out + at);
    iov[n].iov_len = (size_t)(out_len - at);
    n++;
  }
  memset(&m, 0, sizeof m);
  m.msg_iov = iov;
  m.msg_iovlen = (size_t)n;
  return hz_neg_errno(sendmsg(fd, &m, hz_send_flags(more)));
}

CAMLprim intnat httpz_sendv_gather(intnat fd, value out, intnat sent, intnat out_len, value bufs,
                                   value meta, intnat first, intnat count, intnat more) {
  return hz_sendv_gather((int)fd, BA_DATA(out), BA_CAP(out), sent, out_len, bufs, meta, first,
                         count, more != 0);
}
CAMLprim value httpz_sendv_gather_byte(value *argv, int argn) {
  (void)argn;
  return Val_long(httpz_sendv_gather(Long_val(argv[0]), argv[1], Long_val(argv[2]),
                                     Long_val(argv[3]), argv[4], argv[5], Long_val(argv[6]),
                                     Long_val(argv[7]), Long_val(argv[8])));
}

CAMLprim intnat httpz_sendv2(intnat fd, value b1, intnat off1, intnat len1, value b2, intnat off2,
                             intnat len2, intnat more) {
  return hz_sendv2((int)fd, BA_DATA(b1), BA_CAP(b1), off1, len1, BA_DATA(b2), BA_CAP(b2), off2,
                   len2, more != 0);
}
CAMLprim value httpz_sendv2_byte(value *argv, int argn) {
  (void)argn;
  return Val_long(httpz_sendv2(Long_val(argv[0]), argv[1], Long_val(argv[2]), Long_val(argv[3]),
                               argv[4], Long_val(argv[5]), Long_val(argv[6]),
                               Long_val(argv[7])));
}

/* The string is not copied: the runtime lock is held, so the GC cannot move
   it during the call. */
CAMLprim intnat httpz_sendv_string(intnat fd, value b, intnat boff, intnat blen, value str,
                                   intnat soff, intnat slen, intnat more) {
  return hz_sendv2((int)fd, BA_DATA(b), BA_CAP(b), boff, blen,
                   (const unsigned char *)String_val(str), caml_string_length(str), soff, slen,
                   more != 0);
}
CAMLprim value httpz_sendv_string_byte(value *argv, int argn) {
  (void)argn;
  return Val_long(httpz_sendv_string(Long_val(argv[0]), argv[1], Long_val(argv[2]),
                                     Long_val(argv[3]), argv[4], Long_val(argv[5]),
                                     Long_val(argv[6]), Long_val(argv[7])));
}

CAMLprim intnat httpz_pread(intnat fd, value buf, intnat off, intnat len, intnat file_off) {
  return hz_pread((int)fd, BA_DATA(buf), BA_CAP(buf), off, len, file_off);
}
CAMLprim value httpz_pread_byte(value fd, value buf, value off, value len, value file_off) {
  return Val_long(httpz_pread(Long_val(fd), buf, Long_val(off), Long_val(len), Long_val(file_off)));
}

CAMLprim intnat httpz_sendfile(intnat out_fd, intnat in_fd, intnat offset, intnat count) {
  return hz_sendfile((int)out_fd, (int)in_fd, offset, count);
}
CAMLprim value httpz_sendfile_byte(value o, value i, value off, value count) {
  return Val_long(httpz_sendfile(Long_val(o), Long_val(i), Long_val(off), Long_val(count)));
}

CAMLprim intnat httpz_epoll_create(value unit) {
  (void)unit;
  return hz_epoll_create();
}
HZ_BYTE0(httpz_epoll_create)

CAMLprim intnat httpz_epoll_ctl_add(intnat epfd, intnat fd, intnat events, intnat token) {
  return hz_epoll_ctl((int)epfd, EPOLL_CTL_ADD, (int)fd, events, token);
}
CAMLprim value httpz_epoll_ctl_add_byte(value e, value f, value ev, value t) {
  return Val_long(httpz_epoll_ctl_add(Long_val(e), Long_val(f), Long_val(ev), Long_val(t)));
}
CAMLprim intnat httpz_epoll_ctl_mod(intnat epfd, intnat fd, intnat events, intnat token) {
  return hz_epoll_ctl((int)epfd, EPOLL_CTL_MOD, (int)fd, events, token);
}
CAMLprim value httpz_epoll_ctl_mod_byte(value e, value f, value ev, value t) {
  return Val_long(httpz_epoll_ctl_mod(Long_val(e), Long_val(f), Long_val(ev), Long_val(t)));
}
CAMLprim intnat httpz_epoll_ctl_del(intnat epfd, intnat fd) {
  return hz_epoll_ctl((int)epfd, EPOLL_CTL_DEL, (int)fd, 0, 0);
}
CAMLprim value httpz_epoll_ctl_del_byte(value e, value f) {
  return Val_long(httpz_epoll_ctl_del(Long_val(e), Long_val(f)));
}

/* Not noalloc: with a non-zero timeout it releases the runtime lock so other
   threads (and signal handlers) can run while it sleeps. It allocates
   nothing: events land in a C stack array first, because the destination
   [int array] may be moved by a GC triggered while the lock is released, and
   are copied (immediates: no write barrier needed) once the lock is back.
   With timeout 0 it cannot block, so it keeps the lock. */
CAMLprim intnat httpz_epoll_wait(intnat epfd, value v_evs, intnat max, intnat timeout) {
  CAMLparam1(v_evs);
  struct epoll_event evs[HZ_EPOLL_BATCH];
  long n;
  max = hz_epoll_clamp(max, (long)(Wosize_val(v_evs) / 2));
  if (max <= 0) CAMLreturnT(intnat, -EINVAL);
  if (timeout == 0)
    n = hz_epoll_wait((int)epfd, evs, (int)max, 0);
  else {
    caml_enter_blocking_section();
    n = hz_epoll_wait((int)epfd, evs, (int)max, timeout > INT_MAX ? INT_MAX : (int)timeout);
    caml_leave_blocking_section();
  }
  for (long i = 0; i < n; i++) {
    Field(v_evs, 2 * i) = Val_long((intnat)evs[i].data.u64);
    Field(v_evs, 2 * i + 1) = Val_long((intnat)evs[i].events);
  }
  CAMLreturnT(intnat, n);
}
CAMLprim value httpz_epoll_wait_byte(value e, value evs, value max, value timeout) {
  return Val_long(httpz_epoll_wait(Long_val(e), evs, Long_val(max), Long_val(timeout)));
}

CAMLprim intnat httpz_openat2_beneath(intnat dirfd, value buf, intnat off, intnat len,
                                      value no_symlinks) {
  return hz_openat2_beneath((int)dirfd, BA_DATA(buf), BA_CAP(buf), off, len,
                            Bool_val(no_symlinks));
}
CAMLprim value httpz_openat2_beneath_byte(value d, value buf, value off, value len, value ns) {
  return Val_long(httpz_openat2_beneath(Long_val(d), buf, Long_val(off), Long_val(len), ns));
}

CAMLprim value httpz_openat2_available(value unit) {
  (void)unit;
  return Val_bool(hz_openat2_available());
}

CAMLprim value httpz_set_openat2_fallback(value force) {
  hz_force_fallback = Bool_val(force);
  return Val_unit;
}

CAMLprim value httpz_open_dir(value v_path) {
  if (caml_string_length(v_path) != strlen(String_val(v_path))) return Val_long(-EINVAL);
  return Val_long(hz_open_dir(String_val(v_path)));
}

/* [st] is the [int array] of syscall.ml's [stat_create]; writes immediates
   only, so no write barrier is needed and the stub stays noalloc. */
CAMLprim intnat httpz_fstat(intnat fd, value st) {
  long out[HZ_ST_FIELDS];
  if (Wosize_val(st) < HZ_ST_FIELDS) return -EINVAL;
  long r = hz_fstat((int)fd, out);
  if (r < 0) return r;
  for (int i = 0; i < HZ_ST_FIELDS; i++) Field(st, i) = Val_long(out[i]);
  return 0;
}
CAMLprim value httpz_fstat_byte(value fd, value st) {
  return Val_long(httpz_fstat(Long_val(fd), st));
}

CAMLprim value httpz_stat_fields(value unit) {
  (void)unit;
  return Val_long(HZ_ST_FIELDS);
}

CAMLprim intnat httpz_clock_monotonic_ns(value unit) {
  (void)unit;
  return hz_clock_ns(CLOCK_MONOTONIC);
}
HZ_BYTE0(httpz_clock_monotonic_ns)
CAMLprim intnat httpz_clock_realtime_s(value unit) {
  (void)unit;
  return hz_clock_s(CLOCK_REALTIME);
}
HZ_BYTE0(httpz_clock_realtime_s)
CAMLprim intnat httpz_clock_realtime_ns(value unit) {
  (void)unit;
  return hz_clock_ns(CLOCK_REALTIME);
}
HZ_BYTE0(httpz_clock_realtime_ns)

CAMLprim intnat httpz_getrlimit_nofile(value hard) { return hz_getrlimit_nofile(Bool_val(hard)); }
CAMLprim value httpz_getrlimit_nofile_byte(value hard) {
  return Val_long(httpz_getrlimit_nofile(hard));
}
CAMLprim intnat httpz_setrlimit_nofile(intnat soft) { return hz_setrlimit_nofile(soft); }
HZ_BYTE1(httpz_setrlimit_nofile)

CAMLprim value httpz_set_pdeathsig(value v_sig) {
  int s = Int_val(v_sig);
  /* OCaml signal numbers (Sys.sigterm = -11, ...) differ from the C ones. */
  if (s != 0) s = caml_convert_signal_number(s);
  return Val_long(hz_set_pdeathsig(s));
}

CAMLprim intnat httpz_getpid(value unit) {
  (void)unit;
  return (intnat)getpid();
}
HZ_BYTE0(httpz_getpid)

#endif /* HTTPZ_NO_OCAML */
