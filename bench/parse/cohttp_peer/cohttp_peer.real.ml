let available = true

(* An in-memory IO for cohttp's functors, the same idea as cohttp's own
   String_io (which cohttp 4.0.0 does not export): the identity monad over
   a string with a read position. Lines are cut with String.sub, as any
   cohttp IO implementation hands lines to the parser as fresh strings. *)
module Io = struct
  type 'a t = 'a

  let ( >>= ) x f = f x
  let return x = x

  type ic = { s : string; mutable pos : int }
  type oc = Buffer.t
  type conn = unit

  let read_line ic =
    let s = ic.s in
    let len = String.length s in
    if ic.pos >= len then None
    else
      match String.index_from_opt s ic.pos '\n' with
      | None ->
          let l = String.sub s ic.pos (len - ic.pos) in
          ic.pos <- len;
          Some l
      | Some i ->
          let stop = if i > ic.pos && s.[i - 1] = '\r' then i - 1 else i in
          let l = String.sub s ic.pos (stop - ic.pos) in
          ic.pos <- i + 1;
          Some l

  let read ic n =
    let k = min n (String.length ic.s - ic.pos) in
    let r = String.sub ic.s ic.pos k in
    ic.pos <- ic.pos + k;
    r

  let write oc s = Buffer.add_string oc s
  let flush _ = ()
end

module Req_io = Cohttp.Request.Make (Io)
module Resp_io = Cohttp.Response.Make (Io)

let parse_batch s n =
  let bad = ref 0 in
  for _ = 1 to n do
    match Req_io.read { Io.s; pos = 0 } with `Ok _ -> () | `Eof | `Invalid _ -> incr bad
  done;
  !bad

let header_count s =
  match Req_io.read { Io.s; pos = 0 } with
  | `Ok r -> List.length (Cohttp.Header.to_list (Cohttp.Request.headers r))
  | `Eof | `Invalid _ -> -1

let values = ref ("", "", "")
let out = Buffer.create 1024

let response_setup ~date ~etag ~last_modified = values := (date, etag, last_modified)

let response_batch n =
  let date, etag, last_modified = !values in
  for _ = 1 to n do
    Buffer.clear out;
    let headers =
      Cohttp.Header.of_list
        [
          ("Date", date);
          ("Content-Type", "text/html; charset=utf-8");
          ("Content-Length", string_of_int 4096);
          ("Connection", "keep-alive");
          ("ETag", etag);
          ("Last-Modified", last_modified);
        ]
    in
    Resp_io.write_header (Cohttp.Response.make ~status:`OK ~headers ()) out
  done;
  Buffer.length out
