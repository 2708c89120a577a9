/* The request parser's SIMD kernel (Httpz.Simd): field lines, request
   targets and Host names scanned 16 bytes at a time with SSE2, which every
   x86-64 processor has, and field lines 32 at a time with AVX2 where the
   processor has it (asked once with cpuid; lib/core/simd_lines.h holds the
   loop, compiled for both widths). valgrind runs both and counts their
   instructions; it cannot run SSE4.2's pcmpestri, picohttpparser's choice.
   Pure compute: no I/O, no allocation, no OCaml runtime call, so the
   externals are [@@noalloc]. Why C: in OCaml a word-at-a-time (SWAR) test
   of 8 bytes costs ~50 instructions (every 64-bit constant is its own
   movabs, the loop keeps its state on the stack); SSE2 tests 16 bytes in
   ~15, and one call records every field line of a head.

   Memory safety: every read stays inside [base, stop), where [base] is the
   bigstring's first byte and [stop] <= its length. When fewer bytes than
   a window's width are left before [stop], the window is the bytes that
   END at [stop] (bytes before the scan's start, still inside the buffer,
   have their bits shifted out of the mask); a buffer shorter than a window
   is never read by one (field lines: SSE2 windows under 32 bytes, the
   caller's portable loop under 16; target and Host: a byte loop).
   test/server/syscall/asan_driver.c includes this file with HTTPZ_NO_OCAML and
   checks that at the edges of exact-size buffers, at both widths.

   Elsewhere than x86-64 the kernel reports itself unavailable, and
   Httpz.Request keeps to its portable OCaml scanners (Httpz.Swar). */

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#if defined(__x86_64__) && defined(__SSE2__)
#define HZ_SIMD 1
#include <immintrin.h>
#else
#define HZ_SIMD 0
#endif

/* RFC 9110 §5.6.2 tchar, as Httpz.Charset.tchar. */
static const uint8_t hz_tchar[256] = {
  ['!'] = 1, ['#'] = 1, ['$'] = 1, ['%'] = 1, ['&'] = 1, ['\''] = 1, ['*'] = 1,
  ['+'] = 1, ['-'] = 1, ['.'] = 1, ['^'] = 1, ['_'] = 1, ['`'] = 1, ['|'] = 1,
  ['~'] = 1,
  ['0'] = 1, ['1'] = 1, ['2'] = 1, ['3'] = 1, ['4'] = 1, ['5'] = 1, ['6'] = 1,
  ['7'] = 1, ['8'] = 1, ['9'] = 1,
  ['A'] = 1, ['B'] = 1, ['C'] = 1, ['D'] = 1, ['E'] = 1, ['F'] = 1, ['G'] = 1,
  ['H'] = 1, ['I'] = 1, ['J'] = 1, ['K'] = 1, ['L'] = 1, ['M'] = 1, ['N'] = 1,
  ['O'] = 1, ['P'] = 1, ['Q'] = 1, ['R'] = 1, ['S'] = 1, ['T'] = 1, ['U'] = 1,
  ['V'] = 1, ['W'] = 1, ['X'] = 1, ['Y'] = 1, ['Z'] = 1,
  ['a'] = 1, ['b'] = 1, ['c'] = 1, ['d'] = 1, ['e'] = 1, ['f'] = 1, ['g'] = 1,
  ['h'] = 1, ['i'] = 1, ['j'] = 1, ['k'] = 1, ['l'] = 1, ['m'] = 1, ['n'] = 1,
  ['o'] = 1, ['p'] = 1, ['q'] = 1, ['r'] = 1, ['s'] = 1, ['t'] = 1, ['u'] = 1,
  ['v'] = 1, ['w'] = 1, ['x'] = 1, ['y'] = 1, ['z'] = 1,
};

#if HZ_SIMD

/* Bit i set when byte i ends a field value: a control byte other than HTAB
   (< 0x20), or DEL. Bytes >= 0x80 (obs-text) do not. */
static inline unsigned hz_value_stops(__m128i x)
{
  __m128i le1f = _mm_cmpeq_epi8(_mm_min_epu8(x, _mm_set1_epi8(0x1f)), x);
  __m128i tab = _mm_cmpeq_epi8(x, _mm_set1_epi8(0x09));
  __m128i del = _mm_cmpeq_epi8(x, _mm_set1_epi8(0x7f));
  return (unsigned)_mm_movemask_epi8(_mm_or_si128(_mm_andnot_si128(tab, le1f), del));
}

/* Bit i set when byte i IS a letter, digit or '-' (the bytes of almost
   every field name): the name scan stops at the other bytes. Signed
   compares after a shift of the range to -128: (y - lo) mod 256 < n
   exactly for y in [lo, lo + n). */
