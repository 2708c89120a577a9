/* How to send a file body over TCP without copying it into user space:
   the options of issue 14, measured outside the server so that only the
   sending differs.

     file_send MODE FILE_BYTES COUNT LOWAT

   One process (pinned by the caller, like the server) sends COUNT copies
   of a FILE_BYTES file over a loopback TCP connection to a reader it forks
   (which pins itself to the other core and discards what it reads), with
   TCP_NOTSENT_LOWAT = LOWAT as `httpz serve` sets it (0: not set). It
   prints one line of JSON: wall time, the sender's CPU time (its whole
   thread group, io_uring's io-wq workers included), system calls made by
   the sender's own code, and MiB/s.

   MODE:
     sendfile  non-blocking socket; sendfile(2) up to 1 MiB per call, poll(2)
               for POLLOUT when the socket is full: what the server does
               on readiness.
     splice    io_uring: IORING_OP_SPLICE file -> pipe linked to
               IORING_OP_SPLICE pipe -> socket (pipe of 1 MiB), one
               io_uring_enter per pair.
     copy      pread(2) into a 256 KiB buffer, then send(2): the copy into
               user space that the other two avoid (the reference).

   Built and run by bench/server/file_send.py. */

#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <liburing.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/sendfile.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static void die(const char *what) {
  perror(what);
  exit(1);
}

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec / 1e9;
}

static double cpu_seconds(double *user, double *sys) {
  struct rusage r;
  getrusage(RUSAGE_SELF, &r);
  *user = r.ru_utime.tv_sec + r.ru_utime.tv_usec / 1e6;
  *sys = r.ru_stime.tv_sec + r.ru_stime.tv_usec / 1e6;
  return *user + *sys;
}

static void pin(int cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  sched_setaffinity(0, sizeof set, &set);
}

/* The reader: reads TOTAL bytes and exits. */
static void reader(int fd, long long total, int cpu) {
  pin(cpu);
  static char buf[1 << 18];
  while (total > 0) {
    ssize_t n = recv(fd, buf, sizeof buf, 0);
    if (n <= 0) die("reader recv");
    total -= n;
  }
  _exit(0);
}

static long syscalls;

static void wait_writable(int sock) {
  struct pollfd p = {.fd = sock, .events = POLLOUT};
  syscalls++;
  if (poll(&p, 1, -1) < 0) die("poll");
}

static void send_sendfile(int sock, int file, long size) {
  off_t off = 0;
  while (off < size) {
    long len = size - off < (1 << 20) ? size - off : (1 << 20);
    syscalls++;
    ssize_t n = sendfile(sock, file, &off, len);
    if (n < 0) {
      if (errno == EAGAIN) wait_writable(sock);
      else die("sendfile");
    }
  }
}

static void send_copy(int sock, int file, long size) {
  static char buf[1 << 18];
  long off = 0;
  while (off < size) {
    long len = size - off < (long)sizeof buf ? size - off : (long)sizeof buf;
    syscalls++;
    ssize_t n = pread(file, buf, len, off);
    if (n <= 0) die("pread");
    long sent = 0;
    while (sent < n) {
      syscalls++;
      ssize_t m = send(sock, buf + sent, n - sent, 0);
      if (m < 0) {
        if (errno == EAGAIN) wait_writable(sock);
        else die("send");
      }
      else sent += m;
    }
    off += n;
  }
}

static struct io_uring ring;
static int pipe_r, pipe_w;
static long pipe_size;

static int reap(void) {
  struct io_uring_cqe *cqe;
  if (io_uring_wait_cqe(&ring, &cqe) < 0) die("io_uring_wait_cqe");
  int res = cqe->res;
  io_uring_cqe_seen(&ring, cqe);
  return res;
}

/* Moves LEN bytes already in the pipe to the socket. */
static void drain_pipe(int sock, long len) {
  while (len > 0) {
    struct io_uring_sqe *sqe = io_uring_get_sqe(&ring);
    io_uring_prep_splice(sqe, pipe_r, -1, sock, -1, len, SPLICE_F_MOVE);
    syscalls++;
    io_uring_submit(&ring);
    int n = reap();
    if (n <= 0) {
      fprintf(stderr, "splice pipe->socket: %s\n", strerror(-n));
      exit(1);
    }
    len -= n;
  }
}

