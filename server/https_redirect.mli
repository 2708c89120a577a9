(** The handler of a plain-HTTP listener next to HTTPS ones
    ([Server.tls.redirect_http]): every request is answered
    [301 Moved Permanently] to the same host and target over https, so a
    browser that typed [http://] lands on the TLS port. *)

val location : host:string -> port:int -> target:string -> string
(** [location ~host ~port ~target] is [https://HOST[:PORT]PATH]: [host] is
    the request's Host without its port (an IPv6 literal keeps its
    brackets), [:PORT] is left out for 443, and [PATH] is the target's
    path and query (an absolute-form target's, or [/] for the asterisk and
    authority forms). *)

val handler : port:int -> Ctx.t -> unit
(** [handler ~port] answers 301 with {!location} for the request's Host
    (the listener's own address when it has none, as HTTP/1.0 allows) and
    target, on the https port [port]. *)
