(* Bigstring's copies (an OCaml loop below 64 bytes, memmove/memcpy from
   there) against the obvious byte-by-byte reference, overlapping copies
   included, and for 0 words each. *)

open Httpz
module S = Httpz_test_support

let of_string = Bigstring.of_string
let to_string = Bigstring.to_string

(* The reference: a copy through a string, which overlap cannot disturb. *)
let reference_blit src src_off dst dst_off len =
  let moved = Bigstring.sub_string src ~off:src_off ~len in
  let d = Bytes.of_string (to_string dst) in
  Bytes.blit_string moved 0 d dst_off len;
  Bytes.to_string d

let gen_case =
  QCheck2.Gen.(
    let* n = int_range 1 400 in
    let* len = int_range 0 n in
    let* src_off = int_range 0 (n - len) in
    let* dst_off = int_range 0 (n - len) in
    let* same = bool in
    let* seed = int in
    return (n, len, src_off, dst_off, same, seed))

let content n seed = String.init n (fun i -> Char.chr ((i * 31 + seed) land 0xff))

let blit_matches =
  QCheck2.Test.make ~count:3000 ~name:"blit = the byte-by-byte copy (overlapping too)" gen_case
    (fun (n, len, src_off, dst_off, same, seed) ->
      let src = of_string (content n seed) in
      let dst = if same then src else of_string (content n (seed + 7)) in
      let want = reference_blit src src_off dst dst_off len in
      Bigstring.blit ~src ~src_off ~dst ~dst_off ~len;
      to_string dst = want)

let from_string_matches =
  QCheck2.Test.make ~count:3000 ~name:"blit_from_string = the byte-by-byte copy" gen_case
    (fun (n, len, src_off, dst_off, _, seed) ->
      let s = content n seed in
      let dst = of_string (content n (seed + 3)) in
      let d = Bytes.of_string (to_string dst) in
      Bytes.blit_string s src_off d dst_off len;
      Bigstring.blit_from_string s ~src_off dst ~dst_off ~len;
      to_string dst = Bytes.to_string d)

let bounds () =
  let b = Bigstring.create 100 in
  Alcotest.check_raises "past the end" (Invalid_argument "Bigstring.blit") (fun () ->
      Bigstring.blit ~src:b ~src_off:50 ~dst:b ~dst_off:0 ~len:51);
  Alcotest.check_raises "negative" (Invalid_argument "Bigstring.blit_from_string") (fun () ->
      Bigstring.blit_from_string "abc" ~src_off:0 b ~dst_off:0 ~len:(-1))

let src = Bigstring.of_string (String.make 612 'x')
let dst = Bigstring.create 4096
let body = String.make 612 'y'

let () =
  Alcotest.run "bigstring"
    [
      ( "copies",
        [ S.qcheck blit_matches; S.qcheck from_string_matches; Alcotest.test_case "bounds" `Quick bounds ] );
      ( "allocation",
        [
          S.zero_alloc "blit 612 bytes" (fun () -> Bigstring.blit ~src ~src_off:0 ~dst ~dst_off:100 ~len:612);
          S.zero_alloc "blit 40 bytes" (fun () -> Bigstring.blit ~src ~src_off:0 ~dst ~dst_off:100 ~len:40);
          S.zero_alloc "blit_from_string 612 bytes" (fun () ->
              Bigstring.blit_from_string body ~src_off:0 dst ~dst_off:7 ~len:612);
          S.zero_alloc "blit_from_string 13 bytes" (fun () ->
              Bigstring.blit_from_string body ~src_off:3 dst ~dst_off:7 ~len:13);
          S.zero_alloc "blit_from_string 6 bytes" (fun () ->
              Bigstring.blit_from_string body ~src_off:1 dst ~dst_off:7 ~len:6);
          S.zero_alloc "blit 13 bytes" (fun () -> Bigstring.blit ~src ~src_off:3 ~dst ~dst_off:100 ~len:13);
        ] );
    ]
