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

(* [flags] of the current field, one word written once per field. *)
let static_name_bit = 1
let static_value_bit = 2
let never_indexed_bit = 4
let inserted_bit = 8
let marks_shift = 4  (* the source entry's marks, above the bits *)
let max_marks = 0xff
let name_mark = 1

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
  mutable name : int;  (** a {!Span.t} of [out] *)
  mutable value : int;
  mutable header_name : Header_name.t;
  mutable pseudo : Hpack_static.pseudo;
  mutable flags : int;
  mutable field_start : int;
  mutable err : error;
  mutable failed : bool;
}

let default_max_table_size = 4096
let default_max_header_list_size = 32768
let default_max_string_length = 16384

(* Static entries by index, [0] unused: name lengths, and name and value
   back to back in one buffer (one copy for an indexed field). *)
let static_name_lens =
  Array.init (Hpack_static.length + 1) (fun i -> if i = 0 then 0 else String.length (Hpack_static.name i))
let static_fields =
  Array.init (Hpack_static.length + 1) (fun i ->
      if i = 0 then "" else Hpack_static.name i ^ Hpack_static.value i)
let static_field_lens = Array.map String.length static_fields
let static_offs =
  let o = ref 0 in
  Array.map (fun f -> let off = !o in o := off + String.length f; off) static_fields
let static_bytes = Bigstring.of_string (String.concat "" (Array.to_list static_fields))

let create ?(max_table_size = default_max_table_size)
    ?(max_header_list_size = default_max_header_list_size)
    ?(max_string_length = default_max_string_length) () =
  if max_table_size < 0 || max_table_size > max_integer || max_header_list_size < 0
     || max_string_length < 0
  then invalid_arg "Hpack.Decoder.create";
  { table = Hpack_table.create ~capacity:max_table_size; max_table_size;
    max_list = max_header_list_size; max_string = max_string_length; pos = 0; stop = 0;
    out_pos = 0; list_size = 0; fields = 0; name = 0; value = 0;
    header_name = Header_name.Other; pseudo = Hpack_static.Regular; flags = 0;
    field_start = 0; err = Truncated; failed = false }

let start_block t ~off ~len =
  t.pos <- off; t.stop <- off + len; t.out_pos <- 0; t.list_size <- 0; t.fields <- 0;
  t.name <- 0; t.value <- 0; t.flags <- 0; t.field_start <- off

let reset t =
  Hpack_table.clear t.table;
  Hpack_table.set_max_size t.table t.max_table_size;
  t.failed <- false;
  start_block t ~off:0 ~len:0

let fail t e = t.err <- e; t.failed <- true; -1

let[@inline] span ~off ~len = (Span.make ~off ~len :> int)

(* An integer at [t.pos] of more than its prefix byte, or cut short:
   advances past it; the value, or [-1]. *)
let read_integer_long t src ~prefix =
  let r = decode_integer src ~off:t.pos ~stop:t.stop ~prefix in
  if r >= 0 then begin t.pos <- t.pos + (r land 7); r lsr 3 end
  else fail t (if r = integer_truncated then Truncated else Integer_overflow)

(* Reads an integer at [t.pos], advancing past it: the value, or [-1].
   Most integers fit in their prefix: one byte, read here. *)
let[@inline] read_integer t src ~prefix =
  let pos = t.pos in
  if pos < t.stop then begin
    let mask = (1 lsl prefix) - 1 in
    let v = Char.code (Bigstring.unsafe_get src pos) land mask in
    if v < mask then begin t.pos <- pos + 1; v end else read_integer_long t src ~prefix
  end
  else read_integer_long t src ~prefix

(* Room for [len] more bytes of this field, [used] bytes of it having been
   written already: 0, or -1 with the error set. *)
let[@inline] reserve t (out : Bigstring.t) ~used ~len =
  if t.list_size + Hpack_table.entry_overhead + used + len > t.max_list then
    fail t Header_list_too_large
  else if t.out_pos + len > Bigstring.length out then fail t Output_full
  else 0

