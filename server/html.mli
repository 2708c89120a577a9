(** HTML escaping for handlers that build pages by hand
    ([Respond.html c ("<p>" ^ Html.escape name ^ "</p>")]).

    The five bytes ampersand, less-than, greater-than, double quote and
    single quote become [&amp;], [&lt;], [&gt;], [&quot;] and [&#39;];
    every other byte is copied as it is (UTF-8 passes through
    untouched). That makes a value safe as element text and inside an
    attribute value in double or single quotes, which is all it promises: not in an unquoted
    attribute, not inside [<script>] or [<style>], not as a URL (an
    escaped [javascript:] URL is still one: check a scheme yourself).
    For whole documents, a typed library such as TyXML escapes by
    construction. *)

val escape : string -> string
(** [escape s] is [s] escaped; [s] itself (no copy) when it holds none of
    the five bytes. *)

val escape_into : Buffer.t -> string -> unit
(** [escape_into b s] adds [escape s] to [b] without building it. *)

val escaped_length : string -> int
(** [escaped_length s] is [String.length (escape s)]. Does not allocate. *)

val needs_escape : string -> bool
(** [needs_escape s]: [s] holds one of the five bytes. Does not allocate. *)
