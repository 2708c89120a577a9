(* The handler's view of a connection slot. Every function writes into the
   slot's [out] buffer or records what the loop must send after it; nothing
   here allocates, except [grow_out] when a chunked body outruns both the
   buffer and the client. *)

open Httpz
open Slot

type t = Slot.t

exception Answered_twice = Slot.Answered_twice

let request c = (Slot.req c)
let buffer c = c.rbuf
let body_ready c =
  match c.body with
  | No_body | Body_ready -> true
  | Body_unread | Body_wanted | Body_streaming | Body_streamed -> false

let body c =
  if not (body_ready c) then
    invalid_arg "Ctx.body: the body has not arrived (see Ctx.body_ready, Ctx.await_body)";
  Span.make ~off:c.body_off ~len:c.body_len

let body_buffer c = c.body_src

let await_body c =
  match c.body with
  | Body_unread when c.resp = Idle -> c.body <- Body_wanted
  | Body_wanted -> ()
  | Body_unread -> invalid_arg "Ctx.await_body: the response was already started"
  | No_body | Body_ready -> invalid_arg "Ctx.await_body: the body is already here"
  | Body_streaming | Body_streamed -> invalid_arg "Ctx.await_body: the body is being streamed"

let now c = c.sh.now

(* Outside a loop (a handler driven directly), the clock itself. *)
let now_ms c = if c.sh.now_ms > 0 then c.sh.now_ms else Syscall.clock_monotonic_ns () / 1_000_000

let address name fd =
  match name (Syscall.unix_of_fd fd) with
  | Unix.ADDR_INET (a, port) ->
      let s = Unix.string_of_inet_addr a in
      (* An IPv4 client of a dual-stack socket shows as ::ffff:a.b.c.d. *)
      let s = if String.length s > 7 && String.sub s 0 7 = "::ffff:" then String.sub s 7 (String.length s - 7) else s in
      (s, port)
  | Unix.ADDR_UNIX _ -> ("unix", 0)
  | exception Unix.Unix_error _ -> ("-", 0)

let client c = address Unix.getpeername c.fd
let local c = address Unix.getsockname c.fd

(* The connection's address, looked up once per connection: an HTTP/2
   stream's exchange is a pooled record that another client's stream used
   last, so it holds no address of its own. *)
let peer_ip c =
  let c = Slot.carrier c in
  if c.peer_family = 0 then begin
    let r = Extra.peer_ip c.fd c.peer_ip in
    if r < 0 then begin
      Bytes.fill c.peer_ip 0 16 '\000';
      c.peer_family <- -1
    end
    else c.peer_family <- r
  end;
  c.peer_ip

(* {1 Head} *)

(* A call that answers after the response is complete is a second answer:
   H1 catches [Answered_twice], logs it and keeps the first. *)
let not_in_head c =
  if c.resp = Done then raise Answered_twice;
  invalid_arg "Ctx: no response head is open (call start first)"

let start c status =
  if c.resp = Done then raise Answered_twice;
  if c.resp <> Idle then invalid_arg "Ctx.start: the response was already started";
  take_out c;
  c.proto.begin_head c status;
  c.out_sent <- 0;
  c.sent <- 0;
  c.status <- status;
  c.resp <- Head;
  c.unlogged <- Unlogged_request;
  let code = Status.code status in
  c.no_content <- code < 200 || code = 204;
  c.suppress <- c.head_req || Status.forbids_content status

(* The fields go in the protocol's own form: text lines over HTTP/1.1
   (H1_response), HPACK over HTTP/2 (H2_response). *)

let header c name v =
  if c.resp <> Head then not_in_head c;
  c.proto.field c name v

let header_s c name v =
  if c.resp <> Head then not_in_head c;
  c.proto.field_s c name v

let header_int c name v =
  if c.resp <> Head then not_in_head c;
  c.proto.field_int c name v

let header_date c name v =
  if c.resp <> Head then not_in_head c;
  c.proto.field_date c name v

let header_date_cached c name cache v =
  if c.resp <> Head then not_in_head c;
  c.proto.field_date_cached c name cache v

