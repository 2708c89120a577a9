(** Request targets for servers: split, percent-decode, normalise
    ({{:https://www.rfc-editor.org/rfc/rfc9112#section-3.2} RFC 9112 §3.2},
    {{:https://www.rfc-editor.org/rfc/rfc3986#section-3.3} RFC 3986 §3.3},
    {{:https://www.rfc-editor.org/rfc/rfc3986#section-5.2.4} §5.2.4}).

    A static server turns the request-target into a file path in two steps:
    {ol
    {- {!split} finds the path and query of an origin-form target
       ([/a/b?x=1]) or of an absolute-form one ([http://host/a/b?x=1], which
       RFC 9112 §3.2.2 obliges a server to accept); it rejects a fragment
       ([#]) and bytes no request-target may hold;}
    {- {!decode_path} percent-decodes that path into a caller-provided
       buffer, resolving [.] and [..] segments and merging repeated slashes
       on the way, and refuses anything that would climb above the root.}}

    {[
      let t = Target.create () and dst = Bigstring.create 4096 in
      (* once per request; [target] is the request-target span *)
      match Target.split t buf target with
      | Origin | Absolute ->
          let n = Target.decode_path buf (Target.path t) ~dst in
          if n < 0 then respond (Target.error_status (Target.decode_error n))
          else (* dst.{1 .. n-1}: relative to the root directory fd *) ...
      | Asterisk -> (* OPTIONS * *) ...
      | Error -> respond (Target.error_status (Target.error t))
    ]}

    {b Guarantee.} A non-negative result [n] of {!decode_path} or
    {!normalize} means [dst.{0 .. n-1}] is a normalised absolute path: it
    starts with ['/'], contains no NUL byte, no empty segment (no ["//"]),
    and no ["."] or [".."] segment. Anything else is an error; neither
    function raises.

    {b Decisions.}
    {ul
    {- {e [%2F] decodes to ['/'] and then acts as a separator.} A static
       server maps the path onto a file system where no name can contain
       ['/'], so an encoded slash can only mean "separator" or "reject";
       nginx serves it as a separator, and we do the same. This is safe
       because dot segments are resolved {e after} decoding, on the decoded
       bytes: [/..%2Fetc] becomes [/../etc] and is refused as {!Above_root},
       never passed on. (The classic traversal bugs decode after
       normalising.) The static server also opens the result with
       [openat2(RESOLVE_BENEATH)] under the root directory, so the kernel
       enforces the same fence a second time.}
    {- {e One decoding only.} [%252e] decodes to the three bytes [%2e], a
       literal file name, never to ['.'].}
    {- {e Backslash is an ordinary byte.} On Linux ['\\'] is a file-name
       byte like any other, so [/..\\..\\etc] is one segment named
       [..\\..\\etc]; it is neither a separator nor a dot segment. (A port
       to a system where ['\\'] separates must revisit this.)}
    {- {e Bytes are bytes.} Decoding yields bytes, not characters: the
       overlong UTF-8 form [%c0%ae] is the two bytes [\xc0\xae], not ['.'],
       and is kept as a file-name byte sequence. No UTF-8 validation.}
    {- {e Control bytes.} Raw bytes below [0x21] and [0x7f] cannot occur in
       a valid request-target and are refused ({!Bad_char}); a raw or
       encoded NUL is refused as {!Nul_byte} (it would truncate the C
       string handed to [openat2]). Other percent-encoded control bytes
       ([%0a], [%20]) are legal file-name bytes and pass through: whoever
       logs a path must escape it.}
    {- {e Empty path.} The empty path (absolute-form [http://host] or
       [http://host?q]) is equivalent to ["/"]
       ({{:https://www.rfc-editor.org/rfc/rfc9110#section-4.2.3} RFC 9110 §4.2.3})
       and decodes to ["/"].}}

    {b Ownership.} Nothing here keeps a buffer. The spans in a {!t} point
    into the buffer given to {!split} and are valid while those bytes are.
    {!decode_path} writes only into [dst], from offset 0, and leaves the
    bytes of [dst] past its result as they were. {!split} and
    {!decode_path} read a run of fewer than 8 bytes at the end of the span
    as one word when the buffer has 8 bytes there: they may read up to 7
    bytes past the span (never past the buffer), whose values change
    nothing.

    {b Allocation.} {!split}, {!decode_path}, {!normalize} and the
    accessors allocate nothing; {!create} allocates the state once. *)

(** {1 Errors} *)

type error =
  | Bad_char  (** a control byte, space or DEL in the target or path *)
  | Fragment  (** a ['#']: fragments are never sent in a request-target *)
  | Bad_form
      (** neither origin-form, absolute-form with scheme [http] or [https]
          (any case), nor asterisk-form ([*]); authority-form ([CONNECT]'s
          [host:port]) has no path and is refused here too *)
  | Bad_authority
      (** absolute-form with an empty host (RFC 9110 §4.2.1: a recipient
          MUST reject it) or with userinfo ([user\@host]; RFC 9110 §4.2.4
          asks recipients to treat it as an error) *)
  | Bad_escape  (** ['%'] not followed by two hex digits ([%zz], [%4]) *)
  | Nul_byte  (** a NUL byte, raw or [%00] *)
  | Above_root  (** a [..] segment that would climb above ["/"] *)
  | Too_long  (** the decoded path does not fit in [dst] *)
  | Not_absolute  (** a non-empty path that does not start with a raw ['/'] *)

val error_status : error -> int
(** [error_status e] is the HTTP status to answer with: [400] for every
    error (the request-target is malformed or names nothing servable). *)

val error_to_string : error -> string
(** [error_to_string e] is a stable snake_case name (["above_root"],
    ["bad_escape"], …) for logs and tests. Does not allocate. *)

(** {1 Splitting} *)

type t
(** Caller-owned, reusable result of {!split}. *)

type kind =
  | Origin  (** [absolute-path [ "?" query ]] *)
  | Absolute  (** [http://authority path-abempty [ "?" query ]] *)
  | Asterisk  (** exactly [*] ([OPTIONS *]); path and query are empty *)
  | Error  (** see {!error} *)

val create : unit -> t
(** [create ()] is a fresh state. Allocates; call once per connection. *)

val split : t -> Bigstring.t -> Span.t -> kind
(** [split t buf target] classifies the request-target [target] of [buf]
    and records its parts in [t]. Every byte is checked: a control byte,
    space or DEL gives {!Bad_char}, a ['#'] gives {!Fragment}. The query
    starts after the first ['?']; later ['?'] belong to the query. For
    absolute-form the authority runs from after ["//"] to the first ['/']
    or ['?'], and is only checked for emptiness and userinfo: comparing it
    with [Host] is the caller's business. Does not allocate. *)

val kind : t -> kind
(** [kind t] is the last result of {!split}. *)

val error : t -> error
(** [error t] is why the last {!split} returned [Error]; meaningless
    otherwise. *)

val path : t -> Span.t
(** [path t] is the path: starts with ['/'] for [Origin]; for [Absolute]
    either starts with ['/'] or is empty (meaning ["/"]); empty for
    [Asterisk]. Not decoded. *)

val query : t -> Span.t
(** [query t] is the query without its ['?'], possibly empty. *)

val has_query : t -> bool
(** [has_query t] is [true] iff the target held a ['?'] (so [query t] may
    be empty while [has_query t] holds, as for [/a?]). *)

val authority : t -> Span.t
(** [authority t] is the authority of an absolute-form target (host and
    optional port); {!Span.empty} otherwise. *)

(** {1 Decoding and normalising} *)

val decode_path : Bigstring.t -> Span.t -> dst:Bigstring.t -> int
(** [decode_path buf path ~dst] percent-decodes [path] (one pass, one
    level), resolves dot segments (also ones produced by decoding, such as
    [%2e%2e]) and merges empty segments ([//] becomes [/]), writing the
    result to [dst] from offset 0, with capacity [Bigstring.length dst].

    The result is the decoded length [n >= 1] (with the guarantee stated
    above), or a negative code for {!decode_error}:
    {!Bad_char}, {!Bad_escape}, {!Nul_byte}, {!Above_root}, {!Too_long} or
    {!Not_absolute}. [Too_long] is reported as soon as a prefix of the
    path being resolved overflows [dst], even if a later [..] would have
    shortened it: give a buffer of [PATH_MAX] (4096) bytes, or more.

    Examples: [/a/./b/../c] → [/a/c]; [/a//b/] → [/a/b/]; [/a/..] → [/];
    [/%7euser] → [/~user]; [/..%2f] and [/a/../../x] → [Above_root];
    [/%252e%252e/] → [/%2e%2e/]; [/%00] → [Nul_byte].

    [dst] must not overlap the bytes of [path]. Does not allocate. *)

val normalize : Bigstring.t -> Span.t -> dst:Bigstring.t -> int
(** [normalize buf path ~dst] is {!decode_path} for a path that is already
    decoded: ['%'], space and control bytes are ordinary bytes (only NUL is
    refused), so its errors are {!Nul_byte}, {!Above_root}, {!Too_long}
    and {!Not_absolute}. Normalising an already normalised path is
    the identity ([normalize] of the output of [decode_path] gives the same
    bytes back), which the tests check. Does not allocate. *)

val decode_error : int -> error
(** [decode_error r] is the error a negative result [r] of
    {!decode_path} or {!normalize} stands for.
    @raise Invalid_argument when [r] is not such a code. *)

val ends_in_slash : Bigstring.t -> int -> bool
(** [ends_in_slash dst n] is [true] iff the decoded path [dst.{0 .. n-1}]
    ends with ['/']: exactly when the original path ended with ['/'] (raw
    or [%2F]) or with a [.] or [..] segment, or resolved to ["/"]. A
    server that finds a directory at a path for which this is [false]
    redirects [/dir] to [/dir/]. *)

val percent_byte : Bigstring.t -> int -> int -> int
(** [percent_byte buf i stop] is the byte (0 to 255) that the escape
    [%XX] starting at [buf.{i}] (a ['%'], not checked) stands for, or [-1]
    when two hex digits (either case) do not follow before [stop]. The one
    escape reader of the library. Does not allocate. *)

val decode_segment : Bigstring.t -> Span.t -> dst:Bigstring.t -> dst_off:int -> int
(** [decode_segment buf s ~dst ~dst_off] percent-decodes one path segment
    (a router parameter, say) into [dst] from [dst_off] and is the decoded
    length [n >= 0], or a negative code for {!decode_error}: {!Bad_escape},
    {!Nul_byte} (raw or [%00]), {!Bad_char} (a raw control byte or space)
    or {!Too_long} (it does not fit before [Bigstring.length dst]).

    Unlike {!decode_path} it knows nothing of segments: it is meant to run
    {e after} the path was split on raw ['/'], so [%2F] becomes a ['/'] byte
    {e inside} the result and [.]/[..] are kept. ['+'] stays ['+']: a space
    as ['+'] is form encoding ({!Form}), never path encoding. One decoding
    only ([%252F] gives [%2F]). [dst] must not overlap [s] unless
    [dst_off <= Span.off s] (decoding only shrinks). Does not allocate. *)
