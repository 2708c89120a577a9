(** HTTP/2 settings
    ({{:https://www.rfc-editor.org/rfc/rfc9113#section-6.5.2} RFC 9113 §6.5.2}):
    identifiers, the range each value must lie in, and a caller-owned record
    of one endpoint's current values.

    A SETTINGS entry is a 16-bit identifier and a 32-bit value. The six
    settings of RFC 9113, [SETTINGS_ENABLE_CONNECT_PROTOCOL] (RFC 8441 §3)
    and [SETTINGS_NO_RFC7540_PRIORITIES] (RFC 9218 §2.1) are constructors;
    every other identifier is {!Unknown}, which RFC 9113 §6.5.2 says
    "MUST [be] ignore[d]".

    Nothing here allocates except {!create}. *)

type id =
  | Header_table_size  (** [0x1] HPACK table the peer's decoder allows; default 4096 *)
  | Enable_push  (** [0x2] 0 or 1; default 1 *)
  | Max_concurrent_streams  (** [0x3] default unlimited *)
  | Initial_window_size  (** [0x4] at most 2{^31}-1; default 65535 *)
  | Max_frame_size  (** [0x5] in \[2{^14}, 2{^24}-1\]; default 16384 *)
  | Max_header_list_size  (** [0x6] advisory; default unlimited *)
  | Enable_connect_protocol  (** [0x8] RFC 8441: 0 or 1; default 0 *)
  | No_rfc7540_priorities  (** [0x9] RFC 9218: 0 or 1; default 0 *)
  | Unknown  (** any other identifier: to be ignored *)

val id_of_int : int -> id
(** [id_of_int n] is the setting whose identifier is [n], or [Unknown]. *)

val id_to_int : id -> int
(** [id_to_int id] is the identifier on the wire; [-1] for [Unknown],
    which has none. *)

val id_to_string : id -> string
(** [id_to_string id] is the RFC's name, ["SETTINGS_MAX_FRAME_SIZE"], …;
    ["UNKNOWN"] for [Unknown]. *)

val default_header_table_size : int  (** [4096] *)

val default_initial_window_size : int  (** [65535] *)

val default_max_frame_size : int  (** [16384] = 2{^14}, also the least allowed *)

val max_max_frame_size : int  (** [16777215] = 2{^24}-1, the most allowed *)

val max_window_size : int  (** [2147483647] = 2{^31}-1: windows and increments *)

val check : id -> int -> H2_error.t
(** [check id v] is [No_error] when [v] is an acceptable value for [id],
    else the code of the connection error RFC 9113 §6.5.2 demands:
    [Enable_push] not 0 or 1 → [Protocol_error];
    [Initial_window_size] above {!max_window_size} → [Flow_control_error];
    [Max_frame_size] outside [\[16384, 16777215\]] → [Protocol_error];
    [Enable_connect_protocol] or [No_rfc7540_priorities] not 0 or 1 →
    [Protocol_error] (RFC 8441 §3, RFC 9218 §2.1). Any 32-bit value is
    acceptable for the others and for [Unknown]. *)

(** {1 One endpoint's settings} *)

type t = {
  mutable header_table_size : int;
  mutable enable_push : bool;
  mutable max_concurrent_streams : int;  (** [max_int] when unlimited *)
  mutable initial_window_size : int;
  mutable max_frame_size : int;
  mutable max_header_list_size : int;  (** [max_int] when unlimited *)
  mutable enable_connect_protocol : bool;
  mutable no_rfc7540_priorities : bool;
}
(** The values in force for one side of a connection: the session keeps
    one record for the peer's settings and one for its own. *)

val create : unit -> t
(** [create ()] holds the initial values of RFC 9113 §6.5.2. Allocates. *)

val reset : t -> unit
(** [reset t] puts the initial values back. *)

val apply : t -> id -> int -> unit
(** [apply t id v] records a received entry, which {!check} has accepted
    (the frame reader checks every entry before it returns the frame).
    [Unknown] entries change nothing. Does not allocate. *)
