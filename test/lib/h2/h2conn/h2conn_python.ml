(* The cross-check with Python's h2 client (Debian python3-h2): one
   subprocess per scenario, talking to our H2_connection over a pipe. *)

open Httpz
open H2conn_client
module C = H2_connection

let events = H2conn_client.events

(* {1 Cross-check with Python's h2 client} *)

let python = "/usr/bin/python3"

let hex s = String.concat "" (List.init (String.length s) (fun i -> Printf.sprintf "%02x" (Char.code s.[i])))
let unhex h = String.init (String.length h / 2) (fun i -> Char.chr (int_of_string ("0x" ^ String.sub h (2 * i) 2)))

(* Our side: a tiny application answering each request, once its body is
   in, with "hello <path> <body bytes>", or 200000 patterned bytes for /big. *)
let serve s =
  let paths = Hashtbl.create 8 and got = Hashtbl.create 8 in
  let bodies = ref [] in
  let answer s sid =
    let path = Hashtbl.find paths sid in
    let body =
      if path = "/big" then String.init 200_000 (fun i -> Char.chr (i mod 251))
      else Printf.sprintf "hello %s %d" path (try Hashtbl.find got sid with Not_found -> 0)
    in
    let b = Bigstring.of_string body in
    bodies := b :: !bodies;
    C.start_response s.c ~stream:sid ~status:200;
    C.header_int s.c Header_name.Content_length (String.length body);
    ignore (C.send_headers s.c ~end_stream:false);
    ignore (C.send_data s.c ~stream:sid b ~off:0 ~len:(String.length body) ~end_stream:true)
  in
  s.on_headers <-
    (fun s sid ->
      Hashtbl.replace paths sid (Span.to_string (C.head_buffer s.c) (H2_head.path (C.head s.c)));
      if C.event_end_stream s.c then answer s sid);
  s.on_data <-
    (fun s sid data fin ->
      Hashtbl.replace got sid ((try Hashtbl.find got sid with Not_found -> 0) + String.length data);
      if fin then answer s sid)

let run_h2_client scenario () =
  let script = Filename.temp_file "httpz_h2_client" ".py" in
  Fun.protect
    ~finally:(fun () -> Sys.remove script)
    (fun () ->
      let oc = open_out_bin script in
      output_string oc H2_client_script.source;
      close_out oc;
      let from_py, to_py = Unix.open_process_args python [| python; script; scenario |] in
      let s = create () in
      serve s;
      let result = ref None in
      (try
         while !result = None do
           let line = input_line from_py in
           if String.length line >= 4 && String.sub line 0 4 = "OUT " then begin
             feed s (unhex (String.sub line 4 (String.length line - 4)));
             output_string to_py (hex (raw_output s) ^ "\n");
             flush to_py
           end
           else if String.length line >= 5 && String.sub line 0 5 = "DONE " then
             result := Some (String.sub line 5 (String.length line - 5))
           else result := Some ("unexpected line: " ^ line)
         done
       with End_of_file -> result := Some "the h2 client died (is Debian's python3-h2 installed?)");
      ignore (Unix.close_process (from_py, to_py));
      Alcotest.(check (option string)) ("h2 client, " ^ scenario) (Some "ok") !result;
      let evs = events s in
      Alcotest.(check bool) "no connection error" false (C.failed s.c);
      if scenario = "reset" then
        Alcotest.(check bool) ("saw the reset in " ^ String.concat "; " evs) true (List.mem "reset 1 CANCEL" evs))

