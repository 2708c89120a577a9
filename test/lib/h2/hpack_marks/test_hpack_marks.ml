(* Marks on HPACK dynamic table entries (Hpack_table.marks,
   Hpack_decoder.entry_marks / mark_inserted) and H2_head's use of them: a
   field indexed from an entry whose name and value passed the checks when
   it was inserted is not checked again. These tests hold that skipping
   never changes a verdict: a bad entry is refused at every reference, a
   good one accepted, a mark never outlives its entry (eviction, slot
   reuse, growth), and a differential run against a head whose marks are
   wiped before every block agrees on every outcome. *)

open Httpz
module S = Httpz_test_support
module D = Hpack_decoder
module T = Hpack_table

(* Raw HPACK, no Huffman: a string literal (< 127 bytes), an indexed
   field, literals with incremental indexing / without indexing. *)
let str s = String.make 1 (Char.chr (String.length s)) ^ s
let indexed i = String.make 1 (Char.chr (0x80 lor i))
let with_indexing name value = "\x40" ^ str name ^ str value
let with_indexing_idx i value = String.make 1 (Char.chr (0x40 lor i)) ^ str value
let without_indexing name value = "\x00" ^ str name ^ str value
let without_indexing_idx i value = "\x0f" ^ String.make 1 (Char.chr (i - 15)) ^ str value
let pseudos = indexed 2 ^ indexed 6 ^ indexed 4 (* GET http / *)

type outcome = { result : string; reason : string; plain : bool; fields : (string * string) list }

let show_result = function
  | H2_head.Valid -> "valid"
  | Malformed -> "malformed"
  | Too_many_fields -> "too_many_fields"
  | Compression_error -> "compression_error"

let outcome_t =
  Alcotest.testable
    (fun ppf o ->
      Format.fprintf ppf "%s (%s) plain=%b [%s]" o.result o.reason o.plain
        (String.concat "; " (List.map (fun (n, v) -> n ^ ": " ^ String.escaped v) o.fields)))
    (fun a b ->
      (* A malformed head's [values_plain] counts the values checked up to
         the failure; the differential test compares it, not these. *)
      a = b || (a.result <> "valid" && { a with plain = true } = { b with plain = true }))

type conn = { d : D.t; h : H2_head.t; out : Bigstring.t }

let conn ?max_table_size () =
  { d = D.create ?max_table_size (); h = H2_head.create ~max_fields:16; out = Bigstring.create 4096 }

let decode c block =
  let src = Bigstring.of_string block in
  let r = H2_head.decode c.h c.d src ~off:0 ~len:(String.length block) ~out:c.out ~trailers:false in
  let s sp = Span.to_string c.out sp in
  { result = show_result r; reason = H2_head.reason c.h; plain = H2_head.values_plain c.h;
    fields =
      (if r = Valid then
         List.init (H2_head.field_count c.h) (fun i ->
             (s (H2_head.field_name_span c.h i), s (H2_head.field_value c.h i)))
       else []) }

let valid fields = { result = "valid"; reason = ""; plain = true; fields }
let malformed reason = { result = "malformed"; reason; plain = true; fields = [] }
let bad_value = "field value with CR, LF, NUL or edge whitespace"
let bad_name = "field name not lower-case token"
let marks c i = T.marks (D.table c.d) i

(* ---------- H2_head over marked entries ---------- *)

let good_entry_accepted () =
  let c = conn () in
  Alcotest.check outcome_t "inserted" (valid [ ("x-a", "b") ]) (decode c (pseudos ^ with_indexing "x-a" "b"));
  Alcotest.(check int) "marked: name and value passed" 3 (marks c 1);
  Alcotest.check outcome_t "indexed" (valid [ ("x-a", "b") ]) (decode c (pseudos ^ indexed 62));
  Alcotest.check outcome_t "indexed twice"
    (valid [ ("x-a", "b"); ("x-a", "b") ])
    (decode c (pseudos ^ indexed 62 ^ indexed 62));
  Alcotest.(check int) "still marked" 3 (marks c 1)