static inline unsigned hz_name_bytes(__m128i x)
{
  __m128i y = _mm_or_si128(x, _mm_set1_epi8(0x20)); /* letters: one case */
  __m128i letter = _mm_cmplt_epi8(_mm_add_epi8(y, _mm_set1_epi8((char)(0x80 - 'a'))),
                                  _mm_set1_epi8((char)(0x80 + 26)));
  __m128i digit = _mm_cmplt_epi8(_mm_add_epi8(x, _mm_set1_epi8((char)(0x80 - '0'))),
                                 _mm_set1_epi8((char)(0x80 + 10)));
  __m128i dash = _mm_cmpeq_epi8(x, _mm_set1_epi8('-'));
  return (unsigned)_mm_movemask_epi8(_mm_or_si128(_mm_or_si128(letter, digit), dash));
}

static inline __m128i hz_load(const uint8_t *p) { return _mm_loadu_si128((const __m128i *)p); }

/* The 16-byte window at w (w < end, end - base >= 16, base: the buffer's
   first byte): n gets how many bytes it covers, min(16, end - w), and x
   the bytes, shifted so that bit i of a mask is byte w[i] once the mask is
   shifted right by drop. Fewer than 16 bytes before end are read as the
   16 bytes ENDING at end: bytes before w are in the buffer, and no byte
   at or past end is read. */
#define HZ_WINDOW(w, end, x, n, drop)              \
  do {                                             \
    if ((end) - (w) >= 16) {                       \
      x = hz_load(w);                              \
      n = 16;                                      \
      drop = 0;                                    \
    } else {                                       \
      x = hz_load((end) - 16);                     \
      n = (int)((end) - (w));                      \
      drop = 16 - n;                               \
    }                                              \
  } while (0)

/* Bit i set when byte i ends a request-target: <= 0x20, DEL or '#'. */
static inline unsigned hz_target_stops(__m128i x)
{
  __m128i le20 = _mm_cmpeq_epi8(_mm_min_epu8(x, _mm_set1_epi8(0x20)), x);
  __m128i del = _mm_cmpeq_epi8(x, _mm_set1_epi8(0x7f));
  __m128i hash = _mm_cmpeq_epi8(x, _mm_set1_epi8('#'));
  return (unsigned)_mm_movemask_epi8(_mm_or_si128(le20, _mm_or_si128(del, hash)));
}

/* Bit i set when byte i is not a letter, digit, '-' or '.'. */
static inline unsigned hz_hostname_stops(__m128i x)
{
  __m128i dot = _mm_cmpeq_epi8(x, _mm_set1_epi8('.'));
  return ~(hz_name_bytes(x) | (unsigned)_mm_movemask_epi8(dot)) & 0xffff;
}

/* The first byte in [p, end) whose bit [stops] sets, or end; needs
   end - base >= 16 (HZ_WINDOW). */
static inline __attribute__((always_inline)) const uint8_t *hz_scan(const uint8_t *p,
                                                                  const uint8_t *end,
                                                                  unsigned (*stops)(__m128i))
{
  while (p < end) {
    __m128i x;
    int n, drop;
    HZ_WINDOW(p, end, x, n, drop);
    unsigned m = stops(x) >> drop;
    if (m != 0) return p + __builtin_ctz(m);
    p += n;
  }
  return end;
}

static inline int hz_is_ows(uint8_t c) { return c == ' ' || c == '\t'; }

/* Two bytes as one little-endian load (memcpy: no alignment assumed). */
static inline uint16_t hz_load16(const uint8_t *p)
{
  uint16_t x;
  memcpy(&x, p, 2);
  return x;
}
#define HZ_CRLF 0x0a0d /* "\r\n" read little-endian */

/* Offsets and lengths below 2^31 (Httpz.Request.parse checks it), packed
   as Httpz.Span does. */
static inline intptr_t hz_span(intptr_t off, intptr_t len) { return (off << 31) | len; }

#endif

#if HZ_SIMD
/* The loop twice: 16-byte SSE2 windows, and 32-byte AVX2 windows for the
   processors that have AVX2 (most lines, name and value, then fit in one
   window). */
#define HZ_FN hz_field_lines_sse2
#define HZ_ATTR
#define HZ_W 16
#define HZ_VEC __m128i
#define HZ_LOADU(p) _mm_loadu_si128((const __m128i *)(p))
#define HZ_NAME_BYTES(x) hz_name_bytes(x)
#define HZ_VALUE_STOPS(x) hz_value_stops(x)
#include "simd_lines.h"

#define HZ_AVX2 __attribute__((target("avx2")))

