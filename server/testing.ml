(* The in-memory runtime: one connection slot driven through the switch's entry
   points as a backend drives it (Epoll_io.perform), its output taken by
   Output's walk over a memory sink, its waits (Ctx.sleep, offload,
   when_readable) served by a Reactor of its own on a virtual clock. The
   client side (request bytes, HTTP/2 frames, response parsing) is written
   here independently of the server's encoders, so a test reads what a
   client would. Nothing here is on the server's hot path: it allocates
   freely. *)

open Httpz
open Slot

type protocol = Http1 | Http2

type response = {
  protocol : protocol;
  status : int;
  headers : (string * string) list;
  body : string;
  trailers : (string * string) list;
  complete : bool;
}

let tick_ns = Slot.tick_ms * 1_000_000

(* A descriptor number no process has open: the calls the server makes on
   [c.fd] (getpeername, setsockopt) fail with EBADF, as on a socket that
   reset. *)
let no_fd = 0x3fff_fff0

(* {1 The reactor and the virtual clock, one per process} *)

let clock = ref 0
let real_ns () = Syscall.clock_monotonic_ns ()

let the_reactor =
  lazy
    (let epfd = Syscall.epoll_create () in
     if epfd < 0 then failwith ("Testing: epoll_create: " ^ Syscall.error_message epfd);
     clock := real_ns ();
     let r = Reactor.create ~epfd ~base_token:0 ~threads:2 ~queue:0 in
     Reactor.set_clock r (fun () -> !clock);
     r)

let events = lazy (Syscall.events_create 64)

(* Ours while it runs: Ctx.sleep and friends find the reactor there. *)
let reactor () =
  let r = Lazy.force the_reactor in
  Reactor.install r;
  r

let now () = ignore (Lazy.force the_reactor); float_of_int !clock /. 1e9

let advance seconds =
  ignore (Lazy.force the_reactor);
  if seconds > 0. then clock := !clock + int_of_float (seconds *. 1e9)

(* The reactor's descriptor events (offload completions, watches), waiting
   at most [ms] real milliseconds. *)
let poll r ms =
  let evs = Lazy.force events in
  let n = Syscall.epoll_wait (Reactor.epfd r) evs 64 ms in
  for i = 0 to n - 1 do
    Reactor.dispatch r (Syscall.event_token evs i) (Syscall.event_mask evs i)
  done;
  n > 0

(* {1 A connection in memory} *)

