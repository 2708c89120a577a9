(* A cursor over [name=value&...]; decoding in place or into a caller
   buffer, one byte at a time: queries and forms are short next to the
   heads the parser scans. *)

type t = {
  mutable buf : Bigstring.t;
  mutable pos : int;  (* where the next pair starts *)
  mutable stop : int;
  mutable name : Span.t;
  mutable value : Span.t;
}

let create () =
  { buf = Bigstring.create 0; pos = 0; stop = 0; name = Span.empty; value = Span.empty }

let start t buf s =
  Bigstring.check_range "Form.start" buf ~off:(Span.off s) ~len:(Span.len s);
  t.buf <- buf;
  t.pos <- Span.off s;
  t.stop <- Span.off s + Span.len s;
  t.name <- Span.empty;
  t.value <- Span.empty

let next t =
  let buf = t.buf and stop = t.stop in
  let found = ref false in
  while (not !found) && t.pos < stop do
    let s = t.pos in
    let e = ref s in
    while !e < stop && Bigstring.unsafe_get buf !e <> '&' do incr e done;
    t.pos <- (if !e < stop then !e + 1 else stop);
    if !e > s then begin
      found := true;
      let eq = Bigstring.index_from buf ~off:s ~stop:!e '=' in
      if eq < 0 then begin
        t.name <- Span.make ~off:s ~len:(!e - s);
        t.value <- Span.make ~off:!e ~len:0
      end
      else begin
        t.name <- Span.make ~off:s ~len:(eq - s);
        t.value <- Span.make ~off:(eq + 1) ~len:(!e - eq - 1)
      end
    end
  done;
  !found

let name t = t.name
let value t = t.value

let[@inline] hex c =
  match c with
  | '0' .. '9' -> Char.code c - 48
  | 'a' .. 'f' -> Char.code c - 87
  | 'A' .. 'F' -> Char.code c - 55
  | _ -> -1

(* The byte decoded at [i] (of [buf], before [stop]) and how many input
   bytes it took, packed as [byte lsl 2 lor taken]. *)
let[@inline] decode_at buf i stop =
  let c = Bigstring.unsafe_get buf i in
  if c = '+' then (32 lsl 2) lor 1
  else if c = '%' && i + 2 < stop then begin
    let h = hex (Bigstring.unsafe_get buf (i + 1)) and l = hex (Bigstring.unsafe_get buf (i + 2)) in
    if h >= 0 && l >= 0 then (((h lsl 4) lor l) lsl 2) lor 3 else (Char.code c lsl 2) lor 1
  end
  else (Char.code c lsl 2) lor 1

let decoded_length buf s =
  let stop = Span.off s + Span.len s in
  let i = ref (Span.off s) and n = ref 0 in
  while !i < stop do
    i := !i + (decode_at buf !i stop land 3);
    incr n
  done;
  !n

let decode buf s ~dst ~dst_off =
  let n = decoded_length buf s in
  if dst_off < 0 || dst_off > Bigstring.length dst - n then -1
  else begin
    let stop = Span.off s + Span.len s in
    let i = ref (Span.off s) and o = ref dst_off in
    while !i < stop do
      let d = decode_at buf !i stop in
      Bigstring.unsafe_set dst !o (Char.unsafe_chr (d lsr 2));
      i := !i + (d land 3);
      incr o
    done;
    n
  end

let equal_decoded buf s name =
  let stop = Span.off s + Span.len s and len = String.length name in
  let i = ref (Span.off s) and k = ref 0 and same = ref true in
  while !same && !i < stop do
    let d = decode_at buf !i stop in
    if !k >= len || Char.code (String.unsafe_get name !k) <> d lsr 2 then same := false
    else begin
      i := !i + (d land 3);
      incr k
    end
  done;
  !same && !k = len

let find t buf s name =
  start t buf s;
  let found = ref false in
  while (not !found) && next t do
    if equal_decoded buf t.name name then found := true
  done;
  !found

(* {1 Allocating helpers} *)

let span_to_string buf s =
  let n = decoded_length buf s in
  let dst = Bigstring.create n in
  ignore (decode buf s ~dst ~dst_off:0 : int);
  Bigstring.to_string dst

let decode_string str =
  let b = Bigstring.of_string str in
  span_to_string b (Span.make ~off:0 ~len:(String.length str))

let to_list buf s =
  let t = create () in
  start t buf s;
  let acc = ref [] in
  while next t do
    acc := (span_to_string buf t.name, span_to_string buf t.value) :: !acc
  done;
  List.rev !acc

let pairs str = to_list (Bigstring.of_string str) (Span.make ~off:0 ~len:(String.length str))

let get buf s name =
  let t = create () in
  if find t buf s name then Some (span_to_string buf t.value) else None

let encode str =
  let b = Buffer.create (String.length str * 3) in
  String.iter
    (fun c ->
      match c with
      | 'A' .. 'Z' | 'a' .. 'z' | '0' .. '9' | '*' | '-' | '.' | '_' -> Buffer.add_char b c
      | ' ' -> Buffer.add_char b '+'
      | c -> Printf.bprintf b "%%%02X" (Char.code c))
    str;
  Buffer.contents b
