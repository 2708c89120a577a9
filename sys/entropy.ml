type error = Not_supported | Bad_buffer | Errno of int

let error_to_string = function
  | Not_supported -> "getrandom: ENOSYS (kernel older than 3.17, or blocked by seccomp)"
  | Bad_buffer -> "getrandom: EFAULT"
  | Errno e -> "getrandom: errno " ^ string_of_int e

exception Unavailable of error

external getrandom : Bytes.t -> (int[@untagged]) -> (int[@untagged]) -> (int[@untagged])
  = "httpz_random_getrandom_byte" "httpz_random_getrandom"
  [@@noalloc]

let enosys = 38
let efault = 14
let eintr = 4

let fill b ~off ~len =
  if off < 0 || len < 0 || off > Bytes.length b - len then invalid_arg "Entropy.fill: range outside the buffer";
  let pos = ref off and stop = off + len in
  while !pos < stop do
    let r = getrandom b !pos (stop - !pos) in
    if r > 0 then pos := !pos + r
    else if r = - eintr then ()
    else if r = - enosys then raise (Unavailable Not_supported)
    else if r = - efault then raise (Unavailable Bad_buffer)
    else raise (Unavailable (Errno (- r)))
  done

let bytes n =
  if n < 0 then invalid_arg "Entropy.bytes: negative length";
  let b = Bytes.create n in
  fill b ~off:0 ~len:n;
  Bytes.unsafe_to_string b
