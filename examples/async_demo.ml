(* Handlers that answer later, stream, read bodies as they arrive, offload
   blocking work, and mount the static-file handler under a prefix: the
   server library's asynchronous side, on one worker.

   async_demo.exe -p PORT -d DIR   (one worker, 127.0.0.1)
   GET  /sleep?ms=N        after N ms (a timer): "slept N\n"
   GET  /stream?n=N&ms=M   chunked: "chunk I\n" for I = 1..N, one every M ms,
                           each flushed to the client when produced
   POST /count             reads the body as it arrives (Content-Length or
                           chunked, any size, memory bounded):
                           "B bytes, sum S\n" (S = sum of the bytes mod 2^32)
   GET  /offload?ms=N      sleeps N ms in a blocking call on the thread pool:
                           "offloaded N\n" (503 at once when the pool's queue
                           is full: --offload-threads, --offload-queue)
   GET  /hello?name=X      "hello X\n", X decoded
   GET  /static/...        the files of DIR
   anything else           404

   With --stats-token TOKEN, the server's GET /__httpz/stats and the demo's own
   GET /gc (a full major collection, then "live_words N heap_words N\n"),
   which the end-to-end suite uses to see that waiting costs no memory
   that stays. *)

open Httpz
open Httpz_server
open Httpz_static

let text c status body =
  Ctx.start c status;
  Ctx.header c Header_name.Content_type "text/plain; charset=utf-8";
  Ctx.body_string c body

(* The request's path and query (decoded), allocated: this demo is about
   waiting, not about zero allocation. *)
let path_and_query c =
  let buf = Ctx.buffer c in
  let target = Span.to_string buf (Request.target (Ctx.request c)) in
  match String.index_opt target '?' with
  | None -> (target, [])
  | Some i ->
      let q = String.sub target (i + 1) (String.length target - i - 1) in
      (String.sub target 0 i, Form.pairs q)

let int_param q name ~default ~max =
  match List.assoc_opt name q with
  | Some v -> (match int_of_string_opt v with Some n when n >= 0 && n <= max -> Some n | _ -> None)
  | None -> Some default

let bad c = text c Status.Bad_request "bad parameters\n"

let sleep c q =
  match int_param q "ms" ~default:0 ~max:600_000 with
  | None -> bad c
  | Some ms -> Ctx.sleep c (float ms /. 1000.) (fun c -> text c Status.Ok (Printf.sprintf "slept %d\n" ms))

let stream c q =
  match (int_param q "n" ~default:10 ~max:1_000_000, int_param q "ms" ~default:100 ~max:600_000) with
  | Some n, Some ms ->
      Ctx.start c Status.Ok;
      Ctx.header c Header_name.Content_type "text/plain; charset=utf-8";
      Ctx.chunked_start c;
      (* Write piece i, flush it, wait, go on: nothing is produced faster
         than the client takes it. *)
      let rec piece i c =
        if i > n then Ctx.chunked_end c
        else begin
          Ctx.chunk c (Printf.sprintf "chunk %d\n" i);
          Ctx.flush c (fun c -> if i = n then Ctx.chunked_end c else Ctx.sleep c (float ms /. 1000.) (piece (i + 1)))
        end
      in
      piece 1 c
  | _ -> bad c

let count c =
  let bytes = ref 0 and sum = ref 0 in
  let rec next c =
    if Ctx.body_ended c then text c Status.Ok (Printf.sprintf "%d bytes, sum %d\n" !bytes !sum)
    else begin
      let buf = Ctx.body_buffer c and p = Ctx.body_piece c in
      let s = ref !sum in
      for i = Span.off p to Span.off p + Span.len p - 1 do
        s := !s + Char.code (Bigstring.unsafe_get buf i)
      done;
      sum := !s land 0xffff_ffff;
      bytes := !bytes + Span.len p;
      Ctx.read_body c ~limit:max_int next
    end
  in
  Ctx.read_body c ~limit:max_int next

let offload c q =
  match int_param q "ms" ~default:0 ~max:600_000 with
  | None -> bad c
  | Some ms ->
      Ctx.offload c
        (fun () -> Unix.sleepf (float ms /. 1000.))
        (fun () c -> text c Status.Ok (Printf.sprintf "offloaded %d\n" ms))

let hello c q =
  match List.assoc_opt "name" q with
  | Some name -> text c Status.Ok ("hello " ^ name ^ "\n")
  | None -> bad c

(* Only with --stats: a full major collection per request is a test aid,
   not something to offer any client. *)
let gc c =
  Gc.full_major ();
  let st = Gc.quick_stat () in
  text c Status.Ok (Printf.sprintf "live_words %d heap_words %d\n" (Gc.stat ()).Gc.live_words st.Gc.heap_words)

let handler ~stats static c =
  let meth = Request.meth (Ctx.request c) in
  let path, q = path_and_query c in
  match (meth, path) with
  | Meth.Get, "/sleep" -> sleep c q
  | Meth.Get, "/stream" -> stream c q
  | Meth.Post, "/count" -> count c
  | Meth.Get, "/offload" -> offload c q
  | Meth.Get, "/hello" -> hello c q
  | Meth.Get, "/gc" when stats -> gc c
  | (Meth.Get | Meth.Head), _ when String.length path >= 8 && String.sub path 0 8 = "/static/" ->
      Static.handler static c
  | _ -> text c Status.Not_found "not found\n"

let () =
  let port = ref 8080 and dir = ref "." and cert = ref "" and key = ref "" and io = ref Server.default_config.io
  and stats = ref ""
  and body_timeout = ref Server.default_config.body_timeout
  and threads = ref Server.default_config.offload_threads
  and queue = ref Server.default_config.offload_queue in
  Arg.parse
    [ ("-p", Arg.Set_int port, "PORT port (default 8080)"); ("-d", Arg.Set_string dir, "DIR served under /static/");
      ("--tls-cert", Arg.Set_string cert, "FILE serve HTTPS with this PEM certificate chain");
      ("--tls-key", Arg.Set_string key, "FILE and this PEM key");
      ("--io", Arg.Symbol ([ "uring"; "epoll" ], fun s -> io := if s = "epoll" then Server.Epoll else Server.Uring),
       " the backend (default uring)");
      ("--stats-token", Arg.Set_string stats, "TOKEN serve GET /__httpz/stats (to that bearer token) and GET /gc (for tests)");
      ("--offload-threads", Arg.Set_int threads, "N threads of the offload pool (default 4)");
      ("--offload-queue", Arg.Set_int queue, "N jobs that may wait for them (default 64 per thread)");
      ("--body-timeout", Arg.Set_float body_timeout, "SECONDS a request body's time (default 30)") ]
    (fun _ -> ()) "async_demo.exe [-p PORT] [-d DIR] [--tls-cert FILE --tls-key FILE] [--io uring|epoll] [--stats-token TOKEN]\n\
     \  [--offload-threads N] [--offload-queue N] [--body-timeout SECONDS]";
  let tls = if !cert = "" then None else Some (Server.tls ~cert_file:!cert ~key_file:!key) in
  match Static.create { Static.default_config with root = !dir; mount = "/static/" } with
  | Error e ->
      prerr_endline ("async_demo: " ^ e);
      exit 1
  | Ok static ->
      exit (Server.run { Server.default_config with port = !port; workers = 1; tls; io = !io; stats = (if !stats = "" then None else Some !stats);
                        offload_threads = !threads; offload_queue = !queue; body_timeout = !body_timeout }
           (handler ~stats:(!stats <> "") static))
