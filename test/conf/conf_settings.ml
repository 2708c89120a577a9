(* Config.settings, the one table the command line and the configuration
   file are made from: every setting is read by its directive and its
   option to the same field, named by each in the errors of its bound,
   and keepalive_requests (added through the table alone) is enforced. *)

open Httpz_server

let read text =
  match Httpz_conf.Conf_file.read_string ~file:"/etc/httpz/t.conf" text with
  | Ok t -> Ok t.server
  | Error e -> Error e

(* A value each kind accepts, as the file writes it and as it reads. *)
let sample (type a) (s : a Config.spec) : string * a =
  match s.kind with
  | Config.Count -> ("7", 7)
  | Config.Bytes -> ("64k", 65536)
  | Config.Seconds -> ("1500ms", 1.5)
  | Config.Switch ->
      let d = s.get Config.default_config in
      ((if d then "off" else "on"), not d)

(* A value out of every bound of the table. *)
let out_of_bounds (type a) (s : a Config.spec) : a option =
  match s.kind with
  | Config.Count -> Some (-1)
  | Config.Bytes -> Some (-1)
  | Config.Seconds -> Some (-1.)
  | Config.Switch -> None

let test_directives () =
  List.iter
    (fun (Config.Setting s) ->
      if s.directive <> "" && s.set <> None then begin
        let text, v = sample s in
        match read (Printf.sprintf "root /tmp;\n%s %s;\n" s.directive text) with
        | Ok c -> Alcotest.(check bool) (s.directive ^ " " ^ text ^ " sets " ^ s.field) true (s.get c = v)
        | Error e -> Alcotest.failf "%s %s refused: %s" s.directive text e
      end)
    Config.settings

let test_bounds () =
  List.iter
    (fun (Config.Setting s) ->
      match (s.set, out_of_bounds s) with
      | Some set, Some bad -> (
          match Config.check (set Config.default_config bad) with
          | Error e -> Alcotest.(check string) (s.field ^ " out of bounds") (s.field ^ " " ^ s.bound) e
          | Ok () -> Alcotest.failf "%s: an out-of-bounds value passes" s.field)
      | _ -> ())
    Config.settings;
  Alcotest.(check bool) "keepalive_requests is a setting" true (Config.find "keepalive_requests" <> None)

let test_options () =
  let code, help, _ = Conf_live.run "serve --help=plain" in
  (* [Conf_live.run] has no deadline: a server started by mistake would
     hang the test, so every value below is refused before it binds. *)
  Alcotest.(check int) "help exits 0" 0 code;
  List.iter
    (fun (Config.Setting s) ->
      if s.flag <> "" && s.set <> None then begin
        Alcotest.(check bool) (s.flag ^ " in serve --help") true (Httpz_test_support.find_sub help s.flag >= 0);
        match out_of_bounds s with
        | Some _ ->
            let code, _, err = Conf_live.run (Printf.sprintf "serve -d /tmp -p 0 %s=-1" s.flag) in
            Alcotest.(check int) (s.flag ^ "=-1 exits 2") 2 code;
            Alcotest.(check bool) (s.flag ^ " named: " ^ err) true
              (Httpz_test_support.find_sub err (s.flag ^ " " ^ s.bound) >= 0)
        | None -> ()
      end)
    Config.settings

(* HTTP/1.1 in memory: three pipelined requests; the limit's last answer
   closes. *)
let test_keepalive_h1 () =
  let get = "GET / HTTP/1.1\r\nHost: t\r\n\r\n" in
  let requests = get ^ get ^ get in
  let count sub s =
    let n = ref 0 in
    for i = 0 to String.length s - String.length sub do
      if String.sub s i (String.length sub) = sub then incr n
    done;
    !n
  in
  let serve limit =
    let t =
      Testing.create ~config:{ Config.default_config with keepalive_requests = limit }
        (fun ctx -> Respond.text ctx "ok")
    in
    Testing.raw t requests
  in
  let out = serve 2 in
  Alcotest.(check int) "limit 2: two answers" 2 (count "HTTP/1.1 200" out);
  Alcotest.(check int) "... the second says close" 1 (count "Connection: close" out);
  let out = serve 0 in
  Alcotest.(check int) "no limit: three answers" 3 (count "HTTP/1.1 200" out);
  Alcotest.(check int) "... none closes" 0 (count "Connection: close" out);
  let out = serve 1 in
  Alcotest.(check int) "limit 1: one answer, closing" 1 (count "Connection: close" out);
  Alcotest.(check int) "... and no other" 1 (count "HTTP/1.1 200" out)

let tests =
  [ Alcotest.test_case "each directive sets its field" `Quick test_directives;
    Alcotest.test_case "each bound named by its field" `Quick test_bounds;
    Alcotest.test_case "each option: in --help, named in its error" `Quick test_options;
    Alcotest.test_case "keepalive_requests over HTTP/1.1" `Quick test_keepalive_h1 ]
