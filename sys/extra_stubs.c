/* Syscalls the server needs beyond syscall.ml: signalfd, CPU affinity,
   the peer address for the access log, and the path an open descriptor
   leads to (the static handler's dotfile rule). Same conventions as httpz_stubs.c: one syscall per stub,
   results as integers, negative = -errno; the [@@noalloc] stubs neither
   allocate, raise nor release the runtime lock. */

#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#define CAML_NAME_SPACE
#define CAML_INTERNALS /* caml_gc_phase */
#include <caml/bigarray.h>
#include <caml/major_gc.h>
#include <caml/memory.h>
#include <caml/mlvalues.h>
#include <caml/signals.h>
#include <caml/alloc.h>

/* Exported by the runtime (runtime/signals.c) but declared only under
   CAML_INTERNALS: map OCaml's portable signal numbers to the system's. */
extern int caml_convert_signal_number(int);
extern int caml_rev_convert_signal_number(int);

#define BA_DATA(v) ((unsigned char *)Caml_ba_data_val(v))
#define BA_CAP(v) ((size_t)Caml_ba_array_val(v)->dim[0])

static int span_ok(size_t cap, long off, long len) {
  return off >= 0 && len >= 0 && (size_t)off <= cap && (size_t)len <= cap - (size_t)off;
}

/* sched_getaffinity: the CPUs this process may run on, as nproc(1) counts. */
CAMLprim value httpz_extra_cpu_count(value unit) {
  (void)unit;
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) < 0) return Val_long(-errno);
  return Val_long(CPU_COUNT(&set));
}

/* signalfd for a list of OCaml signal numbers, non-blocking and close-on-exec.
   The caller blocks the same signals (Unix.sigprocmask) so they queue on the
   fd instead of being delivered. Start-up only. */
CAMLprim value httpz_extra_signalfd(value sigs) {
  sigset_t set;
  sigemptyset(&set);
  for (value l = sigs; l != Val_emptylist; l = Field(l, 1)) {
    int s = caml_convert_signal_number(Int_val(Field(l, 0)));
    if (sigaddset(&set, s) < 0) return Val_long(-EINVAL);
  }
  int fd = signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC);
  return Val_long(fd < 0 ? -errno : fd);
}

/* read one signalfd_siginfo: minus its OCaml signal number (OCaml's are
   negative, so this is positive), or -errno. */
CAMLprim intnat httpz_extra_signalfd_read(intnat fd) {
  struct signalfd_siginfo si;
  ssize_t n = read((int)fd, &si, sizeof si);
  if (n < 0) return -errno;
  if (n != (ssize_t)sizeof si) return -EINVAL;
  int s = caml_rev_convert_signal_number((int)si.ssi_signo);
  return s < 0 ? -s : -EINVAL;
}
CAMLprim value httpz_extra_signalfd_read_byte(value fd) {
  return Val_long(httpz_extra_signalfd_read(Long_val(fd)));
}

/* getpeername + inet_ntop into buf at off (at most INET6_ADDRSTRLEN bytes, no
   NUL): the length written, or -errno. IPv4-mapped IPv6 addresses are shown
   as IPv4. */
CAMLprim intnat httpz_extra_peer_address(intnat fd, value buf, intnat off) {
  struct sockaddr_storage ss;
  socklen_t slen = sizeof ss;
  char text[INET6_ADDRSTRLEN];
  if (!span_ok(BA_CAP(buf), off, INET6_ADDRSTRLEN)) return -EINVAL;
  if (getpeername((int)fd, (struct sockaddr *)&ss, &slen) < 0) return -errno;
  if (ss.ss_family == AF_INET) {
    if (!inet_ntop(AF_INET, &((struct sockaddr_in *)&ss)->sin_addr, text, sizeof text))
      return -errno;
  } else if (ss.ss_family == AF_INET6) {
    struct in6_addr *a = &((struct sockaddr_in6 *)&ss)->sin6_addr;
    if (IN6_IS_ADDR_V4MAPPED(a)) {
      if (!inet_ntop(AF_INET, &a->s6_addr[12], text, sizeof text)) return -errno;
    } else if (!inet_ntop(AF_INET6, a, text, sizeof text))
      return -errno;
  } else
    return -EINVAL;
  size_t n = strlen(text);
  memcpy(BA_DATA(buf) + off, text, n);
  return (intnat)n;
}
CAMLprim value httpz_extra_peer_address_byte(value fd, value buf, value off) {
  return Val_long(httpz_extra_peer_address(Long_val(fd), buf, Long_val(off)));
}

