(* upload_server.exe -p PORT -d DIR [--tls-cert F --tls-key F] [--io uring|epoll]
   GET  /                 ok
   PUT  /file             the body into DIR (generated name), 8 MiB at most
   PUT  /file/:name       the body into DIR/name
   POST /form             a multipart form, files into DIR (8 MiB body)
   PUT|POST /nodir        to_file / multipart into a directory that does not exist
   POST /small            the same with small limits: body 64 KiB, field 16 B,
                          2 files of 1 KiB at most, 4 parts
   Answers JSON: {"path":..,"size":..} or {"fields":[[n,v]..],"files":[{..}..]};
   errors through Upload.respond_error. *)
open Httpz_server

let json_string s =
  let b = Buffer.create (String.length s + 2) in
  Buffer.add_char b '"';
  String.iter
    (fun ch ->
      match ch with
      | '"' -> Buffer.add_string b "\\\""
      | '\\' -> Buffer.add_string b "\\\\"
      | '\000' .. '\031' | '\127' .. '\255' -> Buffer.add_string b (Printf.sprintf "\\u%04x" (Char.code ch))
      | ch -> Buffer.add_char b ch)
    s;
  Buffer.add_char b '"';
  Buffer.contents b

let form_json (f : Upload.form) =
  Printf.sprintf {|{"fields":[%s],"files":[%s]}|}
    (String.concat "," (List.map (fun (n, v) -> Printf.sprintf "[%s,%s]" (json_string n) (json_string v)) f.fields))
    (String.concat ","
       (List.map
          (fun (x : Upload.file) ->
            Printf.sprintf {|{"field":%s,"filename":%s,"content_type":%s,"path":%s,"size":%d}|}
              (json_string x.field) (json_string x.filename) (json_string x.content_type) (json_string x.path) x.size)
          f.files))

let stored c = function
  | Ok (s : Upload.stored) -> Respond.json c (Printf.sprintf {|{"path":%s,"size":%d}|} (json_string s.path) s.size)
  | Error e -> Upload.respond_error c e

let form c = function Ok f -> Respond.json c (form_json f) | Error e -> Upload.respond_error c e

let routes dir =
  let r = Route.router () in
  let limit = 8 lsl 20 in
  let big = { Upload.default_limits with max_body = limit; max_file = limit } in
  let small =
    { Upload.max_body = 65536; max_file = 1024; max_files = 2; max_field = 16; max_parts = 4; max_part_header = 512 }
  in
  Route.get r "/" (fun c -> Respond.text c "ok\n");
  Route.put r "/file" (fun c -> Upload.to_file c ~dir ~limit stored);
  Route.put r "/file/:name" (fun c -> Upload.to_file c ~dir ~name:(Route.param c "name") ~limit ~fsync:true stored);
  Route.post r "/form" (fun c -> Upload.multipart c ~dir ~limits:big form);
  Route.post r "/small" (fun c -> Upload.multipart c ~dir ~limits:small form);
  (* A directory that does not exist: the disk error path (500). *)
  let missing = Filename.concat dir "missing/sub" in
  Route.put r "/nodir" (fun c -> Upload.to_file c ~dir:missing stored);
  Route.post r "/nodir" (fun c -> Upload.multipart c ~dir:missing form);
  Route.compile r

let () =
  let port = ref 8080 and dir = ref "." and cert = ref "" and key = ref "" and io = ref Server.default_config.io in
  Arg.parse
    [ ("-p", Arg.Set_int port, "PORT"); ("-d", Arg.Set_string dir, "DIR where uploads go");
      ("--tls-cert", Arg.Set_string cert, "FILE"); ("--tls-key", Arg.Set_string key, "FILE");
      ("--io", Arg.Symbol ([ "uring"; "epoll" ], fun s -> io := if s = "epoll" then Server.Epoll else Server.Uring), "") ]
    (fun _ -> ()) "upload_server.exe -p PORT -d DIR";
  let tls = if !cert = "" then None else Some (Server.tls ~cert_file:!cert ~key_file:!key) in
  exit
    (Server.run
       { Server.default_config with port = !port; workers = 1; tls; io = !io; handler_timeout = 10.; body_timeout = 5. }
       (Route.handler (routes !dir)))
