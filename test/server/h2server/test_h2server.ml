(* HTTP/2 in the server (H2_session, H2_exchange), driven from memory: a
   connection slot fed the client's frames through H1's entry points, as a
   backend would, its output taken by Output's walk and read back as
   frames. Handlers are ordinary Ctx handlers. *)

open Httpz
open Httpz_server
module S = Httpz_test_support
module K = H2conn_client

let later = ref None
let cancelled = ref 0
let logged = ref []
let big = Bigstring.of_string (String.init 100_000 (fun i -> Char.chr (97 + (i mod 26))))

let prepared =
  let p = Prepared_fields.of_list [ (Header_name.Content_type, "text/html"); (Header_name.Cache_control, "max-age=60") ] in
  Prepared_fields.add_s p "X-Prepared" "yes";
  p

(* Every field writer of Ctx, and the fields HTTP/2 leaves out among
   them. *)
let span_src = Bigstring.of_string "\ta\"tag\"b max-age=5"
let date_cache = Date.Cache.create ()

let all_fields c =
  Ctx.start c Status.Ok;
  Ctx.header c Header_name.Content_type "text/plain";
  Ctx.header c Header_name.Connection "close";
  Ctx.header c Header_name.X_request_id "req-1";
  Ctx.header_s c "X-Mixed-Case" "v 1";
  Ctx.header c Header_name.Keep_alive "timeout=5";
  Ctx.header_int c Header_name.Age 42;
  Ctx.header_date c Header_name.Last_modified 784111777;
  Ctx.header c Header_name.Transfer_encoding "chunked";
  Ctx.header_date_cached c Header_name.Expires date_cache 784111778;
  Ctx.header_span c Header_name.Etag span_src (Span.make ~off:2 ~len:5);
  Ctx.header c Header_name.Upgrade "h2c";
  Ctx.header_bytes c Header_name.Cache_control span_src ~off:9 ~len:9;
  Ctx.header_s c "Proxy-Connection" "keep-alive";
  Ctx.fields c prepared;
  Ctx.header_s c "KEEP-ALIVE" "x";
  Ctx.header_int c Header_name.Content_location 0;
  Ctx.header_s c "x-after" "";
  Ctx.body_string c "fields"

let scratch_set = Prepared_fields.create ()

let rec handler c =
  let req = Ctx.request c and buf = Ctx.buffer c in
  let t = Request.target req in
  if Span.equal buf t "/a" then begin
    Ctx.start c Status.Ok;
    Ctx.header c Header_name.Content_type "text/plain";
    Ctx.header_s c "X-Custom" "yes";
    Ctx.body_string c "hello"
  end
  (* Before [handler_more], whose closure allocates: measured for 0 words. *)
  else if Span.equal buf t "/fields" then all_fields c
  else handler_more c buf t

