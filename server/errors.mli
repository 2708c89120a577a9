(** One place where an application shapes its error answers: status,
    content type and body of every 4xx/5xx the server or the application
    layer writes for it.

    {[
      (* every error as JSON: {"error":{"status":404,"message":"Not Found"}} *)
      Server.run { config with errors = Some Errors.json } app;

      (* or one's own *)
      let mine c status ~reason =
        Errors.start c status;
        Ctx.header c Header_name.Content_type "application/problem+json";
        Ctx.body_string c (problem status reason)
      in
      Server.run { config with errors = Some mine } app
    ]}

    {b A renderer} ({!t}) answers [c] in full, synchronously: {!start}
    (not [Ctx.start]: {!start} adds the fields the answer needs), any
    header calls, one body call. It may pick another status than the one
    it is given (a [403] shown as [404]). It must not wait ({!Ctx.sleep},
    {!Ctx.offload}...). [reason] is plain text: the status's reason phrase (["Not Found"]) or
    a more precise one (["malformed path parameter"], a {!Csrf} failure),
    which may quote the request (a JSON parser's message from
    {!Req.json} names the bytes it refused): always escape it for the
    body's format ({!json}, {!html} do). The server suppresses the
    body of an answer to HEAD itself.

    {b A renderer that fails} (raises, or returns without a complete
    answer) does not fail the request (nor one that calls back here, say
    through {!Respond.error}: that inner call gets {!text}): the failure is logged and the
    built-in {!text} answer for the same status and reason replaces what
    it started (when none of it left yet; else the connection closes).

    {b Where it is set.} Per server: [Server.config.errors] (each worker
    installs it, {!set}); per router: [Route.compile ~errors], for that
    router's own answers only (its 404, 405, 400 and form routes' 403),
    ahead of the server's. Nothing set: every answer is as before this
    module existed (each source's own [text/plain] or, for the static
    handler, HTML body).

    {b What goes through it} when set:
    {ul
    {- {!Route}'s 404 (unless {!Route.not_found} handles it), 405 (with
       [Allow]), 400 (malformed target or parameter), form routes' CSRF
       403; {!Respond.error} and {!Respond.error_reason};}
    {- the server's answers once a request head is parsed: 413 (a body
       over [max_body] or a [Ctx.read_body] limit), 408 (the body did not
       come in time), 400/413 for a malformed or oversized chunked body,
       500 (a handler raised or returned without answering), 503 (the
       handler timeout; {!Ctx.offload}'s queue full, with [Retry-After]),
       over HTTP/1.1 and HTTP/2; such an answer over HTTP/1.1 still closes
       the connection;}
    {- {!Guard}'s refusals (403; 401 with [WWW-Authenticate]; 429 and 503
       with [Retry-After]; all [Cache-Control: no-store]);}
    {- the static handler's errors (400, 403, 404, 405 with [Allow], 412,
       414, 416 with [Content-Range], 500, 503), unless the static
       configuration names a page file for that status.}}
    Not through it: a request the server could not parse (400, 414, 431,
    505, a 408 in the head): there is no request to hand an application,
    so the protocol layer writes a fixed minimal [text/plain] answer, as
    nginx does; and the development 500 page ([dev_errors], to a client on
    the loopback), which shows the backtrace whatever the renderer.

    {b Allocation.} None of this runs for a request answered normally:
    the server's paths look at one reference. An error answer costs what
    its renderer allocates ({!text}, {!html}, {!json}: their body
    string). *)

open Httpz

type t = Ctx.t -> Status.t -> reason:string -> unit

val text : t
(** [text/plain; charset=utf-8]: ["404 Not Found\n"], or
    ["403 Forbidden: REASON\n"] when [reason] is not the reason phrase:
    the bodies {!Respond.error} has always written. *)

val html : t
(** [text/html; charset=utf-8]: a small document titled ["404 Not
    Found"], [reason] HTML-escaped in a paragraph when it is not the
    reason phrase. *)

val json : t
(** [application/json]: [{"error":{"status":404,"message":"Not Found"}}],
    [message] being [reason] as a JSON string (quotes, backslashes and
    control characters escaped; a reason that is not UTF-8 has its bytes
    above [0x7F] escaped as [\u00XX]). *)

val start : Ctx.t -> Status.t -> unit
(** [start c status] is [Ctx.start c status] followed by the headers
    queued with {!Respond.add_header} and the fields the error answer
    needs: [Allow] of a 405, [WWW-Authenticate] of a 401, [Retry-After],
    [Content-Range] of a 416, [Cache-Control: no-store] of a refusal. *)

(** {1 Bodies} For renderers of one's own. *)

val text_body : Status.t -> string -> string
val html_body : Status.t -> string -> string
val json_body : Status.t -> string -> string
(** [json_body status reason] is the body {!json} sends. *)

val json_string : string -> string
(** [json_string s] is [s] as a JSON string literal, quotes included. *)

(** {1 The server's side} *)

val set : t option -> unit
(** [set r] makes [r] the renderer of this process's server (a worker
    does it with [Server.config.errors] as it starts). *)

val current : unit -> t option
(** The server's renderer. Does not allocate. *)

val active : t option -> bool
(** [active router_errors]: some renderer applies (the given one or the
    server's): the caller answers through {!answer}, else its own way.
    Does not allocate. *)

(**/**)
(* The server's and the application layer's own callers: the fields the
   next {!answer} writes, set just before it (it clears them). Kept out
   of the documented API: a value set and not followed by {!answer}
   would go into a later error answer of the worker. *)

val require : Header_name.t -> string -> unit
(** [require name value]: the next {!answer}'s {!start} writes this field
    (one at a time; a second replaces the first). *)

val require_s : string -> string -> unit
(** As {!require} for a field with no {!Httpz.Header_name.t} of its own
    ([Sec-WebSocket-Version] of a refused upgrade); a third field. *)

val require_int : Header_name.t -> int -> unit
(** As {!require} for a number ([Retry-After]); a second field. *)

val require_no_store : unit -> unit
(** The next answer is [Cache-Control: no-store]. *)

(**/**)

val answer : ?errors:t -> Ctx.t -> Status.t -> reason:string -> unit
(** [answer c status ~reason] answers through [errors], else the server's
    renderer, else {!text}, falling back to {!text} when the renderer
    fails (see above); then forgets what was {!require}d. The response of
    [c] must be idle. @raise what the fallback raises when part of the
    renderer's answer had left already (the caller closes the
    connection). *)

(**/**)

val set_pending_writer : (Ctx.t -> unit) -> unit
(* Respond registers Respond.write_pending (Respond comes after this
   module): the headers queued for [c] exist only if Respond is linked. *)
