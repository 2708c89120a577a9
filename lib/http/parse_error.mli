(** Why a request head was refused.

    Each rule of RFC 9110/9112 the parser enforces fails with its own
    constant constructor, so reporting one costs nothing, and each maps to
    the status a server answers with before closing the connection
    ({!status}). After an error the {e connection} is poisoned, not the
    parse state (the next {!Request.parse} starts afresh): a server writes
    the status and closes, because the framing of anything that follows on
    the connection is unknowable (RFC 9112 §11.2). *)

type t =
  | Bad_method            (** method is empty or not a token (RFC 9110 §9.1) — 400 *)
  | Bad_target            (** request-target empty, holding control bytes or a fragment,
                              or not of a form valid for the method (RFC 9112 §3.2) — 400 *)
  | Target_too_long       (** request-target longer than the limit — 414 *)
  | Bad_version           (** HTTP-version not ["HTTP/" DIGIT "." DIGIT] (RFC 9112 §2.3) — 400 *)
  | Unsupported_version   (** a major version other than 1 — 505 *)
  | Bad_request_line      (** request-line not [method SP target SP version CRLF] — 400 *)
  | Bare_cr               (** CR not followed by LF (RFC 9112 §2.2) — 400 *)
  | Bare_lf               (** LF not preceded by CR: httpz does not take the §2.2 "MAY"
                              leniency, see the README's conformance notes — 400 *)
  | Bad_header_name       (** field name empty or not a token, or no colon — 400 *)
  | Space_before_colon    (** whitespace between field name and colon (RFC 9112 §5.1) — 400 *)
  | Obs_fold              (** a field line folded onto the next (RFC 9112 §5.2) — 400 *)
  | Bad_header_value      (** control byte (other than HTAB) in a field value — 400 *)
  | Too_many_headers      (** more field lines than the limit — 431 *)
  | Head_too_large        (** no end of head within the byte limit — 431 *)
  | Bad_content_length    (** Content-Length not [1*DIGIT] or over 18 digits (RFC 9110 §8.6) — 400 *)
  | Conflicting_content_length (** several Content-Length values that differ — 400 *)
  | Content_too_large     (** Content-Length above the body limit — 413 *)
  | Length_and_chunked    (** Content-Length together with Transfer-Encoding (RFC 9112 §6.3) — 400 *)
  | Chunked_not_final     (** Transfer-Encoding whose final coding is not chunked,
                              or chunked applied twice (RFC 9112 §6.3) — 400 *)
  | Unsupported_transfer_coding (** a transfer coding other than chunked — 501 *)
  | Transfer_encoding_http10 (** Transfer-Encoding in an HTTP/1.0 request, whose framing
                              RFC 9112 §6.1 says to treat as faulty — 400 *)
  | Missing_host          (** HTTP/1.1 request without Host (RFC 9112 §3.2) — 400 *)
  | Duplicate_host        (** more than one Host field line — 400 *)
  | Bad_host              (** Host value not a valid [uri-host [":" port]] — 400 *)

val status : t -> int
(** [status e] is the HTTP status code a server answers [e] with. *)

val to_string : t -> string
(** [to_string e] is the constructor's name in snake case, stable for tools
    and logs (["space_before_colon"]). *)

val describe : t -> string
(** [describe e] is one human sentence about [e], safe to put in an error
    page: it never echoes request bytes. *)

val all : t list
(** Every error, for tests and documentation. *)
