let probe = 16

type t = {
  interval_ns : int;  (** between two requests at the rate *)
  tolerance_ns : int;  (** how far ahead of now a client's clock may run: the burst *)
  mask : int;
  secret : Client_key.secret;
  keys : int array;  (** 3 words per entry: the address's words that form the key *)
  tat : int array;  (** theoretical arrival time, ns; [0]: free *)
}

let pow2_at_least n =
  let r = ref 16 in
  while !r < n do r := 2 * !r done;
  !r

let create_keyed ~secret ~rate ~burst ~entries =
  if not (rate > 0. && Float.is_finite rate) then invalid_arg "Rate_limit.create: rate must be positive";
  if burst < 1 then invalid_arg "Rate_limit.create: burst must be at least 1";
  if entries < 1 || entries > 1 lsl 24 then invalid_arg "Rate_limit.create: entries out of range";
  let n = pow2_at_least entries in
  let interval_ns = max 1 (int_of_float (1e9 /. rate)) in
  {
    interval_ns;
    tolerance_ns = interval_ns * (burst - 1);
    mask = n - 1;
    secret;
    keys = Array.make (3 * n) 0;
    tat = Array.make n 0;
  }

let create ~rate ~burst ~entries = create_keyed ~secret:(Client_key.secret ()) ~rate ~burst ~entries

let entries t = Array.length t.tat

let[@inline] seconds_until ns = max 1 ((ns + 999_999_999) / 1_000_000_000)

let admit t addr ~now_ns =
  let k0 = Client_key.high addr and k1 = Client_key.middle addr and k2 = Client_key.low addr in
  let h = Client_key.hash t.secret k0 k1 k2 land t.mask in
  (* The client's entry, else a free or expired one (its client back to a
     full burst: forgetting it changes nothing). Never a live entry of
     another client: that would hand both a fresh burst, and clients
     that share a neighbourhood could reset each other at will. *)
  let found = ref (-1) and spare = ref (-1) and soonest = ref max_int in
  let i = ref 0 in
  while !found < 0 && !i < probe do
    let e = (h + !i) land t.mask in
    let tat = t.tat.(e) in
    if tat <> 0 && t.keys.(3 * e) = k0 && t.keys.((3 * e) + 1) = k1 && t.keys.((3 * e) + 2) = k2
    then found := e
    else if tat <= now_ns then (if !spare < 0 then spare := e)
    else if tat < !soonest then soonest := tat;
    incr i
  done;
  if !found < 0 && !spare >= 0 then begin
    let e = !spare in
    t.keys.(3 * e) <- k0;
    t.keys.((3 * e) + 1) <- k1;
    t.keys.((3 * e) + 2) <- k2;
    t.tat.(e) <- 0;
    found := e
  end;
  let e = !found in
  if e < 0 then
    (* No room: refused, until the first of the neighbourhood expires. *)
    - seconds_until (!soonest - now_ns)
  else
    let tat = if t.tat.(e) < now_ns then now_ns else t.tat.(e) in
    if tat - now_ns > t.tolerance_ns then
      (* Admitted again once [tat - tolerance] is reached. *)
      seconds_until (tat - t.tolerance_ns - now_ns)
    else begin
      t.tat.(e) <- tat + t.interval_ns;
      0
    end

let tracked t ~now_ns =
  Array.fold_left (fun n tat -> if tat > now_ns then n + 1 else n) 0 t.tat
