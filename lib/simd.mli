(** The request parser's SIMD kernel: C functions (lib/simd_stubs.c) that
    scan field lines 16 bytes at a time with SSE2.

    Pure compute over the caller's bigstring: no I/O, no allocation, no
    exception; every function reads only bytes in [\[pos, stop)] plus,
    when fewer than 16 remain, bytes before [pos] inside the buffer (never
    past [stop]). The caller guarantees [0 <= pos <= stop <= length b] and
    [stop < 2{^31}]: the externals do not check.

    They give the same answers as the portable scanners of {!Swar} and the
    loop of {!Request} (test/request's "kernel" cases compare them on every
    conformance vector and a fuzz corpus). *)

val available : bool
(** The kernel is compiled in (x86-64, where SSE2 is part of the
    architecture, so no CPU has to be probed). Elsewhere [false], and the
    functions below fall back to scalar C loops. *)

val field_lines :
  Bigstring.t -> int -> int -> int array -> int array -> int -> int -> int
(** [field_lines b pos stop names values first limit] reads field lines
    from [pos]: each one a token, [':'], OWS, a value with no control byte
    but HTAB, and CRLF, all before [stop] — exactly the lines {!Request}'s
    portable loop accepts before looking at the field's meaning. The spans
    ({!Span.t} as [int]) of the [k]th line's name and trimmed value go to
    [names.(first + k)] and [values.(first + k)], for fewer than
    [limit - first] lines ([limit <= Array.length names] and
    [Array.length values]). It stops at the first other line (the empty line
    ending the head, an error, an incomplete line) and returns
    [lines lsl 32 lor offset]: how many lines it wrote, and the offset of
    the line it stopped at. *)

val target_end : Bigstring.t -> int -> int -> int
(** [target_end b pos stop] is {!Swar.skip_target}: the first index in
    [\[pos, stop)] whose byte is <= 0x20, DEL or ['#'], or [stop]. *)

val hostname_end : Bigstring.t -> int -> int -> int
(** [hostname_end b pos stop] is {!Swar.skip_hostname}: the first index in
    [\[pos, stop)] whose byte is not a letter, digit, ['-'] or ['.'], or
    [stop]. *)
