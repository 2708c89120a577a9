(* H2_client against real servers over TCP on 127.0.0.1, h2c with prior
   knowledge: `httpz serve` (bin/main.exe, next to this test in _build)
   and h2o (/usr/bin/h2o), each started here on a fresh port over a
   temporary directory of files, and stopped at the end. 100 concurrent
   streams on one connection, and a 10 MiB download through a 16 KiB
   stream window; every body is compared byte for byte and by sha256
   (sha256sum). Bounded: 60 s per connection. *)

open Httpz
module Cl = H2_client

let deadline_s = 60.

let sizes = [| 0; 1; 100; 4095; 16384; 16385; 70_000; 200_000; 1_000_000; 33 |]

let with_dir f =
  let dir = Printf.sprintf "/tmp/h2client-interop-%d-%d" (Unix.getpid ()) (Random.int 1_000_000) in
  Unix.mkdir dir 0o755;
  Unix.chmod dir 0o755;
  let write name n =
    let oc = open_out_bin (Filename.concat dir name) in
    output_string oc (H2client_pair.big_string n);
    close_out oc;
    Unix.chmod (Filename.concat dir name) 0o644
  in
  Array.iteri (fun i n -> write (Printf.sprintf "f%d.bin" i) n) sizes;
  write "big.bin" (10 lsl 20);
  Fun.protect ~finally:(fun () -> ignore (Sys.command ("rm -rf " ^ Filename.quote dir))) (fun () -> f dir)

let free_port () =
  let s = Unix.socket PF_INET SOCK_STREAM 0 in
  Unix.setsockopt s SO_REUSEADDR true;
  Unix.bind s (ADDR_INET (Unix.inet_addr_loopback, 0));
  let port = match Unix.getsockname s with ADDR_INET (_, p) -> p | _ -> assert false in
  Unix.close s;
  port

let connect port =
  let s = Unix.socket PF_INET SOCK_STREAM 0 in
  Unix.connect s (ADDR_INET (Unix.inet_addr_loopback, port));
  Unix.setsockopt s TCP_NODELAY true;
  s

let wait_listening port =
  let t0 = Unix.gettimeofday () in
  let rec go () =
    match connect port with
    | s -> Unix.close s
    | exception Unix.Unix_error _ ->
        if Unix.gettimeofday () -. t0 > 15. then Alcotest.fail "server did not start";
        Unix.sleepf 0.05;
        go ()
  in
  go ()

let with_server argv port f =
  let devnull = Unix.openfile "/dev/null" [ O_RDWR ] 0 in
  let pid = Unix.create_process argv.(0) argv devnull devnull devnull in
  Unix.close devnull;
  Fun.protect
    ~finally:(fun () ->
      (try Unix.kill pid Sys.sigterm with Unix.Unix_error _ -> ());
      ignore (Unix.waitpid [] pid))
    (fun () ->
      wait_listening port;
      f ())

let httpz_exe () = Filename.concat (Filename.dirname Sys.executable_name) "../../../../bin/main.exe"

let with_httpz dir f =
  let port = free_port () in
  let io = Option.value (Sys.getenv_opt "HTTPZ_IO") ~default:"epoll" in
  with_server
    [| httpz_exe (); "serve"; "--host"; "127.0.0.1"; "--port"; string_of_int port; "--dir"; dir; "--workers"; "1";
       "--io"; io |]
    port
    (fun () -> f port)

let with_h2o dir f =
  let port = free_port () in
  let conf = Filename.concat dir "h2o.conf" in
  let oc = open_out conf in
  Printf.fprintf oc
    "listen:\n  host: 127.0.0.1\n  port: %d\nnum-threads: 1\nerror-log: /dev/null\nhosts:\n  default:\n    paths:\n      /:\n        file.dir: %s\n"
    port dir;
  close_out oc;
  with_server [| "/usr/bin/h2o"; "-c"; conf |] port (fun () -> f port)

(* {1 One connection, driven to the end of its requests} *)

type conn = {
  cl : Cl.t;
  fd : Unix.file_descr;
  cin : Bigstring.t;
  mutable cin_len : int;
  head : Bigstring.t;
  wbuf : Bytes.t;
  wbig : Bigstring.t;
  bodies : (int, Buffer.t) Hashtbl.t;
  status : (int, int) Hashtbl.t;
  mutable ended : int;
}

let open_conn ?client port =
  let cl = match client with Some f -> f () | None -> Cl.create () in
  {
    cl;
    fd = connect port;
    cin = Bigstring.create (1 lsl 18);
    cin_len = 0;
    head = Bigstring.create 65536;
    wbuf = Bytes.create 65536;
    wbig = Bigstring.create 65536;
    bodies = Hashtbl.create 128;
    status = Hashtbl.create 128;
    ended = 0;
  }

let flush c =
  while Cl.has_output c.cl do
    let n = Cl.next_output c.cl c.wbig ~off:0 ~len:65536 in
    let s = Bigstring.sub_string c.wbig ~off:0 ~len:n in
    let sent = ref 0 in
    while !sent < n do
      sent := !sent + Unix.write_substring c.fd s !sent (n - !sent)
    done
  done

