exception No_space
exception Invalid_field

type representation = With_indexing | Without_indexing | Never_indexed

type t = {
  huffman : bool;
  table : Hpack_table.t;
  scratch : Bigstring.t;  (** name then value of a field looked up in / added to [table] *)
  digits : Bigstring.t;  (** a decimal value *)
  mutable pending_update : int;  (** the size to signal at the next block start, or -1 *)
  mutable pending_min : int;  (** the smallest size shrunk to since the last block start, or -1 *)
}

let create ?(huffman = true) ?(table_size = 0) () =
  if table_size < 0 || table_size > Hpack_decoder.max_integer then invalid_arg "Hpack.Encoder.create";
  let table = Hpack_table.create ~capacity:table_size in
  (* The peer's table holds 4096 bytes until its SETTINGS say more. *)
  Hpack_table.set_max_size table (min table_size Hpack_decoder.default_max_table_size);
  { huffman; table;
    scratch = Bigstring.create (max table_size 1); digits = Bigstring.create 20;
    pending_update = -1; pending_min = -1 }

let table t = t.table

let set_peer_max_table_size t n =
  if n < 0 then invalid_arg "Hpack.Encoder.set_peer_max_table_size";
  let size = min n (Hpack_table.capacity t.table) in
  (* Only a shrink evicts: growth needs no more than the final update. *)
  if size < Hpack_table.max_size t.table && (t.pending_min < 0 || size < t.pending_min) then
    t.pending_min <- size;
  Hpack_table.set_max_size t.table size;
  t.pending_update <- size

(* §5.1 *)
let integer_length v ~prefix =
  let mask = (1 lsl prefix) - 1 in
  if v < mask then 1
  else begin
    let n = ref 2 and v = ref (v - mask) in
    while !v >= 128 do incr n; v := !v lsr 7 done;
    !n
  end

let write_integer (buf : Bigstring.t) o ~first ~prefix v =
  let mask = (1 lsl prefix) - 1 in
  if v < mask then begin Bigstring.unsafe_set buf o (Char.unsafe_chr (first lor v)); o + 1 end
  else begin
    Bigstring.unsafe_set buf o (Char.unsafe_chr (first lor mask));
    let o = ref (o + 1) and v = ref (v - mask) in
    while !v >= 128 do
      Bigstring.unsafe_set buf !o (Char.unsafe_chr (0x80 lor (!v land 0x7f)));
      incr o;
      v := !v lsr 7
    done;
    Bigstring.unsafe_set buf !o (Char.unsafe_chr !v);
    !o + 1
  end

let[@inline] check_space (buf : Bigstring.t) off n =
  if off < 0 || n > Bigstring.length buf - off then raise_notrace No_space

let encode_integer buf ~off ~prefix ~first v =
  if prefix < 1 || prefix > 8 || v < 0 || first land ((1 lsl prefix) - 1) <> 0 then
    invalid_arg "Hpack.Integer.encode";
  check_space buf off (integer_length v ~prefix);
  write_integer buf off ~first ~prefix v

(* §4.2: when the size fell and rose again since the last block, the
   smallest size is signalled first, so the peer evicts what we evicted. *)
let start_block t buf ~off =
  if t.pending_update < 0 then off
  else begin
    let smallest = t.pending_min and final = t.pending_update in
    let both = smallest >= 0 && smallest < final in
    check_space buf off
      ((if both then integer_length smallest ~prefix:5 else 0) + integer_length final ~prefix:5);
    let o = if both then write_integer buf off ~first:0x20 ~prefix:5 smallest else off in
    let o = write_integer buf o ~first:0x20 ~prefix:5 final in
    t.pending_update <- -1;
    t.pending_min <- -1;
    o
  end

let indexed buf ~off i =
  if i <= 0 then invalid_arg "Hpack.Encoder.indexed";
  check_space buf off (integer_length i ~prefix:7);
  write_integer buf off ~first:0x80 ~prefix:7 i

(* A string source is either [s] (when [not big]) or [b]; the other is a
   placeholder. One path for both keeps each field's code in one place. *)
let no_bytes = Bigstring.create 0

(* How a string goes on the wire, as [wire_length lsl 1 lor huffman]:
   Huffman when it is on and not longer (RFC 7541's examples pick Huffman
   on a tie: "307" is 3 bytes either way). *)
let coded_length t ~s ~b ~big ~off ~len =
  if not t.huffman then len lsl 1
  else begin
    let h =
      if big then Huffman.encoded_length b ~off ~len else Huffman.encoded_length_string s ~off ~len
    in
    if h <= len then (h lsl 1) lor 1 else len lsl 1
  end

let[@inline] string_size ~coded = integer_length (coded lsr 1) ~prefix:7 + (coded lsr 1)

let write_string buf o ~s ~b ~big ~off ~len ~coded =
  let huffman = coded land 1 = 1 in
  let o = write_integer buf o ~first:(if huffman then 0x80 else 0) ~prefix:7 (coded lsr 1) in
  if huffman then
    if big then Huffman.encode b ~off ~len buf ~dst_off:o
    else Huffman.encode_string s ~off ~len buf ~dst_off:o
  else begin
    if big then Bigstring.blit ~src:b ~src_off:off ~dst:buf ~dst_off:o ~len
    else Bigstring.unsafe_blit_from_string s ~src_off:off buf ~dst_off:o ~len;
    o + len
  end

(* RFC 9113 §8.2.1: no NUL, CR or LF in a value. *)
let valid_value ~s ~b ~big ~off ~len =
  let i = ref 0 in
  while
    !i < len
    && (let c = if big then Bigstring.unsafe_get b (off + !i) else String.unsafe_get s (off + !i) in
        c <> '\000' && c <> '\r' && c <> '\n')
  do incr i done;
  !i = len

let value_equal ~s ~b ~big ~off ~len v =
  if big then Bigstring.equal_string b ~off ~len v
  else len = String.length v && (let i = ref 0 in
    while !i < len && String.unsafe_get s (off + !i) = String.unsafe_get v !i do incr i done;
    !i = len)

(* The static entry with name [sidx]'s name and this value, or 0. Entries
   of one name are consecutive in the static table. *)
let static_exact sidx ~s ~b ~big ~off ~len =
  let name = Hpack_static.name sidx in
  let r = ref 0 and i = ref sidx in
  while !r = 0 && !i <= Hpack_static.length && String.equal (Hpack_static.name !i) name do
    if value_equal ~s ~b ~big ~off ~len (Hpack_static.value !i) then r := !i;
    incr i
  done;
  !r

(* Writes one field: [sidx] is the first static entry of the name (0 when
   none); [name] its lower-case spelling; the value is [s]/[b] at [off].
   [lookup]: use an exact static or dynamic match, and index the field when
   the table is on; otherwise write a literal as [rep] says. *)
let emit t buf off ~lookup ~rep ~sidx ~name ~s ~b ~big ~voff ~vlen =
  if not (valid_value ~s ~b ~big ~off:voff ~len:vlen) then raise_notrace Invalid_field;
  let exact = if lookup && sidx > 0 then static_exact sidx ~s ~b ~big ~off:voff ~len:vlen else 0 in
  if exact > 0 then begin
    check_space buf off 1;
    write_integer buf off ~first:0x80 ~prefix:7 exact
  end
  else begin
    let nlen = String.length name in
    let table = t.table in
    let fits = nlen + vlen + Hpack_table.entry_overhead <= Hpack_table.max_size table in
    if (lookup || rep = With_indexing) && fits then begin
      (* Through the scratch buffer: the table compares and stores bigstrings. *)
      let sc = t.scratch in
      Bigstring.unsafe_blit_from_string name ~src_off:0 sc ~dst_off:0 ~len:nlen;
      if big then Bigstring.blit ~src:b ~src_off:voff ~dst:sc ~dst_off:nlen ~len:vlen
      else Bigstring.unsafe_blit_from_string s ~src_off:voff sc ~dst_off:nlen ~len:vlen;
      let found =
        Hpack_table.find table sc ~name_off:0 ~name_len:nlen ~value_off:nlen ~value_len:vlen
      in
      if found > 0 && lookup then begin
        let i = Hpack_static.length + found in
        check_space buf off (integer_length i ~prefix:7);
        write_integer buf off ~first:0x80 ~prefix:7 i
      end
      else begin
        let nidx =
          if sidx > 0 then sidx else if found < 0 then Hpack_static.length - found else 0
        in
        let vcoded = coded_length t ~s:"" ~b:sc ~big:true ~off:nlen ~len:vlen in
        let ncoded = if nidx > 0 then 0 else coded_length t ~s:"" ~b:sc ~big:true ~off:0 ~len:nlen in
        check_space buf off
          (integer_length nidx ~prefix:6 + (if nidx > 0 then 0 else string_size ~coded:ncoded)
           + string_size ~coded:vcoded);
        let o = write_integer buf off ~first:0x40 ~prefix:6 nidx in
        let o =
          if nidx > 0 then o
          else write_string buf o ~s:"" ~b:sc ~big:true ~off:0 ~len:nlen ~coded:ncoded
        in
        let o = write_string buf o ~s:"" ~b:sc ~big:true ~off:nlen ~len:vlen ~coded:vcoded in
        let hname = if sidx > 0 then Hpack_static.header_name sidx else Header_name.Other in
        Hpack_table.add table sc ~name_off:0 ~name_len:nlen ~value_off:nlen ~value_len:vlen hname
          (Hpack_static.pseudo_of_buffer sc ~off:0 ~len:nlen);
        o
      end
    end
    else begin
      (* An entry too large for the table still empties it (§4.4): mirror
         the peer's table even though we write it from the source. *)
      let first = match rep with With_indexing -> 0x40 | Never_indexed -> 0x10 | Without_indexing -> 0 in
      let prefix = match rep with With_indexing -> 6 | Never_indexed | Without_indexing -> 4 in
      let vcoded = coded_length t ~s ~b ~big ~off:voff ~len:vlen in
      let ncoded = if sidx > 0 then 0 else coded_length t ~s:name ~b:no_bytes ~big:false ~off:0 ~len:nlen in
      check_space buf off
        (integer_length sidx ~prefix + (if sidx > 0 then 0 else string_size ~coded:ncoded)
         + string_size ~coded:vcoded);
      if rep = With_indexing then Hpack_table.clear table;
      let o = write_integer buf off ~first ~prefix sidx in
      let o =
        if sidx > 0 then o
        else write_string buf o ~s:name ~b:no_bytes ~big:false ~off:0 ~len:nlen ~coded:ncoded
      in
      write_string buf o ~s ~b ~big ~off:voff ~len:vlen ~coded:vcoded
    end
  end

let name_of (n : Header_name.t) =
  let sidx = Hpack_static.index_of_name n in
  if sidx > 0 then Hpack_static.name sidx
  else match n with Other -> raise_notrace Invalid_field | _ -> Hpack_static.lowercase_name n

let field t buf ~off n v =
  let sidx = Hpack_static.index_of_name n in
  emit t buf off ~lookup:true ~rep:Without_indexing ~sidx ~name:(name_of n) ~s:v
    ~b:no_bytes ~big:false ~voff:0 ~vlen:(String.length v)

let field_span t buf ~off n src span =
  let voff = Span.off span and vlen = Span.len span in
  Bigstring.check_range "Httpz.Hpack.Encoder.field_span" src ~off:voff ~len:vlen;
  let sidx = Hpack_static.index_of_name n in
  emit t buf off ~lookup:true ~rep:Without_indexing ~sidx ~name:(name_of n) ~s:""
    ~b:src ~big:true ~voff ~vlen

(* {1 Checked values} A caller that has already checked a value as a
   field-value (Response's writers do, more strictly than RFC 9113
   §8.2.1) and uses no dynamic table nor Huffman gets its fields as
   literals without indexing, written straight out: no lookup, no second
   scan of the value. *)

let[@inline] plain t = (not t.huffman) && Hpack_table.max_size t.table = 0

(* A name whose static entries carry values ([:status], accept-encoding)
   may match one exactly: those take the general path. *)
let[@inline] named_only sidx = sidx = 0 || String.length (Hpack_static.value sidx) = 0

let write_literal buf off ~sidx ~name src ~voff ~vlen =
  let nlen = if sidx > 0 then 0 else String.length name in
  check_space buf off
    (integer_length sidx ~prefix:4
     + (if sidx > 0 then 0 else integer_length nlen ~prefix:7 + nlen)
     + integer_length vlen ~prefix:7 + vlen);
  let o = write_integer buf off ~first:0 ~prefix:4 sidx in
  let o =
    if sidx > 0 then o
    else begin
      let o = write_integer buf o ~first:0 ~prefix:7 nlen in
      Bigstring.unsafe_blit_from_string name ~src_off:0 buf ~dst_off:o ~len:nlen;
      o + nlen
    end
  in
  let o = write_integer buf o ~first:0 ~prefix:7 vlen in
  Bigstring.blit ~src ~src_off:voff ~dst:buf ~dst_off:o ~len:vlen;
  o + vlen

let field_checked t buf ~off n src ~voff ~vlen =
  Bigstring.check_range "Httpz.Hpack.Encoder.field_checked" src ~off:voff ~len:vlen;
  let sidx = Hpack_static.index_of_name n in
  if plain t && named_only sidx then write_literal buf off ~sidx ~name:(name_of n) src ~voff ~vlen
  else field_span t buf ~off n src (Span.make ~off:voff ~len:vlen)

let write_digits t n =
  let d = t.digits in
  let len = ref 1 and x = ref (n / 10) in
  while !x > 0 do incr len; x := !x / 10 done;
  let x = ref n in
  for i = !len - 1 downto 0 do
    Bigstring.unsafe_set d i (Char.unsafe_chr (48 + (!x mod 10)));
    x := !x / 10
  done;
  !len

let field_int t buf ~off n v =
  if v < 0 then raise_notrace Invalid_field;
  let sidx = Hpack_static.index_of_name n in
  let name = name_of n in
  let vlen = write_digits t v in
  if plain t && named_only sidx then write_literal buf off ~sidx ~name t.digits ~voff:0 ~vlen
  else emit t buf off ~lookup:true ~rep:Without_indexing ~sidx ~name ~s:"" ~b:t.digits
    ~big:true ~voff:0 ~vlen

let status_index = 8

(* The static table's :status entries (RFC 7541 Appendix A), or 0. *)
let static_status = function
  | 200 -> 8 | 204 -> 9 | 206 -> 10 | 304 -> 11 | 400 -> 12 | 404 -> 13 | 500 -> 14 | _ -> 0

let status t buf ~off code =
  if code < 100 || code > 999 then raise_notrace Invalid_field;
  let exact = static_status code in
  if plain t then
    if exact > 0 then begin
      check_space buf off 1;
      Bigstring.unsafe_set buf off (Char.unsafe_chr (0x80 lor exact));
      off + 1
    end
    else write_literal buf off ~sidx:status_index ~name:"" t.digits ~voff:0 ~vlen:(write_digits t code)
  else
  let vlen = write_digits t code in
  emit t buf off ~lookup:true ~rep:Without_indexing ~sidx:status_index
    ~name:(Hpack_static.name status_index) ~s:"" ~b:t.digits ~big:true ~voff:0 ~vlen

(* HTTP/2 names are lower case (RFC 9113 §8.2.1); a leading ':' marks a
   pseudo-header. *)
let valid_name name =
  let len = String.length name in
  let start = if len > 0 && name.[0] = ':' then 1 else 0 in
  len > start
  && begin
    let i = ref start in
    while !i < len && Charset.is_tchar name.[!i] && not (name.[!i] >= 'A' && name.[!i] <= 'Z') do
      incr i
    done;
    !i = len
  end

let static_index_of_string name =
  let r = ref 0 and i = ref 1 in
  while !r = 0 && !i <= Hpack_static.length do
    if String.equal (Hpack_static.name !i) name then r := !i;
    incr i
  done;
  !r

let literal_s t buf ~off ~lookup ~rep name v =
  if not (valid_name name) then raise_notrace Invalid_field;
  emit t buf off ~lookup ~rep ~sidx:(static_index_of_string name) ~name ~s:v ~b:no_bytes
    ~big:false ~voff:0 ~vlen:(String.length v)

let field_s_span t buf ~off name src span =
  if not (valid_name name) then raise_notrace Invalid_field;
  let voff = Span.off span and vlen = Span.len span in
  Bigstring.check_range "Httpz.Hpack.Encoder.field_s_span" src ~off:voff ~len:vlen;
  emit t buf off ~lookup:true ~rep:Without_indexing ~sidx:(static_index_of_string name) ~name ~s:""
    ~b:src ~big:true ~voff ~vlen

let field_s t buf ~off name v = literal_s t buf ~off ~lookup:true ~rep:Without_indexing name v
let field_sensitive t buf ~off name v = literal_s t buf ~off ~lookup:false ~rep:Never_indexed name v
let literal t buf ~off rep name v = literal_s t buf ~off ~lookup:false ~rep name v
