open Httpz

type outcome = Valid | Invalid | Incomplete

let exit_code = function Valid -> 0 | Invalid -> 1 | Incomplete -> 2

let json_string s =
  let b = Buffer.create (String.length s + 2) in
  Buffer.add_char b '"';
  String.iter
    (fun c ->
      match c with
      | '"' -> Buffer.add_string b "\\\""
      | '\\' -> Buffer.add_string b "\\\\"
      | c when Char.code c < 0x20 || Char.code c >= 0x7f ->
        Buffer.add_string b (Printf.sprintf "\\u%04x" (Char.code c))
      | c -> Buffer.add_char b c)
    s;
  Buffer.add_char b '"';
  Buffer.contents b

(* Human output shows bytes the same way, without quotes around plain text. *)
let printable s =
  let j = json_string s in
  String.sub j 1 (String.length j - 2)

type body = Body of string * int (* decoded body, message length *) | Body_partial | Body_error of string * int

(* Decode the body that follows the head, if all of it is here. *)
let read_body req buf ~total =
  let hl = Request.head_length req in
  if Request.is_chunked req then begin
    let dec = Chunked.create () in
    let out = Buffer.create 64 in
    let rec loop off =
      match Chunked.decode dec buf ~off ~len:(total - off) with
      | Chunked.Data ->
        Buffer.add_string out
          (Bigstring.sub_string buf ~off:(Chunked.data_off dec) ~len:(Chunked.data_len dec));
        loop (off + Chunked.consumed dec)
      | Chunked.Need_more -> Body_partial
      | Chunked.Done -> Body (Buffer.contents out, off + Chunked.consumed dec)
      | Chunked.Error ->
        let e = Chunked.error dec in
        Body_error (Chunked.error_to_string e, Chunked.error_status e)
    in
    loop hl
  end else begin
    let cl = max 0 (Request.content_length req) in
    if total - hl >= cl then Body (Bigstring.sub_string buf ~off:hl ~len:cl, hl + cl)
    else Body_partial
  end

let headers req buf =
  List.init (Request.header_count req) (fun i ->
      ( Span.to_string buf (Request.header_name_span req i),
        Span.to_string buf (Request.header_value req i) ))

let run ~json input =
  let buf = Bigstring.of_string input in
  let total = String.length input in
  let req = Request.create () in
  let status = Request.parse req buf ~off:0 ~len:total in
  let head_ok = status = Request.Complete in
  let body = if head_ok then read_body req buf ~total else Body_partial in
  let outcome, status_name, error =
    match status, body with
    | Request.Error, _ ->
      let e = Request.error req in
      Invalid, "error", Some (Parse_error.to_string e, Parse_error.status e, Parse_error.describe e)
    | Request.Partial, _ -> Incomplete, "partial", None
    | Request.Complete, Body_error (name, code) ->
      Invalid, "error", Some (name, code, "The chunked body is malformed.")
    | Request.Complete, Body_partial -> Incomplete, "partial", None
    | Request.Complete, Body _ -> Valid, "complete", None
  in
  let meth = Span.to_string buf (Request.meth_span req) in
  let target = Span.to_string buf (Request.target req) in
  let version = Version.to_string (Request.version req) in
  let hs = if head_ok then headers req buf else [] in
  let cl = Request.content_length req in
  let report =
    if json then begin
      let fields = ref [ "status", json_string status_name ] in
      let add k v = fields := (k, v) :: !fields in
      (match error with
       | Some (name, code, _) -> add "error" (json_string name); add "http_status" (string_of_int code)
       | None -> ());
      if head_ok then begin
        add "method" (json_string meth);
        add "target" (json_string target);
        add "version" (json_string version);
        add "headers"
          ("[" ^ String.concat ", "
                   (List.map (fun (n, v) -> "[" ^ json_string n ^ ", " ^ json_string v ^ "]") hs)
           ^ "]");
        add "content_length" (if cl < 0 then "null" else string_of_int cl);
        add "chunked" (string_of_bool (Request.is_chunked req));
        add "keep_alive" (string_of_bool (Request.keep_alive req));
        add "expect_continue" (string_of_bool (Request.expect_continue req));
        add "head_length" (string_of_int (Request.head_length req));
        (match body with
         | Body (b, ml) -> add "message_length" (string_of_int ml); add "body" (json_string b)
         | Body_partial | Body_error _ -> ())
      end;
      "{" ^ String.concat ", " (List.rev_map (fun (k, v) -> json_string k ^ ": " ^ v) !fields) ^ "}\n"
    end else begin
      let b = Buffer.create 256 in
      let line fmt = Printf.bprintf b (fmt ^^ "\n") in
      line "status:          %s" status_name;
      (match error with
       | Some (name, code, why) -> line "error:           %s (HTTP %d): %s" name code why
       | None -> ());
      if head_ok then begin
        line "method:          %s" (printable meth);
        line "target:          %s" (printable target);
        line "version:         %s" version;
        line "headers:         %d" (List.length hs);
        List.iter (fun (n, v) -> line "  %s: %s" (printable n) (printable v)) hs;
        line "content-length:  %s" (if cl < 0 then "(none)" else string_of_int cl);
        line "chunked:         %b" (Request.is_chunked req);
        line "keep-alive:      %b" (Request.keep_alive req);
        line "expect-continue: %b" (Request.expect_continue req);
        line "head-length:     %d" (Request.head_length req);
        (match body with
         | Body (s, ml) ->
           line "message-length:  %d" ml;
           line "body:            %d bytes: %s" (String.length s) (printable s)
         | Body_partial -> line "body:            (incomplete)"
         | Body_error _ -> ())
      end;
      Buffer.contents b
    end
  in
  report, outcome
