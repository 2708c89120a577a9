/* io_uring for httpz's completion backend, through Debian's liburing
   (liburing-dev 2.3): one ring per process, one liburing call per stub.

   Why liburing rather than raw syscalls: the submission and completion
   rings are shared memory with memory-ordering rules (store-release of the
   tails, load-acquire of the heads) that liburing gets right and keeps up
   with kernel changes; the "prep" helpers are inline functions that fill
   an SQE and make no system call. The only system call is io_uring_enter,
   made by [hz_uring_submit_wait] once per loop turn (and by a prep stub
   only when the submission queue is full).

   The ring is process-global: a worker runs one event loop, and a ring
   must not be shared across fork (each worker sets up its own after the
   fork).

   Received data lands in a ring of provided buffers (buffer group 0): the
   kernel picks a buffer only when bytes arrive, so an idle connection with
   a receive armed holds none. The caller copies the bytes out
   ([hz_uring_copy_buf]) and gives the buffer back ([hz_uring_recycle]).

   Sends of two spans use a struct msghdr and two iovecs per connection
   slot, kept here until the send completes (the kernel may read them
   after the submission returns). The bytes themselves must stay put until
   the completion: the caller passes bigstrings only (never OCaml strings,
   which the GC moves).

   Every stub returns an integer: >= 0 on success, -errno on failure. The
   [hz_*] functions are plain C, the [httpz_*] OCaml stubs at the end. */

#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <liburing.h>

struct hz_uring {
  int ready;
  struct io_uring ring;
  struct io_uring_buf_ring *br;
  size_t br_bytes;
  unsigned char *bufs;
  size_t bufs_bytes;
  unsigned nbufs, buf_size, mask;
  unsigned slots;
  struct msghdr *msgs;
  struct iovec *iovs;
};

static struct hz_uring hz_u;

static void hz_uring_free(void) {
  if (hz_u.br != NULL) munmap(hz_u.br, hz_u.br_bytes);
  if (hz_u.bufs != NULL) munmap(hz_u.bufs, hz_u.bufs_bytes);
  free(hz_u.msgs);
  free(hz_u.iovs);
  memset(&hz_u, 0, sizeof hz_u);
}

static void hz_uring_exit(void) {
  if (hz_u.ready) io_uring_queue_exit(&hz_u.ring);
  hz_uring_free();
}

/* [entries] SQEs; [slots] connection slots (for their msghdrs); [nbufs]
   (a power of two) provided buffers of [buf_size] bytes. Tries the
   setup flags that help a single-threaded loop most (completions run only
   when the loop asks for them), then fewer on older kernels. */
