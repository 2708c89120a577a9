open Httpz

external get32u : Bytes.t -> int -> int32 = "%caml_bytes_get32u"

let[@inline] word b i = Int32.to_int (get32u b (4 * i)) land 0xffff_ffff

(* Word 2 of an IPv4-mapped address (bytes 8-11: 0, 0, ff, ff). *)
let mapped_word =
  let b = Bytes.make 16 '\000' in
  Bytes.set b 10 '\255';
  Bytes.set b 11 '\255';
  word b 2

let[@inline] high addr = word addr 0
let[@inline] middle addr = word addr 1

let[@inline] low addr =
  if word addr 0 = 0 && word addr 1 = 0 && word addr 2 = mapped_word then word addr 3 lor (1 lsl 40) else 0

type secret = { s0 : int; s1 : int }

let m32 = 0xffff_ffff
let secret_of_ints a b = { s0 = a land m32; s1 = b land m32 }

let secret () =
  let b = Bytes.create 8 in
  Httpz_sys.Entropy.fill b ~off:0 ~len:8;
  secret_of_ints (word b 0) (word b 1)

let[@inline] rotl x n = ((x lsl n) lor (x lsr (32 - n))) land m32

(* HalfSipHash-2-4 (Aumasson's reference, 32-bit words, as the kernel's
   hsiphash) of the key as four message words [high; middle; low's 32
   bits; low's tag], the 16-byte length block last. A PRF of the secret:
   without it, which keys share a neighbourhood cannot be computed, nor
   found offline. On immediate ints kept in 32 bits: no allocation. *)
let hash s a b c =
  let v0 = ref s.s0 and v1 = ref s.s1 in
  let v2 = ref (s.s0 lxor 0x6c796765) and v3 = ref (s.s1 lxor 0x74656462) in
  for step = 0 to 5 do
    let m =
      match step with 0 -> a land m32 | 1 -> b land m32 | 2 -> c land m32 | 3 -> (c lsr 32) land m32 | _ -> 16 lsl 24
    in
    if step < 5 then v3 := !v3 lxor m else v2 := !v2 lxor 0xff;
    for _ = 1 to (if step < 5 then 2 else 4) do
      v0 := (!v0 + !v1) land m32;
      v1 := rotl !v1 5 lxor !v0;
      v0 := rotl !v0 16;
      v2 := (!v2 + !v3) land m32;
      v3 := rotl !v3 8 lxor !v2;
      v0 := (!v0 + !v3) land m32;
      v3 := rotl !v3 7 lxor !v0;
      v2 := (!v2 + !v1) land m32;
      v1 := rotl !v1 13 lxor !v2;
      v2 := rotl !v2 16
    done;
    if step < 5 then v0 := !v0 lxor m
  done;
  !v1 lxor !v3

let[@inline] byte buf i = Char.code (Bigstring.unsafe_get buf i)

(* The same HalfSipHash-2-4 over [len] bytes of [buf] from [off]: 32-bit
   little-endian message words, the last holding the tail bytes and the
   length's low byte at the top, as the reference. *)
let hash_span s buf ~off ~len =
  let v0 = ref s.s0 and v1 = ref s.s1 in
  let v2 = ref (s.s0 lxor 0x6c796765) and v3 = ref (s.s1 lxor 0x74656462) in
  let nw = len / 4 in
  for step = 0 to nw + 1 do
    let fin = step = nw + 1 in
    let m =
      if step < nw then
        let p = off + (4 * step) in
        byte buf p lor (byte buf (p + 1) lsl 8) lor (byte buf (p + 2) lsl 16) lor (byte buf (p + 3) lsl 24)
      else if step = nw then begin
        let p = off + (4 * nw) and r = len land 3 in
        let t = ref ((len land 0xff) lsl 24) in
        if r > 2 then t := !t lor (byte buf (p + 2) lsl 16);
        if r > 1 then t := !t lor (byte buf (p + 1) lsl 8);
        if r > 0 then t := !t lor byte buf p;
        !t
      end
      else 0
    in
    if fin then v2 := !v2 lxor 0xff else v3 := !v3 lxor m;
    for _ = 1 to (if fin then 4 else 2) do
      v0 := (!v0 + !v1) land m32;
      v1 := rotl !v1 5 lxor !v0;
      v0 := rotl !v0 16;
      v2 := (!v2 + !v3) land m32;
      v3 := rotl !v3 8 lxor !v2;
      v0 := (!v0 + !v3) land m32;
      v3 := rotl !v3 7 lxor !v0;
      v2 := (!v2 + !v1) land m32;
      v1 := rotl !v1 13 lxor !v2;
      v2 := rotl !v2 16
    done;
    if not fin then v0 := !v0 lxor m
  done;
  !v1 lxor !v3

let derived s = { s0 = s.s0 lxor 0x5bd1e995; s1 = rotl s.s1 11 lxor 0x1b873593 }
