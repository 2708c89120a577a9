(* The handler lifecycle is one (Exchange) for HTTP/1.1 and HTTP/2: each
   case runs the same handler over both protocols and checks the client's
   view and the server's own account of it (Ctx.on_cancel, and
   Ctx.on_complete: status, completed, body bytes sent, which the access
   log line shows too), in memory through Testing; then, over real
   sockets on both backends, what Testing cannot do: a client's
   RST_STREAM against an HTTP/1.1 client that closes, and the
   development 500 page, which only a client on the loopback gets. *)

open Httpz
open Httpz_server
module T = Testing

(* {1 What the server says of each exchange} *)

let events : string list ref = ref []
let note s = events := s :: !events
let take_events () = let l = List.rev !events in events := []; l

let observe c =
  Ctx.on_cancel c (fun () -> note "cancel");
  Ctx.on_complete c (fun c ->
      note (Printf.sprintf "complete %d %b %d" (Ctx.status_code c) (Ctx.completed c) (Ctx.body_bytes_sent c)))

let piece = String.make 1000 'p'

(* A download of 1 MB that never ends: a piece, a flush, a pause. *)
let rec pieces c =
  Ctx.chunk c piece;
  Ctx.flush c (fun c -> Ctx.sleep c 1.0 pieces)

let head_hook = fun c -> Ctx.header_s c "X-Hooked" "yes"

let handler c =
  let target = Request.target (Ctx.request c) in
  let is s = Span.equal (Ctx.buffer c) target s in
  observe c;
  if is "/twice" then begin
    Ctx.start c Status.Ok;
    Ctx.body_string c "first";
    Ctx.start c Status.Created;
    Ctx.body_string c "second"
  end
  else if is "/twice-later" then begin
    Ctx.sleep c 0.5 (fun c ->
        Ctx.start c Status.Ok;
        Ctx.body_string c "first";
        Ctx.start c Status.Created)
  end
  else if is "/raise" then failwith "raised on purpose"
  else if is "/raise-later" then Ctx.sleep c 0.5 (fun _ -> failwith "raised later")
  else if is "/noanswer" then ()
  else if is "/hooked-raise" then begin
    Ctx.on_head c head_hook;
    failwith "raised on purpose"
  end
  else if is "/raise-after-flush" then begin
    Ctx.start c Status.Ok;
    Ctx.fixed_start c ~length:10_000;
    Ctx.chunk c piece;
    Ctx.flush c (fun _ -> failwith "raised after a piece left")
  end
  else if is "/download" then begin
    Ctx.start c Status.Ok;
    Ctx.fixed_start c ~length:1_000_000;
    pieces c
  end
  else if is "/head-then-hang" then begin
    Ctx.start c Status.Ok;
    Ctx.header c Header_name.Content_type "text/plain";
    ignore (Ctx.suspend c (fun c -> Ctx.body_string c "late") : unit -> unit)
  end
  else if is "/unflushed" then begin
    (* 17 MiB streamed without Ctx.flush: over the bound on both. *)
    Ctx.start c Status.Ok;
    Ctx.chunked_start c;
    let block = String.make 65536 'u' in
    for _ = 1 to 17 * 16 do Ctx.chunk c block done;
    Ctx.chunked_end c
  end
  else if is "/hang" then ignore (Ctx.suspend c (fun c -> Ctx.body_string c "late") : unit -> unit)
  else if is "/limited" then
    Ctx.read_body c ~limit:10 (fun c ->
        if Ctx.body_ended c then begin Ctx.start c Status.Ok; Ctx.body_string c "read" end
        else Ctx.read_body c ~limit:10 (fun c -> Ctx.start c Status.Ok; Ctx.body_string c "more"))
  else begin
    Ctx.start c Status.Ok;
    Ctx.body_string c "ok"
  end

let app = lazy (T.create ~handler_timeout:5. handler)

let both = [ ("HTTP/1.1", T.Http1); ("HTTP/2", T.Http2) ]

let request ?meth ?headers ?body protocol target =
  ignore (take_events ());
  let r = T.request ~protocol ?meth ?headers ?body ~limit:30. (Lazy.force app) target in
  (r, take_events ())

let strings = Alcotest.(list string)

(* {1 Cases} *)

(* Ctx.start after a complete answer raises Answered_twice: the first
   answer goes out whole, and only the log says so; at once or in a
   continuation. *)
let twice protocol =
  List.iter
    (fun target ->
      let r, ev = request protocol target in
      T.check_status 200 r;
      T.check_body "first" r;
      Alcotest.(check bool) "complete" true r.complete;
      Alcotest.check strings (target ^ ": no cancel, one completion") [ "complete 200 true 5" ] ev)
    [ "/twice"; "/twice-later" ]

