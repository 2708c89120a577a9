(* The encoder's dynamic table and the decoder's stay in step: every path
   that inserts into one inserts the same name and value bytes into the
   other, and size changes reach the peer as §4.2 and §6.3 say. *)

open Httpz
open Hpack_common

type op =
  | Status of int
  | Known of Header_name.t * string
  | Known_int of Header_name.t * int
  | Any of string * string
  | Sensitive of string * string
  | Literal of E.representation * string * string

(* A block: the peer's SETTINGS_HEADER_TABLE_SIZE changes received before
   it (within what our decoder advertises, 4096), then its fields. *)
type block = { peer_sizes : int list; ops : op list }

let rep_to_string : E.representation -> string = function
  | With_indexing -> "with" | Without_indexing -> "without" | Never_indexed -> "never"

let op_to_string = function
  | Status c -> Printf.sprintf "status %d" c
  | Known (n, v) -> Printf.sprintf "field %s %S" (Header_name.to_string n) v
  | Known_int (n, i) -> Printf.sprintf "field_int %s %d" (Header_name.to_string n) i
  | Any (n, v) -> Printf.sprintf "field_s %S %S" n v
  | Sensitive (n, v) -> Printf.sprintf "sensitive %S %S" n v
  | Literal (r, n, v) -> Printf.sprintf "literal %s %S %S" (rep_to_string r) n v

let print (size, huffman, blocks) =
  Printf.sprintf "table %d, huffman %b:\n%s" size huffman
    (String.concat "\n"
       (List.map
          (fun b ->
            Printf.sprintf "  peer sizes [%s]: %s" (String.concat "; " (List.map string_of_int b.peer_sizes))
              (String.concat ", " (List.map op_to_string b.ops)))
          blocks))

let gen_op pool =
  let open QCheck2.Gen in
  let named = oneof [ oneofl pool; pair gen_name gen_value ] in
  let known = oneofa Header_name.all in
  frequency
    [ (3, map (fun c -> Status c) (oneof [ oneofl [ 200; 201; 302; 418; 503 ]; int_range 100 999 ]));
      (2, map2 (fun n v -> Known (n, v)) known gen_value);
      (1, map2 (fun n i -> Known_int (n, i)) known (oneof [ int_bound 100; int_bound max_int ]));
      (4, map (fun (n, v) -> Any (n, v)) named);
      (1, map (fun (n, v) -> Sensitive (n, v)) named);
      (2, map2 (fun r (n, v) -> Literal (r, n, v)) (oneofl E.[ With_indexing; Without_indexing; Never_indexed ]) named) ]

let gen_case =
  let open QCheck2.Gen in
  let peer_size = oneofl [ 0; 40; 100; 256; 4096 ] in
  triple (oneofl [ 0; 32; 64; 100; 256; 1024; 4096; 8192 ]) bool
    ( list_size (int_range 1 8) (pair gen_name gen_value) >>= fun pool ->
      list_size (int_range 1 6)
        (map2 (fun peer_sizes ops -> { peer_sizes; ops })
           (frequency [ (3, return []); (1, list_size (int_range 1 3) peer_size) ])
           (list_size (int_range 0 12) (gen_op pool))) )

let expected_field = function
  | Status c -> (":status", string_of_int c, false)
  | Known (n, v) -> (String.lowercase_ascii (Header_name.to_string n), v, false)
  | Known_int (n, i) -> (String.lowercase_ascii (Header_name.to_string n), string_of_int i, false)
  | Any (n, v) -> (n, v, false)
  | Sensitive (n, v) -> (n, v, true)
  | Literal (r, n, v) -> (n, v, r = Never_indexed)

let write e buf o = function
  | Status c -> E.status e buf ~off:o c
  | Known (n, v) -> E.field e buf ~off:o n v
  | Known_int (n, i) -> E.field_int e buf ~off:o n i
  | Any (n, v) -> E.field_s e buf ~off:o n v
  | Sensitive (n, v) -> E.field_sensitive e buf ~off:o n v
  | Literal (r, n, v) -> E.literal e buf ~off:o r n v

(* The fields of one block, with their never-indexed flags, or the error. *)
let decode_flags d src ~len =
  let out = Bigstring.create D.default_max_header_list_size in
  D.start_block d ~off:0 ~len;
  let rec go acc =
    match D.next_field d src ~out with
    | D.Field -> go ((Span.to_string out (D.name d), Span.to_string out (D.value d), D.never_indexed d) :: acc)
    | D.End -> Ok (List.rev acc)
    | D.Error -> Error (D.error_to_string (D.error d))
  in
  go []

