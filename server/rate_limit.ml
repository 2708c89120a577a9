let probe = 16

type t = {
  interval_ns : int;  (** between two requests at the rate *)
  tolerance_ns : int;  (** how far ahead of now a client's clock may run: the burst *)
  zone : Limit_zone.t;  (** entry: 3 key words, theoretical arrival time in ns ([0]: free) *)
  second : Client_key.secret;  (** a string key's second fingerprint word *)
  evict : bool;  (** a full neighbourhood gives up its entry closest to expiry *)
}

let of_zone ?(evict = false) zone ~rate ~burst =
  if not (rate > 0. && Float.is_finite rate) then invalid_arg "Rate_limit.create: rate must be positive";
  if burst < 1 then invalid_arg "Rate_limit.create: burst must be at least 1";
  let interval_ns = max 1 (int_of_float (1e9 /. rate)) in
  { interval_ns; tolerance_ns = interval_ns * (burst - 1); zone; second = Client_key.derived (Limit_zone.secret zone); evict }

let create_keyed ~secret ~rate ~burst ~entries =
  if entries < 1 || entries > 1 lsl 24 then invalid_arg "Rate_limit.create: entries out of range";
  if not (rate > 0. && Float.is_finite rate) then invalid_arg "Rate_limit.create: rate must be positive";
  if burst < 1 then invalid_arg "Rate_limit.create: burst must be at least 1";
  of_zone (Limit_zone.create ~secret ~entries ()) ~rate ~burst

let create ~rate ~burst ~entries = create_keyed ~secret:(Client_key.secret ()) ~rate ~burst ~entries

let entries t = Limit_zone.entries t.zone
let zone t = t.zone

let[@inline] seconds_until ns = max 1 ((ns + 999_999_999) / 1_000_000_000)

(* Under the zone's lock: the client's entry, else a free or expired one
   (its client back to a full burst: forgetting it changes nothing).
   Never a live entry of another client when keyed by address: that would
   hand both a fresh burst, and clients that share a neighbourhood could
   reset each other at will. A zone keyed by a value the client chooses
   ([evict]) gives up the entry closest to expiry instead: there a client
   gets a fresh burst by inventing a key anyway, and refusing would let
   one client fill the table and lock everyone out. *)
let locked t z h k0 k1 k2 now_ns =
  let mask = Limit_zone.mask z in
  let found = ref (-1) and spare = ref (-1) and soonest = ref max_int and oldest = ref (-1) in
  let i = ref 0 in
  while !found < 0 && !i < probe do
    let e = (h + !i) land mask in
    let tat = Limit_zone.get z e 3 in
    if tat <> 0 && Limit_zone.get z e 0 = k0 && Limit_zone.get z e 1 = k1 && Limit_zone.get z e 2 = k2 then found := e
    else if tat <= now_ns then (if !spare < 0 then spare := e)
    else if tat < !soonest then begin
      soonest := tat;
      oldest := e
    end;
    incr i
  done;
  if !found < 0 && !spare < 0 && t.evict then spare := !oldest;
  if !found < 0 && !spare >= 0 then begin
    let e = !spare in
    Limit_zone.set z e 0 k0;
    Limit_zone.set z e 1 k1;
    Limit_zone.set z e 2 k2;
    Limit_zone.set z e 3 0;
    found := e
  end;
  let e = !found in
  if e < 0 then
    (* No room: refused, until the first of the neighbourhood expires. *)
    - seconds_until (!soonest - now_ns)
  else
    let tat = Limit_zone.get z e 3 in
    let tat = if tat < now_ns then now_ns else tat in
    if tat - now_ns > t.tolerance_ns then
      (* Admitted again once [tat - tolerance] is reached. *)
      seconds_until (tat - t.tolerance_ns - now_ns)
    else begin
      Limit_zone.set z e 3 (tat + t.interval_ns);
      0
    end

let admit_words t k0 k1 k2 ~now_ns =
  let z = t.zone in
  let h = Client_key.hash (Limit_zone.secret z) k0 k1 k2 land Limit_zone.mask z in
  let stamp = Limit_zone.lock z ~now_ns in
  let r = locked t z h k0 k1 k2 now_ns in
  Limit_zone.unlock z stamp;
  r

let admit t addr ~now_ns =
  admit_words t (Client_key.high addr) (Client_key.middle addr) (Client_key.low addr) ~now_ns

(* A string key as a 64-bit keyed fingerprint and its length (tagged apart
   from an address's words): two values share an entry only by a
   collision no one can aim for without the secret. *)
let admit_span t buf ~off ~len ~now_ns =
  let k0 = Client_key.hash_span (Limit_zone.secret t.zone) buf ~off ~len in
  let k1 = Client_key.hash_span t.second buf ~off ~len in
  admit_words t k0 k1 (len lor (1 lsl 41)) ~now_ns

(* Under the lock a chunk at a time: a walk of millions of entries must
   not hold the workers off (nor past the lock's one second). *)
let tracked t ~now_ns =
  let z = t.zone and n = ref 0 and e = ref 0 in
  while !e <= Limit_zone.mask z do
    let last = min (Limit_zone.mask z) (!e + 4095) in
    let stamp = Limit_zone.lock z ~now_ns in
    for i = !e to last do if Limit_zone.get z i 3 > now_ns then incr n done;
    Limit_zone.unlock z stamp;
    e := last + 1
  done;
  !n
