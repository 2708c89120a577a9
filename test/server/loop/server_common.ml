(* What every live test of the server shares: servers on the backend of
   the current group, the test handler and its fixed answers, checks. *)

open Httpz
open Httpz_server
open Httpz_live

let find_sub = Httpz_test_support.find_sub

let backend = ref Server.Uring

let on_backend config = { config with Config.io = !backend }

let start ?(config = Server.default_config) handler =
  Httpz_live.start ~config:(on_backend config) handler

let with_server ?(config = Server.default_config) handler f =
  Httpz_live.with_server ~config:(on_backend config) handler f

(* {1 The test handler} *)

let hello = "hello, world\n"

(* No local closure here (it would allocate): the steady-state test
   measures this handler's path. *)
let is = Span.equal

let huge_size = 8 * 1024 * 1024
let huge = Bigstring.of_string (String.init huge_size (fun i -> Char.chr (65 + (i mod 23))))

let cancelled = ref 0

let handler c =
  let req = Ctx.request c and buf = Ctx.buffer c in
  let t = Request.target req in
  if is buf t "/" then begin
    Ctx.start c Status.Ok;
    Ctx.header c Header_name.Content_type "text/plain";
    Ctx.body_string c hello
  end
  else if is buf t "/echo" then begin
    if not (Ctx.body_ready c) then Ctx.await_body c
    else begin
      let b = Ctx.body c in
      Ctx.start c Status.Ok;
      Ctx.body_bigstring c (Ctx.body_buffer c) ~off:(Span.off b) ~len:(Span.len b)
    end
  end
  else if is buf t "/count" then begin
    if not (Ctx.body_ready c) then Ctx.await_body c
    else begin
      Ctx.start c Status.Ok;
      Ctx.body_string c (string_of_int (Span.len (Ctx.body c)))
    end
  end
  else if is buf t "/pipe" then begin
    (* Waits for a descriptor of its own: a pipe written by a timer. *)
    let r, w = Unix.pipe ~cloexec:true () in
    Unix.set_nonblock r;
    ignore
      (Reactor.after (Reactor.current ()) 0.05 (fun () ->
           ignore (Unix.write_substring w "p" 0 1 : int);
           Unix.close w)
        : Reactor.timer);
    Ctx.when_readable c r (fun c ->
        let b = Bytes.create 1 in
        let n = Unix.read r b 0 1 in
        Unix.close r;
        Ctx.start c Status.Ok;
        Ctx.body_string c (if n = 1 then "read " ^ Bytes.to_string b else "nothing"))
  end
  else if is buf t "/forever" then begin
    Ctx.on_cancel c (fun () -> incr cancelled);
    ignore (Ctx.suspend c (fun c -> Ctx.start c Status.Ok; Ctx.body_string c "never") : unit -> unit)
  end
  else if is buf t "/cancelled" then begin
    Ctx.start c Status.Ok;
    Ctx.body_string c (string_of_int !cancelled)
  end
  else if is buf t "/stream-raise" then begin
    Ctx.start c Status.Ok;
    Ctx.chunked_start c;
    Ctx.chunk c "first";
    Ctx.flush c (fun _ -> failwith "after the head")
  end
  else if is buf t "/client" then begin
    let addr, port = Ctx.client c in
    Ctx.start c Status.Ok;
    Ctx.body_string c (Printf.sprintf "%s %d" addr port)
  end
  else if is buf t "/refuse" then begin
    (* Answers without looking at the body. *)
    Ctx.start c Status.Method_not_allowed;
    Ctx.body_string c "no"
  end
  else if is buf t "/chunked" then begin
    Ctx.start c Status.Ok;
    Ctx.chunked_start c;
    Ctx.chunk c "one,";
    Ctx.chunk c "";
    Ctx.chunk c "two,";
    Ctx.chunk c "three";
    Ctx.chunked_end c
  end
  else if is buf t "/big-chunked" then begin
    Ctx.start c Status.Ok;
    Ctx.chunked_start c;
    let s = String.make 10_000 'x' in
    for _ = 1 to 100 do Ctx.chunk c s done;
    Ctx.chunked_end c
  end
  else if is buf t "/big" then begin
    Ctx.start c Status.Ok;
    Ctx.body_string c (String.make 200_000 'b')
  end
  else if is buf t "/huge" then begin
    Ctx.start c Status.Ok;
    Ctx.body_bigstring c huge ~off:0 ~len:(Bigstring.length huge)
  end
  else if is buf t "/raise" then failwith "boom"
  else if is buf t "/unanswered" then Ctx.start c Status.Ok
  else if is buf t "/bad-header" then begin
    Ctx.start c Status.Ok;
    Ctx.header c Header_name.Content_type "a\r\nInjected: yes";
    Ctx.body_string c "never"
  end
  else if is buf t "/close" then begin
    Ctx.close_after c;
    Ctx.start c Status.Ok;
    Ctx.body_string c "bye"
  end
  else if is buf t "/no-content" then begin
    Ctx.start c Status.No_content;
    Ctx.body_string c "dropped"
  end
  else begin
    (* Echo the target: shows which request a response answers. *)
    Ctx.start c Status.Ok;
    Ctx.body_bigstring c buf ~off:(Span.off t) ~len:(Span.len t)
  end

let check_status = Alcotest.(check int)
let check_str = Alcotest.(check string)
let check_hdr r name v = Alcotest.(check (option string)) name v (header r name)

let elapsed f =
  let t0 = Unix.gettimeofday () in
  let v = f () in
  (v, Unix.gettimeofday () -. t0)

let stats_token = "t0ken"
let get_stats = stats_request ~token:stats_token

(* /proc files report a length of 0: read a line instead. *)
let read_proc path =
  let ic = open_in path in
  Fun.protect ~finally:(fun () -> close_in ic) (fun () -> input_line ic)