(* A handler that raises (at once, in a continuation) or returns without
   answering: a 500 for the client, its cancel hooks run, then the
   exchange's completion with the 500. *)
let failed protocol =
  List.iter
    (fun target ->
      let r, ev = request protocol target in
      T.check_status 500 r;
      T.check_body "Internal Server Error\n" r;
      Alcotest.check strings (target ^ ": cancel, then the 500 completes")
        [ "cancel"; "complete 500 true 22" ] ev)
    [ "/raise"; "/raise-later"; "/noanswer" ]

(* The server's own 500 goes through Ctx on both protocols: the
   request's head hooks (Ctx.on_head) add their fields to it. *)
let hooked protocol =
  let r, _ = request protocol "/hooked-raise" in
  T.check_status 500 r;
  Alcotest.(check (option string)) "the head hook's field" (Some "yes") (T.header r "x-hooked")

(* HEAD to a handler that raises: a 500 head, no body bytes after it. *)
let head_failed protocol =
  (match protocol with
   | T.Http1 ->
       let out = T.raw (Lazy.force app) "HEAD /raise HTTP/1.1\r\nHost: t\r\n\r\n" in
       let eoh = Httpz_test_support.find_sub out "\r\n\r\n" in
       Alcotest.(check bool) ("a 500: " ^ out) true (Httpz_test_support.find_sub out "HTTP/1.1 500" = 0);
       Alcotest.(check int) ("nothing after the head: " ^ String.escaped out) (String.length out) (eoh + 4)
   | T.Http2 ->
       let r, _ = request ~meth:"HEAD" protocol "/raise" in
       T.check_status 500 r;
       T.check_body "" r);
  ignore (take_events ())

(* A piece of the body left, then the handler raised: the response cannot
   be replaced; the client sees it cut (HTTP/1.1: the connection closes;
   HTTP/2: the stream is reset), and the server counts it cut, with the
   status and the bytes that left. *)
let raise_after_flush protocol =
  let r, ev = request protocol "/raise-after-flush" in
  T.check_status 200 r;
  T.check_body piece r;
  Alcotest.(check bool) "cut" false r.complete;
  Alcotest.check strings "cancel, then completion: cut, 200, one piece" [ "cancel"; "complete 200 false 1000" ] ev

(* A download the client leaves midway (Testing's limit closes the
   connection): cancel hooks, then a completion that says cut, the status
   and the bytes the client got. *)
let download_cut protocol =
  let r, ev = request protocol "/download" in
  T.check_status 200 r;
  Alcotest.(check bool) "cut" false r.complete;
  let got = String.length r.body in
  Alcotest.(check bool) "some pieces came" true (got >= 10_000);
  Alcotest.check strings "cancel, then completion: cut, 200, what the client got"
    [ "cancel"; Printf.sprintf "complete 200 false %d" got ] ev

(* The handler timeout, for a handler that never answers, and for one
   that started a head (none of it left) and then waits: the request ends
   for the application (cancel hooks, then a completion with no status,
   not complete), and the client gets a 503. *)
let timeout protocol =
  List.iter
    (fun (target, started) ->
      let r, ev = request protocol target in
      T.check_status 503 r;
      Alcotest.(check bool) "complete" true r.complete;
      Alcotest.check strings (target ^ ": cancel, then the end of the request")
        [ "cancel"; Printf.sprintf "complete %d false 0" started ] ev)
    [ ("/hang", 0); ("/head-then-hang", 200) ]

(* A body over the handler's read_body limit: 413 on both. *)
let limit protocol =
  let r, ev = request ~meth:"POST" ~body:(String.make 100 'b') protocol "/limited" in
  T.check_status 413 r;
  Alcotest.check strings "cancel, then the 413 completes" [ "cancel"; "complete 413 true 18" ] ev

(* A handler that streams past the unflushed bound (16 MiB) without
   Ctx.flush fails on both protocols: HTTP/1.1 still replaces it with a
   500 (nothing left yet); HTTP/2 queued its HEADERS at chunked_start, so
   the stream is reset. Either way the client never gets the 17 MiB, and
   the exchange never holds them. *)
let unflushed protocol =
  let r, _ = request protocol "/unflushed" in
  Alcotest.(check bool) "not the 17 MiB" true (String.length r.body < 16 * 1024 * 1024);
  match protocol with
  | T.Http1 -> T.check_status 500 r
  | T.Http2 -> Alcotest.(check bool) "reset, not complete" false r.complete

(* A refused head (too many fields: 431) follows the HEAD rule of its own
   request, not of the request the pooled exchange served last (HTTP/2
   exchanges are reused across connections). *)
let refused_head_rule protocol =
  let many = List.init 150 (fun i -> (Printf.sprintf "x-f%d" i, "v")) in
  ignore (request ~meth:"HEAD" protocol "/");
  let r, _ = request ~headers:many protocol "/" in
  T.check_status 431 r;
  Alcotest.(check bool) "GET after a HEAD: the 431 has its body" true (String.length r.body > 0);
  ignore (request protocol "/");
  let r, _ = request ~meth:"HEAD" ~headers:many protocol "/" in
  T.check_status 431 r;
  T.check_body "" r

let cases =
  [ ("a refused head: its own HEAD rule", refused_head_rule);
 ("streamed past the unflushed bound: refused", unflushed);
 ("answered twice: the first answer stands", twice);
    ("a failed handler: 500, cancel hooks, completion", failed);
    ("the server's 500 runs the head hooks", hooked);
    ("HEAD to a failed handler: no body", head_failed);
    ("raised after a piece left: cut, counted", raise_after_flush);
    ("a download cut by the client: counted", download_cut);
    ("handler timeout: 503 even after a head was started", timeout);
    ("read_body over its limit: 413", limit) ]

let memory =
  List.concat_map
    (fun (name, f) ->
      List.map (fun (v, p) -> Alcotest.test_case (Printf.sprintf "%s (%s)" name v) `Quick (fun () -> f p)) both)
    cases

(* {1 Over real sockets} A server child per case (one worker: its state
   lives there), asked for its account through /state. *)

module L = Httpz_live
module K = H2conn_client

let backend = ref Server.Uring
let cancelled = ref 0
let last = ref "none"

let live c =
  let target = Request.target (Ctx.request c) in
  let is s = Span.equal (Ctx.buffer c) target s in
  if is "/download" then begin
    (* The order the two hooks ran in is part of the account. *)
    Ctx.on_cancel c (fun () -> incr cancelled; last := "cancelled");
    Ctx.on_complete c (fun c ->
        last := Printf.sprintf "%s, then complete %d %b %d" !last (Ctx.status_code c) (Ctx.completed c)
            (Ctx.body_bytes_sent c));
    Ctx.start c Status.Ok;
    Ctx.fixed_start c ~length:100_000_000;
    let rec go c =
      Ctx.chunk c piece;
      Ctx.flush c (fun c -> Ctx.sleep c 0.01 go)
    in
    go c
  end
  else if is "/boom" then failwith "<b>boom</b>"
  else begin
    let text = Printf.sprintf "%d; %s" !cancelled !last in
    last := "none";
    Ctx.start c Status.Ok;
    Ctx.body_string c text
  end

let config () = { Server.default_config with workers = 1; io = !backend; http2 = true; dev_errors = true }
let find = Httpz_test_support.find_sub

let state port =
  L.with_client port (fun cl ->
      L.send cl (L.get "/state");
      (L.read_response cl).body)

let wait_for cl needle =
  while find (L.pending cl) needle < 0 do
    if not (L.recv_more cl) then Alcotest.failf "the stream ended before %S" needle
  done

let h2_connect port =
  let cl = L.connect port in
  L.send cl (H2_frame.preface ^ K.settings []);
  cl

(* The account of a download the client left: "1; cancelled, then
   complete 200 false N", N the body bytes that left, at least what the
   client read. *)
let check_account what port ~got ~n =
  Unix.sleepf 0.3;
  let s = state port in
  let prefix = Printf.sprintf "%d; cancelled, then complete 200 false " n in
  Alcotest.(check bool) (what ^ ": " ^ s) true (find s prefix = 0);
  let bytes = int_of_string (String.sub s (String.length prefix) (String.length s - String.length prefix)) in
  Alcotest.(check bool) (Printf.sprintf "%s: %d bytes counted, %d read" what bytes got) true
    (bytes >= got && bytes < 100_000_000)

(* The client of a download leaves midway: over HTTP/1.1 it closes the
   connection, over HTTP/2 it resets the stream (RST_STREAM CANCEL) and
   goes on with the connection. Either way the handler's cancel hooks run,
   then its completion: cut, status 200, the bytes that left. *)
let client_leaves () =
  L.with_server ~config:(config ()) live (fun s ->
      let got =
        L.with_client s.port (fun cl ->
            L.send cl (L.get "/download");
            while String.length (L.pending cl) < 20_000 do ignore (L.recv_more cl : bool) done;
            String.length (L.pending cl) - (find (L.pending cl) "\r\n\r\n" + 4))
      in
      check_account "HTTP/1.1, connection closed" s.port ~got ~n:1;
      let cl = h2_connect s.port in
      L.send cl (K.request 1 (K.get ~path:"/download" ()));
      while String.length (L.pending cl) < 20_000 do ignore (L.recv_more cl : bool) done;
      L.send cl (K.rst 1 H2_error.Cancel);
      check_account "HTTP/2, stream reset" s.port ~got:10_000 ~n:2;
      (* The connection goes on. *)
      L.send cl (K.request 3 (K.get ~path:"/state" ()));
      wait_for cl "2; none";
      L.close cl)

(* The development page (dev_errors, a client on the loopback): the same
   page over both protocols, HTML, not to be stored. *)
let dev_page () =
  L.with_server ~config:(config ()) live (fun s ->
      L.with_client s.port (fun cl ->
          L.send cl (L.get "/boom");
          let r = L.read_response cl in
          Alcotest.(check int) "HTTP/1.1: 500" 500 r.status;
          Alcotest.(check (option string)) "HTTP/1.1: HTML" (Some "text/html; charset=utf-8") (L.header r "content-type");
          Alcotest.(check (option string)) "HTTP/1.1: not stored" (Some "no-store") (L.header r "cache-control");
          Alcotest.(check bool) "HTTP/1.1: the exception, escaped" true (find r.body "&lt;b&gt;boom" > 0));
      let cl = h2_connect s.port in
      L.send cl (K.request 1 (K.get ~path:"/boom" ()));
      wait_for cl "</html>";
      Alcotest.(check bool) "HTTP/2: the exception, escaped" true (find (L.pending cl) "&lt;b&gt;boom" > 0);
      L.close cl)

let sockets name io =
  ( name,
    List.map
      (fun (n, f) -> Alcotest.test_case n `Quick (fun () -> backend := io; f ()))
      [ ("the client leaves a download: HTTP/1.1 close, HTTP/2 reset", client_leaves);
        ("the development page over both", dev_page) ] )

(* {1 Allocation} The decisions of the lifecycle, one per step, on an
   HTTP/1.1 slot in memory: none allocates (the protocols' whole paths
   are measured in test/server/h1, test/server/h2server and test/server/loop). *)

let alloc_slot () =
  let sh =
    Slot.create_shared ~server_name:"t" ~read_buffer:4096 ~write_buffer:4096 ~max_body:(1 lsl 20)
      ~header_ms:1000 ~idle_ms:2000 ~body_ms:1000 ~write_ms:1000 ~handler_ms:3000 ~headers:""
      ~listener_headers:[| "" |] ~keep:4
  in
  let c = Slot.create sh ~slot:0 ~peer:false in
  ignore (H1.opened c ~fd:(-1) ~listener:0 ~peer_len:0 : Conn_action.t);
  c

let zero_alloc =
  let c = alloc_slot () in
  let set resp wait body () =
    c.Slot.resp <- resp;
    c.Slot.wait <- wait;
    c.Slot.body <- body
  in
  let no_op (_ : Slot.t) = () in
  let cases =
    [ ("answered: Send", set Slot.Done Slot.Running Slot.No_body, Exchange.Send);
      ("answered: Send_piece", set Slot.Chunked_body Slot.Flush_wanted Slot.No_body, Exchange.Send_piece);
      ("answered: Wait", set Slot.Idle Slot.Suspended Slot.No_body, Exchange.Wait);
      ("answered: Next_piece", set Slot.Idle Slot.Piece_wanted Slot.Body_streaming, Exchange.Next_piece);
      ("answered: Read_body", set Slot.Idle Slot.Running Slot.Body_wanted, Exchange.Read_body) ]
  in
  List.map
    (fun (name, prepare, expected) ->
      Httpz_test_support.zero_alloc ("Exchange.run, " ^ name) (fun () ->
          prepare ();
          if Exchange.run no_op c <> expected then failwith name))
    cases
  @ [ Httpz_test_support.zero_alloc "Exchange.ended, complete" (fun () ->
          c.Slot.resp <- Slot.Done;
          c.Slot.unlogged <- Slot.Logged;
          Exchange.ended c ~complete:true) ]

let () =
  Httpz_sys.Syscall.ignore_sigpipe ();
  Alcotest.run "exchange"
    [ ("in memory", memory); ("allocation", zero_alloc); sockets "uring" Server.Uring; sockets "epoll" Server.Epoll ]