/* readlink("/proc/self/fd/FD") into [buf] at [off], at most [cap] bytes:
   the path the kernel resolved when [fd] was opened (what was opened, not
   what was asked for). The length, or -errno (-ENAMETOOLONG when it does
   not fit). */
CAMLprim intnat httpz_extra_fd_path(intnat fd, value buf, intnat off, intnat cap) {
  char link[32];
  if (!span_ok(BA_CAP(buf), off, cap) || cap <= 0) return -EINVAL;
  snprintf(link, sizeof link, "/proc/self/fd/%ld", (long)fd);
  ssize_t n = readlink(link, (char *)BA_DATA(buf) + off, (size_t)cap);
  if (n < 0) return -errno;
  if (n == cap) return -ENAMETOOLONG;
  return (intnat)n;
}
CAMLprim value httpz_extra_fd_path_byte(value fd, value buf, value off, value cap) {
  return Val_long(httpz_extra_fd_path(Long_val(fd), buf, Long_val(off), Long_val(cap)));
}

/* getpeername as 16 bytes of IPv6 (an IPv4 peer as ::ffff:a.b.c.d) into
   [buf] (a bytes value of at least 16): 4 or 6 (the family), or -errno. */
CAMLprim intnat httpz_extra_peer_ip(intnat fd, value buf) {
  struct sockaddr_storage ss;
  socklen_t slen = sizeof ss;
  unsigned char *out = Bytes_val(buf);
  if (caml_string_length(buf) < 16) return -EINVAL;
  if (getpeername((int)fd, (struct sockaddr *)&ss, &slen) < 0) return -errno;
  if (ss.ss_family == AF_INET) {
    memset(out, 0, 10);
    out[10] = 0xff;
    out[11] = 0xff;
    memcpy(out + 12, &((struct sockaddr_in *)&ss)->sin_addr, 4);
    return 4;
  }
  if (ss.ss_family == AF_INET6) {
    struct in6_addr *a = &((struct sockaddr_in6 *)&ss)->sin6_addr;
    memcpy(out, a->s6_addr, 16);
    return IN6_IS_ADDR_V4MAPPED(a) ? 4 : 6;
  }
  return -EAFNOSUPPORT;
}
CAMLprim value httpz_extra_peer_ip_byte(value fd, value buf) {
  return Val_long(httpz_extra_peer_ip(Long_val(fd), buf));
}

/* Not a syscall: whether the major GC is marking. A cycle advances only
   as the program allocates, so one that stops allocating can stay in the
   marking phase, where every caml_modify darkens the value it overwrites. */
CAMLprim value httpz_extra_gc_marking(value unit) {
  (void)unit;
  return Val_bool(caml_gc_phase == Phase_mark);
}

/* A log file opened for appending, never through a symlink (O_NOFOLLOW:
   a process that may write anywhere must not be sent elsewhere by whoever
   can write the log's directory), without becoming the controlling
   terminal, and without waiting for a FIFO's reader (O_NONBLOCK: the
   caller then sees the FIFO in fstat and refuses it). [create]: only a new
   file (O_CREAT | O_EXCL, [mode] before the umask), -EEXIST if there is
   one. The descriptor or -errno (-ELOOP for a symlink, -EINVAL for a path
   with a NUL). */
CAMLprim value httpz_extra_open_log(value path, value create, value mode) {
  if (!caml_string_is_c_safe(path)) return Val_long(-EINVAL);
  int flags = O_WRONLY | O_APPEND | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC | O_NONBLOCK;
  if (Bool_val(create)) flags |= O_CREAT | O_EXCL;
  int fd = open(String_val(path), flags, (mode_t)Long_val(mode));
  return Val_long(fd < 0 ? -errno : fd);
}
