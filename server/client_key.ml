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

let[@inline] hash a b c =
  let h = (a * 0x9E3779B1) lxor (b * 0x85EBCA77) lxor (c * 0xC2B2AE3D) in
  (h lxor (h lsr 29)) land max_int
