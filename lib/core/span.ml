type t = int

let[@inline] make ~off ~len = (off lsl 31) lor len
let[@inline] unsafe_of_int i = i
let empty = 0
let[@inline] off s = s lsr 31
let[@inline] len s = s land 0x7FFF_FFFF

let equal buf s str = Bigstring.equal_string buf ~off:(off s) ~len:(len s) str
let equal_caseless buf s str = Bigstring.equal_caseless buf ~off:(off s) ~len:(len s) str

(* 18 digits: 999_999_999_999_999_999 < max_int = 2^62 - 1 ≈ 4.6e18. *)
let max_digits = 18

let parse_decimal buf s =
  let o = off s and n = len s in
  if n = 0 || n > max_digits then -1
  else begin
    let acc = ref 0 and i = ref 0 in
    while !i < n
          && (let c = Bigstring.unsafe_get buf (o + !i) in c >= '0' && c <= '9') do
      acc := (!acc * 10) + (Char.code (Bigstring.unsafe_get buf (o + !i)) - 48);
      incr i
    done;
    if !i = n then !acc else -1
  end

let to_string buf s = Bigstring.sub_string buf ~off:(off s) ~len:(len s)
let pp buf ppf s = Format.pp_print_string ppf (to_string buf s)