let header_span c name src s =
  if c.resp <> Head then not_in_head c;
  c.proto.field_span c name src s

let header_bytes c name src ~off ~len =
  if c.resp <> Head then not_in_head c;
  if off < 0 || len < 0 || off > Bigstring.length src - len then
    invalid_arg "Ctx.header_bytes: range outside the buffer";
  c.proto.field_span c name src (Span.make ~off ~len)

let fields c p =
  if c.resp <> Head then not_in_head c;
  c.proto.fields c p

(* The head as text exists over HTTP/1.1 only: an HTTP/2 stream's [out]
   holds HPACK, which text written there would corrupt. *)
let head_buffer c =
  if c.mode = H2_stream then invalid_arg "Ctx.head_buffer: an HTTP/2 head is not text (use Ctx.header_bytes)";
  c.out

let head_pos c =
  if c.mode = H2_stream then invalid_arg "Ctx.head_pos: an HTTP/2 head is not text (use Ctx.header_bytes)";
  c.out_len

let set_head_pos c pos =
  if c.resp <> Head then not_in_head c;
  if c.mode = H2_stream then invalid_arg "Ctx.set_head_pos: an HTTP/2 head is not text (use Ctx.header_bytes)";
  if pos < 0 || pos > c.out_limit then invalid_arg "Ctx.set_head_pos: outside the head space";
  c.out_len <- pos

let version c = if c.mode = H2_stream then Version.Http_2 else Request.version (Slot.req c)

(* {1 Framing} The protocol's ([c.proto]): HTTP/1.1's is H1_response. *)

let end_head c ~content_length ~chunked =
  if c.resp <> Head then not_in_head c;
  if Slot.has_head_hooks c then Slot.run_head_hooks c;
  c.proto.end_head c ~content_length ~chunked;
  c.head_len <- c.out_len

(* {1 Bodies} *)

(* Bodies up to this size are copied behind the head in [out], so the
   response leaves in one contiguous send; larger ones go out from where
   they are, as the second span of one sendmsg (Syscall.sendv2). Copying a 16 KiB cached file
   into [out] first cost the 16 KiB benchmark measurably more server time
   than the second iovec does. *)
let copy_max = 1024

let body_string c s =
  let len = String.length s in
  end_head c ~content_length:len ~chunked:false;
  c.resp <- Done;
  if not c.suppress && len > 0 then begin
    c.resp_bytes <- len;
    if len <= copy_max && c.out_len + len <= Bigstring.length c.out then begin
      Bigstring.unsafe_blit_from_string s ~src_off:0 c.out ~dst_off:c.out_len ~len;
      c.out_len <- c.out_len + len
    end
    else begin
      c.ext <- Ext_string;
      c.ext_str <- s;
      c.ext_off <- 0;
      c.ext_len <- len
    end
  end

let check_range name b ~off ~len =
  if off < 0 || len < 0 || off > Bigstring.length b - len then
    invalid_arg name

let body_bigstring_gen c b ~off ~len ~stable =
  check_range "Ctx.body_bigstring: range outside the buffer" b ~off ~len;
  end_head c ~content_length:len ~chunked:false;
  c.resp <- Done;
  if not c.suppress && len > 0 then begin
    c.resp_bytes <- len;
    if len <= copy_max && c.out_len + len <= Bigstring.length c.out then begin
      Bigstring.blit ~src:b ~src_off:off ~dst:c.out ~dst_off:c.out_len ~len;
      c.out_len <- c.out_len + len
    end
    else begin
      c.ext <- Ext_bigstring;
      c.ext_bs <- b;
      c.ext_stable <- stable;
      c.ext_off <- off;
      c.ext_len <- len
    end
  end

let body_bigstring c b ~off ~len = body_bigstring_gen c b ~off ~len ~stable:false
let body_bigstring_stable c b ~off ~len = body_bigstring_gen c b ~off ~len ~stable:true

