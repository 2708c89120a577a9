(** HTTP/2 error codes
    ({{:https://www.rfc-editor.org/rfc/rfc9113#section-7} RFC 9113 §7}).

    An error code is 32 bits on the wire (RST_STREAM, GOAWAY). The 14
    codes the RFC defines are constant constructors; a code outside them
    is kept as the raw [int] by whoever read it (see
    {!H2_frame.error_code_raw}), because RFC 9113 §7 says unknown codes
    "MUST NOT trigger any special behavior" and MAY be treated as
    [INTERNAL_ERROR]: {!of_int} does that.

    Nothing here allocates. *)

type t =
  | No_error  (** [0x0] graceful shutdown, or a stream ended without a problem *)
  | Protocol_error  (** [0x1] *)
  | Internal_error  (** [0x2] *)
  | Flow_control_error  (** [0x3] *)
  | Settings_timeout  (** [0x4] *)
  | Stream_closed  (** [0x5] *)
  | Frame_size_error  (** [0x6] *)
  | Refused_stream  (** [0x7] the stream was not processed: safe to retry *)
  | Cancel  (** [0x8] *)
  | Compression_error  (** [0x9] the HPACK context can no longer be kept *)
  | Connect_error  (** [0xa] *)
  | Enhance_your_calm  (** [0xb] *)
  | Inadequate_security  (** [0xc] *)
  | Http_1_1_required  (** [0xd] *)

val to_int : t -> int
(** [to_int e] is the wire value of [e]. *)

val of_int : int -> t
(** [of_int n] is the code whose wire value is [n]; any other value is
    [Internal_error], as RFC 9113 §7 permits for unknown codes. *)

val is_known : int -> bool
(** [is_known n] is [true] iff [n] is one of the 14 defined wire values. *)

val to_string : t -> string
(** [to_string e] is the RFC's name: ["PROTOCOL_ERROR"], ["NO_ERROR"], … *)
