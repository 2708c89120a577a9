(* Stdlib's min and max compare polymorphically (a C call) unless inlined. *)
let[@inline] min (a : int) b = if a < b then a else b
let[@inline] max (a : int) b = if a > b then a else b

type error =
  | Truncated
  | Integer_overflow
  | Bad_index
  | Huffman_eos
  | Huffman_padding
  | String_too_long
  | Header_list_too_large
  | Table_size_too_large
  | Table_size_update_late
  | Output_full

let error_to_string = function
  | Truncated -> "truncated"
  | Integer_overflow -> "integer_overflow"
  | Bad_index -> "bad_index"
  | Huffman_eos -> "huffman_eos"
  | Huffman_padding -> "huffman_padding"
  | String_too_long -> "string_too_long"
  | Header_list_too_large -> "header_list_too_large"
  | Table_size_too_large -> "table_size_too_large"
  | Table_size_update_late -> "table_size_update_late"
  | Output_full -> "output_full"

let describe = function
  | Truncated -> "the header block ends inside a field representation"
  | Integer_overflow -> "an integer is larger than 2^28 - 1 (or uses more than 5 continuation bytes)"
  | Bad_index -> "an index is 0 or beyond the static and dynamic tables"
  | Huffman_eos -> "a Huffman-coded string contains the EOS symbol"
  | Huffman_padding -> "a Huffman-coded string ends in padding that is not 0-7 one bits"
  | String_too_long -> "a string literal is longer than max_string_length"
  | Header_list_too_large ->
      "the decoded header list (name + value + 32 per field) exceeds max_header_list_size"
  | Table_size_too_large -> "a dynamic table size update exceeds SETTINGS_HEADER_TABLE_SIZE"
  | Table_size_update_late -> "a dynamic table size update follows a field in the block"
  | Output_full -> "the output buffer is too small for the decoded fields"

type status = Field | End | Error

(* §5.1 integers. Five continuation bytes carry 35 bits; four carry 28,
   enough for any size or length we accept. *)
let max_integer = (1 lsl 28) - 1
let integer_truncated = -1
let integer_overflow = -2

let decode_integer (b : Bigstring.t) ~off ~stop ~prefix =
  if off >= stop then integer_truncated
  else begin
    let mask = (1 lsl prefix) - 1 in
    let v = Char.code (Bigstring.unsafe_get b off) land mask in
    if v < mask then (v lsl 3) lor 1
    else begin
      let acc = ref mask and i = ref (off + 1) and shift = ref 0 and r = ref 0 in
      while !r = 0 do
        if !i >= stop then r := integer_truncated
        else if !shift > 21 then r := integer_overflow
        else begin
          let c = Char.code (Bigstring.unsafe_get b !i) in
          acc := !acc + ((c land 0x7f) lsl !shift);
          incr i;
          shift := !shift + 7;
          if c land 0x80 = 0 then
            r := if !acc > max_integer then integer_overflow else (!acc lsl 3) lor (!i - off)
        end
      done;
      !r
    end
  end

type t = {
  table : Hpack_table.t;
  max_table_size : int;
  max_list : int;
  max_string : int;
  mutable pos : int;
  mutable stop : int;
  mutable out_pos : int;
  mutable list_size : int;
  mutable fields : int;
  mutable name_off : int;
  mutable name_len : int;
  mutable value_off : int;
  mutable value_len : int;
  mutable header_name : Header_name.t;
  mutable pseudo : Hpack_static.pseudo;
  mutable never_indexed : bool;
  mutable static_parts : int;  (* 0, 1 (name) or 2 (name and value) from the static table *)
  mutable field_start : int;
  mutable err : error;
  mutable failed : bool;
}

let default_max_table_size = 4096
let default_max_header_list_size = 32768
let default_max_string_length = 16384

let create ?(max_table_size = default_max_table_size)
    ?(max_header_list_size = default_max_header_list_size)
    ?(max_string_length = default_max_string_length) () =
  if max_table_size < 0 || max_table_size > max_integer || max_header_list_size < 0
     || max_string_length < 0
  then invalid_arg "Hpack.Decoder.create";
  { table = Hpack_table.create ~capacity:max_table_size; max_table_size;
    max_list = max_header_list_size; max_string = max_string_length; pos = 0; stop = 0;
    out_pos = 0; list_size = 0; fields = 0; name_off = 0; name_len = 0; value_off = 0;
    value_len = 0; header_name = Header_name.Other; pseudo = Hpack_static.Regular;
    never_indexed = false; static_parts = 0; field_start = 0; err = Truncated; failed = false }

let start_block t ~off ~len =
  t.pos <- off; t.stop <- off + len; t.out_pos <- 0; t.list_size <- 0; t.fields <- 0;
  t.name_off <- 0; t.name_len <- 0; t.value_off <- 0; t.value_len <- 0;
  t.field_start <- off

let reset t =
  Hpack_table.clear t.table;
  Hpack_table.set_max_size t.table t.max_table_size;
  t.failed <- false;
  start_block t ~off:0 ~len:0

let fail t e = t.err <- e; t.failed <- true; -1

(* Reads an integer at [t.pos], advancing past it: the value, or [-1]. *)
let read_integer t src ~prefix =
  let r = decode_integer src ~off:t.pos ~stop:t.stop ~prefix in
  if r >= 0 then begin t.pos <- t.pos + (r land 7); r lsr 3 end
  else fail t (if r = integer_truncated then Truncated else Integer_overflow)

(* Room for [len] more bytes of this field, [used] bytes of it having been
   written already: 0, or -1 with the error set. *)
let reserve t (out : Bigstring.t) ~used ~len =
  if t.list_size + Hpack_table.entry_overhead + used + len > t.max_list then
    fail t Header_list_too_large
  else if t.out_pos + len > Bigstring.length out then fail t Output_full
  else 0

(* A string literal (§5.2) decoded to [out] at [t.out_pos]: its length, or
   -1. [used] as for [reserve]. *)
let read_string t src out ~used =
  if t.pos >= t.stop then fail t Truncated
  else begin
    let huffman = Char.code (Bigstring.unsafe_get src t.pos) land 0x80 <> 0 in
    let len = read_integer t src ~prefix:7 in
    if len < 0 then -1
    else if len > t.max_string then fail t String_too_long
    else if len > t.stop - t.pos then fail t Truncated
    else if not huffman then begin
      if reserve t out ~used ~len < 0 then -1
      else begin
        Bigstring.blit ~src ~src_off:t.pos ~dst:out ~dst_off:t.out_pos ~len;
        t.pos <- t.pos + len;
        t.out_pos <- t.out_pos + len;
        len
      end
    end
    else begin
      let budget = t.max_list - t.list_size - Hpack_table.entry_overhead - used in
      let room = Bigstring.length out - t.out_pos in
      let n =
        Huffman.decode src ~off:t.pos ~len out ~dst_off:t.out_pos
          ~dst_stop:(t.out_pos + max 0 (min budget room))
      in
      if n >= 0 then begin
        t.pos <- t.pos + len;
        t.out_pos <- t.out_pos + n;
        n
      end
      else if n = Huffman.error_eos then fail t Huffman_eos
      else if n = Huffman.error_padding then fail t Huffman_padding
      else fail t (if budget <= room then Header_list_too_large else Output_full)
    end
  end

(* The name of entry [idx] (static or dynamic) copied to [out]: 0 or -1. *)
let index_name t out idx ~with_value =
  let dynamic = idx - Hpack_static.length in
  if idx <= 0 || dynamic > Hpack_table.length t.table then fail t Bad_index
  else begin
    let nlen =
      if dynamic <= 0 then String.length (Hpack_static.name idx)
      else Hpack_table.name_len t.table dynamic
    in
    let vlen =
      if not with_value then 0
      else if dynamic <= 0 then String.length (Hpack_static.value idx)
      else Hpack_table.value_len t.table dynamic
    in
    if reserve t out ~used:0 ~len:(nlen + vlen) < 0 then -1
    else begin
      let o = t.out_pos in
      t.name_off <- o;
      t.name_len <- nlen;
      t.value_off <- o + nlen;
      t.value_len <- vlen;
      t.static_parts <- (if dynamic > 0 then 0 else if with_value then 2 else 1);
      if dynamic <= 0 then begin
        Bigstring.unsafe_blit_from_string (Hpack_static.name idx) ~src_off:0 out ~dst_off:o ~len:nlen;
        if with_value then
          Bigstring.unsafe_blit_from_string (Hpack_static.value idx) ~src_off:0 out
            ~dst_off:(o + nlen) ~len:vlen;
        t.header_name <- Hpack_static.header_name idx;
        t.pseudo <- Hpack_static.pseudo idx
      end
      else begin
        Hpack_table.copy_name t.table dynamic out ~dst_off:o;
        if with_value then Hpack_table.copy_value t.table dynamic out ~dst_off:(o + nlen);
        t.header_name <- Hpack_table.header_name t.table dynamic;
        t.pseudo <- Hpack_table.pseudo t.table dynamic
      end;
      t.out_pos <- o + nlen + vlen;
      0
    end
  end

(* A literal field (§6.2): name by index or literal, then the value. *)
let literal t src out ~prefix ~indexing =
  let idx = read_integer t src ~prefix in
  if idx < 0 then -1
  else begin
    let named =
      if idx > 0 then index_name t out idx ~with_value:false
      else begin
        let o = t.out_pos in
        let n = read_string t src out ~used:0 in
        t.static_parts <- 0;
        if n < 0 then -1
        else begin
          t.name_off <- o;
          t.name_len <- n;
          t.header_name <- Header_name.of_buffer out ~off:o ~len:n;
          t.pseudo <- Hpack_static.pseudo_of_buffer out ~off:o ~len:n;
          0
        end
      end
    in
    if named < 0 then -1
    else begin
      let o = t.out_pos in
      let n = read_string t src out ~used:t.name_len in
      if n < 0 then -1
      else begin
        t.value_off <- o;
        t.value_len <- n;
        if indexing then
          Hpack_table.add t.table out ~name_off:t.name_off ~name_len:t.name_len ~value_off:o
            ~value_len:n t.header_name t.pseudo;
        0
      end
    end
  end

let size_update t src =
  if t.fields > 0 then fail t Table_size_update_late
  else begin
    let n = read_integer t src ~prefix:5 in
    if n < 0 then -1
    else if n > t.max_table_size then fail t Table_size_too_large
    else begin Hpack_table.set_max_size t.table n; 0 end
  end

let next_field t src ~out =
  Bigstring.check_range "Httpz.Hpack.Decoder.next_field" src ~off:t.pos ~len:(t.stop - t.pos);
  let r = ref 1 in
  (* r: 1 read on, 0 a field, 2 the end, -1 an error *)
  while !r = 1 do
    if t.failed then r := -1
    else if t.pos >= t.stop then r := 2
    else begin
      t.field_start <- t.pos;
      let b = Char.code (Bigstring.unsafe_get src t.pos) in
      t.never_indexed <- false;
      if b land 0x80 <> 0 then begin
        let idx = read_integer t src ~prefix:7 in
        r := if idx < 0 then -1 else index_name t out idx ~with_value:true
      end
      else if b land 0x40 <> 0 then r := literal t src out ~prefix:6 ~indexing:true
      else if b land 0x20 <> 0 then begin
        if size_update t src < 0 then r := -1
      end
      else begin
        t.never_indexed <- b land 0x10 <> 0;
        r := literal t src out ~prefix:4 ~indexing:false
      end
    end
  done;
  if !r = 0 then begin
    t.fields <- t.fields + 1;
    t.list_size <- t.list_size + t.name_len + t.value_len + Hpack_table.entry_overhead;
    Field
  end
  else if !r = 2 then End
  else Error

let name t = Span.make ~off:t.name_off ~len:t.name_len
let value t = Span.make ~off:t.value_off ~len:t.value_len
let header_name t = t.header_name
let pseudo t = t.pseudo
let never_indexed t = t.never_indexed
let static_name t = t.static_parts >= 1
let static_value t = t.static_parts = 2
let error t = t.err
let failed t = t.failed
let error_offset t = t.field_start
let position t = t.pos
let field_count t = t.fields
let header_list_size t = t.list_size
let output_length t = t.out_pos
let max_table_size t = t.max_table_size
let table t = t.table
