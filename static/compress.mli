(** gzip (RFC 1952) of a file's bytes, through zlib (camlzip's [Zlib]).

    Used once per file version by the static handler's on-the-fly
    compression ({!Static.config.compress}); the result is kept in the
    {!File_cache} next to the identity bytes, so no request compresses a
    file another request of the same worker already compressed. *)

val gzip : level:int -> Httpz.Bigstring.t -> off:int -> len:int -> Httpz.Bigstring.t
(** [gzip ~level b ~off ~len] is the gzip member of [b.{off .. off+len-1}]
    at zlib [level] (1-9): a 10-byte header with no file name and
    modification time 0 (so the same bytes and level always give the same
    output, which a strong entity tag needs), the raw deflate stream, then
    CRC-32 and length. Allocates (input copy, output); start-up or
    cache-miss paths only. @raise Invalid_argument for a level outside 1-9. *)
