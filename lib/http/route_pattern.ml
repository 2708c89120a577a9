type segment = Lit of string | Param of string | Wild of string

let fail pattern why = invalid_arg (Printf.sprintf "Httpz.Router: pattern %S: %s" pattern why)

let is_name_char = function 'A' .. 'Z' | 'a' .. 'z' | '0' .. '9' | '_' -> true | _ -> false

let check_name pattern kind name =
  if name = "" then fail pattern (kind ^ " without a name");
  String.iter (fun c -> if not (is_name_char c) then fail pattern ("bad " ^ kind ^ " name " ^ name)) name

let decode_literal pattern raw =
  String.iter (fun c -> if c = '?' || c = '#' then fail pattern "'?' or '#' (a pattern is a path)") raw;
  let src = Bigstring.of_string raw and dst = Bigstring.create (String.length raw) in
  let n = Target.decode_segment src (Span.make ~off:0 ~len:(String.length raw)) ~dst ~dst_off:0 in
  if n < 0 then fail pattern (Target.error_to_string (Target.decode_error n));
  let s = Bigstring.sub_string dst ~off:0 ~len:n in
  if s = "." || s = ".." then fail pattern "dot segment";
  s

let parse pattern =
  let n = String.length pattern in
  if n = 0 || pattern.[0] <> '/' then fail pattern "does not start with '/'";
  if n = 1 then []
  else begin
    let raw = String.split_on_char '/' (String.sub pattern 1 (n - 1)) in
    let count = List.length raw in
    let segs =
      List.mapi
        (fun i s ->
          let last = i = count - 1 in
          if s = "" then (if last then Lit "" else fail pattern "empty segment")
          else if s.[0] = ':' then begin
            let name = String.sub s 1 (String.length s - 1) in
            check_name pattern "parameter" name; Param name
          end
          else if s.[0] = '*' then begin
            let name = String.sub s 1 (String.length s - 1) in
            check_name pattern "wildcard" name;
            if not last then fail pattern "wildcard not last";
            Wild name
          end
          else Lit (decode_literal pattern s))
        raw
    in
    let rec dups = function
      | [] -> ()
      | x :: rest -> if List.mem x rest then fail pattern ("repeated name " ^ x); dups rest
    in
    dups
      (List.filter_map (function Param x | Wild x -> Some x | Lit _ -> None) segs);
    segs
  end

let same_shape a b =
  List.length a = List.length b
  && List.for_all2
       (fun x y ->
         match x, y with
         | Lit x, Lit y -> String.equal x y
         | Param _, Param _ | Wild _, Wild _ -> true
         | _ -> false)
       a b

let names segs = List.filter_map (function Param x | Wild x -> Some x | Lit _ -> None) segs

let escape_literal s =
  let b = Buffer.create (String.length s) in
  String.iteri
    (fun i c ->
      if c = '/' || c = '%' || c <= ' ' || c = '\127' || c = '?' || c = '#'
         || (i = 0 && (c = ':' || c = '*'))
      then Buffer.add_string b (Printf.sprintf "%%%02X" (Char.code c))
      else Buffer.add_char b c)
    s;
  Buffer.contents b

let to_string segs =
  "/"
  ^ String.concat "/"
      (List.map (function Lit s -> escape_literal s | Param x -> ":" ^ x | Wild x -> "*" ^ x) segs)

(* ---- per request ---- *)

let segment_end buf pos stop =
  let i = ref pos and pct = ref 0 in
  while !i < stop && Bigstring.unsafe_get buf !i <> '/' do
    if Bigstring.unsafe_get buf !i = '%' then pct := 1;
    incr i
  done;
  let e = if !i < stop then !i else if pos > stop then pos else stop in
  (e lsl 1) lor !pct

let equal_literal buf s e has_pct lit =
  let n = String.length lit in
  if not has_pct then
    e - s = n
    && begin
      let i = ref 0 in
      while !i < n && Bigstring.unsafe_get buf (s + !i) = String.unsafe_get lit !i do incr i done;
      !i = n
    end
  else if e - s < n then false
  else begin
    (* Decode while comparing; [j] walks [lit]. *)
    let i = ref s and j = ref 0 and ok = ref true in
    while !ok && !i < e && !j < n do
      let c = Bigstring.unsafe_get buf !i in
      let b =
        if c = '%' then begin
          let v = Target.percent_byte buf !i e in
          i := !i + 3;
          v
        end
        else begin incr i; Char.code c end
      in
      if b <> Char.code (String.unsafe_get lit !j) then ok := false else incr j
    done;
    !ok && !i = e && !j = n
  end

let is_dot_segment buf s e =
  let n = e - s in
  n >= 1 && n <= 6
  && begin
    let i = ref s and dots = ref 0 and ok = ref true in
    while !ok && !i < e do
      let c = Bigstring.unsafe_get buf !i in
      if c = '.' then begin incr dots; incr i end
      else if c = '%' && !i + 2 < e && Bigstring.unsafe_get buf (!i + 1) = '2'
              && (let x = Bigstring.unsafe_get buf (!i + 2) in x = 'e' || x = 'E')
      then begin incr dots; i := !i + 3 end
      else ok := false
    done;
    !ok && !dots <= 2
  end

let has_dot_segment buf s stop =
  let pos = ref s and found = ref false in
  while not !found && !pos < stop do
    let e = segment_end buf !pos stop lsr 1 in
    if is_dot_segment buf !pos e then found := true;
    pos := e + 1
  done;
  !found
