open Httpz

let header = 64
let entry_bytes = 32

type t = { mem : Bigstring.t; mask : int; secret : Client_key.secret }

let pow2_at_least n =
  let r = ref 16 in
  while !r < n do r := 2 * !r done;
  !r

let entries_of_size bytes =
  let r = ref 16 in
  while 2 * !r * entry_bytes <= bytes && !r < 1 lsl 24 do r := 2 * !r done;
  !r

let create ?secret ~entries () =
  if entries < 1 || entries > 1 lsl 24 then invalid_arg "Limit_zone.create: entries out of range";
  let n = pow2_at_least entries in
  let secret = match secret with Some s -> s | None -> Client_key.secret () in
  { mem = Mapped.map_shared (header + (n * entry_bytes)); mask = n - 1; secret }

let rounded = pow2_at_least
let entries t = t.mask + 1
let mask t = t.mask
let secret t = t.secret

let[@inline] get t e w = Int64.to_int (Bigstring.unsafe_get64 t.mem (header + (e * entry_bytes) + (8 * w)))
let[@inline] set t e w v = Bigstring.unsafe_set64 t.mem (header + (e * entry_bytes) + (8 * w)) (Int64.of_int v)

(* A holder that kept the lock this long is dead or stopped: the critical
   section is a probe of 16 entries. *)
let stale_ns = 1_000_000_000

let lock t ~now_ns =
  let stamp = now_ns lor 1 in
  let got = ref (Mapped.cas64 t.mem 0 0 stamp = 1) in
  while not !got do
    let held = Int64.to_int (Bigstring.unsafe_get64 t.mem 0) in
    if held = 0 then got := Mapped.cas64 t.mem 0 0 stamp = 1
    else if now_ns - held > stale_ns then got := Mapped.cas64 t.mem 0 held stamp = 1
  done;
  stamp

let unlock t stamp = ignore (Mapped.cas64 t.mem 0 stamp 0 : int)

type registry = (string, t) Hashtbl.t

let registry () = Hashtbl.create 8

let reuse ~previous ~next ~id ~entries =
  match Hashtbl.find_opt next id with
  | Some t -> t
  | None ->
      let t =
        match Hashtbl.find_opt previous id with
        | Some t when t.mask + 1 = pow2_at_least entries -> t
        | _ -> create ~entries ()
      in
      Hashtbl.replace next id t;
      t
