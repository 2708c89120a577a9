(* The Huffman decoder httpz had before the table-driven one: an automaton
   over the code tree reading four bits at a time. Kept as the oracle the
   faster decoder is compared against, bit for bit and error for error.
   Built from Huffman.code / Huffman.length, so it shares only Appendix B. *)

open Httpz

let eos = 256
let nodes = 256

let tree_left, tree_right =
  let left = Array.make nodes max_int and right = Array.make nodes max_int in
  let next = ref 1 in
  for sym = 0 to eos do
    let c = Huffman.code sym and l = Huffman.length sym in
    let node = ref 0 in
    for b = l - 1 downto 0 do
      let side = if (c lsr b) land 1 = 1 then right else left in
      if b = 0 then side.(!node) <- -1 - sym
      else begin
        if side.(!node) = max_int then begin side.(!node) <- !next; incr next end;
        node := side.(!node)
      end
    done
  done;
  assert (!next = nodes);
  (left, right)

(* The nodes reachable from the root by at most seven ones: the only states
   a string may end in (RFC 7541 §5.2). *)
let accepting =
  let a = Array.make nodes false in
  let node = ref 0 in
  for _ = 0 to 7 do
    a.(!node) <- true;
    node := tree_right.(!node)
  done;
  a

(* [transitions.(node * 16 + nibble)]: [-1] when the nibble completes EOS,
   else the next node in bits 0-7, bit 8 when it is accepting, and from bit
   9 [1 + sym] when the nibble completes a symbol. *)
let transitions =
  let t = Array.make (nodes * 16) 0 in
  for node = 0 to nodes - 1 do
    for nibble = 0 to 15 do
      let n = ref node and emitted = ref 0 and failed = ref false in
      for b = 3 downto 0 do
        let child = if (nibble lsr b) land 1 = 1 then tree_right.(!n) else tree_left.(!n) in
        if child >= 0 then n := child
        else if -1 - child = eos then failed := true
        else begin emitted := -child; n := 0 end
      done;
      t.((node * 16) + nibble) <-
        (if !failed then -1 else !n lor (Bool.to_int accepting.(!n) lsl 8) lor (!emitted lsl 9))
    done
  done;
  t

let decode (src : Bigstring.t) ~off ~len (dst : Bigstring.t) ~dst_off ~dst_stop =
  let o = ref dst_off and state = ref 0x100 and j = ref 0 in
  while !j < 2 * len do
    let byte = Char.code (Bigstring.unsafe_get src (off + (!j lsr 1))) in
    let nibble = if !j land 1 = 0 then byte lsr 4 else byte land 15 in
    let e = transitions.(((!state land 0xff) lsl 4) lor nibble) in
    let sym = e lsr 9 in
    if e < 0 then begin state := Huffman.error_eos; j := max_int end
    else if sym > 0 && !o >= dst_stop then begin state := Huffman.error_no_space; j := max_int end
    else begin
      if sym > 0 then begin Bigstring.unsafe_set dst !o (Char.unsafe_chr (sym - 1)); incr o end;
      state := e;
      incr j
    end
  done;
  if !state < 0 then !state else if !state land 0x100 = 0 then Huffman.error_padding else !o - dst_off
