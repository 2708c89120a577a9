module B = Httpz.Bigstring

let find_equal names ids buf ~off ~len ~caseless =
  let found = ref (-1) and i = ref 0 in
  let n = Array.length names in
  while !found < 0 && !i < n do
    let s = Array.unsafe_get names !i in
    if String.length s = len
       && (if caseless then B.equal_caseless buf ~off ~len s else B.equal_string buf ~off ~len s)
    then found := Array.unsafe_get ids !i;
    incr i
  done;
  !found
