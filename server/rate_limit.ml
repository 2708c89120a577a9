let probe = 8

type t = {
  interval_ns : int;  (** between two requests at the rate *)
  tolerance_ns : int;  (** how far ahead of now a client's clock may run: the burst *)
  mask : int;
  keys : int array;  (** 3 words per entry: the address's words that form the key *)
  tat : int array;  (** theoretical arrival time, ns; [0]: free *)
}

let pow2_at_least n =
  let r = ref 16 in
  while !r < n do r := 2 * !r done;
  !r

let create ~rate ~burst ~entries =
  if not (rate > 0. && Float.is_finite rate) then invalid_arg "Rate_limit.create: rate must be positive";
  if burst < 1 then invalid_arg "Rate_limit.create: burst must be at least 1";
  if entries < 1 || entries > 1 lsl 24 then invalid_arg "Rate_limit.create: entries out of range";
  let n = pow2_at_least entries in
  let interval_ns = max 1 (int_of_float (1e9 /. rate)) in
  {
    interval_ns;
    tolerance_ns = interval_ns * (burst - 1);
    mask = n - 1;
    keys = Array.make (3 * n) 0;
    tat = Array.make n 0;
  }

let entries t = Array.length t.tat

let admit t addr ~now_ns =
  let k0 = Client_key.high addr and k1 = Client_key.middle addr and k2 = Client_key.low addr in
  let h = Client_key.hash k0 k1 k2 land t.mask in
  (* The client's entry, else a free or expired one, else the one with the
     earliest arrival time among the probed. *)
  let found = ref (-1) and spare = ref (-1) and victim = ref h in
  let i = ref 0 in
  while !found < 0 && !i < probe do
    let e = (h + !i) land t.mask in
    let tat = t.tat.(e) in
    if tat <> 0 && t.keys.(3 * e) = k0 && t.keys.((3 * e) + 1) = k1 && t.keys.((3 * e) + 2) = k2
    then found := e
    else begin
      if !spare < 0 && tat <= now_ns then spare := e;
      if tat < t.tat.(!victim) then victim := e
    end;
    incr i
  done;
  if !found < 0 then begin
    let e = if !spare >= 0 then !spare else !victim in
    t.keys.(3 * e) <- k0;
    t.keys.((3 * e) + 1) <- k1;
    t.keys.((3 * e) + 2) <- k2;
    t.tat.(e) <- 0;
    found := e
  end;
  let e = !found in
  let tat = if t.tat.(e) < now_ns then now_ns else t.tat.(e) in
  if tat - now_ns > t.tolerance_ns then
    (* Admitted again once [tat - tolerance] is reached. *)
    max 1 ((tat - t.tolerance_ns - now_ns + 999_999_999) / 1_000_000_000)
  else begin
    t.tat.(e) <- tat + t.interval_ns;
    0
  end

let tracked t ~now_ns =
  Array.fold_left (fun n tat -> if tat > now_ns then n + 1 else n) 0 t.tat
