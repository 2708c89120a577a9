(** Field names httpz knows by heart (RFC 9110 §5.1, and the IANA field name
    registry's commonly sent members).

    The parser tags every header with its [t]; [Other] means "look at the
    name span". Tags are constant constructors: storing them in the parse
    state and matching on them costs nothing. Field names are
    case-insensitive, so ["content-length"] and ["Content-Length"] both map to
    [Content_length]. *)

type t =
  | Accept  (** [Accept] *)
  | Accept_charset  (** [Accept-Charset] *)
  | Accept_encoding  (** [Accept-Encoding] *)
  | Accept_language  (** [Accept-Language] *)
  | Accept_ranges  (** [Accept-Ranges] *)
  | Access_control_allow_origin  (** [Access-Control-Allow-Origin] *)
  | Age  (** [Age] *)
  | Allow  (** [Allow] *)
  | Authorization  (** [Authorization] *)
  | Cache_control  (** [Cache-Control] *)
  | Connection  (** [Connection] *)
  | Content_disposition  (** [Content-Disposition] *)
  | Content_encoding  (** [Content-Encoding] *)
  | Content_language  (** [Content-Language] *)
  | Content_length  (** [Content-Length] *)
  | Content_location  (** [Content-Location] *)
  | Content_range  (** [Content-Range] *)
  | Content_security_policy  (** [Content-Security-Policy] *)
  | Content_type  (** [Content-Type] *)
  | Cookie  (** [Cookie] *)
  | Date  (** [Date] *)
  | Dnt  (** [DNT] *)
  | Etag  (** [ETag] *)
  | Expect  (** [Expect] *)
  | Expires  (** [Expires] *)
  | Forwarded  (** [Forwarded] *)
  | From  (** [From] *)
  | Host  (** [Host] *)
  | If_match  (** [If-Match] *)
  | If_modified_since  (** [If-Modified-Since] *)
  | If_none_match  (** [If-None-Match] *)
  | If_range  (** [If-Range] *)
  | If_unmodified_since  (** [If-Unmodified-Since] *)
  | Keep_alive  (** [Keep-Alive] *)
  | Last_modified  (** [Last-Modified] *)
  | Link  (** [Link] *)
  | Location  (** [Location] *)
  | Max_forwards  (** [Max-Forwards] *)
  | Origin  (** [Origin] *)
  | Pragma  (** [Pragma] *)
  | Proxy_authenticate  (** [Proxy-Authenticate] *)
  | Proxy_authorization  (** [Proxy-Authorization] *)
  | Range  (** [Range] *)
  | Referer  (** [Referer] *)
  | Retry_after  (** [Retry-After] *)
  | Sec_fetch_dest  (** [Sec-Fetch-Dest] *)
  | Sec_fetch_mode  (** [Sec-Fetch-Mode] *)
  | Sec_fetch_site  (** [Sec-Fetch-Site] *)
  | Sec_fetch_user  (** [Sec-Fetch-User] *)
  | Server  (** [Server] *)
  | Set_cookie  (** [Set-Cookie] *)
  | Strict_transport_security  (** [Strict-Transport-Security] *)
  | Te  (** [TE] *)
  | Trailer  (** [Trailer] *)
  | Transfer_encoding  (** [Transfer-Encoding] *)
  | Upgrade  (** [Upgrade] *)
  | Upgrade_insecure_requests  (** [Upgrade-Insecure-Requests] *)
  | User_agent  (** [User-Agent] *)
  | Vary  (** [Vary] *)
  | Via  (** [Via] *)
  | Www_authenticate  (** [WWW-Authenticate] *)
  | X_content_type_options  (** [X-Content-Type-Options] *)
  | X_forwarded_for  (** [X-Forwarded-For] *)
  | X_forwarded_host  (** [X-Forwarded-Host] *)
  | X_forwarded_proto  (** [X-Forwarded-Proto] *)
  | X_frame_options  (** [X-Frame-Options] *)
  | X_request_id  (** [X-Request-ID] *)
  | X_requested_with  (** [X-Requested-With] *)
  | Other  (** any other name: read the header's name span *)

val to_string : t -> string
(** [to_string n] is the canonical spelling used when httpz writes [n]
    (["Content-Length"], ["ETag"], ["WWW-Authenticate"]); ["Other"] for
    [Other]. *)

val of_buffer : Bigstring.t -> off:int -> len:int -> t
(** [of_buffer b ~off ~len] is the known name spelled by those bytes, in any
    ASCII case, or [Other]. Does not allocate. *)

val of_token : Bigstring.t -> off:int -> len:int -> t
(** [of_token b ~off ~len] is {!of_buffer} for bytes already known to lie
    in 0x21-0x7E (the parser's name scan guarantees it): a result other than
    [Other] then also proves the bytes a token. May read up to 7 bytes past
    [off + len] inside [b], without letting them affect the answer. *)

val of_string : string -> t
(** [of_string s] is {!of_buffer} on a copy of [s]. Allocates. *)

val all : t array
(** [all] lists every known name (not [Other]), for tests and tables. *)
