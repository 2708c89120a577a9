type t = { mutable remaining : int }

let create () = { remaining = 0 }

let start t n =
  if n < 0 then invalid_arg "Fixed_body.start";
  t.remaining <- n

let take t ~available =
  if available < 0 then invalid_arg "Fixed_body.take";
  let n = if available < t.remaining then available else t.remaining in
  t.remaining <- t.remaining - n;
  n

let remaining t = t.remaining
let is_done t = t.remaining = 0
