type t = {
  bufs : Httpz.Bigstring.t array;
  meta : int array;
  mutable first : int;
  mutable count : int;
  mutable bytes : int;
}

let capacity = 16

let make n = { bufs = Array.make n (Httpz.Bigstring.create 0); meta = Array.make (3 * n) 0; first = 0; count = 0; bytes = 0 }
let none = make 0
let create () = make capacity
let[@inline] active t = t.first < t.count
let[@inline] full t = t.count >= Array.length t.bufs
let[@inline] pos t i = Array.unsafe_get t.meta (3 * i)
let[@inline] off t i = Array.unsafe_get t.meta ((3 * i) + 1)
let[@inline] len t i = Array.unsafe_get t.meta ((3 * i) + 2)

let add t ~pos b ~off ~len =
  let i = t.count in
  if t.bufs.(i) != b then t.bufs.(i) <- b;
  t.meta.(3 * i) <- pos;
  t.meta.((3 * i) + 1) <- off;
  t.meta.((3 * i) + 2) <- len;
  t.count <- i + 1;
  t.bytes <- t.bytes + len

let wrote t i n =
  t.meta.((3 * i) + 1) <- off t i + n;
  t.meta.((3 * i) + 2) <- len t i - n;
  t.bytes <- t.bytes - n;
  if len t i = 0 then t.first <- i + 1

let reset t =
  t.first <- 0;
  t.count <- 0;
  t.bytes <- 0

let clear t ~empty =
  for i = 0 to Array.length t.bufs - 1 do
    if t.bufs.(i) != empty then t.bufs.(i) <- empty
  done;
  t.first <- 0;
  t.count <- 0;
  t.bytes <- 0
