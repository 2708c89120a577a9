let probe = 16

type t = {
  per_client : int;
  mask : int;
  secret : Client_key.secret;
  keys : int array;  (** 3 words per entry *)
  counts : int array;  (** [0]: free *)
  held : int array;  (** per slot: the entry it counts in, or [-1] *)
}

let create_keyed ~secret ~per_client ~slots =
  if per_client < 1 then invalid_arg "Conn_limit.create: per_client must be at least 1";
  if slots < 1 then invalid_arg "Conn_limit.create: slots must be at least 1";
  let n = ref 64 in
  while !n < 4 * slots do n := 2 * !n done;
  {
    per_client;
    mask = !n - 1;
    secret;
    keys = Array.make (3 * !n) 0;
    counts = Array.make !n 0;
    held = Array.make slots (-1);
  }

let create ~per_client ~slots = create_keyed ~secret:(Client_key.secret ()) ~per_client ~slots

(* The entry of [addr]'s client, or of a free one when [claim] (its key
   then written); [-1] when neither is among the probed. *)
let find t addr ~claim =
  let w0 = Client_key.high addr and w1 = Client_key.middle addr and k2 = Client_key.low addr in
  let h = Client_key.hash t.secret w0 w1 k2 land t.mask in
  let found = ref (-1) and free = ref (-1) and i = ref 0 in
  while !found < 0 && !i < probe do
    let e = (h + !i) land t.mask in
    if t.counts.(e) = 0 then (if !free < 0 then free := e)
    else if t.keys.(3 * e) = w0 && t.keys.((3 * e) + 1) = w1 && t.keys.((3 * e) + 2) = k2 then found := e;
    incr i
  done;
  if !found < 0 && claim && !free >= 0 then begin
    let e = !free in
    t.keys.(3 * e) <- w0;
    t.keys.((3 * e) + 1) <- w1;
    t.keys.((3 * e) + 2) <- k2;
    found := e
  end;
  !found

let release t ~slot =
  let e = t.held.(slot) in
  if e >= 0 then begin
    t.counts.(e) <- t.counts.(e) - 1;
    t.held.(slot) <- -1
  end

(* No entry among the probed (a neighbourhood crowded by other clients):
   refused, never let in uncounted (a crowd picked for it would hold any
   number of connections). *)
let acquire t ~slot addr =
  release t ~slot;
  let e = find t addr ~claim:true in
  if e < 0 then false
  else if t.counts.(e) >= t.per_client then false
  else begin
    t.counts.(e) <- t.counts.(e) + 1;
    t.held.(slot) <- e;
    true
  end

let count t addr =
  let e = find t addr ~claim:false in
  if e < 0 then 0 else t.counts.(e)