and handler_more c buf t =
  let is s = Span.equal buf t s in
  if is "/echo" then begin
    if not (Ctx.body_ready c) then Ctx.await_body c
    else begin
      let b = Ctx.body c in
      Ctx.start c Status.Ok;
      Ctx.body_bigstring c (Ctx.body_buffer c) ~off:(Span.off b) ~len:(Span.len b)
    end
  end
  else if is "/size" then begin
    (* A body read whole: its length. *)
    if not (Ctx.body_ready c) then Ctx.await_body c
    else begin
      Ctx.start c Status.Ok;
      Ctx.body_string c (string_of_int (Span.len (Ctx.body c)))
    end
  end
  else if is "/cookie" then begin
    (* How many Cookie fields the handler sees, and the first's value. *)
    let req = Ctx.request c in
    let n = ref 0 and first = ref "" in
    for i = 0 to Request.header_count req - 1 do
      if Request.header_name req i = Header_name.Cookie then begin
        if !n = 0 then first := Span.to_string buf (Request.header_value req i);
        incr n
      end
    done;
    Ctx.start c Status.Ok;
    Ctx.header_s c "X-Cookie-Fields" (string_of_int !n);
    Ctx.header_s c "X-Cookie" !first;
    Ctx.body_string c "cookie"
  end
  else if is "/bighead" then begin
    (* More head than an exchange's first (4 KiB) buffer holds. *)
    Ctx.start c Status.Ok;
    Ctx.header c Header_name.Content_type "text/plain";
    for i = 1 to 3 do
      Ctx.header_s c (Printf.sprintf "X-Big-%d" i) (String.make 3000 (Char.chr (96 + i)))
    done;
    Ctx.header c Header_name.Etag "\"e\"";
    Ctx.body_string c "big head"
  end
  else if is "/count" then begin
    let total = ref 0 in
    let rec next c =
      if Ctx.body_ended c then begin
        Ctx.start c Status.Ok;
        Ctx.body_string c (Printf.sprintf "%d bytes" !total)
      end
      else begin
        total := !total + Span.len (Ctx.body_piece c);
        Ctx.read_body c ~limit:10_000_000 next
      end
    in
    Ctx.read_body c ~limit:10_000_000 next
  end
  else if is "/stream" then begin
    Ctx.start c Status.Ok;
    Ctx.chunked_start c;
    Ctx.chunk c "one\n";
    Ctx.flush c (fun c ->
        Ctx.chunk c "two\n";
        Ctx.flush c (fun c -> Ctx.chunked_end c))
  end
  else if is "/later" then begin
    Ctx.on_cancel c (fun () -> incr cancelled);
    later :=
      Some
        (Ctx.suspend c (fun c ->
             Ctx.start c Status.Ok;
             Ctx.body_string c "later"))
  end
  else if is "/big" then begin
    Ctx.start c Status.Ok;
    Ctx.body_bigstring_stable c big ~off:0 ~len:(Bigstring.length big)
  end
  else if is "/prepared" then begin
    (* A prepared set between fields written one by one. *)
    Ctx.start c Status.Ok;
    Ctx.header c Header_name.Etag "\"p\"";
    Ctx.fields c prepared;
    Ctx.header_s c "X-After" "1";
    Ctx.header c Header_name.Vary "Accept";
    Ctx.body_string c "prepared"
  end
  else if is "/version" then begin
    Ctx.start c Status.Ok;
    Ctx.header_s c "X-Ctx-Version" (Version.to_string (Ctx.version c));
    Ctx.header_s c "X-Request-Version" (Version.to_string (Request.version (Ctx.request c)));
    (* The head is HPACK over HTTP/2: no raw text access. *)
    let refused f = match f () with _ -> "no" | exception Invalid_argument _ -> "yes" in
    Ctx.header_s c "X-Head-Buffer-Refused" (refused (fun () -> ignore (Ctx.head_buffer c)));
    Ctx.header_s c "X-Head-Pos-Refused" (refused (fun () -> ignore (Ctx.head_pos c)));
    Ctx.header_s c "X-Set-Head-Pos-Refused" (refused (fun () -> Ctx.set_head_pos c 0));
    Ctx.body_string c "v"
  end
  else if is "/invalid" then begin
    (* A refused field writes nothing: the head goes on without it. *)
    Ctx.start c Status.Ok;
    let refused f = match f () with () -> "no" | exception Response.Invalid_field -> "yes" in
    let r =
      String.concat ","
        [ refused (fun () -> Ctx.header c Header_name.Etag "a\r\nb");
          refused (fun () -> Ctx.header c Header_name.Other "x");
          refused (fun () -> Ctx.header_s c "Bad Name" "x");
          refused (fun () -> Ctx.header_s c "X-Ok" " lead");
          refused (fun () -> Ctx.header_int c Header_name.Age (-1));
          refused (fun () -> Ctx.header_date c Header_name.Expires max_int);
          refused (fun () -> Ctx.header_span c Header_name.Etag span_src (Span.make ~off:0 ~len:3));
          refused (fun () -> Ctx.header c Header_name.Connection "a\nb") ]
    in
    Ctx.header_s c "X-Refused" r;
    Ctx.body_string c "invalid"
  end
  else if is "/head-later" then begin
    (* A head begun, then a wait while other streams answer (and fill
       the client's table), then ended. *)
    Ctx.start c Status.Ok;
    Ctx.header c Header_name.Etag "\"w\"";
    Ctx.fields c prepared;
    later :=
      Some
        (Ctx.suspend c (fun c ->
             Ctx.header_s c "X-Resumed" "yes";
             Ctx.fields c prepared;
             Ctx.body_string c "later"))
  end
  else if is "/changed" then begin
    (* A set refilled once given: the head has it as it was given. *)
    Ctx.start c Status.Ok;
    Prepared_fields.clear scratch_set;
    Prepared_fields.add_s scratch_set "X-Set" "given";
    Ctx.fields c scratch_set;
    Prepared_fields.clear scratch_set;
    Prepared_fields.add_s scratch_set "X-Set" "changed";
    Ctx.body_string c "changed"
  end
  else if is "/raise" then failwith "boom"
  else if is "/upgrade" then begin
    Ctx.start c Status.Switching_protocols;
    Ctx.upgrade c (fun _ _ -> ())
  end
  else begin
    Ctx.start c Status.Ok;
    Ctx.header c Header_name.Content_type "text/plain";
    Ctx.header_s c "X-Custom" "yes";
    Ctx.body_string c "hello"
  end

(* {1 The in-memory peer}
   Httpz_server.Testing's runtime, one action at a time (Testing.Conn):
   Output's walk over a memory client, as the backends drive the
   connection; its bytes read back as frames. *)

module Conn = Testing.Conn

type peer = { c : Slot.t; conn : Conn.t; dec : K.session; mutable pending : string }

let drives : (Slot.t -> Connection.action -> unit) ref = ref (fun _ _ -> ())

let shared ?(keep = 4) ?(read_buffer = 32 * 1024) ?(headers = "X-Content-Type-Options: nosniff\r\n") () =
  let sh =
    Slot.create_shared ~server_name:"t" ~read_buffer ~write_buffer:(16 * 1024)
      ~max_body:(1 lsl 20) ~header_ms:1000 ~idle_ms:2000 ~body_ms:1000 ~write_ms:1000 ~handler_ms:3000
      ~headers ~listener_headers:[| "" |] ~keep
  in
  let app c = handler (Ctx.of_conn c) in
  sh.hooks.handler <- app;
  sh.hooks.app <- app;
  sh.hooks.log <- (fun c parsed complete -> logged := (c.Slot.status, parsed, complete) :: !logged);
  (* What Loop.resume_conn does: the connection carries out the answer. *)
  sh.hooks.resume <-
    (fun c gen k ->
      (* The carrier first: the exchange may end within the resumption. *)
      let conn = Slot.carrier c in
      match Connection.resume c ~gen k with Connection.Nothing -> () | a -> !drives conn a);
  sh

type outcome = Reading | Lingering | Closed

let outcome (o : Conn.outcome) =
  match o with
  | Waiting -> Reading
  | Lingering -> Lingering
  | Closed -> Closed
  | Suspended | Detached | Idle -> Alcotest.fail "not an HTTP/2 connection's action"

let drive p a = outcome (Conn.drive p.conn a)
let send p s = outcome (Conn.exchange p.conn s)

(* The frames written since the last call, described (K.describe_frame). *)
let frames p =
  let all = p.pending ^ Conn.take p.conn in
  let buf = Bigstring.of_string all in
  let r = p.dec.reader in
  let out = ref [] and pos = ref 0 and go = ref true in
  while !go do
    match H2_frame.read r buf ~off:!pos ~len:(String.length all - !pos) with
    | H2_frame.Frame ->
        out := K.describe_frame p.dec buf !pos :: !out;
        pos := !pos + H2_frame.consumed r
    | _ -> go := false
  done;
  p.pending <- String.sub all !pos (String.length all - !pos);
  List.rev !out

let peer sh =
  let conn = Conn.create sh in
  let p = { c = Conn.slot conn; conn; dec = K.create (); pending = "" } in
  drives := (fun c a -> if c == p.c then ignore (drive p a : outcome));
  ignore (Connection.opened p.c ~fd:3 ~listener:0 ~peer_len:0 : Connection.action);
  p

let connect sh =
  let p = peer sh in
  let o = send p (H2_frame.preface ^ K.settings []) in
  Alcotest.(check bool) "reading after the preface" true (o = Reading);
  Alcotest.(check bool) "HTTP/2 mode" true (p.c.mode = Slot.H2_conn);
  ignore (frames p);
  p

let strings = Alcotest.(list string)
let get ?(extra = []) sid path = K.request sid (K.get ~path ~extra ())
let has frames prefix = List.exists (fun f -> String.length f >= String.length prefix && String.sub f 0 (String.length prefix) = prefix) frames

(* {1 Tests} *)

let simple_get () =
  let sh = shared () in
  let p = connect sh in
  ignore (send p (get 1 "/a"));
  let fs = frames p in
  Alcotest.check strings "response"
    [ "HEADERS 1 200 date=" ; "DATA 1 5 ES" ]
    (List.map (fun f -> if String.length f > 20 && String.sub f 0 10 = "HEADERS 1 " then "HEADERS 1 200 date=" else f) fs);
  let head = List.hd fs in
  List.iter
    (fun want -> Alcotest.(check bool) ("head has " ^ want) true (S.find_sub head want >= 0))
    [ "server=t"; "content-type=text/plain"; "x-custom=yes"; "x-content-type-options=nosniff"; "content-length=5" ];
  Alcotest.(check bool) "no connection field" false (S.find_sub head "connection" >= 0);
  Alcotest.(check int) "idle: no read buffer" 0 (Bigstring.length p.c.rbuf);
  Alcotest.(check int) "idle: no write buffer" 0 (Bigstring.length p.c.out);
  Alcotest.(check int) "idle: nothing taken from the pools" 0
    (Buffer_pool.in_use sh.reads + Buffer_pool.in_use sh.writes + Buffer_pool.in_use sh.bodies);
  Alcotest.(check int) "the exchange went back" 1 sh.nexchanges_free;
  Alcotest.(check bool) "idle" true (Connection.idle p.c)

let concurrent () =
  let sh = shared () in
  let p = connect sh in
  ignore (send p (get 1 "/a" ^ get 3 "/big" ^ get 5 "/a"));
  let fs = frames p in
  Alcotest.(check bool) "stream 1 ends" true (List.mem "DATA 1 5 ES" fs);
  (* 100 KB against the default 65535-byte window: what it allows. *)
  let sent3 = List.fold_left (fun n f -> try Scanf.sscanf f "DATA 3 %d" (fun k -> n + k) with _ -> n) 0 fs in
  Alcotest.(check int) "stream 3 up to the connection window (less stream 1's 5 bytes)" (65535 - 5) sent3;
  Alcotest.(check bool) "stream 5 waits: the connection window is spent" false (List.mem "DATA 5 5 ES" fs);
  ignore (send p (K.window_update 0 100_000 ^ K.window_update 3 100_000));
  let fs = frames p in
  let rest = List.fold_left (fun n f -> try Scanf.sscanf f "DATA 3 %d" (fun k -> n + k) with _ -> n) 0 fs in
  Alcotest.(check int) "the rest once the window opens" (100_000 - 65530) rest;
  Alcotest.(check bool) "stream 5 ends" true (List.mem "DATA 5 5 ES" fs);
  Alcotest.(check bool) "and the end" true (has fs "DATA 3" && List.exists (fun f -> S.find_sub f " ES" > 0) fs)

(* Each stream's DATA payloads, from the raw bytes written since the last
   call (the server never pads). *)
let payloads p =
  let all = p.pending ^ Conn.take p.conn in
  p.pending <- "";
  let tbl = Hashtbl.create 8 and pos = ref 0 in
  while !pos + 9 <= String.length all do
    let b i = Char.code all.[!pos + i] in
    let len = (b 0 lsl 16) lor (b 1 lsl 8) lor b 2 in
    let sid = ((b 5 land 0x7f) lsl 24) lor (b 6 lsl 16) lor (b 7 lsl 8) lor b 8 in
    if b 3 = 0 then begin
      let buf = match Hashtbl.find_opt tbl sid with Some x -> x | None -> let x = Buffer.create 1024 in Hashtbl.add tbl sid x; x in
      Buffer.add_string buf (String.sub all (!pos + 9) len)
    end;
    pos := !pos + 9 + len
  done;
  Alcotest.(check int) "whole frames" (String.length all) !pos;
  fun sid -> match Hashtbl.find_opt tbl sid with Some b -> Buffer.contents b | None -> ""

(* Cached bodies of several streams leave between the frames of one write
   (gathered), and a peer that takes a few bytes at a time still gets every
   byte in order. *)
let gathered () =
  let body = Bigstring.to_string big in
  List.iter
    (fun step ->
      let p = connect (shared ()) in
      ignore (send p (K.settings [ (4, 1_000_000) ] ^ K.window_update 0 5_000_000));
      ignore (payloads p : int -> string);
      Conn.reset_counts p.conn;
      Conn.set_write_size p.conn step;
      let sids = [ 1; 3; 5; 7; 9 ] in
      ignore (send p (String.concat "" (List.map (fun sid -> get sid "/big") sids)));
      let data = payloads p in
      let name = Printf.sprintf "%d bytes per write" step in
      List.iter (fun sid -> Alcotest.(check bool) (Printf.sprintf "%s: stream %d's body" name sid) true (data sid = body)) sids;
      Alcotest.(check bool) (name ^ ": gathered writes") true (Conn.gathered_writes p.conn > 0);
      Alcotest.(check bool) (name ^ ": several payloads in one") true (Conn.most_pieces p.conn >= 2))
    [ max_int; 777; 16384 + 9 ]

(* Output's walk over gathered pieces: random frames, pieces and a body
   after them, consumed by random short writes; what each write would see
   is always the rest of the expected bytes. *)
let gather_walk () =
  let sh = shared () in
  let rng = Random.State.make [| 22 |] in
  let text n = String.init n (fun _ -> Char.chr (Random.State.int rng 256)) in
  for _ = 1 to 500 do
    let c = Slot.create sh ~slot:0 ~peer:false in
    let out_len = Random.State.int rng 300 in
    let out = text out_len in
    c.out <- Bigstring.of_string (out ^ "#");
    c.out_len <- out_len;
    c.gather <- Gather.create ();
    let n = 1 + Random.State.int rng Gather.capacity in
    let pos = List.sort compare (List.init n (fun _ -> Random.State.int rng (out_len + 1))) in
    let expected = Buffer.create 1024 and at = ref 0 in
    List.iter
      (fun p ->
        let skip = Random.State.int rng 5 and len = 1 + Random.State.int rng 300 in
        let piece = text len in
        Gather.add c.gather ~pos:p (Bigstring.of_string (text skip ^ piece)) ~off:skip ~len;
        Buffer.add_string expected (String.sub out !at (p - !at) ^ piece);
        at := p)
      pos;
    Buffer.add_string expected (String.sub out !at (out_len - !at));
    if Random.State.bool rng then begin
      let body = text (1 + Random.State.int rng 200) in
      c.ext <- Slot.Ext_bigstring;
      c.ext_bs <- Bigstring.of_string body;
      c.ext_off <- 0;
      c.ext_len <- String.length body;
      Buffer.add_string expected body
    end;
    let expected = Buffer.contents expected and got = Buffer.create 1024 in
    (* Pieces all written, [gather]'s [first = count]: [out]'s rest alone. *)
    let view () = Conn.gathered_bytes c ^ Bigstring.sub_string c.ext_bs ~off:c.ext_off ~len:c.ext_len in
    while Output.pending c > 0 do
      let v = view () in
      let done_ = Buffer.length got in
      Alcotest.(check string) "the rest" (String.sub expected done_ (String.length expected - done_)) v;
      Alcotest.(check int) "pending" (String.length v) (Output.pending c);
      let k = 1 + Random.State.int rng (min 400 (Output.pending c)) in
      Buffer.add_string got (String.sub v 0 k);
      Output.advance c k
    done;
    Alcotest.(check string) "every byte in order" expected (Buffer.contents got);
    Alcotest.(check bool) "nothing left" true (Output.segment c = Output.Nothing)
  done

(* A transport that keeps bytes as the TLS write BIO does: while more
   output is announced, everything written is kept; otherwise what waits
   and the new bytes go to a socket that takes [room] bytes, the rest of
   the new ones kept when all that waited left, else refused. *)
let room = ref 0
let wire = Buffer.create 256
let kept = ref ""

let to_socket s =
  let k = min !room (String.length s) in
  Buffer.add_string wire (String.sub s 0 k);
  room := !room - k;
  k

module Holding = Output.Walk (struct
  let budget = max_int
  let holds_last = false

  let head (c : Slot.t) ~more:_ =
    let data = Bigstring.sub_string c.out ~off:c.out_sent ~len:(c.out_len - c.out_sent) in
    if c.more_output then begin
      kept := !kept ^ data;
      String.length data
    end
    else begin
      let before = String.length !kept in
      let all = !kept ^ data in
      let k = to_socket all in
      if k < before then begin
        kept := String.sub !kept k (before - k);
        Output.would_block
      end
      else begin
        kept := String.sub all k (String.length all - k);
        String.length data
      end
    end

  let head_string _ ~len:_ ~more:_ = Alcotest.fail "not here"
  let head_bigstring _ ~len:_ ~more:_ = Alcotest.fail "not here"
  let file _ ~len:_ = Alcotest.fail "not here"
  let gathered _ ~more:_ = Alcotest.fail "not here"
  let unsent _ = String.length !kept

  let send_unsent _ =
    if !kept = "" then 0
    else begin
      let k = to_socket !kept in
      kept := String.sub !kept k (String.length !kept - k);
      if k = 0 then Output.would_block else k
    end
end)

(* Bytes a transport made and kept are pending output once no more is
   announced: the walk sends them before it says Flushed, and waits for
   the socket when it takes none (Blocked), rather than leaving them. *)
let unsent_walk () =
  let sh = shared () in
  let c = Slot.create sh ~slot:0 ~peer:false in
  let put s =
    c.out <- Bigstring.of_string s;
    c.out_len <- String.length s;
    c.out_sent <- 0
  in
  Buffer.clear wire;
  kept := "";
  room := 1000;
  put (String.make 100 'a');
  c.more_output <- true;
  Alcotest.(check bool) "announced: kept, flushed" true (Holding.write c = Output.Flushed);
  Alcotest.(check int) "100 bytes unsent" 100 c.unsent;
  Alcotest.(check int) "not pending while more is announced" 0 (Output.pending c);
  Alcotest.(check bool) "nothing to write meanwhile" true (Output.segment c = Output.Nothing);
  Alcotest.(check int) "nothing on the wire" 0 (Buffer.length wire);
  c.more_output <- false;
  Alcotest.(check int) "pending once more is no longer announced" 100 (Output.pending c);
  Alcotest.(check bool) "the Unsent segment" true (Output.segment c = Output.Unsent);
  put (String.make 50 'b');
  room := 120;
  Alcotest.(check bool) "a full socket: Blocked, not Flushed" true (Holding.write c = Output.Blocked);
  Alcotest.(check int) "30 bytes still unsent" 30 c.unsent;
  Alcotest.(check int) "and pending" 30 (Output.pending c);
  Alcotest.(check bool) "as the Unsent segment" true (Output.segment c = Output.Unsent);
  room := 1000;
  Alcotest.(check bool) "writable: Flushed" true (Holding.write c = Output.Flushed);
  Alcotest.(check int) "nothing unsent" 0 c.unsent;
  Alcotest.(check int) "nothing pending" 0 (Output.pending c);
  Alcotest.(check string) "every byte once, in order" (String.make 100 'a' ^ String.make 50 'b') (Buffer.contents wire)

(* A handler that asks for the body (await_body) gets it whole; nothing
   is answered before it comes. *)
let post_echo () =
  let sh = shared () in
  let p = connect sh in
  let post = [ (":method", "POST"); (":scheme", "https"); (":path", "/echo"); (":authority", "x"); ("content-length", "5") ] in
  ignore (send p (K.request ~end_stream:false 1 post));
  Alcotest.check strings "nothing before the body" [] (frames p);
  ignore (send p (K.data ~end_stream:true 1 "abcde"));
  let fs = frames p in
  Alcotest.(check bool) "answered" true (List.mem "DATA 1 5 ES" fs)

(* Cookie crumbs (RFC 9113 §8.2.3) reach the handler as one field, joined
   by "; ": 300 of them are not 300 fields (the header count's 431). *)
let cookie_crumbs () =
  let sh = shared () in
  let p = connect sh in
  let crumbs = List.init 300 (fun i -> ("cookie", Printf.sprintf "c%d=%d" i i)) in
  ignore (send p (get ~extra:crumbs 1 "/cookie"));
  let fs = frames p in
  let head = match fs with h :: _ -> h | [] -> "" in
  let joined = String.concat "; " (List.map snd crumbs) in
  Alcotest.(check bool) "200, one Cookie field" true (S.find_sub head "x-cookie-fields=1 " >= 0);
  Alcotest.(check bool) "its value: the crumbs joined by \"; \"" true (S.find_sub head ("x-cookie=" ^ joined) >= 0);
  ignore (send p (get ~extra:[ ("cookie", "a=1") ] 3 "/cookie"));
  let head = match frames p with h :: _ -> h | [] -> "" in
  Alcotest.(check bool) "one cookie field as it is" true
    (S.find_sub head "x-cookie-fields=1 " >= 0 && S.find_sub head "x-cookie=a=1" >= 0)

(* A handler that answers without the body runs at once (the body is not
   waited for, nor buffered); the stream stays open for what the client
   still sends (a content-length it must match, a WINDOW_UPDATE): a DATA
   frame then gets RST_STREAM NO_ERROR (RFC 9113 §8.1) and is not
   buffered. *)
(* Bodies read whole that together exceed the budget and the connection
   window (3 x 1,000,000 bytes, interleaved, the client keeping to the
   windows it was given) all complete: one exchange at a time passes the
   budget. Without that, each stopped short and waited for credit until
   its body clock cut it. *)
let whole_bodies_complete () =
  let sh = shared () in
  let p = connect sh in
  let size = 1_000_000 in
  let sids = [ 1; 3; 5 ] in
  List.iter (fun sid ->
      ignore (send p (K.request ~end_stream:false sid
                        [ (":method", "POST"); (":scheme", "https"); (":path", "/size"); (":authority", "x");
                          ("content-length", string_of_int size) ]))) sids;
  (* The client's view of the windows: the connection's is 1 MiB after
     the server's first WINDOW_UPDATE, each stream's 65,535. *)
  let conn = ref (1 lsl 20) and stream = Hashtbl.create 3 and sent = Hashtbl.create 3 in
  List.iter (fun sid -> Hashtbl.replace stream sid 65535; Hashtbl.replace sent sid 0) sids;
  let answered = ref [] in
  let read () =
    List.iter (fun f ->
        match String.split_on_char ' ' f with
        | [ "WINDOW_UPDATE"; "0"; n ] -> conn := !conn + int_of_string n
        | [ "WINDOW_UPDATE"; sid; n ] ->
            let sid = int_of_string sid in
            Hashtbl.replace stream sid (Hashtbl.find stream sid + int_of_string n)
        | [ "DATA"; sid; _; "ES" ] -> answered := int_of_string sid :: !answered
        | _ -> ()) (frames p)
  in
  read ();
  let progress = ref true in
  while !progress do
    progress := false;
    List.iter (fun sid ->
        let left = size - Hashtbl.find sent sid in
        let n = min 16384 (min left (min !conn (Hashtbl.find stream sid))) in
        if n > 0 then begin
          progress := true;
          ignore (send p (K.data ~end_stream:(n = left) sid (String.make n 'b')));
          conn := !conn - n;
          Hashtbl.replace stream sid (Hashtbl.find stream sid - n);
          Hashtbl.replace sent sid (Hashtbl.find sent sid + n);
          read ()
        end) sids
  done;
  Alcotest.(check (list int)) "every body sent whole" [ size; size; size ] (List.map (Hashtbl.find sent) sids);
  Alcotest.(check (list int)) "and answered" sids (List.sort compare !answered)

let answered_early () =
  let sh = shared () in
  let p = connect sh in
  ignore (send p (K.request ~end_stream:false 1 (K.post ~extra:[ ("content-length", "5") ] ())));
  let fs = frames p in
  Alcotest.(check bool) "answered before the body, no reset yet" true
    (List.mem "DATA 1 5 ES" fs && not (has fs "RST_STREAM"));
  ignore (send p (K.data 1 "more"));
  Alcotest.check strings "body after a complete response: RST_STREAM NO_ERROR" [ "RST_STREAM 1 NO_ERROR" ] (frames p);
  ignore (send p (get 3 "/a"));
  Alcotest.(check bool) "the connection goes on" true (List.mem "DATA 3 5 ES" (frames p))

(* Whole bodies (await_body) one connection holds credited to its window
   stay within a budget (1 MiB here: [max_body] is 1 MiB) and one body
   passing it: 20 streams of 60,000 bytes each awaited whole are 1.2 MB,
   of which 1,080,000 are credited to the connection's window until
   exchanges end (the rest is owed: the client cannot send more than its
   window beyond that); the
   streams' own windows are credited, and once the bodies end and are
   answered everything is paid. Before, every byte was credited to the
   connection as it came, so 128 streams could make the worker hold 128
   bodies. *)
let whole_body_budget () =
  let sh = shared () in
  let p = connect sh in
  let s = match p.c.h2 with Some s -> s | None -> Alcotest.fail "no HTTP/2 session" in
  let body = String.make 60000 'w' in
  let open_body sid =
    ignore (send p (K.request ~end_stream:false sid
                      [ (":method", "POST"); (":scheme", "https"); (":path", "/echo"); (":authority", "x");
                        ("content-length", "60000") ]));
    (* In frames of at most 16,384 bytes (the peer's frame size). *)
    let rec data off =
      if off < 60000 then begin
        let n = min 16384 (60000 - off) in
        ignore (send p (K.data sid (String.sub body off n)));
        data (off + n)
      end
    in
    data 0;
    ignore (frames p)
  in
  let debts () =
    let d = ref 0 in
    for i = 0 to s.nstreams - 1 do d := !d + s.streams.(i).h2s.conn_debt done;
    !d
  in
  let sids = List.init 20 (fun i -> 1 + (2 * i)) in
  List.iteri (fun i sid -> if i < 17 then open_body sid) sids;
  Alcotest.(check int) "17 bodies (within the budget): all credited" (17 * 60000) s.whole_bodies;
  Alcotest.(check int) "nothing owed" 0 (debts ());
  List.iteri (fun i sid -> if i >= 17 then open_body sid) sids;
  (* The 18th body meets the budget and takes the pass (credited whole);
     the 19th and 20th are owed. *)
  Alcotest.(check int) "20 bodies: the budget's worth credited, and one body passing it" (18 * 60000) s.whole_bodies;
  Alcotest.(check int) "the rest owed" (2 * 60000) (debts ());
  (* Room for the 20 echoes (the client's connection window). *)
  ignore (send p (K.window_update 0 (2 * 20 * 60000)));
  let answered = ref 0 in
  List.iter (fun sid ->
      ignore (send p (K.data ~end_stream:true sid ""));
      if has (frames p) (Printf.sprintf "HEADERS %d 200" sid) then incr answered) sids;
  Alcotest.(check int) "every body answered" 20 !answered;
  Alcotest.(check int) "all paid once the exchanges ended" 0 (s.whole_bodies + debts ());
  ignore (send p (get 41 "/a"));
  Alcotest.(check bool) "the connection goes on" true (List.mem "DATA 41 5 ES" (frames p))

let streamed_body () =
  let sh = shared () in
  let p = connect sh in
  let post = [ (":method", "POST"); (":scheme", "https"); (":path", "/count"); (":authority", "x") ] in
  ignore (send p (K.request ~end_stream:false 1 post));
  let piece = String.make 16384 'b' in
  for _ = 1 to 3 do ignore (send p (K.data 1 piece)) done;
  ignore (send p (K.data ~end_stream:true 1 "tail"));
  let fs = frames p in
  Alcotest.(check bool) "window credited as the handler reads" true (has fs "WINDOW_UPDATE");
  Alcotest.(check bool) "the count" true (List.exists (fun f -> f = "DATA 1 11 ES") fs)

(* Stream [sid]'s answer to GET [path] on [p]: its head has every field
   of [wants] ("name=value" prefixes) and its body is [body] bytes. *)
let answers p sid path ~body wants =
  ignore (send p (get sid path));
  let fs = frames p in
  let head = match fs with h :: _ -> h | [] -> "" in
  List.iter (fun want -> Alcotest.(check bool) (path ^ ": head has " ^ want) true (S.find_sub head want >= 0)) wants;
  Alcotest.(check bool) (path ^ ": the body") true (List.mem (Printf.sprintf "DATA %d %d ES" sid body) fs)

let big_head () =
  let p = connect (shared ()) in
  answers p 1 "/bighead" ~body:8
    [ "x-big-1=" ^ String.make 3000 'a'; "x-big-3=" ^ String.make 3000 'c'; "etag=\"e\"";
      "content-type=text/plain" ]

(* A prepared set among fields written one by one; the second time on
   the connection its fields are indices into the client's table. *)
let prepared_fields () =
  let p = connect (shared ()) in
  let wants =
    [ "etag=\"p\""; "content-type=text/html"; "cache-control=max-age=60"; "x-prepared=yes"; "x-after=1";
      "vary=Accept"; "content-length=8"; "server=t" ]
  in
  answers p 1 "/prepared" ~body:8 wants;
  answers p 3 "/prepared" ~body:8 wants

(* The head of an HTTP/2 response is exactly the handler's fields, in
   order, lower-cased, each as given, after the server's own; the fields
   HTTP/2 forbids are not in it (RFC 9113 §8.2.2). The same stream twice:
   the second time the prepared set is indices into the client's table. *)
let exact_fields () =
  let p = connect (shared ()) in
  let date = Bigstring.create 29 in
  ignore (Date.write_imf_fixdate date ~off:0 0 : int);
  let want =
    String.concat " "
      [ "200"; "date=" ^ Bigstring.to_string date; "server=t"; "x-content-type-options=nosniff";
        "content-type=text/plain"; "x-request-id=req-1"; "x-mixed-case=v 1"; "age=42";
        "last-modified=Sun, 06 Nov 1994 08:49:37 GMT"; "expires=Sun, 06 Nov 1994 08:49:38 GMT";
        "etag=\"tag\""; "cache-control=max-age=5"; "content-type=text/html"; "cache-control=max-age=60";
        "x-prepared=yes"; "content-location=0"; "x-after="; "content-length=6" ]
  in
  List.iter
    (fun sid ->
      ignore (send p (get sid "/fields"));
      match frames p with
      | [ head; data ] ->
          Alcotest.(check string) "the head, exactly" (Printf.sprintf "HEADERS %d %s" sid want) head;
          Alcotest.(check string) "the body" (Printf.sprintf "DATA %d 6 ES" sid) data
      | fs -> Alcotest.fail (String.concat " | " fs))
    [ 1; 3 ]

(* The server's own fields (Server, the configured ones) with Date: the
   forbidden ones left out, names lower-cased; Date follows the clock. *)
let server_fields () =
  let sh = shared ~headers:"Proxy-Connection: x\r\nX-Frame-Options: DENY\r\nconnection: y\r\nX-Other-Thing: a b\r\n" () in
  let p = connect sh in
  let date t =
    let b = Bigstring.create 29 in
    ignore (Date.write_imf_fixdate b ~off:0 t : int);
    Bigstring.to_string b
  in
  List.iter
    (fun (sid, now) ->
      sh.now <- now;
      ignore (send p (get sid "/a"));
      match frames p with
      | head :: _ ->
          Alcotest.(check string) "the server's fields, then the handler's"
            (Printf.sprintf
               "HEADERS %d 200 date=%s server=t x-frame-options=DENY x-other-thing=a b content-type=text/plain \
                x-custom=yes content-length=5"
               sid (date now))
            head
      | [] -> Alcotest.fail "no answer")
    [ (1, 0); (3, 0); (5, 1_700_000_000) ]

(* The fields of a head begun before a wait are HPACK already; what the
   connection's encoder sent meanwhile (other streams' heads inserting
   into the client's table) does not make them wrong: the client decodes
   every head in order with one table. *)
let head_across_wait () =
  let p = connect (shared ()) in
  later := None;
  ignore (send p (get 1 "/head-later" ^ get 3 "/prepared" ^ get 5 "/fields"));
  let fs = frames p in
  Alcotest.(check bool) "the others answered meanwhile" true (has fs "HEADERS 3 200" && has fs "HEADERS 5 200");
  (match !later with Some k -> k () | None -> Alcotest.fail "no continuation");
  ignore (send p (get 7 "/prepared"));
  let fs = frames p in
  let head = List.find (fun f -> has [ f ] "HEADERS 1 ") fs in
  let from = S.find_sub head "etag=" in
  Alcotest.(check string) "the waiting head, exactly"
    "etag=\"w\" content-type=text/html cache-control=max-age=60 x-prepared=yes x-resumed=yes \
     content-type=text/html cache-control=max-age=60 x-prepared=yes content-length=5"
    (String.sub head from (String.length head - from));
  Alcotest.(check bool) "and the next one" true (has fs "HEADERS 7 200")

let changed_set () =
  let p = connect (shared ()) in
  answers p 1 "/changed" ~body:7 [ "x-set=given content-length=7" ];
  answers p 3 "/changed" ~body:7 [ "x-set=given content-length=7" ]

(* A field a writer refuses raises Invalid_field and leaves nothing
   behind, over HTTP/2 as over HTTP/1.1. *)
let invalid_fields () =
  let p = connect (shared ()) in
  answers p 1 "/invalid" ~body:7 [ "x-refused=yes,yes,yes,yes,yes,yes,yes,yes content-length=7" ]

(* Ctx and the request say HTTP/2 on a stream; the head's text is not
   there to write. *)
let version_h2 () =
  let p = connect (shared ()) in
  answers p 1 "/version" ~body:1
    [ "x-ctx-version=HTTP/2 x-request-version=HTTP/2 x-head-buffer-refused=yes x-head-pos-refused=yes \
       x-set-head-pos-refused=yes" ]

let flushed () =
  let sh = shared () in
  let p = connect sh in
  ignore (send p (get 1 "/stream"));
  let fs = frames p in
  Alcotest.(check bool) "pieces, then the end" true
    (List.mem "DATA 1 4" fs && List.exists (fun f -> f = "DATA 1 0 ES" || f = "DATA 1 4 ES") fs)

let suspended () =
  let sh = shared () in
  let p = connect sh in
  later := None;
  ignore (send p (get 1 "/later" ^ get 3 "/a"));
  let fs = frames p in
  Alcotest.(check bool) "the other stream is answered meanwhile" true (List.mem "DATA 3 5 ES" fs);
  Alcotest.(check bool) "not the waiting one" false (has fs "HEADERS 1");
  (match !later with Some k -> k () | None -> Alcotest.fail "no continuation");
  let fs = frames p in
  Alcotest.(check bool) "answered when resumed" true (List.mem "DATA 1 5 ES" fs)

let reset_cancels () =
  let sh = shared () in
  let p = connect sh in
  later := None;
  cancelled := 0;
  logged := [];
  ignore (send p (get 1 "/later"));
  ignore (send p (K.rst 1 H2_error.Cancel));
  Alcotest.(check int) "the cancel hook ran" 1 !cancelled;
  Alcotest.(check int) "the exchange went back" 1 sh.nexchanges_free;
  Alcotest.(check int) "no response began: no log line (as over HTTP/1.1)" 0 (List.length !logged);
  (match !later with Some k -> k () | None -> ());
  Alcotest.check strings "a late continuation sends nothing" [] (frames p);
  ignore (send p (get 3 "/a"));
  Alcotest.(check bool) "the connection goes on" true (List.mem "DATA 3 5 ES" (frames p))

let failures () =
  let sh = shared () in
  let p = connect sh in
  ignore (send p (get 1 "/raise" ^ get 3 "/upgrade"));
  let fs = frames p in
  Alcotest.(check bool) "a raising handler: 500" true (has fs "HEADERS 1 500");
  Alcotest.(check bool) "Ctx.upgrade over HTTP/2: 500" true (has fs "HEADERS 3 500")

(* Heads whose values all passed H2_head's plain check are not scanned
   again; one with a control byte in a value (a regular field's or the
   :authority standing in for Host) still gets Request's whole check. *)
let head_checks () =
  let sh = shared () in
  let p = connect sh in
  let req sid fields = K.request sid fields in
  let g path = [ (":method", "GET"); (":scheme", "https"); (":path", path) ] in
  ignore
    (send p
       (req 1 (g "/a" @ [ (":authority", "example.com"); ("x-a", "plain") ])
       ^ req 3 (g "/a" @ [ (":authority", "example.com"); ("x-a", "a\x01b") ])
       ^ req 5 (g "/a" @ [ (":authority", "exa\x01mple.com") ])
       ^ req 7 (g "/a" @ [ (":authority", "example.com"); ("x-a", "a\tb") ])
       ^ req 9 (g "/a" @ [ (":authority", "exa mple.com") ])
       ^ req 11 (g "/a b" @ [ (":authority", "example.com") ])
       ^ req 13 ([ (":method", "G(T"); (":scheme", "https"); (":path", "/a"); (":authority", "example.com") ])
       ^ req 15 ([ (":method", "PURGE"); (":scheme", "https"); (":path", "/a"); (":authority", "example.com") ])));
  let fs = frames p in
  List.iter
    (fun (what, want) -> Alcotest.(check bool) (what ^ ": " ^ String.concat " | " fs) true (has fs want))
    [ ("a plain head", "HEADERS 1 200"); ("a control byte in a value", "HEADERS 3 400");
      ("a control byte in :authority", "HEADERS 5 400"); ("an inner HTAB is kept", "HEADERS 7 200");
      ("a space in :authority (Host)", "HEADERS 9 400"); ("a space in :path", "HEADERS 11 400");
      ("a method not a token", "HEADERS 13 400"); ("an unknown token method", "HEADERS 15 200") ]

(* A head that does not fit an exchange's read buffer (8 KiB here) is
   answered 431; one that does, by its handler. The large head is a 3.5 KiB
   field sent once and indexed (RFC 7541 §6.2.1), then named three times from
   the dynamic table: its frame fits the connection's 8 KiB buffer, its
   decoded fields do not fit the exchange's. *)
let head_room () =
  let sh = shared ~read_buffer:(8 * 1024) () in
  let p = connect sh in
  let indexed name value =
    let buf = Bigstring.create 16384 in
    Bigstring.unsafe_set buf 0 '\x40';
    let o = Hpack_encoder.encode_integer buf ~off:1 ~prefix:7 ~first:0 (String.length name) in
    Bigstring.blit_from_string name ~src_off:0 buf ~dst_off:o ~len:(String.length name);
    let o = o + String.length name in
    let o = Hpack_encoder.encode_integer buf ~off:o ~prefix:7 ~first:0 (String.length value) in
    Bigstring.blit_from_string value ~src_off:0 buf ~dst_off:o ~len:(String.length value);
    Bigstring.sub_string buf ~off:0 ~len:(o + String.length value)
  in
  let again = "\xbe" (* indexed: dynamic entry 62, the newest *) in
  let pseudo = K.block (K.get ~path:"/a" ()) in
  ignore
    (send p
       (K.headers 1 (pseudo ^ indexed "x-big" (String.make 3500 'a'))
       ^ K.headers 3 (pseudo ^ again ^ again ^ again)
       ^ get 5 "/a"));
  let fs = frames p in
  List.iter
    (fun (what, want) -> Alcotest.(check bool) (what ^ ": " ^ String.concat " | " fs) true (has fs want))
    [ ("fits", "HEADERS 1 200"); ("too large", "HEADERS 3 431"); ("the next one", "HEADERS 5 200") ]

let closed_cancels () =
  let sh = shared () in
  let p = connect sh in
  cancelled := 0;
  ignore (send p (get 1 "/later" ^ get 3 "/later"));
  Connection.closed p.c;
  Alcotest.(check int) "both cancelled" 2 !cancelled;
  Alcotest.(check int) "both exchanges back" 2 sh.nexchanges_free;
  Alcotest.(check bool) "the session went back" false (Stack.is_empty sh.h2_free);
  Alcotest.(check int) "no buffer held" 0
    (Buffer_pool.in_use sh.reads + Buffer_pool.in_use sh.writes + Buffer_pool.in_use sh.bodies)

let connection_error () =
  let sh = shared () in
  let p = peer sh in
  let o = send p (H2_frame.preface ^ get 1 "/a") in
  Alcotest.(check bool) "lingers after the GOAWAY" true (o = Lingering);
  Alcotest.(check bool) "GOAWAY PROTOCOL_ERROR" true (has (frames p) "GOAWAY 0 PROTOCOL_ERROR")

let timeouts () =
  let sh = shared () in
  let p = connect sh in
  ignore (send p (get 1 "/later"));
  Alcotest.(check bool) "a stall timer while a stream is open" true (p.c.timer = Slot.Handler_timer);
  Alcotest.(check int) "the handler timeout's" (sh.tick + sh.handler_ticks + 1) p.c.deadline;
  sh.tick <- p.c.deadline;
  ignore (drive p (Connection.timeout p.c));
  Alcotest.(check bool) "the handler that never answered: 503" true (has (frames p) "HEADERS 1 503");
  Alcotest.(check bool) "idle timer after" true (p.c.timer = Slot.Idle_timer);
  sh.tick <- p.c.deadline;
  let o = drive p (Connection.timeout p.c) in
  Alcotest.(check bool) "idle: GOAWAY, then linger" true (o = Lingering && has (frames p) "GOAWAY 1 NO_ERROR")

let zero_window () =
  let sh = shared () in
  let p = connect sh in
  ignore (send p (K.settings [ (4, 0) ] ^ get 1 "/a"));
  let fs = frames p in
  Alcotest.(check bool) "the head goes, the body waits for a window" true (has fs "HEADERS 1 200" && not (has fs "DATA 1"));
  Alcotest.(check bool) "the stall timer runs" true (p.c.timer = Slot.Handler_timer);
  let due = p.c.deadline in
  Alcotest.(check int) "the write timeout's" (sh.tick + sh.write_ticks + 1) due;
  (* Other traffic (PINGs, another stream) does not move it. *)
  sh.tick <- due - 1;
  ignore (send p (K.ping 7 ^ get 3 "/a"));
  Alcotest.(check int) "PINGs and other streams do not move its deadline" due p.c.deadline;
  ignore (frames p);
  sh.tick <- due;
  ignore (drive p (Connection.timeout p.c));
  Alcotest.(check bool) "a window that never opens: RST_STREAM CANCEL" true (List.mem "RST_STREAM 1 CANCEL" (frames p));
  Alcotest.(check int) "stream 3 (later, its own deadline) still waits" 1 sh.nexchanges_free;
  ignore (send p (K.window_update 3 100));
  Alcotest.(check bool) "and goes on when its window opens" true (List.mem "DATA 3 5 ES" (frames p))

let drain () =
  let sh = shared () in
  let p = connect sh in
  later := None;
  ignore (send p (get 1 "/later"));
  ignore (drive p (H2_session.drain p.c));
  Alcotest.(check bool) "GOAWAY NO_ERROR" true (has (frames p) "GOAWAY 1 NO_ERROR");
  (match !later with Some k -> k () | None -> Alcotest.fail "no continuation");
  Alcotest.(check bool) "the open stream finishes" true (List.mem "DATA 1 5 ES" (frames p));
  Alcotest.(check bool) "then the connection ends" true (p.c.state = Slot.Lingering)

let not_http () =
  let sh = shared () in
  let p = peer sh in
  let o = send p "INVALID CONNECTION PREFACE\r\n\r\n" in
  Alcotest.(check bool) "neither HTTP/1.x nor HTTP/2: closed, no answer" true (o = Closed && Conn.written p.conn = "");
  List.iter
    (fun line ->
      let p = peer (shared ()) in
      ignore (send p (line ^ "\r\nHost: x\r\n\r\n"));
      let out = Conn.written p.conn in
      Alcotest.(check bool) (line ^ ": a malformed HTTP/1.x request keeps its 400") true
        (String.length out > 12 && String.sub out 0 12 = "HTTP/1.1 400"))
    [ "GET / http/1.1"; "GET / HTTP/1.x"; "\x01\x02garbage" ];
  let sh = shared () in
  sh.http2 <- false;
  let p = peer sh in
  ignore (send p (H2_frame.preface ^ K.settings []));
  Alcotest.(check bool) "HTTP/2 off: the preface is an HTTP/1.1 request" true (p.c.mode = Slot.H1_mode)

(* {1 Allocation} A request stream in, its response out, the exchange back
   in the pool: nothing allocated once the pools hold what one stream
   needs. *)

(* [batch] requests a run on [p]'s connection, read together, [fields]
   on new streams each time from stream [first] on; the responses are
   taken as sent and dropped. *)
let stream_each_run ?(batch = 1) p ~first fields =
  (* Room on the connection for every response of the measurement. *)
  ignore (send p (K.window_update 0 (0x7fffffff - 65535)));
  let block = Bigstring.of_string (K.block fields) in
  let blen = Bigstring.length block in
  let flen = blen + 9 in
  let frames = Bigstring.create (flen * batch) in
  let c = p.c in
  let sid = ref first in
  let rec go (a : Connection.action) =
    match a with
    | Write ->
        Output.advance c (Output.pending c);
        go (Connection.written c)
    | Read | Close | Linger | Wait | Detach | Nothing | Read_buffered | Push -> a
  in
  fun () ->
    for i = 0 to batch - 1 do
      let o = H2_write.headers_header frames ~off:(i * flen) ~stream_id:!sid ~length:blen ~end_stream:true ~end_headers:true in
      Bigstring.blit ~src:block ~src_off:0 ~dst:frames ~dst_off:o ~len:blen;
      sid := !sid + 2
    done;
    match Connection.prepare_read c with
    | Read when c.in_len >= flen * batch ->
        Bigstring.blit ~src:frames ~src_off:0 ~dst:c.in_buf ~dst_off:c.in_off ~len:(flen * batch);
        ignore (go (Connection.received c (flen * batch)) : Connection.action)
    | _ -> Alcotest.fail "not reading, or no room for the batch"

let quiet sh =
  (* The access log's own cost is not the stream's. *)
  sh.Slot.hooks.log <- (fun _ _ _ -> ())

let zero_alloc_stream () =
  let sh = shared () in
  quiet sh;
  let p = connect sh in
  S.zero_alloc "HTTP/2 stream: head in, small response out" (stream_each_run p ~first:1 (K.get ~path:"/a" ()))

(* Every field writer of Ctx (all_fields), over HTTP/2. *)
let zero_alloc_fields () =
  let sh = shared () in
  quiet sh;
  let p = connect sh in
  S.zero_alloc "HTTP/2 stream: every field writer, 0 words" (stream_each_run p ~first:1 (K.get ~path:"/fields" ()))

(* Issue 22's static path over h2, in process: the static handler's 200
   and 304 for a small file (held by its file cache), one stream each. *)
let small_file = "hello over h2\n"

(* Responses logged, by status code (counted without allocating). *)
type static_peer = { sp : peer; answered : int array }

let static_peer ?keep () =
  let root = S.temp_dir "h2static" in
  S.write_file (Filename.concat root "a.txt") small_file;
  S.write_file (Filename.concat root "b.bin") (String.make 16384 'b');
  let st =
    match Httpz_static.Static.create { Httpz_static.Static.default_config with root } with
    | Ok st -> st
    | Error e -> failwith e
  in
  let sh = shared ?keep () in
  let app c = Httpz_static.Static.handler st (Ctx.of_conn c) in
  sh.hooks.handler <- app;
  sh.hooks.app <- app;
  let answered = Array.make 600 0 in
  sh.hooks.log <-
    (fun c _ complete ->
      if complete then
        let code = Status.code c.Slot.status in
        answered.(code) <- answered.(code) + 1);
  { sp = connect sh; answered }

(* The first answer, checked and read for its ETag. *)
let static_etag p =
  ignore (send p (get 1 "/a.txt"));
  match frames p with
  | [ head; data ] when has [ head ] "HEADERS 1 200" && data = Printf.sprintf "DATA 1 %d ES" (String.length small_file) ->
      let i = S.find_sub head "etag=" + 5 in
      if i < 5 then Alcotest.fail ("no ETag: " ^ head);
      let j = try String.index_from head i ' ' with Not_found -> String.length head in
      String.sub head i (j - i)
  | fs -> Alcotest.fail ("static GET over h2: " ^ String.concat " | " fs)

(* [iters] runs of [batch] streams of [fields] allocate nothing, and each
   stream is answered [status] (the loop drops the frames; the log hook
   counts). *)
let static_runs ?(batch = 1) ?(iters = 100_000) name sp ~first ~status fields =
  Alcotest.test_case name `Quick (fun () ->
      let before = sp.answered.(status) in
      let w = S.minor_words_per_op ~iters (stream_each_run ~batch sp.sp ~first fields) in
      Alcotest.(check int) (name ^ ": every stream answered " ^ string_of_int status)
        (batch * (iters + 1)) (sp.answered.(status) - before);
      Alcotest.(check (float 0.0)) (name ^ ": minor words per run") 0.0 w)

let zero_alloc_static () =
  let sp = static_peer () in
  let etag = static_etag sp.sp in
  ignore (send sp.sp (get 3 "/a.txt" ~extra:[ ("if-none-match", etag) ]));
  let fs = frames sp.sp in
  let sp304 = static_peer () in
  (* Its own file's ETag: a second temporary file may differ in mtime. *)
  let conditional304 = K.get ~path:"/a.txt" ~extra:[ ("if-none-match", static_etag sp304.sp) ] () in
  (* Ten streams at a time, as the e2e suite sends them: the pools keep
     what ten exchanges hold (with the default 4, every stream past the
     third maps its buffers and parse state anew). *)
  let sp10 = static_peer ~keep:64 () in
  ignore (static_etag sp10.sp);
  (* A 16 KiB cached file: its DATA frame leaves from the cache (the
     write's second span), not through a copy. *)
  let sp16 = static_peer () in
  ignore (static_etag sp16.sp);
  (* Ten of them at a time: their DATA payloads gathered between the
     frames of one write (Gather). *)
  let sp16x10 = static_peer ~keep:64 () in
  ignore (static_etag sp16x10.sp);
  [
    Alcotest.test_case "static If-None-Match over h2: 304, no body" `Quick (fun () ->
        Alcotest.(check bool) ("304 HEADERS ES: " ^ String.concat " | " fs) true
          (match fs with [ f ] -> has [ f ] "HEADERS 3 ES 304" | _ -> false));
    static_runs "static handler over HTTP/2: 200s for a small file, 0 words" sp ~first:5 ~status:200
      (K.get ~path:"/a.txt" ());
    static_runs "static handler over HTTP/2: 304s for If-None-Match, 0 words" sp304 ~first:3 ~status:304
      conditional304;
    static_runs "static handler over HTTP/2: a 16 KiB file from the cache, 0 words" sp16 ~iters:10_000 ~first:3
      ~status:200 (K.get ~path:"/b.bin" ());
    static_runs "static handler over HTTP/2: 10 concurrent streams a read, 0 words" sp10 ~batch:10 ~iters:10_000
      ~first:3 ~status:200 (K.get ~path:"/a.txt" ());
    static_runs "static handler over HTTP/2: 10 streams of a 16 KiB file gathered, 0 words" sp16x10 ~batch:10
      ~iters:5_000 ~first:3 ~status:200 (K.get ~path:"/b.bin" ());
  ]

let () =
  Alcotest.run "h2server"
    [
      ( "streams",
        [
          Alcotest.test_case "h2c GET, idle holds no buffer" `Quick simple_get;
          Alcotest.test_case "concurrent streams, flow control" `Quick concurrent;
          Alcotest.test_case "cached bodies gathered into one write" `Quick gathered;
          Alcotest.test_case "gathered output under random short writes" `Quick gather_walk;
          Alcotest.test_case "kept output is pending, written before Flushed" `Quick unsent_walk;
          Alcotest.test_case "POST: a body the handler asks for" `Quick post_echo;
          Alcotest.test_case "answered before the body: RST NO_ERROR on more" `Quick answered_early;
          Alcotest.test_case "cookie crumbs: one field" `Quick cookie_crumbs;
          Alcotest.test_case "whole bodies: a budget per connection" `Quick whole_body_budget;
          Alcotest.test_case "whole bodies past the budget complete" `Quick whole_bodies_complete;
          Alcotest.test_case "streamed request body" `Quick streamed_body;
          Alcotest.test_case "flushed response pieces" `Quick flushed;
          Alcotest.test_case "a head larger than the first buffer" `Quick big_head;
          Alcotest.test_case "prepared fields among others" `Quick prepared_fields;
          Alcotest.test_case "every field writer: the head exactly, forbidden fields left out" `Quick exact_fields;
          Alcotest.test_case "refused fields leave nothing" `Quick invalid_fields;
          Alcotest.test_case "the server's own fields and Date" `Quick server_fields;
          Alcotest.test_case "a head begun before a wait, ended after" `Quick head_across_wait;
          Alcotest.test_case "a prepared set changed once given" `Quick changed_set;
          Alcotest.test_case "Ctx.version and Request.version: HTTP/2" `Quick version_h2;
          Alcotest.test_case "suspended handler" `Quick suspended;
          Alcotest.test_case "RST_STREAM cancels the exchange" `Quick reset_cancels;
          Alcotest.test_case "handler failures, upgrade refused" `Quick failures;
          Alcotest.test_case "heads checked once, the rest still checked" `Quick head_checks;
          Alcotest.test_case "a head larger than the read buffer: 431" `Quick head_room;
        ] );
      ( "connection",
        [
          Alcotest.test_case "close cancels every exchange" `Quick closed_cancels;
          Alcotest.test_case "connection error: GOAWAY, linger" `Quick connection_error;
          Alcotest.test_case "stall and idle timeouts" `Quick timeouts;
          Alcotest.test_case "a zero window times out" `Quick zero_window;
          Alcotest.test_case "drain: GOAWAY, streams finish" `Quick drain;
          Alcotest.test_case "not HTTP; HTTP/2 off" `Quick not_http;
        ] );
      ("allocation", zero_alloc_stream () :: zero_alloc_fields () :: zero_alloc_static ());
    ]