(* A string literal (§5.2) decoded to [out] at [t.out_pos]: its length, or
   -1. [used] as for [reserve]. *)
let read_string t src out ~used =
  let pos = t.pos in
  if pos >= t.stop then fail t Truncated
  else begin
    let huffman = Char.code (Bigstring.unsafe_get src pos) land 0x80 <> 0 in
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
      let out_pos = t.out_pos in
      let budget = t.max_list - t.list_size - Hpack_table.entry_overhead - used in
      let room = Bigstring.length out - out_pos in
      let n =
        Huffman.decode src ~off:t.pos ~len out ~dst_off:out_pos
          ~dst_stop:(out_pos + max 0 (min budget room))
      in
      if n >= 0 then begin
        t.pos <- t.pos + len;
        t.out_pos <- out_pos + n;
        n
      end
      else if n = Huffman.error_eos then fail t Huffman_eos
      else if n = Huffman.error_padding then fail t Huffman_padding
      else fail t (if budget <= room then Header_list_too_large else Output_full)
    end
  end

(* Entry [idx] (static or dynamic) copied to [out]: its name, and with
   [with_value] its value right after it, and the field's flags set
   (static name and value, or the entry's marks: only the name's without
   the value). 0, or -1. *)
let[@inline] from_table t out idx ~with_value =
  let dynamic = idx - Hpack_static.length in
  if idx <= 0 || dynamic > Hpack_table.length t.table then fail t Bad_index
  else if dynamic <= 0 then begin
    let nlen = Array.unsafe_get static_name_lens idx in
    let len = if with_value then Array.unsafe_get static_field_lens idx else nlen in
    if reserve t out ~used:0 ~len < 0 then -1
    else begin
      let o = t.out_pos in
      Hpack_table.copy_bytes static_bytes ~src_off:(Array.unsafe_get static_offs idx) out ~dst_off:o ~len;
      t.name <- span ~off:o ~len:nlen;
      if with_value then t.value <- span ~off:(o + nlen) ~len:(len - nlen);
      t.header_name <- Hpack_static.header_name idx;
      t.pseudo <- Hpack_static.pseudo idx;
      t.out_pos <- o + len;
      t.flags <- (if with_value then static_name_bit lor static_value_bit else static_name_bit);
      0
    end
  end
  else begin
    let tb = t.table in
    let s = Hpack_table.slot_of tb dynamic in
    let nlen = Hpack_table.name_len_at tb s in
    let len = if with_value then nlen + Hpack_table.value_len_at tb s else nlen in
    if reserve t out ~used:0 ~len < 0 then -1
    else begin
      let o = t.out_pos in
      Hpack_table.copy_at tb s out ~dst_off:o ~len;
      t.name <- span ~off:o ~len:nlen;
      if with_value then t.value <- span ~off:(o + nlen) ~len:(len - nlen);
      t.header_name <- Hpack_table.header_name_at tb s;
      t.pseudo <- Hpack_table.pseudo_at tb s;
      t.out_pos <- o + len;
      let marks = Hpack_table.marks_at tb s in
      t.flags <- (if with_value then marks else marks land name_mark) lsl marks_shift;
      0
    end
  end

(* A literal field (§6.2): name by index or literal, then the value.
   [kind] is [never_indexed_bit], or [inserted_bit] for incremental
   indexing (§6.2.1), or 0. *)
