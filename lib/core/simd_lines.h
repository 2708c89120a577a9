/* The field-line loop of lib/core/simd_stubs.c, written once for two window
   widths: simd_stubs.c includes this file twice, defining first
     HZ_FN           the function's name
     HZ_ATTR         its attributes (the AVX2 target for the wide one)
     HZ_W            the window's width in bytes (16 or 32)
     HZ_VEC          the vector type of a window
     HZ_LOADU(p)     an unaligned load of HZ_W bytes at p
     HZ_NAME_BYTES(x)   mask of the bytes that are letters, digits or '-'
     HZ_VALUE_STOPS(x)  mask of the bytes that end a value
   It undefines them all at its end. Masks are held in 64 bits, so that
   shifting one by HZ_W (a scan that reached the window's end) is defined
   and gives 0.

   Needs stop >= HZ_W (the buffer holds a whole window before stop). See
   hz_field_lines in simd_stubs.c for the contract. */

/* The window at w (w < end): n gets how many bytes it covers,
   min(HZ_W, end - w), x the bytes and drop the shift that puts byte w[i]
   at bit i of a mask. Fewer than HZ_W bytes before end are read as the
   HZ_W bytes ENDING at end: bytes before w are in the buffer, and no byte
   at or past end is read. */
#define HZ_WIN(w, end, x, n, drop)                 \
  do {                                             \
    if ((end) - (w) >= HZ_W) {                     \
      x = HZ_LOADU(w);                             \
      n = HZ_W;                                    \
      drop = 0;                                    \
    } else {                                       \
      x = HZ_LOADU((end) - HZ_W);                  \
      n = (int)((end) - (w));                      \
      drop = HZ_W - n;                             \
    }                                              \
  } while (0)

#define HZ_ALL ((uint64_t)-1 >> (64 - HZ_W))

static __attribute__((noinline)) HZ_ATTR intptr_t HZ_FN(const uint8_t *base, intptr_t pos, intptr_t stop, intptr_t *names,
                              intptr_t *values, intptr_t first, intptr_t limit)
{
  const uint8_t *end = base + stop;
  intptr_t i = first;
  while (i < limit) {
    const uint8_t *p = base + pos, *w = p, *ne = p, *v, *ve, *e;
    HZ_VEC x;
    uint64_t nm, vm;
    int n, drop;
    /* The empty line ending the head: no name scan for it. */
    if (p >= end || *p == '\r') break;
    /* One window serves the name and, when the line is short, the value:
       both masks of it at once. */
    HZ_WIN(w, end, x, n, drop);
    nm = (~(uint64_t)HZ_NAME_BYTES(x) & HZ_ALL) >> drop;
    vm = (uint64_t)HZ_VALUE_STOPS(x) >> drop;
    /* Letters, digits and '-' by mask; any other byte by the table (a
       rarer tchar, and the scan goes on after it). */
    for (;;) {
      uint64_t m = nm >> (ne - w);
      if (m != 0) {
        ne += __builtin_ctzll(m);
        if (!hz_tchar[*ne]) break;
        ne++;
        continue;
      }
      ne = w + n;
      if (ne >= end) break;
      w = ne;
      HZ_WIN(w, end, x, n, drop);
      nm = (~(uint64_t)HZ_NAME_BYTES(x) & HZ_ALL) >> drop;
      vm = (uint64_t)HZ_VALUE_STOPS(x) >> drop;
    }
    if (ne == p || ne >= end || *ne != ':') break;
    v = ne + 1;
    /* Mostly one SP: one test, then the loop for the rest. */
    if (v < end && *v == ' ') v++;
    while (v < end && hz_is_ows(*v)) v++;
    /* The value from the current window on; later windows need only
       their value mask. */
    ve = v;
    for (;;) {
      if (ve < w + n) {
        uint64_t m = vm >> (ve - w);
        if (m != 0) {
          ve += __builtin_ctzll(m);
          break;
        }
        ve = w + n;
      }
      if (ve >= end) break;
      w = ve;
      HZ_WIN(w, end, x, n, drop);
      vm = (uint64_t)HZ_VALUE_STOPS(x) >> drop;
    }
    if (end - ve < 2 || hz_load16(ve) != HZ_CRLF) break;
    e = ve;
    while (e > v && hz_is_ows(e[-1])) e--;
    intptr_t ns = hz_span(p - base, ne - p), vs = hz_span(v - base, e - v);
    names[i] = 2 * ns + 1; /* OCaml ints: tagged */
    values[i] = 2 * vs + 1;
    i++;
    pos = ve + 2 - base;
  }
  return ((i - first) << 32) | pos;
}

/* The parameters too, for the next inclusion. */
#undef HZ_WIN
#undef HZ_ALL
#undef HZ_FN
#undef HZ_ATTR
#undef HZ_W
#undef HZ_VEC
#undef HZ_LOADU
#undef HZ_NAME_BYTES
#undef HZ_VALUE_STOPS
