(* Hpack_mirror against a real decoder: whatever sets, versions, table
   pressure and size changes come, every block the mirror writes decodes
   (with Hpack_decoder as the peer) to exactly the set's fields, and a
   set sent again while the peer holds it is indices. *)

open Httpz
module P = Prepared_fields
module M = Hpack_mirror
module D = Hpack.Decoder
module S = Httpz_test_support

let buf = Bigstring.create 65536
let out = Bigstring.create 65536

(* The peer: its decoder, fed every block that is sent. *)
type peer = { d : D.t; m : M.t }

let peer ?(max = 4096) () = { d = D.create ~max_table_size:max (); m = M.create () }

(* Writes one block of [sets] (after a :status 200) and decodes it; the
   fields as "name=value", and the block's length. *)
let exchange p sets =
  let o = M.start_block p.m buf ~off:0 in
  Bigstring.unsafe_set buf o '\x88';
  let o = List.fold_left (fun o s -> M.block p.m buf ~off:o s) (o + 1) sets in
  M.sent p.m;
  D.start_block p.d ~off:0 ~len:o;
  let r = ref [] in
  while D.next_field p.d buf ~out = D.Field do
    r := (Span.to_string out (D.name p.d) ^ "=" ^ Span.to_string out (D.value p.d)) :: !r
  done;
  if D.failed p.d then Alcotest.failf "the peer could not decode: %s" (D.describe (D.error p.d));
  (List.tl (List.rev !r), o)

(* What a set holds, as the peer should see it. *)
let fields s =
  let d = D.create () in
  D.start_block d ~off:0 ~len:(P.hpack_length s);
  let r = ref [] in
  while D.next_field d (P.hpack s) ~out = D.Field do
    r := (Span.to_string out (D.name d) ^ "=" ^ Span.to_string out (D.value d)) :: !r
  done;
  List.rev !r

let strings = Alcotest.(list string)

let file_set tag =
  P.of_list
    [ (Header_name.Content_type, "text/html; charset=utf-8"); (Etag, "\"" ^ tag ^ "\"");
      (Last_modified, "Wed, 25 Nov 2026 23:49:23 GMT"); (Accept_ranges, "bytes") ]

let test_indices () =
  let p = peer () in
  let a = file_set "a" and b = file_set "b" in
  let fa, first = exchange p [ a ] in
  Alcotest.check strings "first: the fields" (fields a) fa;
  let fa2, again = exchange p [ a ] in
  Alcotest.check strings "again: the same fields" (fields a) fa2;
  Alcotest.(check int) "again: one byte per field (and :status)" 5 again;
  Alcotest.(check bool) "first: literals" true (first > again + 30);
  let fb, _ = exchange p [ b; a ] in
  Alcotest.check strings "another set, then the first" (fields b @ fields a) fb;
  (* accept-ranges: bytes is not in the static table; a field that is
     ("accept-encoding: gzip, deflate") stays a static index. *)
  let c = P.of_list [ (Accept_encoding, "gzip, deflate") ] in
  let fc, n = exchange p [ c ] in
  Alcotest.check strings "a static entry" [ "accept-encoding=gzip, deflate" ] fc;
  Alcotest.(check int) "a static entry: one byte" 2 n;
  let mixed = P.of_list [ (Accept_encoding, "gzip, deflate"); (Etag, "\"m\""); (Accept_encoding, "br") ] in
  ignore (exchange p [ mixed ]);
  let fm, n = exchange p [ mixed ] in
  Alcotest.check strings "static and inserted fields mixed, again" (fields mixed) fm;
  Alcotest.(check int) "mixed, again: one byte each" 4 n;
  P.clear a;
  P.add a Content_type "text/plain";
  let fa3, _ = exchange p [ a ] in
  Alcotest.check strings "a changed set: its new fields" [ "content-type=text/plain" ] fa3

let test_eviction () =
  (* 1000-byte values: four fit in 4096 bytes. *)
  let big i = P.of_list [ (Header_name.Etag, String.make 1000 (Char.chr (97 + i))) ] in
  let sets = Array.init 6 big in
  let p = peer () in
  for round = 1 to 3 do
    Array.iteri
      (fun i s ->
        let f, _ = exchange p [ s ] in
        Alcotest.check strings (Printf.sprintf "round %d, set %d" round i) (fields s) f)
      sets
  done;
  (* More than the ring's 64 entries: many small fields. *)
  let small = Array.init 100 (fun i -> P.of_list [ (Header_name.Etag, string_of_int i) ]) in
  Array.iter (fun s -> ignore (exchange p [ s ])) small;
  let f, n = exchange p [ small.(99); small.(98) ] in
  Alcotest.check strings "the newest small sets" (fields small.(99) @ fields small.(98)) f;
  Alcotest.(check int) "as indices" 3 n;
  let f, _ = exchange p [ small.(0) ] in
  Alcotest.check strings "an old one, inserted again" (fields small.(0)) f;
  let huge = P.of_list [ (Header_name.Etag, String.make 900 'x') ] in
  let p = peer () in
  M.set_peer_max p.m 512;
  let f, _ = exchange p [ huge; file_set "c" ] in
  Alcotest.check strings "larger than the table: literals" (fields huge @ fields (file_set "c")) f

(* Two sets sent on every response whose ids are eight apart (the memo
   once slotted sets by id mod 8): each must stay indices, not push the
   other out and be inserted again on every response. Nor may sets sent
   now and then push out the one sent every time. *)
let test_memo_collision () =
  let p = peer () in
  let a = file_set "a" in
  let rec eight_apart () =
    let s = file_set "b" in
    if P.id s - P.id a = 8 then s else eight_apart ()
  in
  let b = eight_apart () in
  ignore (exchange p [ a; b ]);
  for round = 1 to 3 do
    let f, n = exchange p [ a; b ] in
    Alcotest.check strings (Printf.sprintf "round %d: the fields" round) (fields a @ fields b) f;
    Alcotest.(check int) (Printf.sprintf "round %d: one byte per field" round) 9 n
  done;
  let others = Array.init 20 (fun i -> P.of_list [ (Header_name.Etag, string_of_int i) ]) in
  Array.iteri
    (fun i s ->
      let f, n = exchange p [ a; s ] in
      Alcotest.check strings (Printf.sprintf "with set %d: the fields" i) (fields a @ fields s) f;
      let f, n' = exchange p [ a; s ] in
      Alcotest.check strings (Printf.sprintf "with set %d again: the fields" i) (fields a @ fields s) f;
      Alcotest.(check bool) (Printf.sprintf "with set %d: the hot set as indices" i) true (n < 30);
      Alcotest.(check int) (Printf.sprintf "with set %d again: indices" i) 6 n')
    others

(* The indices of a held set, whether the buffer has room for a whole
   word past them or ends right after them: the same bytes, and nothing
   before [off] touched. *)
let test_indices_at_end () =
  let p = peer () in
  let a = file_set "a" in
  ignore (exchange p [ a ]);
  let roomy = Bigstring.create 64 in
  Bigarray.Array1.fill roomy (Char.chr 0);
  let n = M.block p.m roomy ~off:3 a in
  Alcotest.(check int) "four indices" 7 n;
  Alcotest.(check string) "counting down from the newest" "\x00\x00\x00\xc1\xc0\xbf\xbe"
    (Bigstring.sub_string roomy ~off:0 ~len:7);
  (* Two fields need four bytes of room (two per index at most): four to
     eight bytes left after [off]. *)
  let b = P.of_list [ (Header_name.Etag, "\"b\""); (Vary, "accept-encoding") ] in
  ignore (exchange p [ b ]);
  List.iter
    (fun room ->
      let tight = Bigstring.create (3 + room) in
      Bigarray.Array1.fill tight (Char.chr 0);
      Alcotest.(check int) (Printf.sprintf "%d bytes of room: two indices" room) 5 (M.block p.m tight ~off:3 b);
      Alcotest.(check string) (Printf.sprintf "%d bytes of room: the same bytes" room)
        ("\x00\x00\x00\xbf\xbe" ^ String.make (room - 2) '\x00') (Bigstring.sub_string tight ~off:0 ~len:(3 + room)))
    [ 4; 5; 7 ]

let test_size_update () =
  let p = peer () in
  let a = file_set "a" in
  ignore (exchange p [ a ]);
  M.set_peer_max p.m 100;
  let f, _ = exchange p [ a ] in
  Alcotest.check strings "after the peer's table shrank" (fields a) f;
  Alcotest.(check int) "the peer's table follows the update" 100 (Hpack.Table.max_size (D.table p.d));
  M.set_peer_max p.m 0;
  let f, _ = exchange p [ a; a ] in
  Alcotest.check strings "no table at all" (fields a @ fields a) f

let test_abandoned () =
  let p = peer () in
  let a = file_set "a" and b = file_set "b" in
  ignore (exchange p [ a ]);
  (* A block that inserts b, never sent. *)
  ignore (M.start_block p.m buf ~off:0);
  ignore (M.block p.m buf ~off:0 b);
  Alcotest.(check bool) "it inserted" true (M.inserted_since_start p.m);
  let f, _ = exchange p [ b; a ] in
  Alcotest.check strings "next block: still right" (fields b @ fields a) f;
  Alcotest.(check bool) "the mirror stopped indexing" false (M.enabled p.m);
  let q = peer () in
  M.reset p.m;
  let p = { p with d = q.d } in
  let _, first = exchange p [ a ] in
  let _, again = exchange p [ a ] in
  Alcotest.(check bool) "reset: indexing again" true (again < first && M.enabled p.m)

let test_no_space () =
  let p = peer () in
  let a = file_set "a" in
  let small = Bigstring.create 10 in
  Alcotest.check_raises "no room" Hpack_encoder.No_space (fun () -> ignore (M.block p.m small ~off:0 a));
  Alcotest.(check bool) "nothing inserted" false (M.inserted_since_start p.m);
  let f, _ = exchange p [ a ] in
  Alcotest.check strings "then as usual" (fields a) f

(* Random traffic: sets of random fields, changed now and then, the
   peer's limit lowered now and then. *)
let prop_random =
  let open QCheck2 in
  let gen =
    Gen.(
      list_size (int_range 1 60)
        (oneof
           [ map (fun (i, j) -> `Send (i, j)) (pair (int_range 0 9) (int_range 0 9));
             map (fun i -> `Change i) (int_range 0 9);
             map (fun n -> `Shrink n) (int_range 0 4096) ]))
  in
  Test.make ~count:300 ~name:"every block decodes to its sets' fields" gen (fun ops ->
      let sets =
        Array.init 10 (fun i ->
            P.of_list [ (Header_name.Etag, String.make ((i * 97) mod 700) 'e'); (Content_type, "t/" ^ string_of_int i) ])
      in
      let p = peer () in
      List.for_all
        (function
          | `Send (i, j) ->
              let f, _ = exchange p [ sets.(i); sets.(j) ] in
              f = fields sets.(i) @ fields sets.(j)
          | `Change i ->
              P.clear sets.(i);
              P.add sets.(i) Vary (String.make (i * 40) 'v');
              true
          | `Shrink n ->
              M.set_peer_max p.m n;
              true)
        ops)

let alloc_tests =
  let p = peer () in
  let a = file_set "a" and b = file_set "b" in
  ignore (exchange p [ a ]);
  [ S.zero_alloc "a set the peer holds: indices" (fun () -> ignore (M.block p.m buf ~off:0 a : int));
    S.zero_alloc "a set inserted (again)" (fun () ->
        ignore (M.start_block p.m buf ~off:0);
        ignore (M.block p.m buf ~off:0 a : int);
        ignore (M.block p.m buf ~off:0 b : int);
        M.sent p.m) ]

let () =
  Alcotest.run "hpack_mirror"
    [ ( "mirror",
        [ Alcotest.test_case "indices once the peer holds a set" `Quick test_indices;
          Alcotest.test_case "sets whose ids collide mod 8 both stay indices" `Quick test_memo_collision;
          Alcotest.test_case "indices at a buffer's end" `Quick test_indices_at_end;
          Alcotest.test_case "eviction, the ring's limit, sets larger than the table" `Quick test_eviction;
          Alcotest.test_case "the peer's table shrinks: size updates" `Quick test_size_update;
          Alcotest.test_case "an abandoned block stops indexing" `Quick test_abandoned;
          Alcotest.test_case "no space: nothing changes" `Quick test_no_space;
          S.qcheck prop_random ] );
      "allocation", alloc_tests ]
