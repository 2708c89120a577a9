type t = {
  limits : Httpz.Request.limits;
  keep : int;
  placeholder_req : Httpz.Request.t;
  placeholder_chunked : Httpz.Chunked.t;
  mutable reqs : Httpz.Request.t array;
  mutable chunkers : Httpz.Chunked.t array;
  mutable free : int array;  (* indices with states ready for reuse *)
  mutable nfree : int;
  mutable vacant : int array;  (* indices whose states were dropped *)
  mutable nvacant : int;
  mutable size : int;  (* indices 1 .. size - 1 have been handed out *)
}

let none = 0

let create ~limits ~keep =
  let placeholder_req = Httpz.Request.create ~limits () in
  let placeholder_chunked = Httpz.Chunked.create () in
  let n = max 16 (keep + 1) in
  {
    limits;
    keep;
    placeholder_req;
    placeholder_chunked;
    reqs = Array.make n placeholder_req;
    chunkers = Array.make n placeholder_chunked;
    free = Array.make n 0;
    nfree = 0;
    vacant = Array.make n 0;
    nvacant = 0;
    size = 1;
  }

let grow t =
  let n = Array.length t.reqs in
  let extend a fill =
    let b = Array.make (2 * n) fill in
    Array.blit a 0 b 0 n;
    b
  in
  t.reqs <- extend t.reqs t.placeholder_req;
  t.chunkers <- extend t.chunkers t.placeholder_chunked;
  t.free <- extend t.free 0;
  t.vacant <- extend t.vacant 0

(* New states at index [i]: the only pointer writes, once per state. *)
let fill t i =
  t.reqs.(i) <- Httpz.Request.create ~limits:t.limits ();
  t.chunkers.(i) <- Httpz.Chunked.create ()

let take t =
  if t.nfree > 0 then begin
    t.nfree <- t.nfree - 1;
    t.free.(t.nfree)
  end
  else if t.nvacant > 0 then begin
    t.nvacant <- t.nvacant - 1;
    let i = t.vacant.(t.nvacant) in
    fill t i;
    i
  end
  else begin
    if t.size = Array.length t.reqs then grow t;
    let i = t.size in
    t.size <- t.size + 1;
    fill t i;
    i
  end

let give t i =
  if i <> none then begin
    if t.nfree < t.keep then begin
      Httpz.Request.reset t.reqs.(i);
      t.free.(t.nfree) <- i;
      t.nfree <- t.nfree + 1
    end
    else begin
      t.reqs.(i) <- t.placeholder_req;
      t.chunkers.(i) <- t.placeholder_chunked;
      t.vacant.(t.nvacant) <- i;
      t.nvacant <- t.nvacant + 1
    end
  end

let request t i = Array.unsafe_get t.reqs i
let chunked t i = Array.unsafe_get t.chunkers i
let spare t = t.nfree
