(* The cohttp-lwt-unix peer of the server benchmarks.

   It serves the files under [-d DIR] the way cohttp's own documentation
   does, with [Cohttp_lwt_unix.Server.respond_file], so the numbers show
   what an OCaml user gets from the standard library choice, not from a tuned
   rewrite. [GET /__stats] answers [Gc.quick_stat] as JSON with the same field
   names as httpz's [GET /__httpz/stats], so bench_servers.py reads both
   the same way and can compare words allocated per request.

   Usage: cohttp_static -d DIR -p PORT [--host 127.0.0.1] *)

(* Counts every request answered, including /__stats itself, so the bench
   can subtract its own probes. *)
let requests = ref 0

let stats_json () =
  let s = Gc.quick_stat () in
  Printf.sprintf
    "{\"requests\": %d, \"minor_words\": %.0f, \"promoted_words\": %.0f, \
     \"major_words\": %.0f, \"minor_collections\": %d, \
     \"major_collections\": %d, \"compactions\": %d, \"heap_words\": %d, \
     \"top_heap_words\": %d}\n"
    !requests s.Gc.minor_words s.Gc.promoted_words s.Gc.major_words
    s.Gc.minor_collections s.Gc.major_collections s.Gc.compactions
    s.Gc.heap_words s.Gc.top_heap_words

let callback docroot _conn req _body =
  incr requests;
  let uri = Cohttp.Request.uri req in
  match Cohttp.Request.meth req, Uri.path uri with
  | `GET, "/__stats" ->
      let headers =
        Cohttp.Header.init_with "content-type" "application/json"
      in
      Cohttp_lwt_unix.Server.respond_string ~headers ~status:`OK
        ~body:(stats_json ()) ()
  | (`GET | `HEAD), _ ->
      let fname = Cohttp.Path.resolve_local_file ~docroot ~uri in
      Cohttp_lwt_unix.Server.respond_file ~fname ()
  | _ ->
      Cohttp_lwt_unix.Server.respond_string ~status:`Method_not_allowed
        ~body:"" ()

let () =
  let dir = ref "." and port = ref 8080 and host = ref "127.0.0.1" in
  Arg.parse
    [ ("-d", Arg.Set_string dir, "DIR document root");
      ("-p", Arg.Set_int port, "PORT port to listen on");
      ("--host", Arg.Set_string host, "ADDR address to bind (127.0.0.1)") ]
    (fun a -> raise (Arg.Bad ("unexpected argument " ^ a)))
    "cohttp_static -d DIR -p PORT [--host ADDR]";
  Cohttp_loopback.serve ~host:!host ~port:!port (callback !dir)
