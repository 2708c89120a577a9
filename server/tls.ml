open Slot

type server = {
  cert_file : string;
  key_file : string;
  sni : (string list * string * string) list;
  ktls : bool;
  mutable ctx : Openssl.ctx;
  mutable named : Openssl.ctx list;
  mutable table : Openssl.sni option;
}

let read_file path =
  match open_in_bin path with
  | exception Sys_error e -> Error e
  | ic ->
      Fun.protect
        ~finally:(fun () -> close_in_noerr ic)
        (fun () ->
          match really_input_string ic (in_channel_length ic) with
          | s -> Ok s
          | exception (Sys_error e | Failure e) -> Error (path ^ ": " ^ e)
          | exception End_of_file -> Error (path ^ ": changed while read"))

let context ~cert_file ~key_file ~ktls =
  match (read_file cert_file, read_file key_file) with
  | Error e, _ | _, Error e -> Error e
  | Ok cert, Ok key -> (
      match Openssl.ctx_create ~cert ~key ~ktls with
      | Ok ctx -> Ok ctx
      | Error e -> Error (Printf.sprintf "%s, %s: %s" cert_file key_file e))

(* The default context and, with SNI certificates, theirs and the table
   that picks them; on an error, nothing is left allocated. *)
let contexts ~cert_file ~key_file ~sni ~ktls =
  match context ~cert_file ~key_file ~ktls with
  | Error e -> Error e
  | Ok ctx when sni = [] -> Ok (ctx, [], None)
  | Ok ctx -> (
      let made = ref [] in
      let undo table =
        List.iter Openssl.ctx_free (ctx :: !made);
        Option.iter Openssl.sni_free table
      in
      match Openssl.sni_create () with
      | Error e -> undo None; Error e
      | Ok table ->
          let rec add = function
            | [] -> Ok ()
            | (names, cert_file, key_file) :: rest -> (
                match context ~cert_file ~key_file ~ktls with
                | Error e -> Error e
                | Ok c -> (
                    made := c :: !made;
                    let rec each = function
                      | [] -> add rest
                      | n :: ns -> ( match Openssl.sni_add table n c with Ok () -> each ns | Error e -> Error e)
                    in
                    each names))
          in
          match add sni with
          | Error e -> undo (Some table); Error e
          | Ok () ->
              Openssl.sni_attach ctx table;
              Ok (ctx, !made, Some table))

let load ?(sni = []) ~cert_file ~key_file () =
  let ktls = Openssl.kernel_tls_available () in
  match contexts ~cert_file ~key_file ~sni ~ktls with
  | Ok (ctx, named, table) -> Ok { cert_file; key_file; sni; ktls; ctx; named; table }
  | Error e -> Error e

let reload s =
  match contexts ~cert_file:s.cert_file ~key_file:s.key_file ~sni:s.sni ~ktls:s.ktls with
  | Error e -> Error e
  | Ok (ctx, named, table) ->
      let old = s.ctx :: s.named in
      s.ctx <- ctx;
      s.named <- named;
      s.table <- table;
      (* Connections made from them hold their own reference. The old SNI
         table is kept: a connection accepted before, whose ClientHello
         has not arrived yet, still looks names up in it. *)
      List.iter Openssl.ctx_free old;
      Ok ()

let free s =
  List.iter Openssl.ctx_free (s.ctx :: s.named);
  Option.iter Openssl.sni_free s.table

let accept s c =
  let ssl = Openssl.create s.ctx c.fd in
  Slot.set_tls c ssl;
  ssl <> Openssl.none

type step = Done | Want_read | Want_write | Failed

(* As nginx does, a client that spoke plain HTTP to the TLS port is told so
   instead of seeing the connection close without a word. *)
let plain_http_body =
  "<!doctype html>\n<title>400 Bad Request</title>\n<h1>400 Bad Request</h1>\n\
   <p>The plain HTTP request was sent to an HTTPS port.</p>\n"

let plain_http_reply =
  Httpz.Bigstring.of_string
    (Printf.sprintf
       "HTTP/1.1 400 Bad Request\r\nContent-Type: text/html\r\nContent-Length: %d\r\n\
        Connection: close\r\n\r\n%s"
       (String.length plain_http_body) plain_http_body)

(* What the client sent after the bytes OpenSSL looked at, read and
   dropped: closing a socket with unread bytes would answer RST, which can
   destroy the reply before the client reads it. *)
let drain = Httpz.Bigstring.create 4096
let drain_max = 64 * 1024

(* Straight to the socket, not through OpenSSL (no TLS was agreed on);
   best effort, the connection is closed next. *)
let answer_plain_http fd =
  let len = Httpz.Bigstring.length plain_http_reply in
  if Syscall.send fd plain_http_reply 0 len 0 = len then begin
    ignore (Syscall.shutdown_write fd : int);
    let left = ref drain_max in
    while !left > 0 do
      let n = Syscall.read fd drain 0 (Httpz.Bigstring.length drain) in
      if n > 0 then left := !left - n else left := 0
    done
  end

