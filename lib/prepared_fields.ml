module E = Hpack_encoder

type t = {
  text : Bigstring.t;
  mutable text_len : int;
  hpack : Bigstring.t;
  mutable hpack_len : int;
  enc : E.t;  (** Huffman on, no dynamic table: its output is stateless *)
  mutable count : int;
}

(* A text line of L bytes encodes to at most L + 4 HPACK bytes (two for
   a name index or name length, two for the value length beyond what
   ": " and CRLF take) and a line is at least 5 bytes: twice the text's
   capacity always holds the encoding, so only the text can run out. *)
let create ?(capacity = 1024) () =
  if capacity < 0 then invalid_arg "Httpz.Prepared_fields.create";
  { text = Bigstring.create capacity; text_len = 0; hpack = Bigstring.create ((2 * capacity) + 16);
    hpack_len = 0; enc = E.create ~huffman:true (); count = 0 }

let clear t = t.text_len <- 0; t.hpack_len <- 0; t.count <- 0

let server_owned = function
  | Header_name.Content_length | Transfer_encoding | Connection | Keep_alive | Upgrade | Date -> true
  | _ -> false

let refuse () = invalid_arg "Httpz.Prepared_fields: the server writes that field itself"

(* The line [text\[start, t.text_len)] was just written for a known
   [name]: its value is encoded from there. *)
let encoded t name start =
  let voff = start + String.length (Header_name.to_string name) + 2 in
  t.hpack_len <- E.field_checked t.enc t.hpack ~off:t.hpack_len name t.text ~voff ~vlen:(t.text_len - 2 - voff);
  t.count <- t.count + 1

let check_name name = if server_owned name then refuse ()

let add t name v =
  check_name name;
  let start = t.text_len in
  t.text_len <- Response.header t.text ~off:start name v;
  encoded t name start

let add_int t name n =
  check_name name;
  let start = t.text_len in
  t.text_len <- Response.header_int t.text ~off:start name n;
  encoded t name start

let add_date t name time =
  check_name name;
  let start = t.text_len in
  t.text_len <- Response.header_date t.text ~off:start name time;
  encoded t name start

let add_bytes t name src ~off ~len =
  if off < 0 || len < 0 || off > Bigstring.length src - len then
    invalid_arg "Httpz.Prepared_fields.add_bytes: range outside the buffer";
  check_name name;
  let start = t.text_len in
  t.text_len <- Response.header_span t.text ~off:start name src (Span.make ~off ~len);
  encoded t name start

let lower ch = if ch >= 'A' && ch <= 'Z' then Char.unsafe_chr (Char.code ch + 32) else ch

let equal_caseless name lower_s =
  String.length name = String.length lower_s
  &&
  let r = ref true in
  for i = 0 to String.length name - 1 do
    if lower (String.unsafe_get name i) <> String.unsafe_get lower_s i then r := false
  done;
  !r

let server_owned_names =
  [| "content-length"; "transfer-encoding"; "connection"; "keep-alive"; "proxy-connection"; "upgrade"; "date" |]

let has_upper s =
  let r = ref false in
  for i = 0 to String.length s - 1 do
    let ch = String.unsafe_get s i in
    if ch >= 'A' && ch <= 'Z' then r := true
  done;
  !r

(* HPACK wants lower-case names: the few given in upper case (a
   server's X-Frame-Options and the like) are lowered once and
   remembered, for every set, so that refilling one does not allocate. *)
let upper_names = Array.make 64 ""
let lower_names = Array.make 64 ""
let nlowered = ref 0

let lowered name =
  let found = ref (-1) in
  for i = 0 to !nlowered - 1 do
    if !found < 0 && String.equal (Array.unsafe_get upper_names i) name then found := i
  done;
  if !found >= 0 then Array.unsafe_get lower_names !found
  else begin
    let l = String.lowercase_ascii name in
    if !nlowered < Array.length upper_names then begin
      upper_names.(!nlowered) <- name;
      lower_names.(!nlowered) <- l;
      incr nlowered
    end;
    l
  end

let add_s t name v =
  for i = 0 to Array.length server_owned_names - 1 do
    if equal_caseless name (Array.unsafe_get server_owned_names i) then refuse ()
  done;
  let start = t.text_len in
  t.text_len <- Response.header_s t.text ~off:start name v;
  let lowered = if has_upper name then lowered name else name in
  let voff = start + String.length name + 2 in
  t.hpack_len <-
    E.field_s_span t.enc t.hpack ~off:t.hpack_len lowered t.text (Span.make ~off:voff ~len:(t.text_len - 2 - voff));
  t.count <- t.count + 1

let of_list ?capacity fields =
  let t = create ?capacity () in
  List.iter (fun (n, v) -> add t n v) fields;
  t

let count t = t.count
let text t = t.text
let text_length t = t.text_len
let hpack t = t.hpack
let hpack_length t = t.hpack_len