static inline HZ_AVX2 uint32_t hz_value_stops32(__m256i x)
{
  __m256i le1f = _mm256_cmpeq_epi8(_mm256_min_epu8(x, _mm256_set1_epi8(0x1f)), x);
  __m256i tab = _mm256_cmpeq_epi8(x, _mm256_set1_epi8(0x09));
  __m256i del = _mm256_cmpeq_epi8(x, _mm256_set1_epi8(0x7f));
  return (uint32_t)_mm256_movemask_epi8(_mm256_or_si256(_mm256_andnot_si256(tab, le1f), del));
}

static inline HZ_AVX2 uint32_t hz_name_bytes32(__m256i x)
{
  __m256i y = _mm256_or_si256(x, _mm256_set1_epi8(0x20));
  __m256i letter = _mm256_cmpgt_epi8(_mm256_set1_epi8((char)(0x80 + 26)),
                                     _mm256_add_epi8(y, _mm256_set1_epi8((char)(0x80 - 'a'))));
  __m256i digit = _mm256_cmpgt_epi8(_mm256_set1_epi8((char)(0x80 + 10)),
                                    _mm256_add_epi8(x, _mm256_set1_epi8((char)(0x80 - '0'))));
  __m256i dash = _mm256_cmpeq_epi8(x, _mm256_set1_epi8('-'));
  return (uint32_t)_mm256_movemask_epi8(_mm256_or_si256(_mm256_or_si256(letter, digit), dash));
}

#define HZ_FN hz_field_lines_avx2
#define HZ_ATTR HZ_AVX2
#define HZ_W 32
#define HZ_VEC __m256i
#define HZ_LOADU(p) _mm256_loadu_si256((const __m256i *)(p))
#define HZ_NAME_BYTES(x) hz_name_bytes32(x)
#define HZ_VALUE_STOPS(x) hz_value_stops32(x)
#include "simd_lines.h"

/* 2: AVX2 windows, 1: SSE2 only; asked of the CPU once (cpuid), or set by
   hz_set_level for tests. */
static int hz_level_now = 0;

static int hz_level(void)
{
  if (hz_level_now == 0) {
    __builtin_cpu_init();
    hz_level_now = __builtin_cpu_supports("avx2") ? 2 : 1;
  }
  return hz_level_now;
}

/* Caps the level (tests run both loops): 1 keeps to SSE2, 2 allows AVX2
   where the CPU has it. Returns the level in force. */
static int hz_set_level(int cap)
{
  hz_level_now = 0;
  if (cap < 2 && hz_level() > 1) hz_level_now = 1;
  return hz_level();
}
#endif

/* Field lines from [pos], each "name:" OWS value CRLF with a token name
   and a value without control bytes other than HTAB: exactly the lines
   Request's portable loop accepts without error (before the semantics of
   the field). For line k (k = 0, 1, ...) it writes the name's and the
   trimmed value's spans at index [first + k] of [names] and [values],
   stopping before index [limit]. It stops at the first line that is not
   such a line or not all in [base + pos, base + stop): the empty line that
   ends the head, an error, or bytes still to come; the caller's portable
   loop takes that line. The spans are stored as OCaml ints (2n + 1).
   Returns (lines << 32) | the offset where it stopped. A buffer of fewer
   than 16 bytes, or a processor without the kernel, gets no line: the
   portable loop takes them all. Buffers of 16 to 31 bytes get SSE2
   windows (an AVX2 window would not fit). */
static intptr_t hz_field_lines(const uint8_t *base, intptr_t pos, intptr_t stop,
                               intptr_t *names, intptr_t *values, intptr_t first, intptr_t limit)
{
#if HZ_SIMD
  if (stop >= 32 && hz_level() == 2)
    return hz_field_lines_avx2(base, pos, stop, names, values, first, limit);
  if (stop >= 16) return hz_field_lines_sse2(base, pos, stop, names, values, first, limit);
#else
  (void)base; (void)stop; (void)names; (void)values; (void)first; (void)limit;
#endif
  return pos;
}

static inline int hz_is_target_stop(uint8_t c) { return c <= 0x20 || c == 0x7f || c == '#'; }

static inline int hz_is_hostname_byte(uint8_t c)
{
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-'
         || c == '.';
}

/* The first offset in [pos, stop) whose byte ends a request-target (<= 0x20,
   DEL or '#'), or stop: Httpz.Swar.skip_target. */
static intptr_t hz_target_end(const uint8_t *base, intptr_t pos, intptr_t stop)
{
#if HZ_SIMD
  if (stop >= 16) return hz_scan(base + pos, base + stop, hz_target_stops) - base;
#endif
  while (pos < stop && !hz_is_target_stop(base[pos])) pos++;
  return pos;
}

/* The first offset in [pos, stop) whose byte is not a letter, digit, '-'
   or '.', or stop: Httpz.Swar.skip_hostname. */
