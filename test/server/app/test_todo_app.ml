(* examples/todo_app.ml's handlers tested as an application author tests
   theirs: in memory with Testing, no socket, over HTTP/1.1 and HTTP/2
   (the same handler examples/app.exe serves; test/e2e/test_app.py drives
   that program over real sockets). *)

open Httpz_server

let dir = Httpz_test_support.temp_dir "httpz_todo_app"

let () =
  let assets = Filename.concat dir "assets" and uploads = Filename.concat dir "uploads" in
  Unix.mkdir assets 0o755;
  Unix.mkdir uploads 0o755;
  Httpz_test_support.write_file (Filename.concat assets "site.css") "body{}\n"

let server =
  lazy
    (Errors.set (Some Errors.json);
     let st = Result.get_ok (Httpz_static.Static.create { Httpz_static.Static.default_config with root = Filename.concat dir "assets" }) in
     let store = Session.signed ~keys:[ String.make 32 'k' ] () in
     Testing.create (Todo_app.handler ~store ~assets:st ~uploads:(Filename.concat dir "uploads")))

let both f = List.iter f [ Testing.Http1; Testing.Http2 ]
let get ?headers p target = Testing.request ~protocol:p ?headers (Lazy.force server) target
let post ?jar ?(headers = []) p target body = Testing.request ~protocol:p ~meth:"POST" ?jar ~headers ~body (Lazy.force server) target

let test_hello () =
  both (fun p ->
      let r = get p "/" in
      Testing.check_status 200 r;
      Testing.check_body "hello from httpz\n" r;
      (* The middleware: a request id, the security headers. *)
      Alcotest.(check bool) "a request id" true (match Testing.header r "x-request-id" with Some v -> String.length v > 12 | None -> false);
      Testing.check_header "x-frame-options" "DENY" r)

let test_todos () =
  both (fun p ->
      let r = post p "/todos" ~headers:[ ("Content-Type", "application/json; charset=utf-8") ] {|{"title":"milk"}|} in
      Testing.check_status 201 r;
      let id = match Yojson.Safe.from_string r.body with `Assoc l -> (match List.assoc "id" l with `String s -> s | _ -> "") | _ -> "" in
      let again = get p ("/todos/" ^ id) in
      Testing.check_status 200 again;
      Testing.check_body r.body again;
      let r = post p "/todos" ~headers:[ ("Content-Type", "text/plain") ] {|{"title":"milk"}|} in
      Testing.check_status 415 r;
      Testing.check_header "content-type" "application/json" r;
      let r = post p "/todos" ~headers:[ ("Content-Type", "application/json") ] {|{"name":"milk"}|} in
      Testing.check_status 400 r;
      Testing.check_body {|{"error":{"status":400,"message":"malformed JSON body: no \"title\" string"}}
|} r;
      let r = get p "/todos/none" in
      Testing.check_status 404 r;
      Testing.check_body {|{"error":"no such todo","id":"none"}|} r)

let test_errors_json () =
  both (fun p ->
      let r = get p "/nothing/here" in
      Testing.check_status 404 r;
      Testing.check_body {|{"error":{"status":404,"message":"Not Found"}}
|} r;
      let r = Testing.request ~protocol:p ~meth:"DELETE" (Lazy.force server) "/todos/1" in
      Testing.check_status 405 r;
      Testing.check_header "allow" "GET, HEAD, OPTIONS" r)

let csrf_field body =
  let key = {|name="_csrf" value="|} in
  let rec find i = if String.sub body i (String.length key) = key then i + String.length key else find (i + 1) in
  let i = find 0 in
  String.sub body i (String.index_from body i '"' - i)

let test_login () =
  both (fun p ->
      let jar = Testing.jar () in
      let page = Testing.request ~protocol:p ~jar (Lazy.force server) "/login" in
      Testing.check_status 200 page;
      let form = [ ("Content-Type", "application/x-www-form-urlencoded") ] in
      let r = post ~jar p "/login" ~headers:form ("user=ada&password=secret&_csrf=" ^ csrf_field page.body) in
      Testing.check_status 303 r;
      Testing.check_body "you are ada\n" (Testing.request ~protocol:p ~jar (Lazy.force server) "/me");
      let r = post ~jar p "/logout" ~headers:form "_csrf=wrong" in
      Testing.check_status 403 r)

let test_upload () =
  both (fun p ->
      let body =
        "--XyZ\r\nContent-Disposition: form-data; name=\"note\"\r\n\r\nhi\r\n"
        ^ "--XyZ\r\nContent-Disposition: form-data; name=\"f\"; filename=\"../a.txt\"\r\nContent-Type: text/plain\r\n\r\n"
        ^ String.make 5000 'z' ^ "\r\n--XyZ--\r\n"
      in
      let r = post p "/upload" ~headers:[ ("Content-Type", "multipart/form-data; boundary=XyZ") ] body in
      Testing.check_status 200 r;
      Testing.check_body {|[{"name":"a.txt","bytes":5000}]|} r;
      let r = post p "/upload" ~headers:[ ("Content-Type", "text/plain") ] "x" in
      Testing.check_status 415 r)

let test_assets_and_metrics () =
  both (fun p ->
      let r = get p "/assets/site.css" in
      Testing.check_status 200 r;
      Testing.check_body "body{}\n" r);
  let r = get Testing.Http1 "/metrics" in
  Testing.check_status 200 r;
  let has s = Httpz_test_support.find_sub r.body s >= 0 in
  Alcotest.(check bool) ("metrics by route pattern: " ^ r.body) true (has {|route="/todos/:id"|} && has {|route="/assets"|})

let () =
  Alcotest.run "todo_app"
    [ ( "in memory",
        [ Alcotest.test_case "hello, request id, security headers" `Quick test_hello;
          Alcotest.test_case "JSON resource" `Quick test_todos;
          Alcotest.test_case "errors as JSON" `Quick test_errors_json;
          Alcotest.test_case "login with session and CSRF" `Quick test_login;
          Alcotest.test_case "multipart upload" `Quick test_upload;
          Alcotest.test_case "static files and route metrics" `Quick test_assets_and_metrics ] ) ]
