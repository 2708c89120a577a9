(* Bytes each byte adds when escaped: its reference is one byte plus that. *)
let[@inline] extra = function '&' | '\'' -> 4 | '"' -> 5 | '<' | '>' -> 3 | _ -> 0

let escaped_length s =
  let n = ref (String.length s) in
  for i = 0 to String.length s - 1 do
    n := !n + extra (String.unsafe_get s i)
  done;
  !n

let needs_escape s = escaped_length s <> String.length s

let reference = function
  | '&' -> "&amp;"
  | '<' -> "&lt;"
  | '>' -> "&gt;"
  | '"' -> "&quot;"
  | _ -> "&#39;"

let escape s =
  let m = escaped_length s in
  if m = String.length s then s
  else begin
    let out = Bytes.create m in
    let o = ref 0 in
    for i = 0 to String.length s - 1 do
      let ch = String.unsafe_get s i in
      if extra ch = 0 then (Bytes.unsafe_set out !o ch; incr o)
      else begin
        let r = reference ch in
        Bytes.blit_string r 0 out !o (String.length r);
        o := !o + String.length r
      end
    done;
    Bytes.unsafe_to_string out
  end

let escape_into b s =
  (* Runs of plain bytes go in with one copy each. *)
  let start = ref 0 in
  for i = 0 to String.length s - 1 do
    let ch = String.unsafe_get s i in
    if extra ch <> 0 then begin
      Buffer.add_substring b s !start (i - !start);
      Buffer.add_string b (reference ch);
      start := i + 1
    end
  done;
  Buffer.add_substring b s !start (String.length s - !start)