let handshake c =
  let r = Openssl.handshake c.ssl in
  if r = 1 then begin
    Slot.tls_established c ~h2:(Openssl.alpn_h2 c.ssl <> 0);
    Done
  end
  else if r = Openssl.want_read then Want_read
  else if r = Openssl.want_write then Want_write
  else begin
    let plain = Openssl.plain_http () <> 0 in
    if plain then answer_plain_http c.fd;
    (* Clients that leave, scanners, old protocol versions: routine, so
       at debug level only, and formatted only then. *)
    if Log.enabled Log.Debug then
      Log.debug "TLS handshake failed: %s"
        (if plain then "a plain HTTP request on the TLS port" else Openssl.error ());
    Failed
  end

(* A read that needs to write (a TLS 1.3 key update answered into a full
   socket) is treated as a failure: renegotiation is off, so nothing else
   can ask for it, and waiting for writability on a read would need a
   state of its own for a case that does not happen. *)
let read c =
  let r = Openssl.read c.ssl c.in_buf c.in_off c.in_len in
  if r >= 0 then r else if r = Openssl.want_read then - Syscall.eagain else - Syscall.econnreset

(* One TLS record carries at most this much plaintext. *)
let record = 16384

(* An SSL_write's result in the walk's terms. A write that needs a read
   (renegotiation is off; a key update into a full socket) is a failure,
   as for {!read}: waiting for writability would spin. *)
let result r =
  if r > 0 then r
  else if r = 0 then 0
  else if r = Openssl.want_write then Output.would_block
  else Output.gone

(* One span per SSL_write: a small body is first moved behind its head in
   [out] (there is room: [out] holds [write_buffer + reserve] bytes), so
   both leave in one record; a larger one follows the head. A file body is
   read into [out] and encrypted from there, unless kTLS sends it: behind
   the head when both fit in a record (an HTTP/2 DATA frame's payload
   always does: the session left room for it), else once the head left,
   a slice at a time. *)
include Output.Walk (struct
  (* As in Plain: a budget per readiness. *)
  let budget = 1 lsl 20
  let holds_last = false

  (* HTTP/2 says when more records follow at once (Slot.more_output). *)
  let[@inline] announce c = ignore (Openssl.set_more c.ssl (if c.more_output then 1 else 0) : int)

  (* A file that ends before the length promised for it (it shrank, or a
     read error): the response cannot be completed. *)
  let read_in c len =
    Syscall.pread c.file_fd c.out c.out_len len c.ext_off = len
    && begin
      Output.file_absorbed c len;
      true
    end

  let head c ~more:_ =
    Output.absorb_body c ~max:record;
    let file = Output.file_absorbable c ~max:record in
    if file > 0 && Openssl.ktls_send c.ssl = 0 && not (read_in c file) then begin
      Log.error "TLS: a file body could not be read (closing the connection)";
      Output.gone
    end
    else begin
      announce c;
      result (Openssl.write c.ssl c.out c.out_sent (c.out_len - c.out_sent))
    end

  let head_string c ~len ~more =
    if c.out_len > c.out_sent then head c ~more
    else (announce c; result (Openssl.write_string c.ssl c.ext_str c.ext_off len))

  let head_bigstring c ~len ~more =
    if c.out_len > c.out_sent then head c ~more
    else (announce c; result (Openssl.write c.ssl c.ext_bs c.ext_off len))

  let file c ~len =
    if Openssl.ktls_send c.ssl <> 0 then result (Openssl.sendfile c.ssl c.file_fd c.ext_off len)
    else begin
      let n = Syscall.pread c.file_fd c.out 0 (Output.file_slice c) c.ext_off in
      if n > 0 then begin
        Output.file_sliced c n;
        0 (* the slice is the head now: the walk writes it next *)
      end
      else Output.gone
    end

  (* Not used by the session over TLS (its frames and payloads are
     copied into records); written for the walk's completeness: the
     gathered output one span per record. *)
  let gathered c ~more:_ =
    let g = c.gather in
    let i = g.first in
    let before = Gather.pos g i - c.out_sent in
    announce c;
    if before > 0 then result (Openssl.write c.ssl c.out c.out_sent before)
    else result (Openssl.write c.ssl g.bufs.(i) (Gather.off g i) (Gather.len g i))

  let unsent c = Openssl.held c.ssl
  let send_unsent c = result (Openssl.flush c.ssl 0)
end)

let buffered c = Openssl.pending c.ssl <> 0

let close_notify c = if c.tls <> Tls_handshake then ignore (Openssl.close_notify c.ssl : int)

let release c =
  ignore (Openssl.free c.ssl : int);
  Slot.set_tls c Openssl.none
