let map = Mapped.map
let unmap = Mapped.unmap

type t = {
  size : int;
  spares : Httpz.Bigstring.t array;
      (* [0, depth) are kept buffers; above, what was taken last, left in
         place: a buffer given back where it was taken from needs no
         pointer write (a call into the GC each) *)
  empty : Httpz.Bigstring.t;
  mutable depth : int;
  mutable in_use : int;
}

let page = 4096

let create ~size ~keep =
  if size <= 0 || keep < 0 then invalid_arg "Buffer_pool.create";
  let empty = Httpz.Bigstring.create 0 in
  { size; spares = Array.make keep empty; empty; depth = 0; in_use = 0 }

let size t = t.size

let take t =
  let b =
    if t.depth > 0 then begin
      t.depth <- t.depth - 1;
      Array.unsafe_get t.spares t.depth
    end
    else map t.size
  in
  t.in_use <- t.in_use + t.size;
  b

let take_at_least t n =
  if n <= t.size then take t
  else begin
    let b = map ((n + page - 1) / page * page) in
    t.in_use <- t.in_use + Httpz.Bigstring.length b;
    b
  end

let give t b =
  let len = Httpz.Bigstring.length b in
  if len > 0 then begin
    t.in_use <- t.in_use - len;
    if len = t.size && t.depth < Array.length t.spares then begin
      if Array.unsafe_get t.spares t.depth != b then t.spares.(t.depth) <- b;
      t.depth <- t.depth + 1
    end
    else ignore (unmap b : int)
  end

let in_use t = t.in_use
let kept t = t.depth * t.size

let trim t =
  while t.depth > 0 do
    t.depth <- t.depth - 1;
    ignore (unmap t.spares.(t.depth) : int);
    t.spares.(t.depth) <- t.empty
  done

let grow t b ~keep n =
  let cap = Httpz.Bigstring.length b in
  let size = ref (if cap < t.size then t.size else 2 * cap) in
  while !size < n do size := 2 * !size done;
  let nb = take_at_least t !size in
  if keep > 0 then Httpz.Bigstring.blit ~src:b ~src_off:0 ~dst:nb ~dst_off:0 ~len:keep;
  give t b;
  nb
