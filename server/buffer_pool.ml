external map : int -> Httpz.Bigstring.t = "httpz_buffer_map"
external unmap : Httpz.Bigstring.t -> int = "httpz_buffer_unmap"

type t = {
  small : int;
  stack : Httpz.Bigstring.t array;  (** [\[0, depth)] are kept buffers *)
  empty : Httpz.Bigstring.t;
  mutable depth : int;
  mutable in_use : int;
}

let page = 4096

let create ~small ~keep =
  if small <= 0 || keep < 0 then invalid_arg "Buffer_pool.create";
  let empty = Httpz.Bigstring.create 0 in
  { small; stack = Array.make keep empty; empty; depth = 0; in_use = 0 }

let small t = t.small

let take t n =
  if n <= 0 then invalid_arg "Buffer_pool.take: size must be positive";
  let b =
    if n <= t.small then
      if t.depth > 0 then begin
        t.depth <- t.depth - 1;
        let b = t.stack.(t.depth) in
        t.stack.(t.depth) <- t.empty;
        b
      end
      else map t.small
    else map ((n + page - 1) / page * page)
  in
  t.in_use <- t.in_use + Httpz.Bigstring.length b;
  b

let give t b =
  let len = Httpz.Bigstring.length b in
  if len > 0 then begin
    t.in_use <- t.in_use - len;
    if len = t.small && t.depth < Array.length t.stack then begin
      t.stack.(t.depth) <- b;
      t.depth <- t.depth + 1
    end
    else ignore (unmap b : int)
  end

let in_use t = t.in_use
let kept t = t.depth * t.small