static int hz_uring_setup(unsigned entries, unsigned slots, unsigned nbufs, unsigned buf_size) {
  if (hz_u.ready) return -EBUSY;
  if (nbufs == 0 || (nbufs & (nbufs - 1)) != 0 || nbufs > 32768 || buf_size == 0) return -EINVAL;
  static const unsigned flag_sets[] = {
      IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN,
      IORING_SETUP_COOP_TASKRUN,
      0,
  };
  int r = -EINVAL;
  for (unsigned i = 0; i < sizeof flag_sets / sizeof flag_sets[0]; i++) {
    struct io_uring_params p;
    memset(&p, 0, sizeof p);
    p.flags = flag_sets[i] | IORING_SETUP_CQSIZE;
    p.cq_entries = entries * 4;
    r = io_uring_queue_init_params(entries, &hz_u.ring, &p);
    if (r != -EINVAL) break;
  }
  if (r < 0) return r;
  hz_u.ready = 1;
  hz_u.slots = slots;
  hz_u.msgs = calloc(slots ? slots : 1, sizeof(struct msghdr));
  hz_u.iovs = calloc(2 * (slots ? slots : 1), sizeof(struct iovec));
  hz_u.br_bytes = nbufs * sizeof(struct io_uring_buf);
  hz_u.bufs_bytes = (size_t)nbufs * buf_size;
  hz_u.br = mmap(NULL, hz_u.br_bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  hz_u.bufs = mmap(NULL, hz_u.bufs_bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (hz_u.msgs == NULL || hz_u.iovs == NULL || hz_u.br == MAP_FAILED || hz_u.bufs == MAP_FAILED) {
    if (hz_u.br == MAP_FAILED) hz_u.br = NULL;
    if (hz_u.bufs == MAP_FAILED) hz_u.bufs = NULL;
    hz_uring_exit();
    return -ENOMEM;
  }
  struct io_uring_buf_reg reg;
  memset(&reg, 0, sizeof reg);
  reg.ring_addr = (unsigned long)(uintptr_t)hz_u.br;
  reg.ring_entries = nbufs;
  reg.bgid = 0;
  r = io_uring_register_buf_ring(&hz_u.ring, &reg, 0);
  if (r < 0) {
    hz_uring_exit();
    return r;
  }
  hz_u.nbufs = nbufs;
  hz_u.buf_size = buf_size;
  hz_u.mask = (unsigned)io_uring_buf_ring_mask(nbufs);
  io_uring_buf_ring_init(hz_u.br);
  for (unsigned i = 0; i < nbufs; i++)
    io_uring_buf_ring_add(hz_u.br, hz_u.bufs + (size_t)i * buf_size, buf_size, (unsigned short)i,
                          (int)hz_u.mask, (int)i);
  io_uring_buf_ring_advance(hz_u.br, (int)nbufs);
  return 0;
}

/* A free SQE; when the queue is full, what is queued is submitted first. */
static struct io_uring_sqe *hz_sqe(void) {
  struct io_uring_sqe *sqe = io_uring_get_sqe(&hz_u.ring);
  if (sqe == NULL) {
    io_uring_submit(&hz_u.ring);
    sqe = io_uring_get_sqe(&hz_u.ring);
  }
  return sqe;
}

static int hz_uring_accept(int fd, uint64_t ud) {
  struct io_uring_sqe *sqe = hz_sqe();
  if (sqe == NULL) return -EBUSY;
  io_uring_prep_multishot_accept(sqe, fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
  io_uring_sqe_set_data64(sqe, ud);
  return 0;
}

static int hz_uring_recv(int fd, uint64_t ud) {
  struct io_uring_sqe *sqe = hz_sqe();
  if (sqe == NULL) return -EBUSY;
  io_uring_prep_recv_multishot(sqe, fd, NULL, 0, 0);
  sqe->flags |= IOSQE_BUFFER_SELECT;
  sqe->buf_group = 0;
  io_uring_sqe_set_data64(sqe, ud);
  return 0;
}

static int hz_uring_send2(unsigned slot, int fd, unsigned char *b1, size_t cap1, long off1, long len1,
                          unsigned char *b2, size_t cap2, long off2, long len2, int more,
                          uint64_t ud) {
  if (slot >= hz_u.slots) return -EINVAL;
  if (off1 < 0 || len1 < 0 || (size_t)off1 > cap1 || (size_t)len1 > cap1 - (size_t)off1) return -EINVAL;
  if (off2 < 0 || len2 < 0 || (size_t)off2 > cap2 || (size_t)len2 > cap2 - (size_t)off2) return -EINVAL;
  struct io_uring_sqe *sqe = hz_sqe();
  if (sqe == NULL) return -EBUSY;
  struct iovec *iov = &hz_u.iovs[2 * slot];
  struct msghdr *m = &hz_u.msgs[slot];
  int n = 0;
  if (len1 > 0) {
    iov[n].iov_base = b1 + off1;
    iov[n].iov_len = (size_t)len1;
    n++;
  }
  if (len2 > 0) {
    iov[n].iov_base = b2 + off2;
    iov[n].iov_len = (size_t)len2;
    n++;
  }
  memset(m, 0, sizeof *m);
  m->msg_iov = iov;
  m->msg_iovlen = (size_t)n;
  io_uring_prep_sendmsg(sqe, fd, m, MSG_NOSIGNAL | (more ? MSG_MORE : 0));
  io_uring_sqe_set_data64(sqe, ud);
  return 0;
}

static int hz_uring_poll(int fd, unsigned mask, int multishot, uint64_t ud) {
  struct io_uring_sqe *sqe = hz_sqe();
  if (sqe == NULL) return -EBUSY;
  if (multishot)
    io_uring_prep_poll_multishot(sqe, fd, mask);
  else
    io_uring_prep_poll_add(sqe, fd, mask);
  io_uring_sqe_set_data64(sqe, ud);
  return 0;
}

/* Cancels every request on [fd]; its own completion is not reported. */
static int hz_uring_cancel_fd(int fd) {
  struct io_uring_sqe *sqe = hz_sqe();
  if (sqe == NULL) return -EBUSY;
  io_uring_prep_cancel_fd(sqe, fd, IORING_ASYNC_CANCEL_ALL);
  sqe->flags |= IOSQE_CQE_SKIP_SUCCESS;
  io_uring_sqe_set_data64(sqe, 0);
  return 0;
}

/* Cancels the requests with user data [key]; reports nothing itself on
   success. */
static int hz_uring_cancel(uint64_t key) {
  struct io_uring_sqe *sqe = hz_sqe();
  if (sqe == NULL) return -EBUSY;
  io_uring_prep_cancel64(sqe, key, IORING_ASYNC_CANCEL_ALL);
  sqe->flags |= IOSQE_CQE_SKIP_SUCCESS;
  io_uring_sqe_set_data64(sqe, 0);
  return 0;
}

/* Submits what is queued and waits for a completion, at most [timeout_ns]
   (negative: no limit): the number of completions ready, or -errno
   (-ETIME, -EINTR: none). */
static long hz_uring_submit_wait(long timeout_ns) {
  struct io_uring_cqe *cqe = NULL;
  struct __kernel_timespec ts;
  int r;
  if (timeout_ns >= 0) {
    ts.tv_sec = timeout_ns / 1000000000L;
    ts.tv_nsec = timeout_ns % 1000000000L;
    r = io_uring_submit_and_wait_timeout(&hz_u.ring, &cqe, 1, &ts, NULL);
  } else {
    r = io_uring_submit_and_wait_timeout(&hz_u.ring, &cqe, 1, NULL, NULL);
  }
  if (r < 0 && r != -ETIME && r != -EINTR) return r;
  return (long)io_uring_cq_ready(&hz_u.ring);
}

/* Copies up to [max] completions out (user data, result, flags) and
   consumes them: the count. */
static long hz_uring_reap(int64_t *ud, int64_t *res, int64_t *flags, long max) {
  struct io_uring_cqe *cqe;
  unsigned head;
  long n = 0;
  io_uring_for_each_cqe(&hz_u.ring, head, cqe) {
    if (n >= max) break;
    ud[n] = (int64_t)cqe->user_data;
    res[n] = cqe->res;
    flags[n] = cqe->flags;
    n++;
  }
  io_uring_cq_advance(&hz_u.ring, (unsigned)n);
  return n;
}

static long hz_uring_copy_buf(unsigned bid, long off, unsigned char *dst, size_t cap, long dst_off,
                              long len) {
  if (bid >= hz_u.nbufs || off < 0 || len < 0 || (size_t)(off + len) > hz_u.buf_size) return -EINVAL;
  if (dst_off < 0 || (size_t)dst_off > cap || (size_t)len > cap - (size_t)dst_off) return -EINVAL;
  memcpy(dst + dst_off, hz_u.bufs + (size_t)bid * hz_u.buf_size + off, (size_t)len);
  return len;
}

static long hz_uring_recycle(unsigned bid) {
  if (bid >= hz_u.nbufs) return -EINVAL;
  io_uring_buf_ring_add(hz_u.br, hz_u.bufs + (size_t)bid * hz_u.buf_size, hz_u.buf_size,
                        (unsigned short)bid, (int)hz_u.mask, 0);
  io_uring_buf_ring_advance(hz_u.br, 1);
  return 0;
}

#ifndef HTTPZ_NO_OCAML
#include <caml/bigarray.h>
#include <caml/mlvalues.h>
#include <caml/signals.h>

#define BA_DATA(v) ((unsigned char *)Caml_ba_data_val(v))
#define BA_CAP(v) ((size_t)Caml_ba_array_val(v)->dim[0])

CAMLprim value httpz_uring_setup(value entries, value slots, value nbufs, value size) {
  return Val_long(hz_uring_setup((unsigned)Long_val(entries), (unsigned)Long_val(slots),
                                 (unsigned)Long_val(nbufs), (unsigned)Long_val(size)));
}

CAMLprim value httpz_uring_exit(value unit) {
  (void)unit;
  hz_uring_exit();
  return Val_unit;
}

CAMLprim intnat httpz_uring_accept(intnat fd, intnat ud) { return hz_uring_accept((int)fd, (uint64_t)ud); }
CAMLprim value httpz_uring_accept_byte(value fd, value ud) {
  return Val_long(httpz_uring_accept(Long_val(fd), Long_val(ud)));
}

CAMLprim intnat httpz_uring_recv(intnat fd, intnat ud) { return hz_uring_recv((int)fd, (uint64_t)ud); }
CAMLprim value httpz_uring_recv_byte(value fd, value ud) {
  return Val_long(httpz_uring_recv(Long_val(fd), Long_val(ud)));
}

CAMLprim intnat httpz_uring_send2(intnat slot, intnat fd, value b1, intnat off1, intnat len1, value b2,
                                  intnat off2, intnat len2, intnat more, intnat ud) {
  return hz_uring_send2((unsigned)slot, (int)fd, BA_DATA(b1), BA_CAP(b1), off1, len1, BA_DATA(b2),
                        BA_CAP(b2), off2, len2, more != 0, (uint64_t)ud);
}
CAMLprim value httpz_uring_send2_byte(value *a, int n) {
  (void)n;
  return Val_long(httpz_uring_send2(Long_val(a[0]), Long_val(a[1]), a[2], Long_val(a[3]),
                                    Long_val(a[4]), a[5], Long_val(a[6]), Long_val(a[7]),
                                    Long_val(a[8]), Long_val(a[9])));
}

CAMLprim intnat httpz_uring_poll(intnat fd, intnat mask, intnat multishot, intnat ud) {
  return hz_uring_poll((int)fd, (unsigned)mask, multishot != 0, (uint64_t)ud);
}
CAMLprim value httpz_uring_poll_byte(value fd, value mask, value multishot, value ud) {
  return Val_long(httpz_uring_poll(Long_val(fd), Long_val(mask), Long_val(multishot), Long_val(ud)));
}

CAMLprim intnat httpz_uring_cancel_fd(intnat fd) { return hz_uring_cancel_fd((int)fd); }
CAMLprim value httpz_uring_cancel_fd_byte(value fd) {
  return Val_long(httpz_uring_cancel_fd(Long_val(fd)));
}

CAMLprim intnat httpz_uring_cancel(intnat key) { return hz_uring_cancel((uint64_t)key); }
CAMLprim value httpz_uring_cancel_byte(value key) { return Val_long(httpz_uring_cancel(Long_val(key))); }

/* Releases the runtime lock while it waits: other OCaml threads (the
   thread pool of offloaded work) run meanwhile. */
CAMLprim value httpz_uring_submit_wait(value timeout_ns) {
  long t = Long_val(timeout_ns);
  long r;
  if (t == 0) {
    r = hz_uring_submit_wait(0);
  } else {
    caml_enter_blocking_section();
    r = hz_uring_submit_wait(t);
    caml_leave_blocking_section();
  }
  return Val_long(r);
}

/* The arrays are OCaml int arrays: immediate values, so storing into them
   needs no write barrier. */
CAMLprim intnat httpz_uring_reap(value ud, value res, value flags) {
  long max = (long)Wosize_val(ud);
  if ((long)Wosize_val(res) < max) max = (long)Wosize_val(res);
  if ((long)Wosize_val(flags) < max) max = (long)Wosize_val(flags);
  int64_t u[256], r[256], f[256];
  if (max > 256) max = 256;
  long n = hz_uring_reap(u, r, f, max);
  for (long i = 0; i < n; i++) {
    Field(ud, i) = Val_long(u[i]);
    Field(res, i) = Val_long(r[i]);
    Field(flags, i) = Val_long(f[i]);
  }
  return n;
}
CAMLprim value httpz_uring_reap_byte(value ud, value res, value flags) {
  return Val_long(httpz_uring_reap(ud, res, flags));
}

CAMLprim intnat httpz_uring_copy_buf(intnat bid, intnat off, value dst, intnat dst_off, intnat len) {
  return hz_uring_copy_buf((unsigned)bid, off, BA_DATA(dst), BA_CAP(dst), dst_off, len);
}
CAMLprim value httpz_uring_copy_buf_byte(value bid, value off, value dst, value dst_off, value len) {
  return Val_long(httpz_uring_copy_buf(Long_val(bid), Long_val(off), dst, Long_val(dst_off),
                                       Long_val(len)));
}

CAMLprim intnat httpz_uring_recycle(intnat bid) { return hz_uring_recycle((unsigned)bid); }
CAMLprim value httpz_uring_recycle_byte(value bid) {
  return Val_long(httpz_uring_recycle(Long_val(bid)));
}
#endif
