module E = Hpack_encoder

type t = {
  id : int;  (** unique per set: keys a connection's memory of it *)
  mutable version : int;  (** changes with every clear and add *)
  server : bool;  (** the server's own set: Date allowed *)
  text : Bigstring.t;
  mutable text_len : int;
  hpack : Bigstring.t;
  mutable hpack_len : int;
  indexed : Bigstring.t;  (** the same fields "with incremental indexing" *)
  mutable indexed_len : int;
  starts : int array;  (** field i is hpack.{starts.(i) .. starts.(i+1) - 1} *)
  sizes : int array;
      (** field i's entry size in an HPACK table (RFC 7541 §4.1), or 0 for
          a field written as a static-table index (never inserted) *)
  mutable table_size : int;  (** the sum of [sizes] *)
  mutable inserted : int;  (** the fields whose size is not 0 *)
  enc : E.t;  (** Huffman on, no dynamic table: its output is stateless *)
  mutable count : int;
}

(* A text line of L bytes encodes to at most L + 4 HPACK bytes (two for
   a name index or name length, two for the value length beyond what
   ": " and CRLF take) and a line is at least 5 bytes: twice the text's
   capacity always holds the encoding, so only the text can run out. *)
let next_id = ref 0

let create_set ~server capacity =
  if capacity < 0 then invalid_arg "Httpz.Prepared_fields.create";
  incr next_id;
  (* Room for a field per 8 bytes of text (a line is at least 5; real
     ones are longer): past it, a writer refuses as for text. *)
  let fields = (capacity / 8) + 4 in
  { id = !next_id; version = 0; server; text = Bigstring.create capacity; text_len = 0;
    hpack = Bigstring.create ((2 * capacity) + 16); hpack_len = 0;
    indexed = Bigstring.create ((2 * capacity) + 16); indexed_len = 0;
    starts = Array.make (fields + 1) 0; sizes = Array.make fields 0; table_size = 0; inserted = 0;
    enc = E.create ~huffman:true (); count = 0 }

let create ?(capacity = 1024) () = create_set ~server:false capacity
let create_server ?(capacity = 1024) () = create_set ~server:true capacity

let clear t =
  t.version <- t.version + 1;
  t.text_len <- 0; t.hpack_len <- 0; t.indexed_len <- 0; t.count <- 0; t.table_size <- 0; t.inserted <- 0

let server_owned = function
  | Header_name.Content_length | Transfer_encoding | Connection | Keep_alive | Upgrade | Date -> true
  | _ -> false

(* The field just written to [hpack] from [h0] (a literal without
   indexing, or a static index) is written again "with incremental
   indexing" (the name index's prefix is 6 bits there, not 4; the rest is
   the same bytes), and its entry size noted. *)
let also_indexed t h0 ~name_len ~value_len =
  let i = t.count in
  let h1 = t.hpack_len in
  let first = Char.code (Bigstring.unsafe_get t.hpack h0) in
  if first land 0x80 <> 0 then begin
    Bigstring.blit ~src:t.hpack ~src_off:h0 ~dst:t.indexed ~dst_off:t.indexed_len ~len:(h1 - h0);
    t.indexed_len <- t.indexed_len + (h1 - h0);
    t.sizes.(i) <- 0
  end
  else begin
    let r = Hpack_decoder.decode_integer t.hpack ~off:h0 ~stop:h1 ~prefix:4 in
    let idx = r lsr 3 and n = r land 7 in
    let o = E.encode_integer t.indexed ~off:t.indexed_len ~prefix:6 ~first:0x40 idx in
    Bigstring.blit ~src:t.hpack ~src_off:(h0 + n) ~dst:t.indexed ~dst_off:o ~len:(h1 - h0 - n);
    t.indexed_len <- o + (h1 - h0 - n);
    let size = name_len + value_len + Hpack_table.entry_overhead in
    t.sizes.(i) <- size;
    t.table_size <- t.table_size + size;
    t.inserted <- t.inserted + 1
  end;
  t.starts.(i) <- h0;
  t.starts.(i + 1) <- h1;
  t.count <- i + 1;
  t.version <- t.version + 1

let refuse () = invalid_arg "Httpz.Prepared_fields: the server writes that field itself"

(* The line [text\[start, t.text_len)] was just written for a known
   [name]: its value is encoded from there. *)
let encoded t name start =
  let name_len = String.length (Header_name.to_string name) in
  let voff = start + name_len + 2 in
  let h0 = t.hpack_len and value_len = t.text_len - 2 - voff in
  t.hpack_len <- E.field_checked t.enc t.hpack ~off:h0 name t.text ~voff ~vlen:value_len;
  also_indexed t h0 ~name_len ~value_len

let check_name t name =
  if server_owned name && not (t.server && name = Header_name.Date) then refuse ();
  if t.count >= Array.length t.sizes then raise_notrace Response.No_space

let add t name v =
  check_name t name;
  let start = t.text_len in
  t.text_len <- Response.header t.text ~off:start name v;
  encoded t name start

let add_int t name n =
  check_name t name;
  let start = t.text_len in
  t.text_len <- Response.header_int t.text ~off:start name n;
  encoded t name start

let add_date t name time =
  check_name t name;
  let start = t.text_len in
  t.text_len <- Response.header_date t.text ~off:start name time;
  encoded t name start

let add_bytes t name src ~off ~len =
  if off < 0 || len < 0 || off > Bigstring.length src - len then
    invalid_arg "Httpz.Prepared_fields.add_bytes: range outside the buffer";
  check_name t name;
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
  if t.count >= Array.length t.sizes then raise_notrace Response.No_space;
  for i = 0 to Array.length server_owned_names - 1 do
    if equal_caseless name (Array.unsafe_get server_owned_names i) then refuse ()
  done;
  let start = t.text_len in
  t.text_len <- Response.header_s t.text ~off:start name v;
  let lowered = if has_upper name then lowered name else name in
  let name_len = String.length name in
  let voff = start + name_len + 2 in
  let h0 = t.hpack_len and value_len = t.text_len - 2 - voff in
  t.hpack_len <- E.field_s_span t.enc t.hpack ~off:h0 lowered t.text (Span.make ~off:voff ~len:value_len);
  also_indexed t h0 ~name_len ~value_len

let of_list ?capacity fields =
  let t = create ?capacity () in
  List.iter (fun (n, v) -> add t n v) fields;
  t

let count t = t.count
let id t = t.id
let version t = t.version
let indexed t = t.indexed
let indexed_length t = t.indexed_len
let field_start t i = Array.unsafe_get t.starts i
let entry_size t i = Array.unsafe_get t.sizes i
let table_size t = t.table_size
let inserted t = t.inserted
let text t = t.text
let text_length t = t.text_len
let hpack t = t.hpack
let hpack_length t = t.hpack_len
