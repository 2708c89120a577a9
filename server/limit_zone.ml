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

(* A waiter cannot trust [now_ns] alone: it was read once, before the
   wait, so one that came less than [stale_ns] after a dead holder's stamp
   would never see the stamp age, and spin for ever. So it also times the
   stamp it sees on its own clock, read again while the stamp stays the
   same (every [reread] tries): one unchanged for [stale_ns] is dead. That
   holds whatever clock the callers' [now_ns] come from (tests give one of
   their own). Past [spin] tries the holder is likely off its CPU
   (descheduled, stopped, dead): sleep a little between tries so as not to
   take the CPU it needs (the contended path only; a sleep of a constant
   does not allocate). *)
let reread = 64
let spin = 1024

let lock t ~now_ns =
  let stamp = now_ns lor 1 in
  let got = ref (Mapped.cas64 t.mem 0 0 stamp = 1) in
  let seen = ref 0 and since = ref 0 and tries = ref 0 in
  while not !got do
    let held = Int64.to_int (Bigstring.unsafe_get64 t.mem 0) in
    if held = 0 then got := Mapped.cas64 t.mem 0 0 stamp = 1
    else if now_ns - held > stale_ns then got := Mapped.cas64 t.mem 0 held stamp = 1
    else begin
      incr tries;
      if held <> !seen then begin
        seen := held;
        since := Syscall.clock_monotonic_ns ()
      end
      else if !tries land (reread - 1) = 0 && Syscall.clock_monotonic_ns () - !since > stale_ns then
        got := Mapped.cas64 t.mem 0 held stamp = 1;
      if (not !got) && !tries >= spin then Unix.sleepf 20e-6
    end
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

(* A reading that failed: no worker was forked with its tables, so those
   it made (not carried over from [previous]) are given back; a mapping
   is up to 512 MiB. *)
let discard ~previous ~next =
  let kept = Hashtbl.fold (fun _ t acc -> t :: acc) previous [] in
  Hashtbl.iter (fun _ t -> if not (List.memq t kept) then ignore (Mapped.unmap t.mem : int)) next;
  Hashtbl.reset next
