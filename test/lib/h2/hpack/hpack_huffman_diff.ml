(* Huffman.decode against the four-bit automaton it replaced
   (Huffman_reference): same result, same error, same bytes written, for
   random strings, every code at every bit alignment followed by every
   padding, EOS anywhere, and every output limit. *)

open Httpz
module S = Httpz_test_support

(* Both decoders on [s] in each of three buffers (garbage around it; the
   buffer ending where [s] does, after 9 garbage bytes; [s] alone: each a
   different way for the decoder to read its last bytes), writing into
   buffers filled alike with at most [space] bytes of room: equal results
   and equal buffers afterwards, or a failure naming the input. *)
let agree ?(garbage = '\xa5') ?space s =
  let len = String.length s in
  let room = (2 * len) + 16 in
  let space = match space with Some n -> min n room | None -> room in
  let dst_off = 5 in
  let layouts =
    [ ("inside", 3 + (len land 7), S.bigstring_at ~garbage ~off:(3 + (len land 7)) s);
      ("at the end", 9, Bigstring.of_string (String.make 9 garbage ^ s));
      ("alone", 0, Bigstring.of_string s) ]
  in
  List.fold_left
    (fun _ (layout, off, src) ->
      let run decode =
        let dst = Bigstring.create (room + dst_off) in
        Bigarray.Array1.fill dst '\x5a';
        let n = decode src ~off ~len dst ~dst_off ~dst_stop:(dst_off + space) in
        (n, Bigstring.to_string dst)
      in
      let n, out = run Huffman.decode and n', out' = run Huffman_reference.decode in
      if n <> n' || out <> out' then
        Alcotest.failf "%S %s (space %d): decode %d, reference %d%s" s layout space n n'
          (if out <> out' then ", different bytes written" else "");
      n)
    0 layouts

(* A bit string, most significant first, packed into bytes; [fill] gives
   the bits of the last byte's remainder. *)
let pack bits ~fill =
  let bits = bits @ List.init ((8 - (List.length bits land 7)) land 7) fill in
  let a = Array.of_list bits in
  String.init (Array.length a / 8) (fun i ->
      let b = ref 0 in
      for k = 0 to 7 do b := (!b lsl 1) lor a.((8 * i) + k) done;
      Char.chr !b)

let code_bits sym = List.init (Huffman.length sym) (fun k -> (Huffman.code sym lsr (Huffman.length sym - 1 - k)) land 1)

let fills = [ ("ones", fun _ -> 1); ("zeros", fun _ -> 0); ("alternating", fun k -> k land 1) ]

(* Every symbol, EOS included, after 0-7 'a's (5 bits each: every
   alignment), then 0-15 more bits and the byte's remainder from each
   fill: valid paddings of 0-7 ones, paddings of 8+ bits, non-ones
   paddings, EOS at the end and in the middle. Each with all the room it
   needs and with one byte too few. *)
let every_code_every_padding () =
  let a = code_bits (Char.code 'a') in
  for sym = 0 to 256 do
    for prefix = 0 to 7 do
      for extra = 0 to 15 do
        List.iter
          (fun (_, fill) ->
            let bits = List.concat (List.init prefix (fun _ -> a)) @ code_bits sym @ List.init extra fill in
            let s = pack bits ~fill in
            let n = agree s in
            if n > 0 then ignore (agree ~space:(n - 1) s : int))
          fills
      done
    done
  done

let all_short_strings () =
  for b0 = 0 to 255 do
    ignore (agree (String.make 1 (Char.chr b0)) : int);
    for b1 = 0 to 255 do
      ignore (agree (String.init 2 (fun i -> Char.chr (if i = 0 then b0 else b1))) : int)
    done
  done

let random_bytes =
  QCheck2.Test.make ~count:20000 ~name:"Huffman.decode = reference, random bytes and room"
    ~print:QCheck2.Print.(pair String.escaped int)
    QCheck2.Gen.(pair (string_size ~gen:char (int_range 0 40)) (int_range 0 80))
    (fun (s, space) -> ignore (agree ~space s : int); true)

(* Mostly valid codes, so that strings get long before an error: a random
   mix of symbols (short ones likelier), EOS now and then, stray bits, and
   a final fill that is all ones or not. *)
let coded =
  let open QCheck2.Gen in
  let piece =
    frequency
      [ (12, map code_bits (map Char.code (char_range 'a' 'z')));
        (6, map code_bits (map Char.code printable));
        (3, map code_bits (int_range 0 255));
        (1, pure (code_bits 256));
        (1, list_size (int_range 1 12) (int_range 0 1)) ]
  in
  triple (list_size (int_range 0 40) piece) (int_range 0 2) (int_range 0 300)

let random_codes =
  QCheck2.Test.make ~count:20000 ~name:"Huffman.decode = reference, code sequences and room"
    ~print:(fun (pieces, fill, space) ->
      Printf.sprintf "%d pieces, fill %d, space %d: %S" (List.length pieces) fill space
        (pack (List.concat pieces) ~fill:(snd (List.nth fills fill))))
    coded
    (fun (pieces, fill, space) ->
      let s = pack (List.concat pieces) ~fill:(snd (List.nth fills fill)) in
      ignore (agree s : int);
      ignore (agree ~space s : int);
      ignore (agree ~garbage:'\xff' ~space s : int);
      true)

let tests =
  [ Alcotest.test_case "every code, alignment and padding" `Quick every_code_every_padding;
    Alcotest.test_case "every string of 0-2 bytes" `Quick all_short_strings;
    S.qcheck random_bytes;
    S.qcheck random_codes ]