static intptr_t hz_hostname_end(const uint8_t *base, intptr_t pos, intptr_t stop)
{
#if HZ_SIMD
  if (stop >= 16) return hz_scan(base + pos, base + stop, hz_hostname_stops) - base;
#endif
  while (pos < stop && hz_is_hostname_byte(base[pos])) pos++;
  return pos;
}

static int hz_simd_available(void) { return HZ_SIMD; }

#ifndef HTTPZ_NO_OCAML
#include <caml/mlvalues.h>
#include <caml/bigarray.h>

value httpz_simd_available(value unit)
{
  (void)unit;
  return Val_bool(hz_simd_available());
}

/* The int arrays are written in place with plain stores, as ocamlopt
   itself stores into an [int array]: an immediate replacing an immediate
   needs no write barrier. Their elements are OCaml words (intnat). */
intnat httpz_simd_field_lines(value buf, intnat pos, intnat stop, value names, value values,
                              intnat first, intnat limit)
{
  return hz_field_lines((const uint8_t *)Caml_ba_data_val(buf), pos, stop,
                        (intptr_t *)Op_val(names), (intptr_t *)Op_val(values), first, limit);
}

value httpz_simd_field_lines_byte(value *argv, int argn)
{
  (void)argn;
  return Val_long(httpz_simd_field_lines(argv[0], Long_val(argv[1]), Long_val(argv[2]), argv[3],
                                         argv[4], Long_val(argv[5]), Long_val(argv[6])));
}

value httpz_simd_set_level(value cap)
{
#if HZ_SIMD
  return Val_long(hz_set_level(Int_val(cap)));
#else
  (void)cap;
  return Val_long(0);
#endif
}

intnat httpz_simd_target_end(value buf, intnat pos, intnat stop)
{
  return hz_target_end((const uint8_t *)Caml_ba_data_val(buf), pos, stop);
}

value httpz_simd_target_end_byte(value buf, value pos, value stop)
{
  return Val_long(httpz_simd_target_end(buf, Long_val(pos), Long_val(stop)));
}

intnat httpz_simd_hostname_end(value buf, intnat pos, intnat stop)
{
  return hz_hostname_end((const uint8_t *)Caml_ba_data_val(buf), pos, stop);
}

value httpz_simd_hostname_end_byte(value buf, value pos, value stop)
{
  return Val_long(httpz_simd_hostname_end(buf, Long_val(pos), Long_val(stop)));
}

/* The first [c] in [pos, stop), or [stop]: the multipart parser's skip to
   a candidate delimiter (Httpz.Multipart), 16 bytes per compare. Windows
   lie wholly inside [pos, stop); the last few bytes go through a byte loop,
   so nothing outside the range is ever read. */
static intptr_t hz_find_byte(const uint8_t *base, intptr_t pos, intptr_t stop, uint8_t c)
{
#if HZ_SIMD
  const __m128i needle = _mm_set1_epi8((char)c);
  while (pos + 16 <= stop) {
    unsigned m = (unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(hz_load(base + pos), needle));
    if (m) return pos + __builtin_ctz(m);
    pos += 16;
  }
#endif
  while (pos < stop && base[pos] != c) pos++;
  return pos;
}

intnat httpz_simd_find_byte(value buf, intnat pos, intnat stop, intnat c)
{
  return hz_find_byte((const uint8_t *)Caml_ba_data_val(buf), pos, stop, (uint8_t)c);
}

value httpz_simd_find_byte_byte(value buf, value pos, value stop, value c)
{
  return Val_long(httpz_simd_find_byte(buf, Long_val(pos), Long_val(stop), Long_val(c)));
}

/* Copies for Bigstring: memmove over the buffers' bytes (the OCaml side
   checked the ranges). Pure compute like the rest of this file; no
   allocation, no system call. */
value httpz_bigstring_memmove(value src, intnat src_off, value dst, intnat dst_off, intnat len)
{
  memmove((uint8_t *)Caml_ba_data_val(dst) + dst_off, (const uint8_t *)Caml_ba_data_val(src) + src_off,
          (size_t)len);
  return Val_unit;
}

value httpz_bigstring_memmove_byte(value src, value src_off, value dst, value dst_off, value len)
{
  return httpz_bigstring_memmove(src, Long_val(src_off), dst, Long_val(dst_off), Long_val(len));
}

value httpz_bigstring_of_string_copy(value src, intnat src_off, value dst, intnat dst_off, intnat len)
{
  memcpy((uint8_t *)Caml_ba_data_val(dst) + dst_off, (const uint8_t *)String_val(src) + src_off,
         (size_t)len);
  return Val_unit;
}

value httpz_bigstring_of_string_copy_byte(value src, value src_off, value dst, value dst_off, value len)
{
  return httpz_bigstring_of_string_copy(src, Long_val(src_off), dst, Long_val(dst_off), Long_val(len));
}
#endif