let bad_value_refused_again () =
  List.iter
    (fun (what, value) ->
      let c = conn () in
      Alcotest.check outcome_t (what ^ ": inserted") (malformed bad_value)
        (decode c (pseudos ^ with_indexing "x-a" value));
      Alcotest.(check int) (what ^ ": only the name marked") 1 (marks c 1);
      for _ = 1 to 3 do
        Alcotest.check outcome_t (what ^ ": indexed") (malformed bad_value) (decode c (pseudos ^ indexed 62))
      done;
      (* A new value for the entry's (checked) name is checked itself. *)
      Alcotest.check outcome_t (what ^ ": name reused, good value") (valid [ ("x-a", "ok") ])
        (decode c (pseudos ^ without_indexing_idx 62 "ok")))
    [ ("NUL", "a\000b"); ("CR", "a\rb"); ("LF", "a\nb"); ("leading SP", " a"); ("trailing HTAB", "a\t") ]

let bad_name_refused_again () =
  let c = conn () in
  Alcotest.check outcome_t "inserted" (malformed bad_name) (decode c (pseudos ^ with_indexing "X-A" "b"));
  Alcotest.(check int) "unmarked" 0 (marks c 1);
  Alcotest.check outcome_t "indexed" (malformed bad_name) (decode c (pseudos ^ indexed 62));
  (* The name alone, with a good value: still the name's fault. *)
  Alcotest.check outcome_t "name indexed" (malformed bad_name) (decode c (pseudos ^ with_indexing_idx 62 "c"));
  Alcotest.check outcome_t "new entry of that name" (malformed bad_name) (decode c (pseudos ^ indexed 62))

(* An entry whose value is good lends only its name's mark to a literal
   that reuses the name: the literal's value is checked. *)
let name_mark_only () =
  let c = conn () in
  ignore (decode c (pseudos ^ with_indexing "x-a" "b"));
  Alcotest.check outcome_t "bad value on a marked name" (malformed bad_value)
    (decode c (pseudos ^ with_indexing_idx 62 "b\000"));
  Alcotest.(check int) "that new entry: name only" 1 (marks c 1);
  Alcotest.(check int) "the old one: unchanged" 3 (marks c 2);
  Alcotest.check outcome_t "new entry refused" (malformed bad_value) (decode c (pseudos ^ indexed 62));
  Alcotest.check outcome_t "old entry accepted" (valid [ ("x-a", "b") ]) (decode c (pseudos ^ indexed 63))

(* A value with HTAB inside passes but makes the head not plain, also when
   it comes from the table. *)
let control_mark () =
  let c = conn () in
  let with_tab = { (valid [ ("x-a", "a\tb") ]) with plain = false } in
  Alcotest.check outcome_t "inserted" with_tab (decode c (pseudos ^ with_indexing "x-a" "a\tb"));
  Alcotest.(check int) "marked with its control byte" 7 (marks c 1);
  Alcotest.check outcome_t "indexed" with_tab (decode c (pseudos ^ indexed 62));
  ignore (decode c (pseudos ^ with_indexing "x-b" "plain"));
  Alcotest.check outcome_t "a plain entry" (valid [ ("x-b", "plain") ]) (decode c (pseudos ^ indexed 62))

(* Pseudo-headers: an :authority inserted where a pseudo-header may not
   stand (after a regular field) was never checked, so not marked. *)
let pseudo_marks () =
  let c = conn () in
  Alcotest.check outcome_t "late :authority"
    (malformed "pseudo-header after a regular field")
    (decode c (pseudos ^ with_indexing "x-a" "b" ^ with_indexing_idx 1 "h"));
  Alcotest.(check int) "unchecked, unmarked" 0 (marks c 1);
  Alcotest.check outcome_t "in place" (valid []) (decode c (pseudos ^ indexed 62));
  Alcotest.(check int) "still unmarked (indexed, not inserted)" 0 (marks c 1);
  Alcotest.check outcome_t "bad :authority value" (malformed bad_value)
    (decode c (pseudos ^ with_indexing_idx 1 "h "));
  Alcotest.check outcome_t "refused again" (malformed bad_value) (decode c (pseudos ^ indexed 62));
  Alcotest.check outcome_t "good :authority" (valid []) (decode c (pseudos ^ with_indexing_idx 1 "h"));
  Alcotest.(check int) "marked" 3 (marks c 1);
  Alcotest.check outcome_t "repeated from the table"
    (malformed "repeated :authority")
    (decode c (pseudos ^ indexed 62 ^ indexed 62))

(* One entry fits at a time: every insertion evicts the previous entry and
   the slots are reused in turn; good and bad entries alternate, so a
   stale mark would let a bad value through. *)
let eviction () =
  let c = conn ~max_table_size:64 () in
  for k = 0 to 40 do
    (* Good, bad value (the name marked), bad name (nothing marked): a
       period of 4 over 3 slots puts each kind in each slot. *)
    let name, value, expect =
      match k mod 4 with
      | 0 | 3 -> let v = Printf.sprintf "v%02d" k in ("x-a", v, valid [ ("x-a", v) ])
      | 1 -> ("x-a", Printf.sprintf "v\000%d" (k mod 10), malformed bad_value)
      | _ -> ("X-a", Printf.sprintf "v%02d" k, malformed bad_name)
    in
    Alcotest.check outcome_t (Printf.sprintf "insert %d" k) expect (decode c (pseudos ^ with_indexing name value));
    Alcotest.(check int) "one entry" 1 (T.length (D.table c.d));
    Alcotest.check outcome_t (Printf.sprintf "reference %d" k) expect (decode c (pseudos ^ indexed 62))
  done

(* An entry larger than the table is not inserted (§4.4): nothing is
   marked, and the entry that was 1 keeps its marks. *)
let too_large_not_marked () =
  let c = conn ~max_table_size:64 () in
  ignore (decode c (pseudos ^ with_indexing "x-a" "a\000"));
  Alcotest.(check int) "name only" 1 (marks c 1);
  let src = Bigstring.of_string (with_indexing "x-b" (String.make 40 'v')) in
  D.start_block c.d ~off:0 ~len:(Bigstring.length src);
  Alcotest.(check bool) "field" true (D.next_field c.d src ~out:c.out = D.Field);
  Alcotest.(check bool) "not inserted" false (D.inserted c.d);
  Alcotest.(check int) "table emptied" 0 (T.length (D.table c.d));
  D.mark_inserted c.d 3;
  ignore (decode c (pseudos ^ with_indexing "x-a" "a\000"));
  Alcotest.(check int) "a new entry starts unmarked" 1 (marks c 1)

(* ---------- The decoder's view ---------- *)

let decoder_marks () =
  let d = D.create () and out = Bigstring.create 256 in
  let run block f =
    let src = Bigstring.of_string block in
    D.start_block d ~off:0 ~len:(Bigstring.length src);
    let rec go i =
      match D.next_field d src ~out with
      | D.Field -> f i; go (i + 1)
      | End -> ()
      | Error -> Alcotest.fail "decode"
    in
    go 0
  in
  run (with_indexing "x-a" "b" ^ without_indexing "x-b" "c" ^ indexed 2) (fun i ->
      Alcotest.(check bool) (Printf.sprintf "field %d inserted" i) (i = 0) (D.inserted d);
      Alcotest.(check int) "no marks yet" 0 (D.entry_marks d);
      D.mark_inserted d (0x100 lor 0x36 lor i));
  Alcotest.(check int) "only the inserted entry, low 8 bits" 0x36 (T.marks (D.table d) 1);
  Alcotest.(check int) "one entry" 1 (T.length (D.table d));
  run (indexed 62 ^ with_indexing_idx 62 "c" ^ indexed 63 ^ without_indexing_idx 62 "d") (fun i ->
      (* 0x36 has the name bit clear, 0x0b set. *)
      let expect = match i with 0 -> 0x36 | 1 -> 0 | 2 -> 0x36 | _ -> 1 in
      Alcotest.(check int) (Printf.sprintf "field %d marks" i) expect (D.entry_marks d);
      if i = 1 then D.mark_inserted d 0x0b);
  run (with_indexing_idx 62 "e") (fun _ ->
      Alcotest.(check int) "name mark of entry 1" 1 (D.entry_marks d);
      Alcotest.(check bool) "static name: no" false (D.static_name d));
  run (indexed 2 ^ "\x04" ^ str "/x") (fun i ->
      Alcotest.(check bool) "static name" true (D.static_name d);
      Alcotest.(check bool) "static value" (i = 0) (D.static_value d);
      Alcotest.(check int) "static: no marks" 0 (D.entry_marks d))

(* Marks stay with their entries when the slot arrays grow, and a slot
   reused after eviction starts at 0. *)
let table_marks () =
  let t = T.create ~capacity:4096 in
  let src = Bigstring.of_string "namevalue" in
  let add () = T.add t src ~name_off:0 ~name_len:4 ~value_off:4 ~value_len:5 Header_name.Other Hpack_static.Regular in
  for k = 1 to 20 do
    add ();
    Alcotest.(check int) "new entry unmarked" 0 (T.marks t 1);
    T.set_marks t 1 k
  done;
  for i = 1 to 20 do
    Alcotest.(check int) (Printf.sprintf "entry %d after growth" i) (21 - i) (T.marks t i)
  done;
  T.set_max_size t 90;
  Alcotest.(check int) "two left" 2 (T.length t);
  Alcotest.(check (list int)) "newest two kept theirs" [ 20; 19 ] [ T.marks t 1; T.marks t 2 ];
  (* 32 slots now: 70 more entries go round them twice. *)
  for k = 1 to 70 do
    add ();
    Alcotest.(check int) (Printf.sprintf "reused slot %d unmarked" k) 0 (T.marks t 1);
    T.set_marks t 1 (100 + k)
  done;
  Alcotest.(check (list int)) "after reuse" [ 170; 169 ] [ T.marks t 1; T.marks t 2 ]

(* Entries of every length up to past the unrolled copies' 32 bytes,
   wrapping round a small ring, come back byte for byte, with nothing
   written around them. *)
let table_copies () =
  let d = D.create ~max_table_size:200 () and out = Bigstring.create 512 in
  let pattern n k = String.init n (fun i -> Char.chr (0x61 + ((i * 7) + k) mod 26)) in
  for n = 1 to 40 do
    for v = 0 to 70 do
      let name = pattern n v and value = pattern v n in
      let block = with_indexing name value ^ indexed 62 ^ with_indexing_idx 62 value in
      let src = Bigstring.of_string block in
      Bigstring.blit_from_string (String.make 512 '#') ~src_off:0 out ~dst_off:0 ~len:512;
      D.start_block d ~off:0 ~len:(Bigstring.length src);
      let fields = ref [] in
      let rec go () =
        match D.next_field d src ~out with
        | D.Field ->
            fields := (Span.to_string out (D.name d), Span.to_string out (D.value d)) :: !fields;
            go ()
        | End -> ()
        | Error -> Alcotest.failf "name %d value %d: %s" n v (D.error_to_string (D.error d))
      in
      go ();
      let what = Printf.sprintf "name %d, value %d" n v in
      Alcotest.(check (list (pair string string))) what [ (name, value); (name, value); (name, value) ]
        (List.rev !fields);
      let used = D.output_length d in
      Alcotest.(check string) (what ^ ": nothing past the fields") (String.make (512 - used) '#')
        (Bigstring.sub_string out ~off:used ~len:(512 - used))
    done
  done;
  (* The copy itself, at every length, between odd offsets. *)
  for len = 0 to 40 do
    let src = Bigstring.of_string (pattern 64 len) and dst = Bigstring.of_string (String.make 64 '#') in
    T.copy_bytes src ~src_off:3 dst ~dst_off:5 ~len;
    Alcotest.(check string) (Printf.sprintf "copy_bytes %d" len)
      (String.make 5 '#' ^ String.sub (pattern 64 len) 3 len ^ String.make (59 - len) '#')
      (Bigstring.to_string dst)
  done

(* ---------- Differential: marks never change an outcome ---------- *)

(* The same blocks through two connections; the reference's marks are
   wiped before every block, so it checks every field. *)
let wipe c =
  let t = D.table c.d in
  for i = 1 to T.length t do T.set_marks t i 0 done

let names = [| "x-a"; "x-b"; "X-c"; "user-agent"; "te"; "content-length"; "" |]
let values = [| "a"; "a\tb"; " a"; "a\000"; "trailers"; "12"; ""; "x\r"; "b c" |]

let gen_block =
  let open QCheck2.Gen in
  let field =
    oneof
      [ map2 (fun n v -> with_indexing names.(n) values.(v)) (int_bound 6) (int_bound 8);
        map2 (fun n v -> without_indexing names.(n) values.(v)) (int_bound 6) (int_bound 8);
        map (fun i -> indexed (62 + i)) (int_bound 5);
        map2 (fun i v -> with_indexing_idx (62 + i) values.(v)) (int_bound 5) (int_bound 8);
        map (fun v -> with_indexing_idx 1 values.(v)) (int_bound 8) ]
  in
  map (fun fs -> pseudos ^ String.concat "" fs) (list_size (int_range 0 5) field)

let differential =
  QCheck2.Test.make ~count:300 ~name:"marked entries decode as unmarked ones"
    ~print:(fun bs -> String.concat " | " (List.map String.escaped bs))
    QCheck2.Gen.(list_size (int_range 1 12) gen_block)
    (fun blocks ->
      let c = conn ~max_table_size:160 () and r = conn ~max_table_size:160 () in
      List.for_all
        (fun b ->
          wipe r;
          let x = decode c b and y = decode r b in
          if x <> y then
            QCheck2.Test.fail_reportf "marked: %s (%s) / wiped: %s (%s)" x.result x.reason y.result y.reason;
          true)
        blocks)

(* ---------- Short values (one word) ---------- *)

(* Every byte at every place of values of 1 to 7 bytes (checked as one
   word), and of 8 to 9 (the scanner): the verdict and [values_plain]
   follow the rules byte by byte. The value is a literal, so it is
   checked; [tail] more fields after it move where the next value lands. *)
let short_values () =
  let c = conn () in
  for len = 1 to 9 do
    for pos = 0 to len - 1 do
      for b = 0 to 255 do
        let value = String.init len (fun i -> if i = pos then Char.chr b else 'v') in
        let ch = Char.chr b in
        let edge = pos = 0 || pos = len - 1 in
        let bad = ch = '\000' || ch = '\r' || ch = '\n' || (edge && (ch = ' ' || ch = '\t')) in
        let control = b < 0x20 || b = 0x7f in
        let o = decode c (pseudos ^ without_indexing "x-v" value) in
        let what = Printf.sprintf "len %d, byte %02x at %d" len b pos in
        Alcotest.(check string) what (if bad then "malformed" else "valid") o.result;
        Alcotest.(check bool) (what ^ ": plain") (not control) o.plain
      done
    done
  done

(* A short value that ends less than 8 bytes before the end of [out]
   cannot be read as one word: the scanner decides. *)
let short_value_at_buffer_end () =
  List.iter
    (fun (value, ok, plain) ->
      let block = pseudos ^ without_indexing "x-v" value in
      (* ":method" "GET" ":scheme" "http" ":path" "/" then the field. *)
      let used = 7 + 3 + 7 + 4 + 5 + 1 + 3 + String.length value in
      for slack = 0 to 8 do
        let c = { (conn ()) with out = Bigstring.create (used + slack) } in
        let o = decode c block in
        let what = Printf.sprintf "%S, %d bytes after" value slack in
        Alcotest.(check string) what (if ok then "valid" else "malformed") o.result;
        Alcotest.(check bool) (what ^ ": plain") plain o.plain
      done)
    [ ("abc", true, true); ("a\tc", true, false); ("a\000c", false, false); ("a\x7f", true, false);
      ("\xff\x80", true, true); (" ab", false, true) ]

(* ---------- Allocation ---------- *)

let zero_alloc_head () =
  let c = conn () in
  ignore (decode c (pseudos ^ with_indexing_idx 1 "example.com" ^ with_indexing "user-agent" "h2load/1"));
  (* Two marked entries, and literal values checked in one word and by
     the scanner. *)
  let block =
    Bigstring.of_string
      (pseudos ^ indexed 63 ^ indexed 62 ^ without_indexing "x-p" "/f.html"
       ^ without_indexing "x-q" "a longer value, with\ta tab")
  in
  let len = Bigstring.length block in
  fun () ->
    if H2_head.decode c.h c.d block ~off:0 ~len ~out:c.out ~trailers:false <> Valid then
      failwith "decode"

let zero_alloc_decoder () =
  (* One entry at a time, in slots that never grow. *)
  let d = D.create ~max_table_size:64 () and out = Bigstring.create 256 in
  let first = Bigstring.of_string (with_indexing "x-a" "b") in
  let block = Bigstring.of_string (indexed 62 ^ with_indexing_idx 62 "c" ^ indexed 2) in
  let acc = ref 0 in
  D.start_block d ~off:0 ~len:(Bigstring.length first);
  ignore (D.next_field d first ~out);
  fun () ->
    D.start_block d ~off:0 ~len:(Bigstring.length block);
    let st = ref (D.next_field d block ~out) in
    while !st = D.Field do
      acc := !acc + D.entry_marks d;
      D.mark_inserted d 3;
      st := D.next_field_unchecked d block ~out
    done

let () =
  Alcotest.run "hpack_marks"
    [ ( "h2_head",
        [ Alcotest.test_case "a good entry is accepted by reference" `Quick good_entry_accepted;
          Alcotest.test_case "a bad value is refused at every reference" `Quick bad_value_refused_again;
          Alcotest.test_case "a bad name is refused at every reference" `Quick bad_name_refused_again;
          Alcotest.test_case "a reused name lends no value mark" `Quick name_mark_only;
          Alcotest.test_case "a control byte in a marked value" `Quick control_mark;
          Alcotest.test_case "pseudo-headers are marked only once checked" `Quick pseudo_marks;
          Alcotest.test_case "eviction carries no mark to a new entry" `Quick eviction;
          Alcotest.test_case "an entry too large for the table" `Quick too_large_not_marked ] );
      ( "decoder",
        [ Alcotest.test_case "entry_marks, inserted, mark_inserted" `Quick decoder_marks;
          Alcotest.test_case "table marks through growth and eviction" `Quick table_marks;
          Alcotest.test_case "entries of every length copied out" `Quick table_copies ] );
      ( "values",
        [ Alcotest.test_case "short values, every byte at every place" `Quick short_values;
          Alcotest.test_case "a short value at the end of out" `Quick short_value_at_buffer_end ] );
      ("differential", [ S.qcheck differential ]);
      ( "zero alloc",
        [ S.zero_alloc "H2_head.decode of marked dynamic entries" (zero_alloc_head ());
          S.zero_alloc "decoder: entry_marks, mark_inserted, next_field_unchecked" (zero_alloc_decoder ()) ] ) ]