let literal t src out ~prefix ~kind =
  let idx = read_integer t src ~prefix in
  if idx < 0 then -1
  else begin
    let o = t.out_pos in
    let named =
      if idx > 0 then from_table t out idx ~with_value:false
      else begin
        let n = read_string t src out ~used:0 in
        if n < 0 then -1
        else begin
          t.name <- span ~off:o ~len:n;
          t.header_name <- Header_name.of_buffer out ~off:o ~len:n;
          t.pseudo <- Hpack_static.pseudo_of_buffer out ~off:o ~len:n;
          t.flags <- 0;
          0
        end
      end
    in
    if named < 0 then -1
    else begin
      let name_flags = t.flags in
      let vo = t.out_pos in
      let nlen = vo - o in
      let n = read_string t src out ~used:nlen in
      if n < 0 then -1
      else begin
        t.value <- span ~off:vo ~len:n;
        if kind = inserted_bit then begin
          let tb = t.table in
          (* [add] inserts exactly when the entry fits the maximum size. *)
          let fits = nlen + n + Hpack_table.entry_overhead <= Hpack_table.max_size tb in
          Hpack_table.add tb out ~name_off:o ~name_len:nlen ~value_off:vo ~value_len:n
            t.header_name t.pseudo;
          t.flags <- (if fits then name_flags lor inserted_bit else name_flags)
        end
        else t.flags <- name_flags lor kind;
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

(* Dynamic table size updates (§6.3) at [t.pos], applied: [false] on an
   error. Rare, and apart: a loop polls for the GC, and the field path
   below would reload all it holds in registers after it. *)
let size_updates t src =
  let ok = ref true in
  while !ok && t.pos < t.stop && Char.code (Bigstring.unsafe_get src t.pos) land 0xe0 = 0x20 do
    t.field_start <- t.pos;
    t.flags <- 0;
    if size_update t src < 0 then ok := false
  done;
  !ok

(* The field whose first byte [b] is at [t.pos] (not a size update). *)
let field t src out b =
  let pos = t.pos in
  t.field_start <- pos;
  let o = t.out_pos in
  let r =
    if b >= 0x80 then begin
      if b < 0xff then begin t.pos <- pos + 1; from_table t out (b land 0x7f) ~with_value:true end
      else begin
        let idx = read_integer_long t src ~prefix:7 in
        if idx < 0 then -1 else from_table t out idx ~with_value:true
      end
    end
    else if b >= 0x40 then literal t src out ~prefix:6 ~kind:inserted_bit
    else literal t src out ~prefix:4 ~kind:(if b land 0x10 <> 0 then never_indexed_bit else 0)
  in
  if r < 0 then Error
  else begin
    t.fields <- t.fields + 1;
    (* The field's name and value are the bytes written since [o]. *)
    t.list_size <- t.list_size + (t.out_pos - o) + Hpack_table.entry_overhead;
    Field
  end

(* The next field, after any size updates; the end, or an error. *)
let next_representation t src out =
  if t.failed then Error
  else if t.pos >= t.stop then End
  else begin
    let b = Char.code (Bigstring.unsafe_get src t.pos) in
    if b land 0xe0 <> 0x20 then field t src out b
    else if not (size_updates t src) then Error
    else if t.pos >= t.stop then End
    else field t src out (Char.code (Bigstring.unsafe_get src t.pos))
  end

let next_field t src ~out =
  Bigstring.check_range "Httpz.Hpack.Decoder.next_field" src ~off:t.pos ~len:(t.stop - t.pos);
  next_representation t src out

let next_field_unchecked t src ~out = next_representation t src out

let name t = Span.unsafe_of_int t.name
let value t = Span.unsafe_of_int t.value
let header_name t = t.header_name
let pseudo t = t.pseudo
let never_indexed t = t.flags land never_indexed_bit <> 0
let static_name t = t.flags land static_name_bit <> 0
let static_value t = t.flags land static_value_bit <> 0
let entry_marks t = t.flags lsr marks_shift
let inserted t = t.flags land inserted_bit <> 0
let mark_inserted t m =
  if t.flags land inserted_bit <> 0 then Hpack_table.set_marks t.table 1 (m land max_marks)
let error t = t.err
let failed t = t.failed
let error_offset t = t.field_start
let position t = t.pos
let field_count t = t.fields
let header_list_size t = t.list_size
let output_length t = t.out_pos
let max_table_size t = t.max_table_size
let table t = t.table
