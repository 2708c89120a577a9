open Httpz

exception Answered_twice

(* WebSocket (Ws) and other protocols add their per-connection state. *)
type session = ..
type session += No_session

type stream_state = {
  mutable stream : int;
  mutable peer_done : bool;
  mutable fin_queued : bool;
  mutable window_wait : int;
  mutable whole_credited : int;
  mutable conn_debt : int;
}

let new_stream_state () =
  { stream = 0; peer_done = false; fin_queued = false; window_wait = -1; whole_credited = 0; conn_debt = 0 }

let no_stream_state = new_stream_state ()

type hooks = {
  mutable handler : t -> unit;
  mutable app : t -> unit;
  mutable log : t -> bool -> bool -> unit;
  mutable resume : t -> int -> (t -> unit) -> unit;
}

and shared = {
  date : Date.Cache.t;
  server_lines : string array;
  headers : string;
  mutable now : int;
  mutable tick : int;
  mutable now_ms : int;
  mutable draining : bool;
  mutable dev_errors : bool;
  empty : Bigstring.t;
  read_buffer : int;
  write_buffer : int;
  max_body : int;
  header_ticks : int;
  idle_ticks : int;
  body_ticks : int;
  write_ticks : int;
  handler_ticks : int;
  reads : Buffer_pool.t;
  heads : Buffer_pool.t;
  writes : Buffer_pool.t;
  bodies : Buffer_pool.t;
  scratch : Bigstring.t;
  limits : Request.limits;
  parse : Parse_states.t;
  hooks : hooks;
  mutable http2 : bool;
      (** HTTP/2 is on: ALPN "h2" and the h2c preface turn a connection
          into one ({!H2_session}) *)
  mutable last_request : int;  (** [max_int]: no limit; [-1]: draining *)
  h2_free : h2 Stack.t;  (** HTTP/2 sessions not in use, for the next h2 connection *)
  mutable exchanges_free : t array;
  mutable nexchanges_free : int;  (** exchange slots not in use (HTTP/2 streams) *)
}

