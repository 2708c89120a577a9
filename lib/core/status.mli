(** HTTP status codes (RFC 9110 §15) and their preformatted status lines.

    [t] lists every code in the IANA "HTTP Status Code Registry" that a
    server may send: the codes RFC 9110 §15 defines, the extension codes
    registered by other RFCs (WebDAV, 103 Early Hints, RFC 6585, 451, ...),
    and 418, which RFC 9110 §15.5.19 reserves because it is so widely
    deployed. Unassigned codes and 306 (unused since HTTP/1.1) have no
    constructor.

    Constructors are constant: a [t] is an immediate value, so passing,
    storing and matching on one costs nothing. Every function below except
    {!of_code} is allocation-free.

    {b Status lines.} {!line} returns a string built once, when the module
    is initialised, for every (version, status) pair, e.g.
    ["HTTP/1.1 404 Not Found\r\n"]: the response writer copies it with one
    blit and never formats a number on the hot path (RFC 9112 §4:
    [status-line = HTTP-version SP status-code SP \[ reason-phrase \]],
    followed by CRLF). *)

type t =
  | Continue  (** [100 Continue], RFC 9110 §15.2.1 *)
  | Switching_protocols  (** [101 Switching Protocols], RFC 9110 §15.2.2 *)
  | Processing  (** [102 Processing], RFC 2518 §10.1 *)
  | Early_hints  (** [103 Early Hints], RFC 8297 *)
  | Ok  (** [200 OK], RFC 9110 §15.3.1 *)
  | Created  (** [201 Created], RFC 9110 §15.3.2 *)
  | Accepted  (** [202 Accepted], RFC 9110 §15.3.3 *)
  | Non_authoritative_information  (** [203 Non-Authoritative Information], RFC 9110 §15.3.4 *)
  | No_content  (** [204 No Content], RFC 9110 §15.3.5 *)
  | Reset_content  (** [205 Reset Content], RFC 9110 §15.3.6 *)
  | Partial_content  (** [206 Partial Content], RFC 9110 §15.3.7 *)
  | Multi_status  (** [207 Multi-Status], RFC 4918 §11.1 *)
  | Already_reported  (** [208 Already Reported], RFC 5842 §7.1 *)
  | Im_used  (** [226 IM Used], RFC 3229 §10.4.1 *)
  | Multiple_choices  (** [300 Multiple Choices], RFC 9110 §15.4.1 *)
  | Moved_permanently  (** [301 Moved Permanently], RFC 9110 §15.4.2 *)
  | Found  (** [302 Found], RFC 9110 §15.4.3 *)
  | See_other  (** [303 See Other], RFC 9110 §15.4.4 *)
  | Not_modified  (** [304 Not Modified], RFC 9110 §15.4.5 *)
  | Use_proxy  (** [305 Use Proxy], RFC 9110 §15.4.6 (deprecated) *)
  | Temporary_redirect  (** [307 Temporary Redirect], RFC 9110 §15.4.8 *)
  | Permanent_redirect  (** [308 Permanent Redirect], RFC 9110 §15.4.9 *)
  | Bad_request  (** [400 Bad Request], RFC 9110 §15.5.1 *)
  | Unauthorized  (** [401 Unauthorized], RFC 9110 §15.5.2 *)
  | Payment_required  (** [402 Payment Required], RFC 9110 §15.5.3 *)
  | Forbidden  (** [403 Forbidden], RFC 9110 §15.5.4 *)
  | Not_found  (** [404 Not Found], RFC 9110 §15.5.5 *)
  | Method_not_allowed  (** [405 Method Not Allowed], RFC 9110 §15.5.6 *)
  | Not_acceptable  (** [406 Not Acceptable], RFC 9110 §15.5.7 *)
  | Proxy_authentication_required  (** [407 Proxy Authentication Required], RFC 9110 §15.5.8 *)
  | Request_timeout  (** [408 Request Timeout], RFC 9110 §15.5.9 *)
  | Conflict  (** [409 Conflict], RFC 9110 §15.5.10 *)
  | Gone  (** [410 Gone], RFC 9110 §15.5.11 *)
  | Length_required  (** [411 Length Required], RFC 9110 §15.5.12 *)
  | Precondition_failed  (** [412 Precondition Failed], RFC 9110 §15.5.13 *)
  | Content_too_large  (** [413 Content Too Large], RFC 9110 §15.5.14 *)
  | Uri_too_long  (** [414 URI Too Long], RFC 9110 §15.5.15 *)
  | Unsupported_media_type  (** [415 Unsupported Media Type], RFC 9110 §15.5.16 *)
  | Range_not_satisfiable  (** [416 Range Not Satisfiable], RFC 9110 §15.5.17 *)
  | Expectation_failed  (** [417 Expectation Failed], RFC 9110 §15.5.18 *)
  | Im_a_teapot  (** [418 I'm a teapot], RFC 2324 §2.3.2; reserved by RFC 9110 §15.5.19 *)
  | Misdirected_request  (** [421 Misdirected Request], RFC 9110 §15.5.20 *)
  | Unprocessable_content  (** [422 Unprocessable Content], RFC 9110 §15.5.21 *)
  | Locked  (** [423 Locked], RFC 4918 §11.3 *)
  | Failed_dependency  (** [424 Failed Dependency], RFC 4918 §11.4 *)
  | Too_early  (** [425 Too Early], RFC 8470 §5.2 *)
  | Upgrade_required  (** [426 Upgrade Required], RFC 9110 §15.5.22 *)
  | Precondition_required  (** [428 Precondition Required], RFC 6585 §3 *)
  | Too_many_requests  (** [429 Too Many Requests], RFC 6585 §4 *)
  | Request_header_fields_too_large  (** [431 Request Header Fields Too Large], RFC 6585 §5 *)
  | Unavailable_for_legal_reasons  (** [451 Unavailable For Legal Reasons], RFC 7725 §3 *)
  | Internal_server_error  (** [500 Internal Server Error], RFC 9110 §15.6.1 *)
  | Not_implemented  (** [501 Not Implemented], RFC 9110 §15.6.2 *)
  | Bad_gateway  (** [502 Bad Gateway], RFC 9110 §15.6.3 *)
  | Service_unavailable  (** [503 Service Unavailable], RFC 9110 §15.6.4 *)
  | Gateway_timeout  (** [504 Gateway Timeout], RFC 9110 §15.6.5 *)
  | Http_version_not_supported  (** [505 HTTP Version Not Supported], RFC 9110 §15.6.6 *)
  | Variant_also_negotiates  (** [506 Variant Also Negotiates], RFC 2295 §8.1 *)
  | Insufficient_storage  (** [507 Insufficient Storage], RFC 4918 §11.5 *)
  | Loop_detected  (** [508 Loop Detected], RFC 5842 §7.2 *)
  | Not_extended  (** [510 Not Extended], RFC 2774 §7 (obsoleted by IANA) *)
  | Network_authentication_required  (** [511 Network Authentication Required], RFC 6585 §6 *)

val code : t -> int
(** [code s] is the three-digit status code of [s], e.g. [code Not_found = 404]. *)

val reason : t -> string
(** [reason s] is the registered reason phrase of [s] (RFC 9110 §15 for the
    codes it defines, the defining RFC otherwise): ["OK"], ["Not Found"],
    ["Content Too Large"] (413), ["Range Not Satisfiable"] (416),
    ["Unprocessable Content"] (422), ["I'm a teapot"] (418). Reason phrases
    contain only SP, HTAB and visible ASCII, as RFC 9112 §4 requires. *)

val of_code : int -> t option
(** [of_code n] is [Some s] when [code s = n], [None] for unregistered
    codes. Allocates the [Some] (it is meant for configuration and tests,
    not per request): see {!of_code_or} for the allocation-free form. *)

val of_code_or : default:t -> int -> t
(** [of_code_or ~default n] is the status whose code is [n], or [default]
    when [n] is not a registered code. Does not allocate. *)

val index : t -> int
(** [index s] is the position of [s] in {!all}: [0 <= index s < count]. A
    dense key for tables indexed by status. *)

val count : int
(** [count] is the number of constructors ([Array.length all]). *)

val all : t array
(** [all] lists every status in ascending code order. *)

(** {1 Classes (RFC 9110 §15)} *)

val is_informational : t -> bool
(** [is_informational s] is [true] for 1xx codes. *)

val is_success : t -> bool
(** [is_success s] is [true] for 2xx codes. *)

val is_redirection : t -> bool
(** [is_redirection s] is [true] for 3xx codes. *)

val is_client_error : t -> bool
(** [is_client_error s] is [true] for 4xx codes. *)

val is_server_error : t -> bool
(** [is_server_error s] is [true] for 5xx codes. *)

val forbids_content : t -> bool
(** [forbids_content s] is [true] for 1xx, [No_content] (204) and
    [Not_modified] (304): responses that end with their header section, so
    a sender must not frame a body for them (RFC 9110 §6.4.1, RFC 9112
    §6.3). *)

(** {1 Status lines} *)

val line : Version.t -> t -> string
(** [line v s] is the complete status line for [s] in version [v],
    terminated by CRLF: [line Http_1_1 Ok = "HTTP/1.1 200 OK\r\n"]. The
    string is preallocated: [line] only reads a table.
    @raise Invalid_argument for [Http_2], which has no status line. *)
