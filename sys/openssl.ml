type ctx = int
type ssl = int

let none = 0

let want_read = -1
let want_write = -2
let failed = -3

external init_tickets_raw : int -> int = "httpz_tls_init_tickets"
external error : unit -> string = "httpz_tls_error"
external ctx_create_raw : string -> string -> bool -> int = "httpz_tls_ctx_create"
external ctx_free : ctx -> unit = "httpz_tls_ctx_free"
external create : (ctx[@untagged]) -> (int[@untagged]) -> (ssl[@untagged]) = "httpz_tls_new_byte" "httpz_tls_new" [@@noalloc]
external free : (ssl[@untagged]) -> (int[@untagged]) = "httpz_tls_free_byte" "httpz_tls_free" [@@noalloc]

external handshake : (ssl[@untagged]) -> (int[@untagged]) = "httpz_tls_handshake_byte" "httpz_tls_handshake"
  [@@noalloc]

external plain_http : unit -> (int[@untagged]) = "httpz_tls_plain_http_byte" "httpz_tls_plain_http"
  [@@noalloc]

external read :
  (ssl[@untagged]) -> Httpz.Bigstring.t -> (int[@untagged]) -> (int[@untagged]) -> (int[@untagged])
  = "httpz_tls_read_byte" "httpz_tls_read"
  [@@noalloc]

external write :
  (ssl[@untagged]) -> Httpz.Bigstring.t -> (int[@untagged]) -> (int[@untagged]) -> (int[@untagged])
  = "httpz_tls_write_byte" "httpz_tls_write"
  [@@noalloc]

external write_string :
  (ssl[@untagged]) -> string -> (int[@untagged]) -> (int[@untagged]) -> (int[@untagged])
  = "httpz_tls_write_string_byte" "httpz_tls_write_string"
  [@@noalloc]

external set_alpn_h2 : bool -> unit = "httpz_tls_set_alpn_h2"

external alpn_h2 : (ssl[@untagged]) -> (int[@untagged]) = "httpz_tls_alpn_h2_byte" "httpz_tls_alpn_h2"
  [@@noalloc]

external pending : (ssl[@untagged]) -> (int[@untagged]) = "httpz_tls_pending_byte" "httpz_tls_pending"
  [@@noalloc]

external version : (ssl[@untagged]) -> (int[@untagged]) = "httpz_tls_version_byte" "httpz_tls_version"
  [@@noalloc]

external close_notify : (ssl[@untagged]) -> (int[@untagged])
  = "httpz_tls_close_notify_byte" "httpz_tls_close_notify"
  [@@noalloc]

external set_more : (ssl[@untagged]) -> (int[@untagged]) -> (int[@untagged])
  = "httpz_tls_set_more_byte" "httpz_tls_set_more"
  [@@noalloc]

external held : (ssl[@untagged]) -> (int[@untagged]) = "httpz_tls_held_byte" "httpz_tls_held"
  [@@noalloc]

external flush : (ssl[@untagged]) -> (int[@untagged]) -> (int[@untagged])
  = "httpz_tls_flush_byte" "httpz_tls_flush"
  [@@noalloc]

external ktls_send : (ssl[@untagged]) -> (int[@untagged]) = "httpz_tls_ktls_send_byte" "httpz_tls_ktls_send"
  [@@noalloc]

external sendfile :
  (ssl[@untagged]) -> (int[@untagged]) -> (int[@untagged]) -> (int[@untagged]) -> (int[@untagged])
  = "httpz_tls_sendfile_byte" "httpz_tls_sendfile"
  [@@noalloc]

external describe : ssl -> string = "httpz_tls_describe"

type sni = int

external sni_create_raw : unit -> sni = "httpz_tls_sni_create"
external sni_add_raw : sni -> string -> ctx -> int = "httpz_tls_sni_add"
external sni_attach : ctx -> sni -> unit = "httpz_tls_sni_attach"
external sni_free : sni -> unit = "httpz_tls_sni_free"

let sni_create () = let t = sni_create_raw () in if t = 0 then Error (error ()) else Ok t
let sni_add t name ctx = if sni_add_raw t name ctx = 0 then Ok () else Error (error ())

let init_tickets ~period = if init_tickets_raw period = 0 then Ok () else Error (error ())

let ctx_create ~cert ~key ~ktls =
  let c = ctx_create_raw cert key ktls in
  if c = 0 then Error (error ()) else Ok c

let kernel_tls_available () =
  match open_in "/proc/sys/net/ipv4/tcp_available_ulp" with
  | exception Sys_error _ -> false
  | ic ->
      let line = try input_line ic with End_of_file -> "" in
      close_in ic;
      List.mem "tls" (String.split_on_char ' ' (String.trim line))
