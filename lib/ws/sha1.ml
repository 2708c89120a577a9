(* 32-bit words in OCaml's 63-bit ints, masked after each addition. *)
type t = {
  h : int array;  (* h0-h4 *)
  w : int array;  (* the 80-word schedule *)
  block : Bigstring.t;  (* the partial 64-byte block *)
  mutable fill : int;  (* bytes in [block] *)
  mutable total : int;  (* bytes fed *)
}

let digest_length = 20
let mask = 0xFFFF_FFFF

let reset t =
  t.h.(0) <- 0x67452301; t.h.(1) <- 0xEFCDAB89; t.h.(2) <- 0x98BADCFE;
  t.h.(3) <- 0x10325476; t.h.(4) <- 0xC3D2E1F0;
  t.fill <- 0; t.total <- 0

let create () =
  let t = { h = Array.make 5 0; w = Array.make 80 0; block = Bigstring.create 64; fill = 0;
            total = 0 } in
  reset t; t

let[@inline] rotl x n = ((x lsl n) lor (x lsr (32 - n))) land mask

let[@inline] byte b i = Char.code (Bigstring.unsafe_get b i)

(* FIPS 180-4 §6.1.2 on the full block in [t.block]. *)
let compress t =
  let w = t.w and b = t.block in
  for i = 0 to 15 do
    let p = 4 * i in
    Array.unsafe_set w i
      ((byte b p lsl 24) lor (byte b (p + 1) lsl 16) lor (byte b (p + 2) lsl 8) lor byte b (p + 3))
  done;
  for i = 16 to 79 do
    Array.unsafe_set w i
      (rotl (Array.unsafe_get w (i - 3) lxor Array.unsafe_get w (i - 8)
             lxor Array.unsafe_get w (i - 14) lxor Array.unsafe_get w (i - 16)) 1)
  done;
  let a = ref t.h.(0) and bb = ref t.h.(1) and c = ref t.h.(2) and d = ref t.h.(3)
  and e = ref t.h.(4) in
  for i = 0 to 79 do
    let f =
      if i < 20 then ((!bb land !c) lor (lnot !bb land !d)) land mask
      else if i < 40 || i >= 60 then !bb lxor !c lxor !d
      else (!bb land !c) lor (!bb land !d) lor (!c land !d)
    in
    let k =
      if i < 20 then 0x5A827999 else if i < 40 then 0x6ED9EBA1
      else if i < 60 then 0x8F1BBCDC else 0xCA62C1D6
    in
    let tmp = (rotl !a 5 + f + !e + k + Array.unsafe_get w i) land mask in
    e := !d; d := !c; c := rotl !bb 30; bb := !a; a := tmp
  done;
  t.h.(0) <- (t.h.(0) + !a) land mask;
  t.h.(1) <- (t.h.(1) + !bb) land mask;
  t.h.(2) <- (t.h.(2) + !c) land mask;
  t.h.(3) <- (t.h.(3) + !d) land mask;
  t.h.(4) <- (t.h.(4) + !e) land mask

let[@inline] add_byte t ch =
  Bigstring.unsafe_set t.block t.fill ch;
  t.fill <- t.fill + 1;
  if t.fill = 64 then begin compress t; t.fill <- 0 end

let feed_bigstring t buf ~off ~len =
  Bigstring.check_range "Httpz.Sha1.feed_bigstring" buf ~off ~len;
  t.total <- t.total + len;
  for i = off to off + len - 1 do add_byte t (Bigstring.unsafe_get buf i) done

let feed_string t s ~off ~len =
  if off < 0 || len < 0 || off > String.length s - len then invalid_arg "Httpz.Sha1.feed_string";
  t.total <- t.total + len;
  for i = off to off + len - 1 do add_byte t (String.unsafe_get s i) done

(* FIPS 180-4 §5.1.1: 0x80, zeros to 56 mod 64, the bit length in 64 bits. *)
let finish t dst ~off =
  Bigstring.check_range "Httpz.Sha1.finish" dst ~off ~len:digest_length;
  let bits = t.total * 8 in
  add_byte t '\x80';
  while t.fill <> 56 do add_byte t '\x00' done;
  for i = 7 downto 0 do add_byte t (Char.unsafe_chr ((bits lsr (8 * i)) land 0xFF)) done;
  for i = 0 to 4 do
    let v = t.h.(i) in
    for j = 0 to 3 do
      Bigstring.unsafe_set dst (off + (4 * i) + j) (Char.unsafe_chr ((v lsr (24 - (8 * j))) land 0xFF))
    done
  done;
  reset t

let digest_string s =
  let t = create () in
  feed_string t s ~off:0 ~len:(String.length s);
  let out = Bigstring.create digest_length in
  finish t out ~off:0;
  Bigstring.to_string out