static void send_splice(int sock, int file, long size) {
  long off = 0;
  while (off < size) {
    long len = size - off < pipe_size ? size - off : pipe_size;
    struct io_uring_sqe *a = io_uring_get_sqe(&ring);
    io_uring_prep_splice(a, file, off, pipe_w, -1, len, SPLICE_F_MOVE);
    a->flags |= IOSQE_IO_LINK;
    a->user_data = 1;
    struct io_uring_sqe *b = io_uring_get_sqe(&ring);
    io_uring_prep_splice(b, pipe_r, -1, sock, -1, len, SPLICE_F_MOVE);
    b->user_data = 2;
    syscalls++;
    io_uring_submit_and_wait(&ring, 2);
    int in = 0, out = 0;
    for (int i = 0; i < 2; i++) {
      struct io_uring_cqe *cqe;
      if (io_uring_wait_cqe(&ring, &cqe) < 0) die("io_uring_wait_cqe");
      if (cqe->user_data == 1) in = cqe->res;
      else out = cqe->res;
      io_uring_cqe_seen(&ring, cqe);
    }
    if (in <= 0) {
      fprintf(stderr, "splice file->pipe: %s\n", strerror(-in));
      exit(1);
    }
    /* A short or cancelled second half leaves bytes in the pipe. */
    if (out < 0) out = 0;
    if (out < in) drain_pipe(sock, in - out);
    off += in;
  }
}

int main(int argc, char **argv) {
  if (argc != 5) {
    fprintf(stderr, "usage: file_send sendfile|splice|copy FILE_BYTES COUNT LOWAT\n");
    return 2;
  }
  const char *mode = argv[1];
  long size = atol(argv[2]);
  long count = atol(argv[3]);
  int lowat = atoi(argv[4]);

  char path[] = "/tmp/httpz-file-send.XXXXXX";
  int file = mkstemp(path);
  if (file < 0) die("mkstemp");
  unlink(path);
  char *data = malloc(size);
  for (long i = 0; i < size; i++) data[i] = (char)(i * 7);
  if (write(file, data, size) != size) die("write");
  free(data);

  int lst = socket(AF_INET, SOCK_STREAM, 0);
  struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
  socklen_t alen = sizeof a;
  if (bind(lst, (struct sockaddr *)&a, sizeof a) < 0 || listen(lst, 1) < 0) die("listen");
  getsockname(lst, (struct sockaddr *)&a, &alen);

  int cpu_self = sched_getcpu();
  pid_t child = fork();
  if (child == 0) {
    int c = socket(AF_INET, SOCK_STREAM, 0);
    if (connect(c, (struct sockaddr *)&a, sizeof a) < 0) die("connect");
    reader(c, (long long)size * count, cpu_self == 0 ? 1 : 0);
  }
  int sock = accept(lst, NULL, NULL);
  if (sock < 0) die("accept");
  int one = 1;
  setsockopt(sock, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  if (lowat > 0) setsockopt(sock, IPPROTO_TCP, TCP_NOTSENT_LOWAT, &lowat, sizeof lowat);

  void (*send_one)(int, int, long);
  if (strcmp(mode, "sendfile") == 0) {
    fcntl(sock, F_SETFL, O_NONBLOCK);
    send_one = send_sendfile;
  } else if (strcmp(mode, "copy") == 0) {
    fcntl(sock, F_SETFL, O_NONBLOCK);
    send_one = send_copy;
  } else if (strcmp(mode, "splice") == 0) {
    /* Blocking socket: io_uring runs splice in its io-wq workers, which
       wait for room instead of failing with EAGAIN. */
    int p[2];
    if (pipe(p) < 0) die("pipe");
    pipe_r = p[0];
    pipe_w = p[1];
    pipe_size = fcntl(pipe_w, F_SETPIPE_SZ, 1 << 20);
    if (pipe_size < 0) pipe_size = fcntl(pipe_w, F_GETPIPE_SZ);
    int r = io_uring_queue_init(8, &ring, 0);
    if (r < 0) {
      fprintf(stderr, "io_uring_queue_init: %s\n", strerror(-r));
      return 1;
    }
    send_one = send_splice;
  } else {
    fprintf(stderr, "unknown mode %s\n", mode);
    return 2;
  }

  double u0, s0, u1, s1;
  cpu_seconds(&u0, &s0);
  double t0 = now();
  for (long i = 0; i < count; i++) send_one(sock, file, size);
  int status;
  waitpid(child, &status, 0);
  double t1 = now();
  cpu_seconds(&u1, &s1);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    fprintf(stderr, "reader failed\n");
    return 1;
  }
  double mib = (double)size * count / (1 << 20);
  printf("{\"mode\": \"%s\", \"file_bytes\": %ld, \"count\": %ld, \"wall_s\": %.4f, "
         "\"user_s\": %.4f, \"sys_s\": %.4f, \"syscalls\": %ld, \"mib_per_s\": %.1f, "
         "\"cpu_us_per_mib\": %.1f}\n",
         mode, size, count, t1 - t0, u1 - u0, s1 - s0, syscalls, mib / (t1 - t0),
         ((u1 - u0) + (s1 - s0)) * 1e6 / mib);
  return 0;
}
