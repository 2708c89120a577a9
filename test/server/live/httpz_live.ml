open Httpz_server

let find_sub = Httpz_test_support.find_sub

(* {1 Servers} *)

type server = { pid : int; port : int; stderr_file : string }

let start_timeout = 5.0

let wait_exit ?(timeout = 15.0) pid =
  let deadline = Unix.gettimeofday () +. timeout in
  let rec loop () =
    match Unix.waitpid [ Unix.WNOHANG ] pid with
    | 0, _ ->
        if Unix.gettimeofday () > deadline then begin
          Unix.kill pid Sys.sigkill;
          ignore (Unix.waitpid [] pid);
          Alcotest.fail "server did not exit in time"
        end;
        Unix.sleepf 0.01;
        loop ()
    | _, st -> st
  in
  loop ()

let read_or_empty path = try Httpz_test_support.read_file path with Sys_error _ -> ""

let stderr_of s = read_or_empty s.stderr_file

let kill s =
  (try Unix.kill s.pid Sys.sigkill with Unix.Unix_error _ -> ());
  (try ignore (Unix.waitpid [] s.pid) with Unix.Unix_error _ -> ());
  try Sys.remove s.stderr_file with Sys_error _ -> ()

(* The child never returns into the test runner: it would run the
   remaining tests and the parent's at_exit a second time. *)
let in_child ~stderr_file f =
  (try
     let efd = Unix.openfile stderr_file [ Unix.O_WRONLY; Unix.O_APPEND ] 0o600 in
     Unix.dup2 efd Unix.stderr;
     Unix.close efd
   with Unix.Unix_error _ -> ());
  let code =
    try f ()
    with e ->
      prerr_endline (Printexc.to_string e);
      3
  in
  Unix._exit code

let spawn serve =
  let rd, wr = Unix.pipe ~cloexec:true () in
  let stderr_file = Filename.temp_file "httpz_live" ".err" in
  flush_all ();
  match Unix.fork () with
  | 0 ->
      Unix.close rd;
      let on_listen port =
        let s = string_of_int port ^ "\n" in
        ignore (Unix.write_substring wr s 0 (String.length s) : int);
        Unix.close wr
      in
      in_child ~stderr_file (fun () -> serve ~on_listen)
  | pid ->
      Unix.close wr;
      let s = { pid; port = 0; stderr_file } in
      let buf = Bytes.create 16 in
      let got =
        match Unix.select [ rd ] [] [] start_timeout with
        | [], _, _ -> ""
        | _ -> Bytes.sub_string buf 0 (Unix.read rd buf 0 (Bytes.length buf))
      in
      Unix.close rd;
      (* Nothing (a timeout) or end of file (the child exited first). *)
      match int_of_string_opt (String.trim got) with
      | Some port -> { s with port }
      | None ->
          let log = stderr_of s in
          kill s;
          Alcotest.failf "server did not start; stderr:\n%s" log

let start ?(config = Server.default_config) handler =
  spawn (fun ~on_listen ->
      Server.run { config with host = "127.0.0.1"; port = 0; on_listen } handler)

let stop s =
  Unix.kill s.pid Sys.sigterm;
  let st = wait_exit s.pid in
  let log = stderr_of s in
  (try Sys.remove s.stderr_file with Sys_error _ -> ());
  (match st with
   | Unix.WEXITED 0 -> ()
   | _ -> Alcotest.failf "server did not exit 0; stderr:\n%s" log);
  log

let killing s f =
  match f () with
  | v -> v
  | exception e ->
      prerr_endline ("SERVER STDERR:\n" ^ stderr_of s);
      kill s;
      raise e

let with_server ?config handler f =
  let s = start ?config handler in
  let v = killing s (fun () -> f s) in
  ignore (stop s : string);
  v

let run_in_child ~stderr_file f =
  flush_all ();
  match Unix.fork () with 0 -> in_child ~stderr_file f | pid -> wait_exit pid

(* {1 A raw client} *)

type client = { fd : Unix.file_descr; mutable pending : string }

let io_timeout = 5.0

let connect port =
  let fd = Unix.socket Unix.PF_INET Unix.SOCK_STREAM 0 in
  Unix.setsockopt_float fd Unix.SO_RCVTIMEO io_timeout;
  Unix.setsockopt_float fd Unix.SO_SNDTIMEO io_timeout;
  Unix.connect fd (Unix.ADDR_INET (Unix.inet_addr_loopback, port));
  { fd; pending = "" }

let fd c = c.fd
let pending c = c.pending
let close c = try Unix.close c.fd with Unix.Unix_error _ -> ()

let with_client port f =
  let c = connect port in
  Fun.protect ~finally:(fun () -> close c) (fun () -> f c)

let send c s =
  let n = String.length s in
  let off = ref 0 in
  while !off < n do
    off := !off + Unix.write_substring c.fd s !off (n - !off)
  done

let chunk = Bytes.create 65536

let recv_more c =
  match Unix.read c.fd chunk 0 (Bytes.length chunk) with
  | 0 -> false
  | n ->
      c.pending <- c.pending ^ Bytes.sub_string chunk 0 n;
      true
  | exception Unix.Unix_error ((Unix.EAGAIN | Unix.EWOULDBLOCK), _, _) ->
      Alcotest.fail "timed out waiting for the server"
  | exception Unix.Unix_error (Unix.ECONNRESET, _, _) -> false

let take c n =
  while String.length c.pending < n do
    if not (recv_more c) then Alcotest.failf "connection closed, wanted %d bytes" n
  done;
  let s = String.sub c.pending 0 n in
  c.pending <- String.sub c.pending n (String.length c.pending - n);
  s

let take_line c =
  let rec go () =
    let i = find_sub c.pending "\r\n" in
    if i >= 0 then String.sub (take c (i + 2)) 0 i
    else if recv_more c then go ()
    else Alcotest.fail "connection closed inside a line"
  in
  go ()

let read_until_eof c =
  while recv_more c do () done;
  let s = c.pending in
  c.pending <- "";
  s

let at_eof c = c.pending = "" && not (recv_more c)

(* {1 Responses} *)

type response = { status : int; headers : (string * string) list; body : string }

let header r name = List.assoc_opt (String.lowercase_ascii name) r.headers

let header_exn r name =
  match header r name with Some v -> v | None -> Alcotest.failf "no %s header" name

let is_digit ch = ch >= '0' && ch <= '9'

let read_head c =
  let line = take_line c in
  let status =
    if String.length line >= 12 && String.sub line 0 7 = "HTTP/1." && line.[8] = ' '
       && is_digit line.[9] && is_digit line.[10] && is_digit line.[11]
    then int_of_string (String.sub line 9 3)
    else Alcotest.failf "bad status line %S" line
  in
  let rec fields acc =
    match take_line c with
    | "" -> List.rev acc
    | l -> (
        match String.index_opt l ':' with
        | None -> Alcotest.failf "header line without a colon: %S" l
        | Some i ->
            let v = String.trim (String.sub l (i + 1) (String.length l - i - 1)) in
            fields ((String.lowercase_ascii (String.sub l 0 i), v) :: acc))
  in
  (status, fields [])

let read_chunked c =
  let b = Buffer.create 256 in
  let rec chunks () =
    let line = take_line c in
    let digits = match String.index_opt line ';' with Some i -> String.sub line 0 i | None -> line in
    match int_of_string_opt ("0x" ^ String.trim digits) with
    | None -> Alcotest.failf "bad chunk size line %S" line
    | Some 0 ->
        (* Trailer fields, up to the empty line. *)
        while take_line c <> "" do () done
    | Some size ->
        Buffer.add_string b (take c size);
        if take_line c <> "" then Alcotest.fail "chunk data not followed by CRLF";
        chunks ()
  in
  chunks ();
  Buffer.contents b

let read_response ?(head = false) c =
  let status, headers = read_head c in
  let r = { status; headers; body = "" } in
  if head || status < 200 || status = 204 || status = 304 then r
  else
    match header r "content-length", header r "transfer-encoding" with
    | Some n, _ -> (
        match int_of_string_opt n with
        | Some n when n >= 0 -> { r with body = take c n }
        | _ -> Alcotest.failf "bad Content-Length %S" n)
    | None, Some "chunked" -> { r with body = read_chunked c }
    | None, _ -> { r with body = read_until_eof c }

let exchange ?head port raw =
  with_client port (fun c ->
      send c raw;
      let r = read_response ?head c in
      if not (at_eof c) then
        Alcotest.failf "bytes after the response (status %d): %S" r.status (pending c);
      r)

let get path = Printf.sprintf "GET %s HTTP/1.1\r\nHost: t\r\n\r\n" path

(* {1 The statistics endpoint} *)

let stats_request ~token =
  Printf.sprintf "GET /__httpz/stats HTTP/1.1\r\nHost: t\r\nAuthorization: Bearer %s\r\n\r\n" token

let stats_field json name =
  let key = "\"" ^ name ^ "\":" in
  let i = find_sub json key in
  if i < 0 then Alcotest.failf "no %s in %s" name json;
  let start = ref (i + String.length key) in
  while !start < String.length json && json.[!start] = ' ' do incr start done;
  let j = ref !start in
  while !j < String.length json && (json.[!j] = '-' || is_digit json.[!j]) do incr j done;
  match int_of_string_opt (String.sub json !start (!j - !start)) with
  | Some v -> v
  | None -> Alcotest.failf "%s is not an integer in %s" name json
