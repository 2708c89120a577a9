open Cmdliner

let read_all ic =
  let b = Buffer.create 4096 in
  let chunk = Bytes.create 4096 in
  let rec go () =
    let n = input ic chunk 0 4096 in
    if n > 0 then (Buffer.add_subbytes b chunk 0 n; go ())
  in
  go ();
  Buffer.contents b

let parse_cmd =
  let file =
    Arg.(value & pos 0 (some file) None
         & info [] ~docv:"FILE" ~doc:"File holding the raw request bytes (default: standard input).")
  in
  let json = Arg.(value & flag & info [ "json" ] ~doc:"Print one JSON object instead of text.") in
  let run file json =
    let input =
      match file with
      | None -> set_binary_mode_in stdin true; read_all stdin
      | Some f -> let ic = open_in_bin f in Fun.protect ~finally:(fun () -> close_in ic) (fun () -> read_all ic)
    in
    let report, outcome = Inspect.run ~json input in
    print_string report;
    Inspect.exit_code outcome
  in
  let doc = "show what the httpz parser sees in a raw HTTP/1.1 request" in
  let man = [
    `S Manpage.s_description;
    `P "Reads raw request bytes and prints the method, target, version, headers, framing and \
        body as the parser understood them, or the precise error and the HTTP status a server \
        answers it with.";
    `S Manpage.s_exit_status;
    `P "0: a complete, valid request. 1: an invalid request. 2: an incomplete request.";
    `S Manpage.s_examples;
    `Pre "printf 'GET / HTTP/1.1\\\\r\\\\nHost: a\\\\r\\\\n\\\\r\\\\n' | httpz parse --json";
  ] in
  Cmd.v (Cmd.info "parse" ~doc ~man ~exits:[]) Term.(const run $ file $ json)

(* Help written to a pipe or a file (`httpz serve --help | grep tls`)
   must be plain text: cmdliner renders it through groff, with overstrike
   for bold, unless TERM says the terminal is dumb. *)
let plain_help_when_not_a_tty () =
  let asks_help a = a = "--help" || String.length a > 7 && String.sub a 0 7 = "--help=" in
  if Array.exists asks_help Sys.argv && not (Unix.isatty Unix.stdout) then Unix.putenv "TERM" "dumb"

let () =
  plain_help_when_not_a_tty ();
  let doc = "zero-allocation HTTP/1.1 toolkit" in
  let cmds = [ parse_cmd ] @ Serve_cmd.cmds @ [ Check_cmd.cmd ] in
  exit (Cmd.eval' (Cmd.group (Cmd.info "httpz" ~version:"0.1.0" ~doc) cmds))