let rec is_prefix l m = match (l, m) with [], _ -> true | x :: l, y :: m -> x = y && is_prefix l m | _ -> false

let roundtrip =
  QCheck2.Test.make ~count:1000 ~print
    ~name:"random blocks through an encoder with a table, peer size changes between: decoded as written"
    gen_case
    (fun (size, huffman, blocks) ->
      let e = E.create ~huffman ~table_size:size () in
      let d = D.create () in
      let buf = Bigstring.create 65536 in
      List.iteri
        (fun i b ->
          List.iter (E.set_peer_max_table_size e) b.peer_sizes;
          let len = List.fold_left (write e buf) (E.start_block e buf ~off:0) b.ops in
          let expected = Ok (List.map expected_field b.ops) in
          let got = decode_flags d buf ~len in
          if got <> expected then
            QCheck2.Test.fail_reportf "block %d decodes to %s" i
              (match got with
               | Error e -> e
               | Ok l -> String.concat "; " (List.map (fun (n, v, s) -> Printf.sprintf "%S: %S%s" n v (if s then " (never)" else "")) l));
          (* Ours are the peer's newest entries, all of them when both
             tables have the same size. *)
          let ours = entries (E.table e) and theirs = entries (D.table d) in
          if not (if size >= D.max_table_size d then ours = theirs else is_prefix ours theirs) then
            QCheck2.Test.fail_reportf "block %d: encoder table [%s], decoder table [%s]" i
              (String.concat "; " (List.map (fun (n, v) -> n ^ ": " ^ v) ours))
              (String.concat "; " (List.map (fun (n, v) -> n ^ ": " ^ v) theirs)))
        blocks;
      true)

(* §4.2: the size went to 0 and back; the peer must hear the 0 too, or it
   keeps entries we dropped. *)
let smallest_size_signalled () =
  let e = E.create ~huffman:false ~table_size:4096 () in
  let d = D.create () in
  let block f = encode_with (fun b -> f b (E.start_block e b ~off:0)) in
  let first = block (fun b o -> E.field_s e b ~off:o "x-a" "1") in
  ignore (decode d first);
  Alcotest.(check int) "one entry" 1 (Hpack.Table.length (D.table d));
  E.set_peer_max_table_size e 0;
  E.set_peer_max_table_size e 4096;
  let second = block (fun b o -> E.field_s e b ~off:o "x-b" "2") in
  Alcotest.(check string) "updates to 0, then 4096, then the field" "203fe11f4003782d620132"
    (to_hex second);
  Alcotest.check outcome "decodes" (Fields [ ("x-b", "2") ]) (decode d second);
  Alcotest.check table_t "the peer dropped x-a as we did" ([ ("x-b", "2") ], 36) (table_contents d);
  E.set_peer_max_table_size e 100;
  E.set_peer_max_table_size e 200;
  Alcotest.(check string) "down to 100, up to 200: both" "3f453fa901" (to_hex (block (fun _ o -> o)));
  (* growth alone, or a single change: one update *)
  E.set_peer_max_table_size e 300;
  E.set_peer_max_table_size e 400;
  Alcotest.(check string) "up to 300, then 400: one update" "3ff102" (to_hex (block (fun _ o -> o)));
  E.set_peer_max_table_size e 50;
  Alcotest.(check string) "down to 50: one update" "3f13" (to_hex (block (fun _ o -> o)));
  Alcotest.(check string) "nothing pending" "" (to_hex (block (fun _ o -> o)))

(* A table larger than 4096 waits for the peer's SETTINGS to use it. *)
let larger_table_waits () =
  let e = E.create ~huffman:false ~table_size:8192 () in
  Alcotest.(check int) "starts at 4096" 4096 (Hpack.Table.max_size (E.table e));
  E.set_peer_max_table_size e 65536;
  Alcotest.(check int) "grows to its reserve" 8192 (Hpack.Table.max_size (E.table e));
  Alcotest.(check string) "and says so" "3fe13f"
    (to_hex (encode_with (fun b -> E.start_block e b ~off:0)))

let zero_alloc =
  let e = E.create ~table_size:4096 () in
  let buf = Bigstring.create 64 in
  [ Httpz_test_support.zero_alloc "start a block after the table shrank and grew" (fun () ->
        E.set_peer_max_table_size e 0;
        E.set_peer_max_table_size e 4096;
        ignore (E.start_block e buf ~off:0 : int)) ]

let tests =
  [ Httpz_test_support.qcheck roundtrip;
    Alcotest.test_case "the smallest size is signalled" `Quick smallest_size_signalled;
    Alcotest.test_case "a table above 4096 waits for SETTINGS" `Quick larger_table_waits ]
  @ zero_alloc
