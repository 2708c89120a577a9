let[@inline] get b i = Bigstring.unsafe_get b i

let[@inline] is_hex c = (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')

(* A constant exception: raising it allocates nothing. *)
exception Invalid

let valid_host_bytes ~simd b ~off ~len =
  let stop = off + len in
  let i = ref off in
  match
    if len > 0 && get b off = '[' then begin
      incr i;
      while !i < stop && get b !i <> ']' do
        let c = get b !i in
        if c = '[' || not (Charset.is_host_char c) then raise_notrace Invalid;
        incr i
      done;
      if !i >= stop || !i = off + 1 then raise_notrace Invalid;
      incr i (* past ']' *)
    end
    else begin
      (* Letters, digits, '-' and '.' (all of most names) 8 or 16 at a
         time; the loop below checks whatever else there is byte by byte. *)
      i := (if simd then Simd.hostname_end b off stop else Swar.skip_hostname b off stop);
      while !i < stop && get b !i <> ':' do
        let c = get b !i in
        if c = '%' then begin
          if !i + 2 >= stop || not (is_hex (get b (!i + 1)) && is_hex (get b (!i + 2))) then
            raise_notrace Invalid;
          i := !i + 3
        end
        else if c = '[' || c = ']' || not (Charset.is_host_char c) then raise_notrace Invalid
        else incr i
      done
    end;
    if !i < stop then begin
      if get b !i <> ':' then raise_notrace Invalid;
      incr i;
      while !i < stop do
        let c = get b !i in
        if c < '0' || c > '9' then raise_notrace Invalid;
        incr i
      done
    end
  with
  | () -> true
  | exception Invalid -> false

(* Almost every Host is letters, digits, '-' and '.' alone: one scan, no
   exception handler. *)
let valid_host ~simd b ~off ~len =
  (len > 0 && get b off <> '['
   && (if simd then Simd.hostname_end b off (off + len) else Swar.skip_hostname b off (off + len))
      = off + len)
  || valid_host_bytes ~simd b ~off ~len

(* CONNECT is rare: plain byte loops. *)
let valid_connect_target b ~off ~len =
  let stop = off + len in
  let colon = ref (-1) and ok = ref true in
  for i = off to stop - 1 do
    let c = get b i in
    if not (Charset.is_host_char c) then ok := false;
    if c = ':' then colon := i
  done;
  if !colon <= off then ok := false;
  if !ok then
    for i = !colon + 1 to stop - 1 do
      let c = get b i in
      if c < '0' || c > '9' then ok := false
    done;
  !ok
