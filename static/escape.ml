open Httpz
module B = Bigstring

let hex_upper = "0123456789ABCDEF"

let[@inline] is_unreserved_or_slash c =
  (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
  || c = '-' || c = '.' || c = '_' || c = '~' || c = '/'

(* Percent-encodes [src.{off .. off+len-1}] into [dst] at [pos]; the
   caller guarantees room for [3 * len] bytes. *)
let encode_into (src : B.t) ~off ~len (dst : B.t) pos =
  let p = ref pos in
  for i = off to off + len - 1 do
    let c = B.unsafe_get src i in
    if is_unreserved_or_slash c then (B.unsafe_set dst !p c; incr p)
    else begin
      let k = Char.code c in
      B.unsafe_set dst !p '%';
      B.unsafe_set dst (!p + 1) hex_upper.[k lsr 4];
      B.unsafe_set dst (!p + 2) hex_upper.[k land 15];
      p := !p + 3
    end
  done;
  !p

let encode_path s =
  let src = B.of_string s in
  let dst = B.create (3 * String.length s + 1) in
  let n = encode_into src ~off:0 ~len:(String.length s) dst 0 in
  B.sub_string dst ~off:0 ~len:n

(* The server's 500 page in development mode needs it too; it lives there. *)
let html_escape = Html.escape