let feed c =
  let pos = ref 0 and go = ref true in
  while !go do
    let ev = Cl.received c.cl c.cin ~off:!pos ~len:(c.cin_len - !pos) ~head:c.head in
    let sid = Cl.event_stream c.cl in
    (match ev with
    | Cl.Need_more -> go := false
    | Connection_error ->
        Alcotest.failf "connection error: %s %s (%s)" (H2_error.to_string (Cl.error c.cl))
          (Cl.failure_to_string (Cl.failure c.cl)) (Cl.reason c.cl)
    | Response ->
        Hashtbl.replace c.status sid (Cl.status c.cl);
        if Cl.event_end_stream c.cl then c.ended <- c.ended + 1
    | Data ->
        let len = Cl.event_data_len c.cl in
        Buffer.add_string (Hashtbl.find c.bodies sid) (Bigstring.sub_string c.cin ~off:(Cl.event_data_off c.cl) ~len);
        Cl.consumed c.cl ~stream:sid len;
        if Cl.event_end_stream c.cl then c.ended <- c.ended + 1
    | Trailers -> c.ended <- c.ended + 1
    | Reset -> Alcotest.failf "stream %d reset: %s" sid (H2_error.to_string (Cl.event_error c.cl))
    | Goaway -> Alcotest.failf "GOAWAY %d" (Cl.goaway_last_stream c.cl)
    | Interim | Settings | Window_update | Ping_ack -> ());
    pos := !pos + Cl.consumed_bytes c.cl
  done;
  Bigstring.blit ~src:c.cin ~src_off:!pos ~dst:c.cin ~dst_off:0 ~len:(c.cin_len - !pos);
  c.cin_len <- c.cin_len - !pos

let run c ~until =
  let t0 = Unix.gettimeofday () in
  flush c;
  while not (until ()) do
    if Unix.gettimeofday () -. t0 > deadline_s then Alcotest.fail "timed out";
    match Unix.select [ c.fd ] [] [] 1.0 with
    | [], _, _ -> ()
    | _ ->
        let room = min (Bytes.length c.wbuf) (Bigstring.length c.cin - c.cin_len) in
        let n = Unix.read c.fd c.wbuf 0 room in
        if n = 0 then Alcotest.fail "server closed the connection";
        Bigstring.blit_from_string (Bytes.sub_string c.wbuf 0 n) ~src_off:0 c.cin ~dst_off:c.cin_len ~len:n;
        c.cin_len <- c.cin_len + n;
        feed c;
        flush c
  done

let get c path =
  (match Cl.start_request c.cl ~meth:"GET" ~scheme:"http" ~authority:"127.0.0.1" ~path with
  | Cl.Submitted -> ()
  | _ -> Alcotest.failf "request %s refused" path);
  Cl.header_s c.cl "user-agent" "httpz-h2client-test";
  (match Cl.send_request c.cl ~end_stream:true with Cl.Submitted -> () | _ -> Alcotest.fail "send_request");
  let id = Cl.request_stream c.cl in
  Hashtbl.replace c.bodies id (Buffer.create 1024);
  id

let sha256_files files =
  let ic = Unix.open_process_in ("sha256sum " ^ String.concat " " (List.map Filename.quote files)) in
  let l = List.map (fun _ -> List.hd (String.split_on_char ' ' (input_line ic))) files in
  ignore (Unix.close_process_in ic);
  l

(* Checks each (stream, file) by bytes and by sha256 of what arrived. *)
let check_bodies c dir pairs =
  let out = Filename.concat dir "got" in
  (try Unix.mkdir out 0o755 with Unix.Unix_error (EEXIST, _, _) -> ());
  let got =
    List.map
      (fun (id, file) ->
        Alcotest.(check int) (Printf.sprintf "stream %d status" id) 200 (Hashtbl.find c.status id);
        let body = Buffer.contents (Hashtbl.find c.bodies id) in
        (* every file is a prefix of [big] *)
        let expect = H2client_pair.big_string (Unix.stat (Filename.concat dir file)).st_size in
        Alcotest.(check int) (Printf.sprintf "stream %d length" id) (String.length expect) (String.length body);
        Alcotest.(check bool) (Printf.sprintf "stream %d bytes" id) true (body = expect);
        let f = Filename.concat out (Printf.sprintf "s%d" id) in
        let oc = open_out_bin f in
        output_string oc body;
        close_out oc;
        f)
      pairs
  in
  let want = sha256_files (List.map (fun (_, file) -> Filename.concat dir file) pairs) in
  Alcotest.(check (list string)) "sha256 of every body" want (sha256_files got)

let hundred_streams with_srv () =
  with_dir (fun dir ->
      with_srv dir (fun port ->
          let c = open_conn port in
          let pairs = List.init 100 (fun i -> let f = Printf.sprintf "f%d.bin" (i mod 10) in (get c ("/" ^ f), f)) in
          Alcotest.(check int) "100 streams open at once" 100 (Cl.active_streams c.cl);
          run c ~until:(fun () -> c.ended = 100);
          check_bodies c dir pairs;
          Unix.close c.fd))

let big_download with_srv () =
  with_dir (fun dir ->
      with_srv dir (fun port ->
          let c =
            open_conn ~client:(fun () -> Cl.create ~initial_window_size:16384 ~connection_window:65535 ()) port
          in
          let id = get c "/big.bin" in
          run c ~until:(fun () -> c.ended = 1);
          check_bodies c dir [ (id, "big.bin") ];
          Unix.close c.fd))

let available_h2o () = Sys.file_exists "/usr/bin/h2o"

let skip_unless ok f () = if ok () then f () else print_endline "h2o not installed: skipped"

let tests =
  let tc n f = Alcotest.test_case n `Slow f in
  [
    tc "httpz serve: 100 concurrent streams" (hundred_streams with_httpz);
    tc "httpz serve: 10 MiB, 16 KiB window" (big_download with_httpz);
    tc "h2o: 100 concurrent streams" (skip_unless available_h2o (hundred_streams with_h2o));
    tc "h2o: 10 MiB, 16 KiB window" (skip_unless available_h2o (big_download with_h2o));
  ]