module Conn = struct
  type outcome = Waiting | Closed | Lingering | Suspended | Detached | Idle

  type t = {
    c : Slot.t;
    mutable input : string;  (** what the client sent *)
    mutable ipos : int;  (** how much of it the connection read *)
    output : Buffer.t;  (** what the connection wrote, not yet taken *)
    mutable window : int;
    mutable taken : int;  (** by the current write call *)
    mutable leaves_after : int;
    mutable write_size : int;  (** bytes one write of the transport takes at most *)
    mutable gathered : int;  (** gathered writes (HTTP/2 payloads between frames) *)
    mutable most_pieces : int;  (** the most pieces one of them carried *)
  }

  (* Where each connection writes: by slot, physically. *)
  let all : t list ref = ref []

  let of_slot c =
    let c = Slot.carrier c in
    match List.find_opt (fun p -> p.c == c) !all with
    | Some p -> p
    | None -> failwith "Testing.Conn: output of a connection not made here"

  let create ?(window = max_int) ?(leaves_after = max_int) sh =
    let p =
      { c = Slot.create sh ~slot:0 ~peer:false; input = ""; ipos = 0; output = Buffer.create 4096; window;
        taken = 0; leaves_after; write_size = max_int; gathered = 0; most_pieces = 0 }
    in
    all := p :: !all;
    p

  let slot p = p.c
  let set_window p n = p.window <- n
  let set_leaves_after p n = p.leaves_after <- n
  let set_write_size p n = p.write_size <- n
  let gathered_writes p = p.gathered
  let most_pieces p = p.most_pieces

  let reset_counts p =
    p.gathered <- 0;
    p.most_pieces <- 0

  (* A write call of the transport: at most [window] bytes per call (then
     the "socket" is full), none once the client left. *)
  let put c s =
    let p = of_slot c in
    let left = p.leaves_after - Buffer.length p.output in
    let n = min (min (min (String.length s) p.write_size) (p.window - p.taken)) left in
    if left <= 0 then Output.gone
    else if n <= 0 then Output.would_block
    else begin
      Buffer.add_substring p.output s 0 n;
      p.taken <- p.taken + n;
      n
    end

  let out_rest (c : Slot.t) = Bigstring.sub_string c.out ~off:c.out_sent ~len:(c.out_len - c.out_sent)

  (* What Syscall.sendv_gather sends: [out]'s rest with the pieces between
     its frames. *)
  let gathered_bytes (c : Slot.t) =
    let g = c.gather in
    let b = Buffer.create 1024 and at = ref c.out_sent in
    for i = g.first to g.count - 1 do
      let p = Gather.pos g i in
      Buffer.add_string b (Bigstring.sub_string c.out ~off:!at ~len:(p - !at));
      at := p;
      Buffer.add_string b (Bigstring.sub_string g.bufs.(i) ~off:(Gather.off g i) ~len:(Gather.len g i))
    done;
    Buffer.add_string b (Bigstring.sub_string c.out ~off:!at ~len:(c.out_len - !at));
    Buffer.contents b

  (* The transport: Output's walk, the one every transport runs, each step
     one vectored write as sendmsg makes it. *)
  module Memory = Output.Walk (struct
    let budget = max_int
    let holds_last = false
    let head c ~more:_ = put c (out_rest c)
    let head_string (c : Slot.t) ~len ~more:_ = put c (out_rest c ^ String.sub c.ext_str c.ext_off len)

    let head_bigstring (c : Slot.t) ~len ~more:_ =
      put c (out_rest c ^ Bigstring.sub_string c.ext_bs ~off:c.ext_off ~len)

    (* A file body (Ctx.body_file, the static handler) read as sendfile
       sends it; a file shorter than announced ends the response. *)
    let file (c : Slot.t) ~len =
      let len = min len (1 lsl 20) in
      let buf = Bigstring.create len in
      let n = Syscall.pread c.file_fd buf 0 len c.ext_off in
      if n > 0 then put c (Bigstring.sub_string buf ~off:0 ~len:n) else Output.gone

    let gathered (c : Slot.t) ~more:_ =
      let p = of_slot c in
      p.gathered <- p.gathered + 1;
      p.most_pieces <- max p.most_pieces (c.gather.count - c.gather.first);
      put c (gathered_bytes c)

    let unsent _ = 0
    let send_unsent _ = 0
  end)

  (* The backend's close (Epoll_io.close_conn). *)
  let close p =
    if p.c.fd >= 0 then begin
      Slot.release_file p.c;
      Connection.closed p.c
    end

  (* What a backend does with the state machine's actions
     (Epoll_io.perform), the client's bytes standing for the socket's. *)
  let rec drive p (a : Conn_action.t) =
    match a with
    | Write -> write p
    | Close ->
        close p;
        Closed
    | Linger ->
        Connection.shutting_down p.c;
        Lingering
    | Wait -> Suspended
    | Detach -> Detached
    | Nothing -> Idle
    (* No transport here holds bytes back (Epoll_io reads TLS's). *)
    | Read_buffered -> write p
    (* The memory sink holds nothing back to push. *)
    | Push -> drive p Read
    | Read ->
        if p.ipos >= String.length p.input then Waiting
        else begin
          match Connection.prepare_read p.c with
          | Read ->
              let c = p.c in
              let n = min c.in_len (String.length p.input - p.ipos) in
              Bigstring.blit_from_string p.input ~src_off:p.ipos c.in_buf ~dst_off:c.in_off ~len:n;
              p.ipos <- p.ipos + n;
              drive p (Connection.received c n)
          | a -> drive p a
        end

  and write p =
    p.taken <- 0;
    match Memory.write p.c with
    | Output.Flushed -> drive p (Connection.written p.c)
    | Output.Blocked ->
        Connection.blocked p.c;
        write p
    | Output.Dead ->
        close p;
        Closed

  let send p s =
    p.input <- String.sub p.input p.ipos (String.length p.input - p.ipos) ^ s;
    p.ipos <- 0

  let unread p = String.length p.input - p.ipos

  let take p =
    let s = Buffer.contents p.output in
    Buffer.clear p.output;
    s

  let written p = Buffer.contents p.output
  let open_ ?(fd = no_fd) p = drive p (Connection.opened p.c ~fd ~listener:0 ~peer_len:0)
  let exchange p s = send p s; drive p Read
end

(* {1 The server} *)

type t = {
  sh : Slot.shared;
  conn : Conn.t;  (** the one connection, its slot reused by every exchange *)
  epoch_ns : int;
  epoch_s : int;
  mutable closed : bool;
  mutable reading : bool;  (** the connection asked for bytes the client had not sent *)
  mutable logged : int;  (** responses over (the access log's hook) *)
}

let close t =
  if not t.closed then begin
    t.closed <- true;
    t.reading <- false;
    Conn.close t.conn
  end

let after t (o : Conn.outcome) =
  match o with
  | Waiting -> t.reading <- true
  | Closed -> close t
  | Detached ->
      (* No socket to hand over: the upgrade's callback is not called. *)
      ignore (Connection.detach t.conn.c : string);
      close t
  | Lingering | Suspended | Idle -> ()

let drive t a = after t (Conn.drive t.conn a)

let sync_clock t =
  let sh = t.sh in
  sh.tick <- !clock / tick_ns;
  sh.now_ms <- !clock / 1_000_000;
  sh.now <- t.epoch_s + ((!clock - t.epoch_ns) / 1_000_000_000)

let create ?(config = Config.default_config) ?read_buffer ?write_buffer ?max_body ?header_timeout ?idle_timeout
    ?body_timeout ?write_timeout ?handler_timeout ?headers ?server_name ?http2 ?dev_errors handler =
  ignore (Lazy.force the_reactor);
  let ( // ) v default = Option.value v ~default in
  let c = config in
  let config =
    { c with
      read_buffer = read_buffer // c.read_buffer; write_buffer = write_buffer // c.write_buffer;
      max_body = max_body // c.max_body; header_timeout = header_timeout // c.header_timeout;
      idle_timeout = idle_timeout // c.idle_timeout; body_timeout = body_timeout // c.body_timeout;
      write_timeout = write_timeout // c.write_timeout; handler_timeout = handler_timeout // c.handler_timeout;
      headers = headers // c.headers; server_name = server_name // c.server_name; http2 = http2 // c.http2;
      dev_errors = dev_errors // c.dev_errors }
  in
  (* As Server.run builds a worker's. *)
  let sh = Loop_state.shared config ~listener_headers:[| "" |] ~keep:4 in
  let t =
    {
      sh;
      conn = Conn.create sh;
      epoch_ns = !clock;
      epoch_s = Syscall.clock_realtime_s ();
      closed = true;
      reading = false;
      logged = 0;
    }
  in
  (* [Ctx.t] is [Slot.t]: the application as the loop runs it, without
     the statistics front. *)
  let app (c : Slot.t) = handler (Ctx.of_conn c) in
  sh.hooks.handler <- app;
  sh.hooks.app <- app;
  sh.hooks.log <- (fun _ _ _ -> t.logged <- t.logged + 1);
  (* Loop.resume_conn: the state machine decides whether [k] runs. *)
  sh.hooks.resume <-
    (fun c gen k ->
      let conn = Slot.carrier c in
      if conn == t.conn.c && c.fd >= 0 && conn.fd >= 0 then drive t (Connection.resume c ~gen k));
  t

let in_use t =
  let sh = t.sh in
  Buffer_pool.in_use sh.reads + Buffer_pool.in_use sh.heads + Buffer_pool.in_use sh.writes
  + Buffer_pool.in_use sh.bodies

(* One turn of the loop: descriptor events, due timers (the reactor's,
   the connection's), bytes the client has for a connection that asked.
   [true] when anything happened. *)
let turn t =
  let r = reactor () in
  sync_clock t;
  let fed = t.reading && Conn.unread t.conn > 0 in
  if fed then begin
    t.reading <- false;
    drive t Read
  end;
  let events = poll r 0 in
  let timers = Reactor.next_timer_ns r <= !clock in
  if timers then Reactor.run_timers r ~now_ns:!clock;
  let c = t.conn.c in
  let due = c.fd >= 0 && c.timer <> No_timer && c.deadline <= t.sh.tick in
  if due then drive t (Connection.timeout c);
  let any = fed || events || timers || due in
  if any then Reactor.end_of_turn r;
  any

let real_limit_ns = 30 * 1_000_000_000

(* Turns until [finished ()], the clock moving to the next timer whenever
   nothing else can happen; work outside the loop (an offloaded job, a
   watched descriptor) is waited for in real time, up to 30 s. [false]:
   nothing more can happen, or [limit] virtual seconds passed. *)
let settle t ~limit ~finished =
  let r = reactor () in
  let vend = !clock + int_of_float (limit *. 1e9) and rend = real_ns () + real_limit_ns in
  let rec go () =
    if finished () then true
    else if turn t then go ()
    else if Reactor.busy r then begin
      if real_ns () > rend then false
      else begin
        ignore (poll r 10 : bool);
        go ()
      end
    end
    else begin
      let c = t.conn.c in
      let conn_next = if c.fd >= 0 && c.timer <> No_timer then c.deadline * tick_ns else max_int in
      let next = min (Reactor.next_timer_ns r) conn_next in
      if next = max_int || next > vend then false
      else begin
        if next > !clock then clock := next;
        go ()
      end
    end
  in
  go ()

(* A new connection in the slot, with [bytes] to send. *)
let connect t bytes =
  if not t.closed then close t;
  ignore (Conn.take t.conn : string);
  t.conn.input <- bytes;
  t.conn.ipos <- 0;
  t.closed <- false;
  t.reading <- false;
  t.logged <- 0;
  sync_clock t;
  ignore (reactor ());
  drive t (Connection.opened t.conn.c ~fd:no_fd ~listener:0 ~peer_len:0)

let send t bytes = Conn.send t.conn bytes

let raw ?(limit = 600.) t bytes =
  connect t bytes;
  let c = t.conn.c in
  let _ = settle t ~limit ~finished:(fun () -> t.closed || (Conn.unread t.conn = 0 && Connection.idle c)) in
  close t;
  Conn.take t.conn

(* {1 The client side} *)

let lower = String.lowercase_ascii

let find_header name hs =
  let name = lower name in
  List.find_map (fun (n, v) -> if lower n = name then Some v else None) hs

let header (r : response) name = find_header name r.headers
let headers_named (r : response) name = List.filter_map (fun (n, v) -> if lower n = lower name then Some v else None) r.headers

(* {2 Cookies} *)

type jar = (string, string) Hashtbl.t

let jar () : jar = Hashtbl.create 8
let cookie (j : jar) name = Hashtbl.find_opt j name
let cookie_header (j : jar) =
  Hashtbl.fold (fun n v acc -> (n ^ "=" ^ v) :: acc) j [] |> List.sort compare |> String.concat "; "

(* Set-Cookie, as a client keeps it: the name and value; Max-Age=0 (or
   less) removes it. Other attributes (Path, Secure, ...) are not
   enforced: every request of a test goes to one origin. *)
let store (j : jar) r =
  List.iter
    (fun sc ->
      match String.split_on_char ';' sc with
      | [] -> ()
      | pair :: attrs -> (
          match String.index_opt pair '=' with
          | None -> ()
          | Some i ->
              let name = String.trim (String.sub pair 0 i) in
              let value = String.trim (String.sub pair (i + 1) (String.length pair - i - 1)) in
              let expired =
                List.exists
                  (fun a ->
                    match String.split_on_char '=' (String.trim a) with
                    | [ k; v ] when lower k = "max-age" -> ( match int_of_string_opt v with Some n -> n <= 0 | None -> false)
                    | _ -> false)
                  attrs
              in
              if expired then Hashtbl.remove j name else Hashtbl.replace j name value))
    (headers_named r "set-cookie")

(* {2 HTTP/1.1} *)

let h1_request ~meth ~target ~headers ~body =
  let b = Buffer.create (256 + String.length body) in
  Buffer.add_string b (Printf.sprintf "%s %s HTTP/1.1\r\n" meth target);
  let has n = find_header n headers <> None in
  if not (has "host") then Buffer.add_string b "Host: test\r\n";
  List.iter (fun (n, v) -> Buffer.add_string b (Printf.sprintf "%s: %s\r\n" n v)) headers;
  if (body <> "" || List.mem meth [ "POST"; "PUT"; "PATCH" ])
     && (not (has "content-length")) && not (has "transfer-encoding")
  then Buffer.add_string b (Printf.sprintf "Content-Length: %d\r\n" (String.length body));
  Buffer.add_string b "\r\n";
  Buffer.add_string b body;
  Buffer.contents b

let index_from s i sub =
  let n = String.length s and m = String.length sub in
  let rec go i = if i + m > n then -1 else if String.sub s i m = sub then i else go (i + 1) in
  go i

(* Field lines [from, stop) of a head or a trailer section. *)
let field_lines s from stop =
  if stop <= from then []
  else
    String.sub s from (stop - from)
    |> String.split_on_char '\n'
    |> List.filter_map (fun l ->
           let l = if String.length l > 0 && l.[String.length l - 1] = '\r' then String.sub l 0 (String.length l - 1) else l in
           match String.index_opt l ':' with
           | None -> None
           | Some i -> Some (String.sub l 0 i, String.trim (String.sub l (i + 1) (String.length l - i - 1))))

let incomplete protocol = { protocol; status = 0; headers = []; body = ""; trailers = []; complete = false }

(* The de-chunked body from [pos]: body, trailers, whether the last chunk
   came. *)
let dechunk s pos =
  let b = Buffer.create 1024 in
  let rec go pos =
    let eol = index_from s pos "\r\n" in
    if eol < 0 then (Buffer.contents b, [], false)
    else
      let line = String.sub s pos (eol - pos) in
      let size = match String.index_opt line ';' with Some i -> String.sub line 0 i | None -> line in
      match int_of_string_opt ("0x" ^ String.trim size) with
      | None -> (Buffer.contents b, [], false)
      | Some 0 ->
          let fin = index_from s (eol + 2) "\r\n" in
          if fin < 0 then (Buffer.contents b, [], false)
          else (Buffer.contents b, field_lines s (eol + 2) fin, true)
      | Some n ->
          if eol + 2 + n + 2 > String.length s then begin
            Buffer.add_string b (String.sub s (eol + 2) (min n (String.length s - eol - 2)));
            (Buffer.contents b, [], false)
          end
          else begin
            Buffer.add_string b (String.sub s (eol + 2) n);
            go (eol + 2 + n + 2)
          end
  in
  go pos

(* The response in [s] (what the server wrote), interim 1xx skipped. *)
let rec parse_h1 ~meth ~closed s =
  let eoh = index_from s 0 "\r\n\r\n" in
  if eoh < 0 || String.length s < 12 then incomplete Http1
  else
    match int_of_string_opt (String.sub s 9 3) with
    | None -> incomplete Http1
    | Some status when status >= 100 && status < 200 && status <> 101 ->
        parse_h1 ~meth ~closed (String.sub s (eoh + 4) (String.length s - eoh - 4))
    | Some status ->
        let first = index_from s 0 "\r\n" in
        let headers = field_lines s (first + 2) eoh in
        let start = eoh + 4 in
        let rest = String.length s - start in
        let r = { protocol = Http1; status; headers; body = ""; trailers = []; complete = true } in
        let chunked =
          match find_header "transfer-encoding" headers with Some v -> lower v = "chunked" | None -> false
        in
        if meth = "HEAD" || status = 204 || status = 304 || status = 101 then r
        else if chunked then
          let body, trailers, complete = dechunk s start in
          { r with body; trailers; complete }
        else
          match Option.bind (find_header "content-length" headers) int_of_string_opt with
          | Some n -> { r with body = String.sub s start (min n rest); complete = rest >= n }
          | None -> { r with body = String.sub s start rest; complete = closed }

(* {2 HTTP/2} *)

let frame f =
  let buf = Bigstring.create (16384 + 64) in
  let o = f buf in
  Bigstring.sub_string buf ~off:0 ~len:o

let with_payload header payload =
  frame (fun buf -> header buf (String.length payload)) ^ payload

(* A field block of literals without indexing, new names, no Huffman
   (RFC 7541 §6.2.2): a client's simplest encoding. *)
let field_block fields =
  let b = Buffer.create 256 in
  let tmp = Bigstring.create 16 in
  let str s =
    let n = Hpack_encoder.encode_integer tmp ~off:0 ~prefix:7 ~first:0 (String.length s) in
    Buffer.add_string b (Bigstring.sub_string tmp ~off:0 ~len:n);
    Buffer.add_string b s
  in
  List.iter (fun (n, v) -> Buffer.add_char b '\000'; str n; str v) fields;
  Buffer.contents b

(* Fields that name the connection, not the message: not sent over
   HTTP/2 (RFC 9113 §8.2.2). *)
let connection_specific = [ "connection"; "keep-alive"; "proxy-connection"; "transfer-encoding"; "upgrade"; "host" ]

let h2_head ~meth ~target ~headers ~end_stream =
  let authority = Option.value (find_header "host" headers) ~default:"test" in
  let fields =
    [ (":method", meth); (":scheme", "http"); (":authority", authority); (":path", target) ]
    @ List.filter_map
        (fun (n, v) -> if List.mem (lower n) connection_specific then None else Some (lower n, v))
        headers
  in
  let block = field_block fields in
  (* One HEADERS, then CONTINUATIONs of 16 KiB (the default frame size). *)
  let max = 16384 in
  let rec pieces off =
    if String.length block - off <= max then [ String.sub block off (String.length block - off) ]
    else String.sub block off max :: pieces (off + max)
  in
  let ps = pieces 0 in
  let last = List.length ps - 1 in
  String.concat ""
    (List.mapi
       (fun i p ->
         let end_headers = i = last in
         if i = 0 then
           with_payload (fun buf length -> H2_write.headers_header buf ~off:0 ~stream_id:1 ~length ~end_stream ~end_headers) p
         else with_payload (fun buf length -> H2_write.continuation_header buf ~off:0 ~stream_id:1 ~length ~end_headers) p)
       ps)

let max_window = (1 lsl 31) - 1

(* Settings: windows as large as allowed, so the server never waits for
   the client to read. *)
let h2_preface =
  H2_frame.preface
  ^ frame (fun buf ->
        H2_write.settings buf ~off:0
          ~ids:[| H2_settings.id_to_int H2_settings.Initial_window_size; H2_settings.id_to_int H2_settings.Enable_push |]
          ~values:[| max_window; 0 |])
  ^ frame (fun buf -> H2_write.window_update buf ~off:0 ~stream_id:0 ~increment:(max_window - 65535))

type h2 = {
  reader : H2_frame.t;
  dec : Hpack_decoder.t;
  dout : Bigstring.t;
  mutable taken : int;  (** bytes of the connection's output read as frames *)
  block : Buffer.t;  (** a field block being assembled from CONTINUATIONs *)
  mutable block_ends : bool;  (** its HEADERS had END_STREAM *)
  mutable status : int;
  mutable headers : (string * string) list;
  mutable trailers : (string * string) list;
  data : Buffer.t;
  mutable ended : bool;  (** END_STREAM, RST_STREAM or GOAWAY *)
  mutable reset : bool;
  mutable conn_window : int;
  mutable stream_window : int;
  body : string;  (** the request body *)
  mutable body_sent : int;
}

let decode h block =
  let src = Bigstring.of_string block in
  Hpack_decoder.start_block h.dec ~off:0 ~len:(String.length block);
  let rec go acc =
    match Hpack_decoder.next_field h.dec src ~out:h.dout with
    | Hpack_decoder.Field ->
        go ((Span.to_string h.dout (Hpack_decoder.name h.dec), Span.to_string h.dout (Hpack_decoder.value h.dec)) :: acc)
    | End -> List.rev acc
    | Error -> failwith "Testing: the server's field block does not decode"
  in
  go []

let end_block h =
  let fields = decode h (Buffer.contents h.block) in
  Buffer.clear h.block;
  if h.status = 0 then begin
    match List.assoc_opt ":status" fields with
    | Some s ->
        let s = int_of_string s in
        (* An interim (1xx) head is followed by the real one. *)
        if s >= 200 then begin
          h.status <- s;
          h.headers <- List.filter (fun (n, _) -> n <> ":status") fields
        end
    | None -> failwith "Testing: a response head without :status"
  end
  else h.trailers <- fields;
  if h.block_ends then h.ended <- true

(* The server's frames written since the last look. *)
let read_frames t h =
  let out = t.conn.output in
  let all = Buffer.sub out h.taken (Buffer.length out - h.taken) in
  let buf = Bigstring.of_string all in
  let r = h.reader in
  let pos = ref 0 and go = ref true in
  while !go do
    match H2_frame.read r buf ~off:!pos ~len:(String.length all - !pos) with
    | H2_frame.Frame ->
        let sid = H2_frame.stream_id r and p = H2_frame.payload_off r and pl = H2_frame.payload_len r in
        let flag f = H2_frame.has_flag r f in
        (match H2_frame.frame_type r with
         | Settings when not (flag H2_frame.flag_ack) ->
             for i = 0 to H2_frame.settings_count r - 1 do
               if H2_frame.setting_id buf r i = H2_settings.Initial_window_size then
                 h.stream_window <- h.stream_window + H2_frame.setting_value buf r i - 65535
             done;
             send t (frame (fun buf -> H2_write.settings_ack buf ~off:0))
         | Window_update ->
             if sid = 0 then h.conn_window <- h.conn_window + H2_frame.window_increment r
             else if sid = 1 then h.stream_window <- h.stream_window + H2_frame.window_increment r
         | Headers when sid = 1 ->
             Buffer.add_string h.block (Bigstring.sub_string buf ~off:p ~len:pl);
             h.block_ends <- flag H2_frame.flag_end_stream;
             if flag H2_frame.flag_end_headers then end_block h
         | Continuation when sid = 1 ->
             Buffer.add_string h.block (Bigstring.sub_string buf ~off:p ~len:pl);
             if flag H2_frame.flag_end_headers then end_block h
         | Data when sid = 1 ->
             Buffer.add_string h.data (Bigstring.sub_string buf ~off:p ~len:pl);
             if flag H2_frame.flag_end_stream then h.ended <- true
         | Rst_stream when sid = 1 ->
             h.ended <- true;
             h.reset <- true
         | Goaway ->
             if H2_frame.last_stream_id r < 1 then begin
               h.ended <- true;
               h.reset <- true
             end
         | _ -> ());
        pos := !pos + H2_frame.consumed r
    | Partial -> go := false
    | Stream_error | Connection_error -> failwith ("Testing: the server wrote a bad frame: " ^ H2_frame.reason r)
  done;
  h.taken <- h.taken + !pos

(* The request body, as the windows allow. *)
let send_body t h =
  let rec go () =
    let left = String.length h.body - h.body_sent in
    let n = min 16384 (min left (min h.conn_window h.stream_window)) in
    if left > 0 && n > 0 then begin
      let piece = String.sub h.body h.body_sent n in
      h.body_sent <- h.body_sent + n;
      h.conn_window <- h.conn_window - n;
      h.stream_window <- h.stream_window - n;
      let end_stream = h.body_sent = String.length h.body in
      send t (with_payload (fun buf length -> H2_write.data_header buf ~off:0 ~stream_id:1 ~length ~end_stream) piece);
      go ()
    end
  in
  go ()

let h2_exchange ~limit t ~meth ~target ~headers ~body =
  let h =
    {
      reader = H2_frame.create ~max_frame_size:H2_settings.max_max_frame_size ();
      dec = Hpack_decoder.create ~max_header_list_size:(1 lsl 24) ~max_string_length:(1 lsl 22) ();
      dout = Bigstring.create (1 lsl 22);
      taken = 0;
      block = Buffer.create 256;
      block_ends = false;
      status = 0;
      headers = [];
      trailers = [];
      data = Buffer.create 1024;
      ended = false;
      reset = false;
      conn_window = 65535;
      stream_window = 65535;
      body;
      body_sent = 0;
    }
  in
  connect t (h2_preface ^ h2_head ~meth ~target ~headers ~end_stream:(body = ""));
  let finished () =
    read_frames t h;
    send_body t h;
    h.ended || t.closed
  in
  let _ = settle t ~limit ~finished in
  read_frames t h;
  close t;
  {
    protocol = Http2;
    status = h.status;
    headers = h.headers;
    body = Buffer.contents h.data;
    trailers = h.trailers;
    complete = h.ended && not h.reset;
  }

(* {2 Requests} *)

let request ?(protocol = Http1) ?(meth = "GET") ?(headers = []) ?(body = "") ?jar ?(limit = 600.) t target =
  let headers =
    match jar with
    | Some j when Hashtbl.length j > 0 && find_header "cookie" headers = None -> headers @ [ ("Cookie", cookie_header j) ]
    | _ -> headers
  in
  let r =
    match protocol with
    | Http1 ->
        connect t (h1_request ~meth ~target ~headers ~body);
        let _ = settle t ~limit ~finished:(fun () -> t.logged > 0 || t.closed) in
        let closed = t.closed in
        close t;
        parse_h1 ~meth ~closed (Conn.take t.conn)
    | Http2 ->
        if not t.sh.http2 then
          invalid_arg "Testing.request: HTTP/2 is off (http2 = false, or read_buffer < H2_session.min_read_buffer)";
        h2_exchange ~limit t ~meth ~target ~headers ~body
  in
  (match jar with Some j -> store j r | None -> ());
  r

let run ?protocol ?meth ?headers ?body handler target =
  request ?protocol ?meth ?headers ?body (create handler) target

(* {1 Checks} *)

let excerpt s = if String.length s > 200 then String.sub s 0 200 ^ "..." else s

let fail fmt = Printf.ksprintf failwith fmt

let check_status want (r : response) =
  if r.status <> want then fail "expected status %d, got %d (body: %S)" want r.status (excerpt r.body)

let check_header name want r =
  match header r name with
  | Some v when v = want -> ()
  | Some v -> fail "header %s: expected %S, got %S" name want v
  | None -> fail "header %s: expected %S, absent" name want

let check_body want (r : response) = if r.body <> want then fail "expected body %S, got %S" (excerpt want) (excerpt r.body)