let body_file c ~fd ~off ~len ~close =
  (* Own the fd first, so it is closed even if the head cannot be ended. *)
  c.file_fd <- fd;
  c.file_close <- close;
  if off < 0 || len < 0 then invalid_arg "Ctx.body_file: negative offset or length";
  end_head c ~content_length:len ~chunked:false;
  c.resp <- Done;
  if c.suppress || len = 0 then release_file c
  else begin
    c.resp_bytes <- len;
    c.ext <- Ext_file;
    c.ext_off <- off;
    c.ext_len <- len
  end

let no_body c ~content_length =
  end_head c ~content_length ~chunked:false;
  c.resp <- Done

(* {1 Chunked bodies} *)

let chunked_start c =
  end_head c ~content_length:(-1) ~chunked:true;
  c.resp <- Chunked_body

let chunk_prefix c len =
  c.proto.chunk c len;
  c.chunks <- c.chunks + 1;
  c.resp_bytes <- c.resp_bytes + len

let in_chunked c = if c.resp <> Chunked_body then invalid_arg "Ctx: no chunked body is open"

let chunk c s =
  in_chunked c;
  let len = String.length s in
  if len > 0 && not c.suppress && not c.broken then begin
    chunk_prefix c len;
    Bigstring.unsafe_blit_from_string s ~src_off:0 c.out ~dst_off:c.out_len ~len;
    c.out_len <- c.out_len + len
  end

let chunk_bigstring c b ~off ~len =
  in_chunked c;
  check_range "Ctx.chunk_bigstring: range outside the buffer" b ~off ~len;
  if len > 0 && not c.suppress && not c.broken then begin
    chunk_prefix c len;
    Bigstring.blit ~src:b ~src_off:off ~dst:c.out ~dst_off:c.out_len ~len;
    c.out_len <- c.out_len + len
  end

let chunked_end c =
  in_chunked c;
  c.proto.last_chunk c;
  c.resp <- Done

let close_after c = c.close <- true

(* {1 Streamed bodies} *)

let fixed_start c ~length =
  if length < 0 then invalid_arg "Ctx.fixed_start: negative length";
  end_head c ~content_length:length ~chunked:false;
  (* Pieces go out as they are, with no chunk framing. *)
  c.raw <- true;
  c.resp <- Chunked_body

let waiting c = c.wait <> Running

let flush c k =
  in_chunked c;
  if waiting c then invalid_arg "Ctx.flush: the handler already waits";
  c.wait <- Flush_wanted;
  c.cont <- k

let read_body c ~limit k =
  (match c.body with
   | Body_wanted -> invalid_arg "Ctx.read_body: the body is read whole (await_body)"
   | No_body | Body_ready | Body_unread | Body_streaming | Body_streamed -> ());
  if waiting c then invalid_arg "Ctx.read_body: the handler already waits";
  c.wait <- Piece_wanted;
  c.body_limit <- limit;
  c.cont <- k

let body_piece c = Span.make ~off:c.piece_off ~len:c.piece_len
let body_ended c = c.body = Body_streamed && c.piece_len = 0

(* {1 Answering later} *)

(* At most one wait at a time, and its hook leaves [cancels] when it
   resumes: a stream that sleeps a million times keeps none of them. *)
let forget_cancel c f =
  match c.cancels with
  | g :: rest when g == f -> c.cancels <- rest
  | l -> if List.memq f l then c.cancels <- List.filter (fun g -> g != f) l

let check_can_wait c name =
  if waiting c then invalid_arg (name ^ ": the handler already waits");
  if c.resp = Done then invalid_arg (name ^ ": the response is complete")

let suspension name c k cancel =
  check_can_wait c name;
  c.wait <- Suspended;
  (match cancel with Some f -> c.cancels <- f :: c.cancels | None -> ());
  let gen = c.gen in
  let fired = ref false in
  fun () ->
    if not !fired then begin
      fired := true;
      (* A later gen: the request ended, and its hooks ran and went. *)
      (match cancel with Some f when c.gen = gen -> forget_cancel c f | _ -> ());
      c.sh.hooks.resume c gen k
    end

let suspend c k = suspension "Ctx.suspend" c k None
let suspend_with_cancel c ~cancel k = suspension "Ctx.suspend_with_cancel" c k (Some cancel)

