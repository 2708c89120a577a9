open Httpz

let probe = 16
let rows = 256
let default_entries = 65536

(* An entry's value: the row of the process that counts in it, plus one,
   above bit 32, and its count below; [0]: free. A client with
   connections on several workers has an entry per worker, summed: a
   worker that dies leaves entries that the next process to take a row
   finds by their tag and clears. *)
let m32 = 0xffff_ffff

type table = { zone : Limit_zone.t; pids : Bigstring.t  (** a word per row: its process *) }

type t = {
  per_client : int;
  table : table;
  tag : int;  (** (row + 1) lsl 32 *)
  held : int array;  (** per slot: the entry it counts in, or [-1] *)
}

let table ?secret ~entries () =
  { zone = Limit_zone.create ?secret ~entries (); pids = Mapped.map_shared (8 * rows) }

let shared = ref None

let share ~entries =
  match !shared with
  | Some t when Limit_zone.entries t.zone = Limit_zone.rounded entries -> ()
  | _ -> shared := Some (table ~entries ())

let prepare () = if !shared = None then share ~entries:default_entries

let running pid =
  pid > 0 && match Unix.kill pid 0 with () -> true | exception Unix.Unix_error (Unix.ESRCH, _, _) -> false | exception _ -> true

let pid_of tb row = Int64.to_int (Bigstring.unsafe_get64 tb.pids (8 * row))

