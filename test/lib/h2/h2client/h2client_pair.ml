(* The client role against the server role, in memory: bytes shuttled
   between an H2_client and an H2_connection by the test, [chunk] bytes at
   most per step and direction (1 = byte at a time). The server's
   application answers by path:
   - "/N": 200, content-length N, N bytes of [big];
   - "/echo": the request body back, once it has ended;
   - "/head": 200 with an "x-big" field of the request's "x-size" bytes;
   - "/rst": RST_STREAM INTERNAL_ERROR;
   - "/hold": nothing until the test answers it. *)

open Httpz
module Cl = H2_client
module Sv = H2_connection

let big_size = 10 lsl 20

let big =
  let b = Bigstring.create big_size in
  for i = 0 to big_size - 1 do
    Bigstring.unsafe_set b i (Char.unsafe_chr ((i * 7 + (i / 251)) land 0xff))
  done;
  b

let big_string n = Bigstring.sub_string big ~off:0 ~len:n

type resp = {
  mutable status : int;
  mutable fields : (string * string) list;
  mutable trailers : (string * string) list;
  body : Buffer.t;
  mutable ended : bool;
  mutable reset : H2_error.t option;
  mutable interim : int;
}

type pair = {
  cl : Cl.t;
  sv : Sv.t;
  cin : Bigstring.t;
  mutable cin_len : int;
  sin : Bigstring.t;
  mutable sin_len : int;
  head : Bigstring.t;
  resps : (int, resp) Hashtbl.t;
  mutable chunk : int;
  sout : Bigstring.t;
  mutable sout_pos : int;
  mutable sout_len : int;
  mutable auto_consume : bool;
  mutable goaways : int;
  mutable client_error : bool;
  (* server side *)
  req_bodies : (int, Buffer.t) Hashtbl.t;
  req_paths : (int, string) Hashtbl.t;
  keep : (int, Bigstring.t) Hashtbl.t;  (* bodies being sent by the server *)
  mutable server_resets : (int * H2_error.t) list;
  mutable held : int list;
}

let server_config =
  { H2_config.default with max_header_list_size = 65536; response_header_block_size = 65536; pending_size = 1 lsl 18 }

let create ?(config = server_config) ?(client = fun () -> Cl.create ()) () =
  {
    cl = client ();
    sv = Sv.create ~config ();
    cin = Bigstring.create (1 lsl 20);
    cin_len = 0;
    sin = Bigstring.create (1 lsl 20);
    sin_len = 0;
    head = Bigstring.create 65536;
    resps = Hashtbl.create 16;
    chunk = max_int;
    sout = Bigstring.create (1 lsl 18);
    sout_pos = 0;
    sout_len = 0;
    auto_consume = true;
    goaways = 0;
    client_error = false;
    req_bodies = Hashtbl.create 16;
    req_paths = Hashtbl.create 16;
    keep = Hashtbl.create 16;
    server_resets = [];
    held = [];
  }

let resp p id =
  match Hashtbl.find_opt p.resps id with
  | Some r -> r
  | None ->
      let r = { status = -1; fields = []; trailers = []; body = Buffer.create 16; ended = false; reset = None; interim = 0 } in
      Hashtbl.replace p.resps id r;
      r

let respond_body p sid body =
  Sv.start_response p.sv ~stream:sid ~status:200;
  Sv.header_int p.sv Header_name.Content_length (Bigstring.length body);
  if Bigstring.length body = 0 then ignore (Sv.send_headers p.sv ~end_stream:true)
  else begin
    ignore (Sv.send_headers p.sv ~end_stream:false);
    Hashtbl.replace p.keep sid body;
    match Sv.send_data p.sv ~stream:sid body ~off:0 ~len:(Bigstring.length body) ~end_stream:true with
    | Sv.Queued -> ()
    | _ -> Alcotest.fail "server send_data refused"
  end

let respond_n p sid n =
  Sv.start_response p.sv ~stream:sid ~status:200;
  Sv.header_int p.sv Header_name.Content_length n;
  if n = 0 then ignore (Sv.send_headers p.sv ~end_stream:true)
  else begin
    ignore (Sv.send_headers p.sv ~end_stream:false);
    match Sv.send_data p.sv ~stream:sid big ~off:0 ~len:n ~end_stream:true with
    | Sv.Queued -> ()
    | _ -> Alcotest.fail "server send_data refused"
  end

let on_request p sid ~ended =
  let path = Hashtbl.find p.req_paths sid in
  if path = "/echo" then begin
    if ended then
      respond_body p sid (Bigstring.of_string (Buffer.contents (Hashtbl.find p.req_bodies sid)))
  end
  else if not ended then ()
  else if path = "/rst" then Sv.reset_stream p.sv ~stream:sid H2_error.Internal_error
  else if path = "/hold" then p.held <- sid :: p.held
  else if path = "/head" then begin
    Sv.start_response p.sv ~stream:sid ~status:200;
    let size = int_of_string (Hashtbl.find p.req_paths (-sid)) in
    Sv.header_s p.sv "x-big" (String.make size 'h');
    ignore (Sv.send_headers p.sv ~end_stream:true)
  end
  else respond_n p sid (int_of_string (String.sub path 1 (String.length path - 1)))

