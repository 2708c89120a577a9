(* Parse a request head and write a response head, allocating nothing per
   request: the buffers and the parse state are created once and reused. *)
open Httpz

let () =
  let input = "GET /hello?x=1 HTTP/1.1\r\nHost: example.com\r\nAccept: */*\r\n\r\n" in
  let buf = Bigstring.create 4096 in
  Bigstring.blit_from_string input ~src_off:0 buf ~dst_off:0 ~len:(String.length input);
  let req = Request.create () in                     (* once per connection *)
  match Request.parse req buf ~off:0 ~len:(String.length input) with
  | Request.Partial -> print_endline "need more bytes"
  | Request.Error ->
    let e = Request.error req in
    Printf.printf "answer %d: %s\n" (Parse_error.status e) (Parse_error.describe e)
  | Request.Complete ->
    (* Spans are offsets into [buf]; comparing them allocates nothing. *)
    assert (Request.meth req = Meth.Get);
    assert (Span.equal buf (Request.target req) "/hello?x=1");
    let i = Request.find req Header_name.Host in
    assert (Span.equal buf (Request.header_value req i) "example.com");
    (* Write the response head into another caller-owned buffer. *)
    let out = Bigstring.create 4096 in
    let body = "hello\n" in
    let pos = Response.status_line out ~off:0 Version.Http_1_1 Status.Ok in
    let pos = Response.header out ~off:pos Header_name.Content_type "text/plain" in
    let pos = Response.header_int out ~off:pos Header_name.Content_length (String.length body) in
    let pos = Response.end_head out ~off:pos in
    print_string (Bigstring.sub_string out ~off:0 ~len:pos);  (* allocates: demo only *)
    print_string body