(* The entries of the rows marked in [dead] (their processes gone; the
   rows held by this process meanwhile, so no one else counts with their
   tags), cleared in one pass over the table, under the lock a chunk at a
   time: a table of millions of entries must not hold the others off for
   long (nor past the lock's one second, when they would take it over). *)
let chunk = 4096

let clear tb dead =
  let z = tb.zone in
  let e = ref 0 in
  while !e <= Limit_zone.mask z do
    let last = min (Limit_zone.mask z) (!e + chunk - 1) in
    let stamp = Limit_zone.lock z ~now_ns:(Syscall.clock_monotonic_ns ()) in
    for i = !e to last do
      let v = Limit_zone.get z i 3 in
      if v <> 0 then begin
        let row = (v lsr 32) - 1 in
        if row >= 0 && row < rows && Bytes.get dead row = '\001' then Limit_zone.set z i 3 0
      end
    done;
    Limit_zone.unlock z stamp;
    e := last + 1
  done

(* A row for this process: its own, else a free one or one whose process
   is gone. Every row whose process is gone is cleared on the way, not
   only the one taken: after a reload the rows of the retired generation
   come first, and a crashed worker's row further on would otherwise keep
   its counts until a process happened to take that very row. A dead row
   is held (its pid swapped for ours) while it is cleared, so two
   processes never clear or take one row at once. [-1]: none left. *)
let claim tb =
  let me = Unix.getpid () in
  let mine = ref (-1) and dead = Bytes.make rows '\000' and any = ref false in
  for row = rows - 1 downto 0 do if pid_of tb row = me then mine := row done;
  for row = 0 to rows - 1 do
    let pid = pid_of tb row in
    if pid <> 0 && pid <> me && (not (running pid)) && Mapped.cas64 tb.pids (8 * row) pid me = 1 then begin
      Bytes.set dead row '\001';
      any := true;
      if !mine < 0 then mine := row
    end
    else if pid = 0 && !mine < 0 && Mapped.cas64 tb.pids (8 * row) 0 me = 1 then mine := row
  done;
  if !any then begin
    clear tb dead;
    (* The dead rows not taken are free again, once cleared. *)
    for row = 0 to rows - 1 do
      if Bytes.get dead row = '\001' && row <> !mine then ignore (Mapped.cas64 tb.pids (8 * row) me 0 : int)
    done
  end;
  !mine

let make ~per_client ~slots tb row =
  if per_client < 1 then invalid_arg "Conn_limit.create: per_client must be at least 1";
  if slots < 1 then invalid_arg "Conn_limit.create: slots must be at least 1";
  { per_client; table = tb; tag = (row + 1) lsl 32; held = Array.make slots (-1) }

let own ?secret ~per_client ~slots () =
  let tb = table ?secret ~entries:(max 64 (4 * slots)) () in
  make ~per_client ~slots tb (claim tb)

let create_keyed ~secret ~per_client ~slots = own ~secret ~per_client ~slots ()

let out_of_rows = ref false

let create_in tb ~per_client ~slots =
  match claim tb with
  | row when row >= 0 -> make ~per_client ~slots tb row
  | _ ->
      (* The limit no longer holds across the workers: an error, said
         once (every worker forked after would say it again). *)
      if not !out_of_rows then begin
        out_of_rows := true;
        Log.error "limit_conn: no row left in the shared table (%d processes at once): this worker counts alone, so a client may hold up to limit_conn connections in each such worker" rows
      end;
      own ~per_client ~slots ()

let create ~per_client ~slots =
  match !shared with Some tb -> create_in tb ~per_client ~slots | None -> own ~per_client ~slots ()

let release t ~slot =
  let e = t.held.(slot) in
  if e >= 0 then begin
    let z = t.table.zone in
    let stamp = Limit_zone.lock z ~now_ns:(Syscall.clock_monotonic_ns ()) in
    let v = Limit_zone.get z e 3 in
    (* Only this process's entry, and only while it counts. *)
    if v land lnot m32 = t.tag && v land m32 > 0 then Limit_zone.set z e 3 (if v land m32 = 1 then 0 else v - 1);
    Limit_zone.unlock z stamp;
    t.held.(slot) <- -1
  end

(* Under the lock: the client's total over every process, this process's
   entry for it or a free one. No entry among the probed (a neighbourhood
   crowded by other clients): refused, never let in uncounted (a crowd
   picked for it would hold any number of connections). *)
let locked t z h w0 w1 k2 =
  let mask = Limit_zone.mask z in
  let total = ref 0 and mine = ref (-1) and free = ref (-1) in
  for i = 0 to probe - 1 do
    let e = (h + i) land mask in
    let v = Limit_zone.get z e 3 in
    if v = 0 then (if !free < 0 then free := e)
    else if Limit_zone.get z e 0 = w0 && Limit_zone.get z e 1 = w1 && Limit_zone.get z e 2 = k2 then begin
      total := !total + (v land m32);
      if v land lnot m32 = t.tag then mine := e
    end
  done;
  if !total >= t.per_client then -1
  else if !mine >= 0 then begin
    Limit_zone.set z !mine 3 (Limit_zone.get z !mine 3 + 1);
    !mine
  end
  else if !free >= 0 then begin
    let e = !free in
    Limit_zone.set z e 0 w0;
    Limit_zone.set z e 1 w1;
    Limit_zone.set z e 2 k2;
    Limit_zone.set z e 3 (t.tag lor 1);
    e
  end
  else -1

let acquire t ~slot addr =
  release t ~slot;
  let z = t.table.zone in
  let w0 = Client_key.high addr and w1 = Client_key.middle addr and k2 = Client_key.low addr in
  let h = Client_key.hash (Limit_zone.secret z) w0 w1 k2 land Limit_zone.mask z in
  let stamp = Limit_zone.lock z ~now_ns:(Syscall.clock_monotonic_ns ()) in
  let e = locked t z h w0 w1 k2 in
  Limit_zone.unlock z stamp;
  if e < 0 then false
  else begin
    t.held.(slot) <- e;
    true
  end

let count t addr =
  let z = t.table.zone in
  let w0 = Client_key.high addr and w1 = Client_key.middle addr and k2 = Client_key.low addr in
  let h = Client_key.hash (Limit_zone.secret z) w0 w1 k2 land Limit_zone.mask z in
  let n = ref 0 in
  let stamp = Limit_zone.lock z ~now_ns:(Syscall.clock_monotonic_ns ()) in
  for i = 0 to probe - 1 do
    let e = (h + i) land Limit_zone.mask z in
    let v = Limit_zone.get z e 3 in
    if v <> 0 && Limit_zone.get z e 0 = w0 && Limit_zone.get z e 1 = w1 && Limit_zone.get z e 2 = k2 then
      n := !n + (v land m32)
  done;
  Limit_zone.unlock z stamp;
  !n