let server_feed p =
  let pos = ref 0 and go = ref true in
  while !go do
    let ev = Sv.received p.sv p.sin ~off:!pos ~len:(p.sin_len - !pos) ~now:0 in
    (match ev with
    | Sv.Need_more -> go := false
    | Connection_error -> go := false
    | Headers ->
        let sid = Sv.event_stream p.sv in
        let h = Sv.head p.sv and b = Sv.head_buffer p.sv in
        Hashtbl.replace p.req_paths sid (Span.to_string b (H2_head.path h));
        Hashtbl.replace p.req_bodies sid (Buffer.create 16);
        let xs = ref "0" in
        for i = 0 to H2_head.field_count h - 1 do
          if Span.equal b (H2_head.field_name_span h i) "x-size" then xs := Span.to_string b (H2_head.field_value h i)
        done;
        Hashtbl.replace p.req_paths (-sid) !xs;
        on_request p sid ~ended:(Sv.event_end_stream p.sv)
    | Data ->
        let sid = Sv.event_stream p.sv and len = Sv.event_data_len p.sv in
        Buffer.add_string (Hashtbl.find p.req_bodies sid)
          (Bigstring.sub_string p.sin ~off:(Sv.event_data_off p.sv) ~len);
        Sv.consumed p.sv ~stream:sid len;
        if Sv.event_end_stream p.sv then on_request p sid ~ended:true
    | Trailers -> on_request p (Sv.event_stream p.sv) ~ended:true
    | Reset -> p.server_resets <- (Sv.event_stream p.sv, Sv.event_error p.sv) :: p.server_resets
    | Goaway -> ());
    pos := !pos + Sv.consumed_bytes p.sv
  done;
  Bigstring.blit ~src:p.sin ~src_off:!pos ~dst:p.sin ~dst_off:0 ~len:(p.sin_len - !pos);
  p.sin_len <- p.sin_len - !pos

let fields_of p =
  List.init (Cl.field_count p.cl) (fun i ->
      (Span.to_string p.head (Cl.field_name p.cl i), Span.to_string p.head (Cl.field_value p.cl i)))

(* Runs the client on its unconsumed input; [on_event] sees every event
   before the default bookkeeping. *)
let client_feed ?(on_event = fun _ _ -> ()) p =
  let pos = ref 0 and go = ref true in
  while !go do
    let ev = Cl.received p.cl p.cin ~off:!pos ~len:(p.cin_len - !pos) ~head:p.head in
    on_event p ev;
    let sid = Cl.event_stream p.cl in
    (match ev with
    | Cl.Need_more -> go := false
    | Connection_error ->
        p.client_error <- true;
        go := false
    | Response ->
        let r = resp p sid in
        r.status <- Cl.status p.cl;
        r.fields <- fields_of p;
        if Cl.event_end_stream p.cl then r.ended <- true
    | Interim -> (resp p sid).interim <- (resp p sid).interim + 1
    | Trailers ->
        let r = resp p sid in
        r.trailers <- fields_of p;
        r.ended <- true
    | Data ->
        let r = resp p sid and len = Cl.event_data_len p.cl in
        Buffer.add_string r.body (Bigstring.sub_string p.cin ~off:(Cl.event_data_off p.cl) ~len);
        if p.auto_consume then Cl.consumed p.cl ~stream:sid len;
        if Cl.event_end_stream p.cl then r.ended <- true
    | Reset -> (resp p sid).reset <- Some (Cl.event_error p.cl)
    | Goaway -> p.goaways <- p.goaways + 1
    | Settings | Window_update | Ping_ack -> ());
    pos := !pos + Cl.consumed_bytes p.cl
  done;
  Bigstring.blit ~src:p.cin ~src_off:!pos ~dst:p.cin ~dst_off:0 ~len:(p.cin_len - !pos);
  p.cin_len <- p.cin_len - !pos

(* One round each way; whether any byte moved. *)
let step ?on_event p =
  let moved = ref false in
  let room = min p.chunk (Bigstring.length p.sin - p.sin_len) in
  let n = Cl.next_output p.cl p.sin ~off:p.sin_len ~len:room in
  if n > 0 then begin
    p.sin_len <- p.sin_len + n;
    moved := true
  end;
  server_feed p;
  (* The server writes whole frames (a DATA frame needs room for its
     header and a byte): staged, then delivered [chunk] bytes at a time. *)
  if p.sout_pos = p.sout_len then begin
    p.sout_pos <- 0;
    p.sout_len <- Sv.next_output p.sv p.sout ~off:0 ~len:(Bigstring.length p.sout);
    if Sv.output_external_len p.sv > 0 then Alcotest.fail "unexpected external output"
  end;
  let n = min (min p.chunk (Bigstring.length p.cin - p.cin_len)) (p.sout_len - p.sout_pos) in
  if n > 0 then begin
    Bigstring.blit ~src:p.sout ~src_off:p.sout_pos ~dst:p.cin ~dst_off:p.cin_len ~len:n;
    p.sout_pos <- p.sout_pos + n;
    p.cin_len <- p.cin_len + n;
    moved := true
  end;
  client_feed ?on_event p;
  !moved

let pump ?on_event ?(max_steps = 10_000_000) p =
  let steps = ref 0 in
  while step ?on_event p && !steps < max_steps do incr steps done

let get ?(meth = "GET") ?(fields = []) ?(end_stream = true) p path =
  (match Cl.start_request p.cl ~meth ~scheme:"http" ~authority:"test" ~path with
  | Cl.Submitted -> ()
  | _ -> Alcotest.failf "start_request %s refused" path);
  List.iter (fun (n, v) -> Cl.header_s p.cl n v) fields;
  (match Cl.send_request p.cl ~end_stream with Cl.Submitted -> () | _ -> Alcotest.failf "send_request %s refused" path);
  Cl.request_stream p.cl

(* The handshake: preface and SETTINGS both ways, acknowledged. *)
let connected ?config ?client () =
  let p = create ?config ?client () in
  pump p;
  if not (Cl.settings_received p.cl && Cl.settings_acked p.cl) then Alcotest.fail "no handshake";
  p
