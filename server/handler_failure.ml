(* Error path only: allocating freely is fine here (see the .mli). *)

open Httpz

let max_target = 200

let escaped (b : Bigstring.t) ~off ~len =
  let out = Buffer.create (len + 16) in
  for i = off to off + len - 1 do
    let ch = Bigstring.unsafe_get b i in
    if ch <= ' ' || ch > '~' || ch = '\\' then Buffer.add_string out (Printf.sprintf "\\x%02X" (Char.code ch))
    else Buffer.add_char out ch
  done;
  Buffer.contents out

let address c =
  let open Slot in
  if c.peer_len > 0 then Bigstring.sub_string c.peer ~off:0 ~len:c.peer_len
  else if c.fd < 0 then "-"
  else
    match Unix.getpeername (Syscall.unix_of_fd c.fd) with
    | Unix.ADDR_INET (a, _) -> Unix.string_of_inet_addr a
    | Unix.ADDR_UNIX _ -> "unix"
    | exception _ -> "-"

let describe c =
  let open Slot in
  let req = Slot.req c in
  let m = Request.meth_span req and t = Request.target req in
  let valid s = Span.len s > 0 && Span.off s + Span.len s <= Bigstring.length c.rbuf in
  let meth = if valid m then escaped c.rbuf ~off:(Span.off m) ~len:(Span.len m) else "-" in
  let target =
    if not (valid t) then "-"
    else if Span.len t > max_target then escaped c.rbuf ~off:(Span.off t) ~len:max_target ^ "..."
    else escaped c.rbuf ~off:(Span.off t) ~len:(Span.len t)
  in
  Printf.sprintf "%s %s from %s" meth target (address c)

let backtrace bt =
  match Printexc.raw_backtrace_to_string bt with
  | "" -> ""
  | s ->
      String.split_on_char '\n' s
      |> List.filter (fun l -> l <> "")
      |> List.map (fun l -> "\n  " ^ l)
      |> String.concat ""

let is_loopback s =
  let prefix p = String.length s >= String.length p && String.sub s 0 (String.length p) = p in
  prefix "127." || s = "::1" || prefix "::ffff:127."

(* A handler that failed before answering in full did not answer: its
   cancel hooks run here, before the server's 500 completes the response
   (after which [Slot.next_gen] would drop them). *)
let log c e bt ~answered =
  if answered then
    match e with
    | Slot.Answered_twice -> Log.error "the handler answered twice (%s)" (describe c)
    | e -> Log.error "handler raised %s after answering (%s)%s" (Printexc.to_string e) (describe c) (backtrace bt)
  else begin
    Log.error "handler raised %s (%s)%s" (Printexc.to_string e) (describe c) (backtrace bt);
    Slot.run_cancels c
  end

let loopback c =
  let open Slot in
  c.fd >= 0
  &&
  match Unix.getpeername (Syscall.unix_of_fd c.fd) with
  | Unix.ADDR_INET (a, _) -> is_loopback (Unix.string_of_inet_addr a)
  | Unix.ADDR_UNIX _ -> false
  | exception _ -> false

let html_escape = Html.escape

let page e bt =
  let trace = Printexc.raw_backtrace_to_string bt in
  Printf.sprintf
    "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>500 Internal Server Error</title></head>\n\
     <body><h1>500 Internal Server Error</h1>\n<p>The handler raised (shown because the server runs with \
     dev_errors and you are on the loopback):</p>\n<pre>%s</pre>\n<pre>%s</pre>\n</body></html>"
    (html_escape (Printexc.to_string e))
    (if trace = "" then "(no backtrace recorded)" else html_escape trace)

let wants_page c = c.Slot.sh.Slot.dev_errors && loopback c

(* Through Ctx, which writes the head in the slot's protocol ([c.proto]):
   one call serves HTTP/1.1 and an HTTP/2 stream alike. Ctx copies a short
   page behind the head and sends a longer one from the string itself, so
   [out] need not grow for it. *)
let write_page c e bt =
  let page = page e bt in
  Slot.reset_response c;
  let cx = Ctx.of_conn c in
  Ctx.start cx Status.Internal_server_error;
  Ctx.header cx Header_name.Content_type "text/html; charset=utf-8";
  Ctx.header cx Header_name.Cache_control "no-store";
  Ctx.body_string cx page

(* As [log] for a handler that returned without answering: no answer,
   so its cancel hooks run before the server's 500. *)
let incomplete c =
  Log.error "handler returned without a complete response (%s)" (describe c);
  Slot.run_cancels c
