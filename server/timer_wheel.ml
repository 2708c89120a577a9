(* Buckets are heads of doubly-linked lists threaded through [next]/[prev];
   -1 ends a list. [prev.(id) = -1] means [id] is the head of its bucket. *)

type t = {
  mask : int;
  heads : int array;
  next : int array;
  prev : int array;
  deadlines : int array;
  mutable clock : int; (* every deadline < clock has been popped *)
  mutable count : int;
}

let create ~ids ~size ~now =
  if ids < 0 || size < 1 then invalid_arg "Timer_wheel.create";
  let n = ref 1 in
  while !n < size do n := !n * 2 done;
  {
    mask = !n - 1;
    heads = Array.make !n (-1);
    next = Array.make ids (-1);
    prev = Array.make ids (-1);
    deadlines = Array.make ids (-1);
    clock = now;
    count = 0;
  }

let deadline t id = t.deadlines.(id)
let count t = t.count

let unlink t id =
  let p = t.prev.(id) and n = t.next.(id) in
  if p >= 0 then t.next.(p) <- n
  else t.heads.(t.deadlines.(id) land t.mask) <- n;
  if n >= 0 then t.prev.(n) <- p;
  t.deadlines.(id) <- -1;
  t.count <- t.count - 1

let cancel t id = if t.deadlines.(id) >= 0 then unlink t id

let set t id d =
  if t.deadlines.(id) >= 0 then unlink t id;
  (* A deadline already past goes in the current bucket, visited first. *)
  let d = if d < t.clock then t.clock else d in
  let b = d land t.mask in
  let h = t.heads.(b) in
  t.next.(id) <- h;
  t.prev.(id) <- -1;
  if h >= 0 then t.prev.(h) <- id;
  t.heads.(b) <- id;
  t.deadlines.(id) <- d;
  t.count <- t.count + 1

let pop_expired t ~now =
  let found = ref (-1) in
  while !found < 0 && t.clock <= now && t.count > 0 do
    let id = ref t.heads.(t.clock land t.mask) in
    while !id >= 0 && t.deadlines.(!id) > now do id := t.next.(!id) done;
    if !id >= 0 then begin
      found := !id;
      unlink t !id
    end
    else t.clock <- t.clock + 1
  done;
  if !found < 0 && t.clock <= now then t.clock <- now + 1;
  !found
