module P = Httpz.Prepared_fields

let ints = 7 (* status (-1: empty), mtime_s, mtime_ns, size, mtime, flags, spare *)

type t = {
  mask : int;
  keys : int array;  (** [ints] per entry *)
  suffixes : string array;
  ctypes : string array;
  rules : Answer_rule.t array;
  sets : P.t array;
}

let create ~size ~rule =
  if size <= 0 || size land (size - 1) <> 0 then invalid_arg "Head_cache.create";
  { mask = size - 1; keys = Array.make (size * ints) (-1); suffixes = Array.make size "";
    ctypes = Array.make size ""; rules = Array.make size rule; sets = Array.init size (fun _ -> P.create ~capacity:768 ()) }

let flags ~vary ~gz = (if vary then 1 else 0) lor if gz then 2 else 0

let slot t ~status ~mtime_ns ~size ~mtime =
  let h = (mtime_ns * 0x9E3779B1) lxor (size * 31) lxor mtime lxor status in
  (h lxor (h lsr 17)) land t.mask

let find t ~status ~mtime_s ~mtime_ns ~size ~suffix ~mtime ~ctype ~rule ~vary ~gz =
  let i = slot t ~status ~mtime_ns ~size ~mtime in
  let k = t.keys and o = i * ints in
  if Array.unsafe_get k o = status && Array.unsafe_get k (o + 1) = mtime_s
     && Array.unsafe_get k (o + 2) = mtime_ns && Array.unsafe_get k (o + 3) = size
     && Array.unsafe_get k (o + 4) = mtime && Array.unsafe_get k (o + 5) = flags ~vary ~gz
     && Array.unsafe_get t.suffixes i == suffix && Array.unsafe_get t.ctypes i == ctype
     && Array.unsafe_get t.rules i == rule
  then i
  else -1 - i

let fields t i = t.sets.(i)

let fill t i ~status ~mtime_s ~mtime_ns ~size ~suffix ~mtime ~ctype ~rule ~vary ~gz =
  let k = t.keys and o = i * ints in
  k.(o) <- status;
  k.(o + 1) <- mtime_s;
  k.(o + 2) <- mtime_ns;
  k.(o + 3) <- size;
  k.(o + 4) <- mtime;
  k.(o + 5) <- flags ~vary ~gz;
  t.suffixes.(i) <- suffix;
  t.ctypes.(i) <- ctype;
  t.rules.(i) <- rule;
  let p = t.sets.(i) in
  P.clear p;
  p

let forget t i = t.keys.(i * ints) <- -1