let on_cancel c f = c.cancels <- f :: c.cancels

let sleep c seconds k =
  let tm = ref None in
  let resume =
    suspend_with_cancel c k ~cancel:(fun () -> match !tm with Some t -> Reactor.cancel t | None -> ())
  in
  tm := Some (Reactor.after (Reactor.current ()) seconds resume)

let when_ready c fd ~write k =
  let watch = ref None in
  let stop () = match !watch with Some w -> Reactor.unwatch w | None -> () in
  let resume = suspend_with_cancel c k ~cancel:stop in
  (* Level-triggered: the watch goes as it fires, before anything else. *)
  watch := Some (Reactor.watch (Reactor.current ()) fd ~write (fun () -> stop (); resume ()))

let when_readable c fd k = when_ready c fd ~write:false k
let when_writable c fd k = when_ready c fd ~write:true k

let busy_body = "The server is busy: try again in a moment.\n"

(* The application's error renderer, when one is set (Errors comes after
   this module, so it installs itself here). *)
let busy_hook : (t -> unit) option ref = ref None

(* The pool's queue is full: 503 at once, if the head is still ours to
   write (else the handler returns without answering, and the connection
   closes as after any handler that does). *)
let busy c =
  if c.resp = Idle then
    match !busy_hook with
    | Some answer -> answer c
    | None ->
        start c Status.Service_unavailable;
        header c Header_name.Retry_after "1";
        header c Header_name.Content_type "text/plain; charset=utf-8";
        body_string c busy_body

let offload c work k =
  check_can_wait c "Ctx.offload";
  let result = ref (Error Exit) in
  let resume = ref ignore in
  match
    Reactor.offload (Reactor.current ())
      (fun () -> result := (try Ok (work ()) with e -> Error e))
      (fun () -> !resume ())
  with
  | None -> busy c
  | Some job ->
      (* The continuation runs on this loop, after this returns: [resume]
         is set by then. *)
      resume :=
        suspend_with_cancel c
          (fun c -> match !result with Ok v -> k v c | Error e -> raise e)
          ~cancel:(fun () -> Reactor.drop job)

(* {1 Handing the connection over} *)

let secure c = c.ssl <> Openssl.none

let upgrade c k =
  if c.resp <> Head || c.status <> Status.Switching_protocols then
    invalid_arg "Ctx.upgrade: start a 101 Switching Protocols response first";
  if Slot.has_head_hooks c then Slot.run_head_hooks c;
  c.proto.switch c;
  c.head_len <- c.out_len;
  c.resp <- Done;
  c.upgrade <- k

(* {1 Middleware hooks} *)

let on_head c f =
  if c.resp <> Idle && c.resp <> Head then invalid_arg "Ctx.on_head: the head is already ended";
  Slot.add_head_hook c f

let on_complete c f = Slot.add_done_hook c f

let status_code c = if c.resp = Idle then 0 else Status.code c.status
let completed c = c.mw.done_complete
let head_request c = c.head_req

(* What the access log counts (Access_log.body_sent): the whole body once
   complete, else what left after the head, never more than the body. *)
let body_bytes_sent c =
  if c.mw.done_complete then c.resp_bytes
  else
    let n = if c.mode = H2_stream then c.sent else c.sent - c.head_len in
    if n <= 0 then 0 else if n > c.resp_bytes then c.resp_bytes else n

let elapsed_ns c = let m = c.mw in if m.hooks_ns = 0 then 0 else Syscall.clock_monotonic_ns () - m.hooks_ns

let request_id c = c.mw.request_id
(* [hooked]: the request's end clears it, like the hooks. *)
let set_request_id c id =
  (Slot.mw c).request_id <- id;
  c.hooked <- true
let route_pattern c = c.mw.route_pattern
(* Only for a request with hooks: without middleware nothing reads it,
   and the request pays one test. *)
let set_route_pattern c p = if c.hooked && c.mw.route_pattern != p then c.mw.route_pattern <- p

external of_conn : Slot.t -> t = "%identity"
external to_conn : t -> Slot.t = "%identity"
