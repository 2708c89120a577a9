(** The request parser's SIMD kernel: C functions (lib/core/simd_stubs.c) that
    scan request heads 16 bytes at a time with SSE2, and field lines 32 at
    a time with AVX2 on processors that have it (asked once, with cpuid).
    {!Request} uses them when created with [~simd:true] (the default where
    {!available}).

    Pure compute over the caller's bigstring: no I/O, no allocation, no
    exception ([\[@@noalloc\]] externals). The caller guarantees
    [0 <= pos <= stop <= Bigstring.length b] and [stop < 2{^31}]; the
    externals do not check. They read bytes in [\[pos, stop)] and, near
    [stop], bytes before [pos] inside the buffer; never a byte at or past
    [stop].

    Each gives the same answers as the portable OCaml code it replaces
    (test/lib/core/simd compares them on every conformance vector, a fuzz corpus and
    every byte in every lane). *)

val available : bool
(** The kernel is compiled in: x86-64, where SSE2 is part of the
    architecture, so no CPU has to be probed. Elsewhere [false]: there
    {!field_lines} records no line, and the scanners are byte loops. *)

val field_lines :
  Bigstring.t -> int -> int -> int array -> int array -> int -> int -> int
(** [field_lines b pos stop names values first limit] reads field lines
    from [pos]: each a token, [':'], OWS, a value with no control byte but
    HTAB, and CRLF, all before [stop]; exactly the lines {!Request}'s
    portable loop accepts before looking at the field's meaning. The spans
    ({!Span.t} as [int]) of the [k]th line's name and OWS-trimmed value go
    to [names.(first + k)] and [values.(first + k)], for at most
    [limit - first] lines ([limit] must not exceed either array's length).
    It stops at the first other line: the empty line ending the head, an
    invalid line, an incomplete one. The result is
    [lines lsl 32 lor offset]: how many lines it recorded, and where the
    line it stopped at starts. When [stop < 16] it records nothing. *)

val cap : int -> int
(** [cap 1] keeps {!field_lines} to its SSE2 loop, [cap 2] lets it use AVX2
    where the processor has it (the default). Returns the level now in
    force: 2 (AVX2), 1 (SSE2) or 0 (no kernel). Process-wide; for tests and
    benchmarks, which run both loops. *)

val target_end : Bigstring.t -> int -> int -> int
(** [target_end b pos stop] is {!Swar.skip_target}: the first index in
    [\[pos, stop)] whose byte is <= 0x20, DEL or ['#'], or [stop]. *)

val hostname_end : Bigstring.t -> int -> int -> int
(** [hostname_end b pos stop] is {!Swar.skip_hostname}: the first index in
    [\[pos, stop)] whose byte is not a letter, digit, ['-'] or ['.'], or
    [stop]. *)

val find_byte : Bigstring.t -> int -> int -> int -> int
(** [find_byte b pos stop c] is the first index in [\[pos, stop)] whose
    byte is [c] (a code 0..255), or [stop]: memchr, 16 bytes per compare
    with SSE2 (a byte loop elsewhere). Reads only bytes inside
    [\[pos, stop)]. {!Multipart} skips to candidate delimiters with it. *)