and protocol = {
  begin_head : t -> Httpz.Status.t -> unit;
      (** starts a response head in [out] (HTTP/1.1: the status line, Date
          and the server's own fields) and sets [out_len] *)
  field : t -> Httpz.Header_name.t -> string -> unit;
  field_s : t -> string -> string -> unit;
  field_int : t -> Httpz.Header_name.t -> int -> unit;
  field_date : t -> Httpz.Header_name.t -> int -> unit;
  field_date_cached : t -> Httpz.Header_name.t -> Httpz.Date.Cache.t -> int -> unit;
  field_span : t -> Httpz.Header_name.t -> Httpz.Bigstring.t -> Httpz.Span.t -> unit;
      (** the handler's fields ({!Ctx.header} and the like): each checks
          its field as {!Httpz.Response}'s writers do and writes it whole
          into [out] in the protocol's own form, or raises
          ([Httpz.Response.Invalid_field], [Httpz.Response.No_space])
          having written nothing *)
  fields : t -> Httpz.Prepared_fields.t -> unit;  (** a prepared set ({!Ctx.fields}) *)
  end_head : t -> content_length:int -> chunked:bool -> unit;
      (** adds the framing fields and ends the head; decides whether the
          connection stays open after this response ([close]) and whether
          a streamed body is chunk-framed ([raw]: not) *)
  chunk : t -> int -> unit;
      (** makes room for a body piece of [n] bytes at [out_len] (letting the
          transport take what [out] holds first) and writes its framing *)
  last_chunk : t -> unit;  (** ends a streamed body *)
  switch : t -> unit;
      (** ends a 101 head and hands the connection over once it is sent;
          @raise Invalid_argument where the protocol cannot *)
}
(** How a response goes on the wire: the part of answering that depends on
    the protocol carrying the exchange. {!Ctx} calls these and knows no
    protocol; HTTP/1.1's are {!H1_response.protocol}. *)

and mode = H1_mode | H2_conn | H2_stream | Websocket

and h2 = {
  h2c : Httpz.H2_connection.t;
  mutable conn : t;
  mutable streams : t array;
  mutable nstreams : int;
  mutable ended : bool;
  mutable whole_bodies : int;
  mutable whole_pass : int;
}

and state = Free | Reading_head | Reading_body | Handling | Writing | Lingering
and response = Idle | Head | Chunked_body | Done

and unlogged = Logged | Unlogged_request | Unlogged_unparsed
and ext = No_ext | Ext_string | Ext_bigstring | Ext_file

and after = Then_next | Then_body | Then_close | Then_resume | Then_detach
and body = No_body | Body_ready | Body_unread | Body_wanted | Body_streaming | Body_streamed
and wait =
  | Running  (** the handler runs, or ran and asked for nothing *)
  | Suspended  (** it asked to answer later ({!Ctx.suspend}) and has not returned yet *)
  | Resumed  (** its continuation came before it returned: [cont] runs when it does *)
  | Flush_wanted  (** {!Ctx.flush}: write what [out] holds, then run [cont] *)
  | Piece_wanted  (** {!Ctx.read_body}: deliver the next body piece to [cont] *)
(** What the handler waits for: at most one thing at a time. *)

and timer =
  | No_timer
  | Idle_timer
  | Header_timer
  | Body_timer
  | Write_timer
  | Linger_timer
  | Handler_timer

and tls = No_tls | Tls_handshake | Tls_http1 | Tls_h2

and t = {
  slot : int;
  sh : shared;
  mutable fd : int;
  mutable listener : int;
  mutable ssl : Openssl.ssl;
  mutable tls : tls;
  mutable state : state;
  mutable timer : timer;
  mutable deadline : int;
  mutable rbuf : Bigstring.t;
  mutable rpos : int;
  mutable rlen : int;
  mutable body_start : int;
  mutable next_pos : int;
  mutable cpos : int;
  mutable pidx : int;
  mutable body_store : Bigstring.t;
  mutable body_src : Bigstring.t;
  mutable body_off : int;
  mutable body_len : int;
  mutable body_need : int;
  mutable body : body;
  mutable body_started : bool;
  mutable body_credit : int;
  mutable body_deadline : int;
  mutable piece_off : int;
  mutable piece_len : int;
  mutable body_limit : int;
  mutable in_buf : Bigstring.t;
  mutable in_off : int;
  mutable in_len : int;
  mutable head_req : bool;
  mutable served : int;
  mutable out : Bigstring.t;
  mutable out_limit : int;
  mutable out_len : int;
  mutable out_sent : int;
  mutable resp : response;
  mutable status : Status.t;
  mutable no_content : bool;
  mutable suppress : bool;
  mutable close : bool;
  mutable raw : bool;
  mutable chunks : int;
  mutable ext : ext;
  mutable ext_str : string;
  mutable ext_bs : Bigstring.t;
  mutable ext_stable : bool;
  mutable ext_off : int;
  mutable ext_len : int;
  mutable file_fd : int;
  mutable file_close : bool;
  mutable resp_bytes : int;
  mutable sent : int;
  mutable head_len : int;
  mutable unlogged : unlogged;
  mutable flushed : bool;
  mutable broken : bool;
  mutable held : bool;
  mutable more_output : bool;
  mutable gather : Gather.t;
  mutable unsent : int;
  mutable after : after;
  mutable gen : int;
  mutable wait : wait;
  mutable proto : protocol;
  mutable cont : t -> unit;
  mutable cancels : (unit -> unit) list;
  mutable upgrade : Unix.file_descr -> string -> unit;
  mutable session : session;
  peer : Bigstring.t;
  mutable peer_len : int;
  peer_ip : Bytes.t;
  mutable peer_family : int;
  mutable started_ns : int;
  mutable log_route : int;
  mutable tls_version : int;
  mutable mode : mode;
  mutable h2 : h2 option;  (** [H2_conn]: its session; [H2_stream]: its connection's *)
  h2s : stream_state;
  mutable sets : Prepared_fields.t array;
      (** [H2_stream]: the prepared sets among the head's fields (HPACK
          in [out]): set [i]'s literals at [\[set_marks.(3i),
          set_marks.(3i+1))], copied when its version was
          [set_marks.(3i+2)]; [\[||\]] until the exchange's first set *)
  mutable set_marks : int array;
  mutable nsets : int;
  mutable hooked : bool;
  mutable mw : middleware;
}

and middleware = {
  mutable head_hooks : (t -> unit) array;
  mutable nhead_hooks : int;
  mutable done_hooks : (t -> unit) array;
  mutable ndone_hooks : int;
  mutable hooks_ns : int;
  mutable done_complete : bool;
  mutable request_id : string;
  mutable route_pattern : string;
}

let no_string = ""

let new_middleware () =
  { head_hooks = [||]; nhead_hooks = 0; done_hooks = [||]; ndone_hooks = 0; hooks_ns = 0; done_complete = false;
    request_id = no_string; route_pattern = no_string }

(* Every slot's until its first hook: never written (each writer makes
   the slot a record of its own first), so a slot that never meets a
   middleware costs one word for it. *)
let no_middleware = new_middleware ()

let[@inline] mw c =
  if c.mw == no_middleware then c.mw <- new_middleware ();
  c.mw
let no_set = Httpz.Prepared_fields.create ~capacity:0 ()
let reserve = 256
let head_buffer = 4096

(* HTTP/2 exchanges kept for reuse, with their head buffers and parse
   states: thousands of streams can be in flight (128 per connection), and
   a stream that finds none allocates them anew (GC work, mmap). At most
   about 40 MiB kept after such a peak. *)
let stream_keep = 4096
let body_class = 65536
let tick_ms = 100
let ticks ms = (ms + tick_ms - 1) / tick_ms


let create_shared ~server_name ~read_buffer ~write_buffer ~max_body ~header_ms ~idle_ms ~body_ms
    ~write_ms ~handler_ms ~headers ~listener_headers ~keep =
  if server_name <> "" && not (Response.is_field_value server_name) then
    invalid_arg "Slot.create_shared: server_name is not a field value";
  let nop _ = () in
  (* Content-Length is bounded per use: [max_body] for a body read whole
     (Ctx.await_body), the handler's own limit for a streamed one. *)
  let limits = { Request.default_limits with max_head = read_buffer } in
  {
    date = Date.Cache.create ();
    server_lines =
      (* [""]: no Server field (server_header off). *)
      (let server = if server_name = "" then "" else "Server: " ^ server_name ^ "\r\n" in
       Array.map (fun extra -> server ^ headers ^ extra) listener_headers);
    headers;
    now = 0;
    tick = 0;
    now_ms = 0;
    draining = false;
    dev_errors = false;
    empty = Bigstring.create 0;
    read_buffer;
    write_buffer;
    max_body;
    header_ticks = ticks header_ms;
    idle_ticks = ticks idle_ms;
    body_ticks = ticks body_ms;
    write_ticks = ticks write_ms;
    handler_ticks = ticks handler_ms;
    reads = Buffer_pool.create ~size:read_buffer ~keep;
    heads = Buffer_pool.create ~size:head_buffer ~keep:stream_keep;
    writes = Buffer_pool.create ~size:(write_buffer + reserve) ~keep;
    bodies = Buffer_pool.create ~size:body_class ~keep:(min keep 16);
    scratch = Bigstring.create 16384;
    limits;
    parse = Parse_states.create ~limits ~keep:(keep + stream_keep);
    hooks =
      { handler = nop; app = nop; log = (fun _ _ _ -> ()); resume = (fun _ _ _ -> ()) };
    http2 = true;
    last_request = max_int;
    h2_free = Stack.create ();
    exchanges_free = [||];
    nexchanges_free = 0;
  }

(* Until a protocol takes the connection (H1.opened). *)
let no_protocol =
  let no _ = invalid_arg "Slot: the connection carries no protocol" in
  {
    begin_head = (fun c _ -> no c);
    field = (fun c _ _ -> no c);
    field_s = (fun c _ _ -> no c);
    field_int = (fun c _ _ -> no c);
    field_date = (fun c _ _ -> no c);
    field_date_cached = (fun c _ _ _ -> no c);
    field_span = (fun c _ _ _ -> no c);
    fields = (fun c _ -> no c);
    end_head = (fun c ~content_length:_ ~chunked:_ -> no c);
    chunk = (fun c _ -> no c);
    last_chunk = no;
    switch = no;
  }

let create sh ~slot ~peer =
  {
    slot;
    sh;
    fd = -1;
    listener = 0;
    ssl = Openssl.none;
    tls = No_tls;
    state = Free;
    timer = No_timer;
    deadline = -1;
    rbuf = sh.empty;
    rpos = 0;
    rlen = 0;
    body_start = 0;
    next_pos = 0;
    cpos = 0;
    pidx = Parse_states.none;
    (* Its body limit is set per request (H1). *)
    body_store = sh.empty;
    body_src = sh.empty;
    body_off = 0;
    body_len = 0;
    body_need = 0;
    body = No_body;
    body_started = false;
    body_credit = 0;
    body_deadline = 0;
    piece_off = 0;
    piece_len = 0;
    body_limit = 0;
    in_buf = sh.empty;
    in_off = 0;
    in_len = 0;
    head_req = false;
    served = 0;
    out = sh.empty;
    out_limit = 0;
    out_len = 0;
    out_sent = 0;
    resp = Idle;
    status = Status.Ok;
    no_content = false;
    suppress = false;
    close = false;
    raw = false;
    chunks = 0;
    ext = No_ext;
    ext_str = no_string;
    ext_bs = sh.empty;
    ext_stable = false;
    ext_off = 0;
    ext_len = 0;
    file_fd = -1;
    file_close = false;
    resp_bytes = 0;
    sent = 0;
    head_len = 0;
    unlogged = Logged;
    flushed = false;
    broken = false;
    held = false;
    more_output = false;
    gather = Gather.none;
    unsent = 0;
    after = Then_next;
    gen = 0;
    wait = Running;
    proto = no_protocol;
    cont = ignore;
    cancels = [];
    upgrade = (fun _ _ -> ());
    session = No_session;
    peer = (if peer then Bigstring.create 64 else sh.empty);
    peer_len = 0;
    peer_ip = Bytes.make 16 '\000';
    peer_family = 0;
    started_ns = 0;
    log_route = 0;
    tls_version = 0;
    mode = H1_mode;
    h2 = None;
    (* A connection slot never is a stream: its record is the shared
       one, never written. *)
    h2s = (if slot < 0 then new_stream_state () else no_stream_state);
    sets = [||];
    set_marks = [||];
    nsets = 0;
    hooked = false;
    mw = no_middleware;
  }

(* The peer buffer exists only for the access log, a reader of
   [started_ns]; the status totals are the other: without either, no
   clock is read per request. *)
let[@inline] timed c = Bigstring.length c.peer > 0
(* The request's access log ({!Access_log}): set by a handler, cleared once logged. *)
let[@inline] set_log_route c r = c.log_route <- r

let max_unflushed = 16 * 1024 * 1024
let unflushed = Printf.sprintf "Ctx.chunk: more than %d MiB of body without Ctx.flush" (max_unflushed lsr 20)

let[@inline] stamp c =
  (* A request starts: the log route a site chose for the last one (ended
     perhaps without a log line) is not this one's. *)
  if c.log_route <> 0 then c.log_route <- 0;
  if timed c || Totals.timed () then c.started_ns <- Syscall.clock_monotonic_ns ()

let with_room a n x =
  if n < Array.length a then a
  else begin
    let b = Array.make (max 8 (2 * n)) x in
    Array.blit a 0 b 0 n;
    b
  end

let run_cancels c =
  match c.cancels with
  | [] -> ()
  | l ->
      c.cancels <- [];
      List.iter (fun f -> try f () with e -> Log.error "a cancel hook raised %s" (Printexc.to_string e)) l

(* {1 Middleware hooks} Arrays kept by the slot for its life: the first
   registration on a slot makes them (8 each), later requests reuse them,
   so registering a closure made at start-up allocates nothing. *)

let no_hook : t -> unit = ignore

(* A wrapper called again for the same request (after Ctx.await_body the
   application runs twice) registers nothing twice. *)
let rec registered a f i = i >= 0 && (Array.unsafe_get a i == f || registered a f (i - 1))

let add_head_hook c f =
  let m = mw c in
  let n = m.nhead_hooks in
  if not (registered m.head_hooks f (n - 1)) then begin
  let a = with_room m.head_hooks n no_hook in
  if a != m.head_hooks then m.head_hooks <- a;
  Array.unsafe_set a n f;
  m.nhead_hooks <- n + 1;
  c.hooked <- true
  end

let add_done_hook c f =
  let m = mw c in
  let n = m.ndone_hooks in
  if not (registered m.done_hooks f (n - 1)) then begin
  let a = with_room m.done_hooks n no_hook in
  if a != m.done_hooks then m.done_hooks <- a;
  Array.unsafe_set a n f;
  m.ndone_hooks <- n + 1;
  if m.hooks_ns = 0 then m.hooks_ns <- Syscall.clock_monotonic_ns ();
  c.hooked <- true
  end

(* Emptied before they run, so none runs twice. One that raises is
   logged and the head goes on: hooks also run inside the server's own
   error answers (HTTP/2), where an exception has no handler to fail. A
   header writer moves nothing before it succeeds, so the head stays
   whole. *)
let run_head_hooks c =
  let m = c.mw in
  let n = m.nhead_hooks in
  m.nhead_hooks <- 0;
  for i = 0 to n - 1 do
    try (Array.unsafe_get m.head_hooks i) c
    with e -> Log.error "a response head hook raised %s" (Printexc.to_string e)
  done

let[@inline] has_head_hooks c = c.hooked && c.mw.nhead_hooks > 0

(* Innermost first, as the code after [next c] in nested wrappers would
   run. A hook that raises is logged; the others still run. *)
let run_done_hooks c complete =
  let m = c.mw in
  let n = m.ndone_hooks in
  m.ndone_hooks <- 0;
  m.done_complete <- complete;
  for i = n - 1 downto 0 do
    try (Array.unsafe_get m.done_hooks i) c
    with e -> Log.error "a completion hook raised %s" (Printexc.to_string e)
  done

(* The request is over however it ended: its completion hooks run if no
   response line took them (the exchange was cancelled before answering,
   or handed over), and nothing it registered survives into the next
   request on this slot. *)
let end_hooks c =
  let m = c.mw in
  if m.ndone_hooks > 0 then run_done_hooks c (c.resp = Done && not c.broken);
  m.nhead_hooks <- 0;
  m.hooks_ns <- 0;
  if m.request_id != no_string then m.request_id <- no_string;
  if m.route_pattern != no_string then m.route_pattern <- no_string;
  c.hooked <- false

(* A continuation of the request that just ended must not run. Its cancel
   hooks run now if the handler had not answered in full (client gone,
   timeout, shutdown); after a complete answer ([resp = Done], so callers
   run this before [reset_response]) they are dropped: undoing work that
   succeeded would be wrong. *)
let next_gen c =
  c.gen <- c.gen + 1;
  (match c.cancels with
   | [] -> ()
   | _ :: _ -> if c.resp = Done then c.cancels <- [] else run_cancels c);
  if c.hooked then end_hooks c

let log_response c complete =
  match c.unlogged with
  | Logged -> ()
  | Unlogged_request ->
      c.unlogged <- Logged;
      if c.hooked && c.mw.ndone_hooks > 0 then run_done_hooks c complete;
      c.sh.hooks.log c true complete
  | Unlogged_unparsed ->
      c.unlogged <- Logged;
      if c.hooked && c.mw.ndone_hooks > 0 then run_done_hooks c complete;
      c.sh.hooks.log c false complete

let read_scratch c =
  c.in_buf <- c.sh.scratch;
  c.in_off <- 0;
  c.in_len <- Bigstring.length c.sh.scratch

let carrier c = match c.mode, c.h2 with H2_stream, Some s -> s.conn | _ -> c

(* {1 Buffers} *)


let req c = Parse_states.request c.sh.parse c.pidx
let chunked c = Parse_states.chunked c.sh.parse c.pidx

(* The parse state (head parser, chunk decoder) goes with the read buffer:
   an idle connection holds neither. *)
let take_rbuf c =
  if Bigstring.length c.rbuf = 0 then begin
    c.rbuf <- Buffer_pool.take c.sh.reads;
    c.pidx <- Parse_states.take c.sh.parse
  end

(* An HTTP/2 exchange's [rbuf] holds only its request head: [need] bytes
   of it come from the small buffers when they fit. *)
let take_head_rbuf c need =
  if Bigstring.length c.rbuf = 0 then begin
    c.rbuf <-
      (if need <= head_buffer && c.sh.read_buffer > head_buffer then Buffer_pool.take c.sh.heads
       else Buffer_pool.take c.sh.reads);
    c.pidx <- Parse_states.take c.sh.parse
  end

(* An HTTP/2 exchange's [out] holds its response head (and small bodies):
   it starts as a small buffer too, which Ctx enlarges when a field needs
   more room. *)
let small_writes sh = Buffer_pool.size sh.writes > head_buffer
let small_out c = Bigstring.length c.out = head_buffer && small_writes c.sh

let take_out c =
  if Bigstring.length c.out = 0 then begin
    c.out <-
      (if c.mode = H2_stream && small_writes c.sh then Buffer_pool.take c.sh.heads
       else Buffer_pool.take c.sh.writes);
    c.out_limit <- Bigstring.length c.out - reserve
  end

let give_out c =
  Buffer_pool.give (if small_out c then c.sh.heads else c.sh.writes) c.out;
  c.out <- c.sh.empty;
  c.out_limit <- 0;
  c.out_len <- 0;
  c.out_sent <- 0

let give_rbuf c =
  let b = c.rbuf in
  Buffer_pool.give (if Bigstring.length b = head_buffer && c.sh.read_buffer > head_buffer then c.sh.heads else c.sh.reads) b;
  Parse_states.give c.sh.parse c.pidx;
  c.pidx <- Parse_states.none;
  c.rbuf <- c.sh.empty;
  c.rpos <- 0;
  c.rlen <- 0

let release_body c =
  if Bigstring.length c.body_store > 0 then begin
    Buffer_pool.give c.sh.bodies c.body_store;
    c.body_store <- c.sh.empty
  end;
  if c.body_src != c.sh.empty then c.body_src <- c.sh.empty;
  c.body_off <- 0;
  c.body_len <- 0

let release_idle c =
  if c.rpos >= c.rlen && Bigstring.length c.rbuf > 0 then give_rbuf c;
  if c.out_sent >= c.out_len && c.ext_len = 0 && c.gather.bytes = 0 && Bigstring.length c.out > 0 then give_out c

let set_tls c ssl =
  c.ssl <- ssl;
  c.tls <- (if ssl <> Openssl.none then Tls_handshake else No_tls);
  (* Released: the version stays for the log line of a cut response. *)
  if ssl <> Openssl.none then c.tls_version <- -1

let forget_tls c = set_tls c Openssl.none

let tls_established c ~h2 =
  c.tls <- (if h2 then Tls_h2 else Tls_http1);
  c.tls_version <- Openssl.version c.ssl

let release_file c =
  if c.file_fd >= 0 && c.file_close then ignore (Syscall.close c.file_fd : int);
  c.file_fd <- -1;
  c.file_close <- false

let release_all c =
  c.tls_version <- 0;
  c.unsent <- 0;
  c.more_output <- false;
  if c.gather != Gather.none then Gather.clear c.gather ~empty:c.sh.empty;
  release_file c;
  release_body c;
  give_rbuf c;
  give_out c

let reset_response c =
  release_file c;
  c.out_len <- 0;
  c.out_sent <- 0;
  c.resp <- Idle;
  c.status <- Status.Ok;
  c.no_content <- false;
  c.suppress <- false;
  c.raw <- false;
  c.chunks <- 0;
  c.ext <- No_ext;
  (* Drop references so a large body can be collected. *)
  (* Guarded: a pointer write is a write barrier (caml_modify), and these
     are most often already so. *)
  if c.ext_str != no_string then c.ext_str <- no_string;
  if c.ext_bs != c.sh.empty then c.ext_bs <- c.sh.empty;
  c.ext_stable <- false;
  c.ext_off <- 0;
  c.ext_len <- 0;
  c.resp_bytes <- 0;
  c.sent <- 0;
  c.head_len <- 0;
  c.flushed <- false;
  c.after <- Then_next;
  (* A write buffer grown past its class goes back (and is unmapped). *)
  if Bigstring.length c.out > Buffer_pool.size c.sh.writes then give_out c

let ensure_body_store c n =
  let cap = Bigstring.length c.body_store in
  if cap < n then begin
    let pool = c.sh.bodies in
    (* Chunked bodies grow: double, so the copies stay linear in the body. *)
    let size = if cap = 0 then n else max n (min (2 * cap) c.sh.max_body) in
    let b = Buffer_pool.take_at_least pool (max size 1) in
    if c.body_len > 0 then
      Bigstring.blit ~src:c.body_store ~src_off:0 ~dst:b ~dst_off:0 ~len:c.body_len;
    Buffer_pool.give pool c.body_store;
    c.body_store <- b
  end

let shift_to_front b ~from ~until =
  let n = until - from in
  if n > 0 && from > 0 then Bigstring.blit ~src:b ~src_off:from ~dst:b ~dst_off:0 ~len:n;
  n

let compact_out c =
  if c.out_sent > 0 then begin
    c.out_len <- shift_to_front c.out ~from:c.out_sent ~until:c.out_len;
    c.out_sent <- 0
  end

let grow_out c n =
  take_out c;
  compact_out c;
  let cap = Bigstring.length c.out - reserve in
  if cap < n then begin
    let size = ref (if cap < 4096 then 4096 else cap) in
    while !size < n do size := !size * 2 done;
    let b = Buffer_pool.take_at_least c.sh.writes (!size + reserve) in
    if c.out_len > 0 then Bigstring.blit ~src:c.out ~src_off:0 ~dst:b ~dst_off:0 ~len:c.out_len;
    let len = c.out_len in
    give_out c;
    c.out <- b;
    c.out_len <- len;
    c.out_limit <- Bigstring.length b - reserve
  end

(* {1 Timers} *)

let set_deadline c kind d =
  c.timer <- kind;
  c.deadline <- d

(* {2 The body clock} The slowest average rate at which a request body may
   arrive: every byte received moves the body's deadline by 1/min_body_rate
   s, never further than [body_timeout] ahead. A body trickling in a byte
   at a time is cut at [body_timeout]; a large upload at any useful speed
   is not. The same clock for an HTTP/1.1 body and an HTTP/2 stream's
   DATA, so a client cannot keep either alive with a byte per timeout. *)
let min_body_rate = 1024

let start_body_clock c =
  c.body_deadline <- c.sh.tick + c.sh.body_ticks + 1;
  c.body_credit <- 0;
  set_deadline c Body_timer c.body_deadline

(* [n] more body bytes arrived: they buy time at [min_body_rate] (the
   caller arms the timer at [body_deadline] when it waits for the body). *)
let body_progress c n =
  let per_tick = min_body_rate * tick_ms / 1000 in
  c.body_credit <- c.body_credit + n;
  if c.body_credit >= per_tick then begin
    let earned = c.body_credit / per_tick in
    c.body_credit <- c.body_credit - (earned * per_tick);
    let cap = c.sh.tick + c.sh.body_ticks + 1 in
    let d = c.body_deadline + earned in
    c.body_deadline <- (if d < cap then d else cap)
  end

(* +1: the current tick is already partly over, so a deadline [n] ticks
   away could fire up to one tick early. *)
let set_timer c kind n = set_deadline c kind (c.sh.tick + n + 1)

let clear_timer c =
  c.timer <- No_timer;
  c.deadline <- -1


let compact_rbuf c =
  if c.rpos > 0 then begin
    c.rlen <- shift_to_front c.rbuf ~from:c.rpos ~until:c.rlen;
    c.rpos <- 0
  end

let read_to_rbuf c =
  take_rbuf c;
  compact_rbuf c;
  c.in_buf <- c.rbuf;
  c.in_off <- c.rlen;
  c.in_len <- Bigstring.length c.rbuf - c.rlen
