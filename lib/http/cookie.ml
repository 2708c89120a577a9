type t = {
  mutable buf : Bigstring.t;
  mutable pos : int;
  mutable stop : int;
  mutable name : Span.t;
  mutable value : Span.t;
}

let create () =
  { buf = Bigstring.create 0; pos = 0; stop = 0; name = Span.empty; value = Span.empty }

let start t buf s =
  Bigstring.check_range "Cookie.start" buf ~off:(Span.off s) ~len:(Span.len s);
  t.buf <- buf;
  t.pos <- Span.off s;
  t.stop <- Span.off s + Span.len s

let next t =
  let buf = t.buf and stop = t.stop in
  let found = ref false in
  while (not !found) && t.pos < stop do
    let s = t.pos in
    let e = ref s in
    while !e < stop && Bigstring.unsafe_get buf !e <> ';' do incr e done;
    t.pos <- (if !e < stop then !e + 1 else stop);
    let eq = Bigstring.index_from buf ~off:s ~stop:!e '=' in
    if eq >= 0 then begin
      (* name: trimmed both sides; value: trimmed, then unquoted *)
      let ns = ref s and ne = ref eq in
      while !ns < !ne && Charset.is_ows (Bigstring.unsafe_get buf !ns) do incr ns done;
      while !ne > !ns && Charset.is_ows (Bigstring.unsafe_get buf (!ne - 1)) do decr ne done;
      let vs = ref (eq + 1) and ve = ref !e in
      while !vs < !ve && Charset.is_ows (Bigstring.unsafe_get buf !vs) do incr vs done;
      while !ve > !vs && Charset.is_ows (Bigstring.unsafe_get buf (!ve - 1)) do decr ve done;
      if !ve - !vs >= 2 && Bigstring.unsafe_get buf !vs = '"' && Bigstring.unsafe_get buf (!ve - 1) = '"'
      then begin
        incr vs;
        decr ve
      end;
      if !ne > !ns then begin
        found := true;
        t.name <- Span.make ~off:!ns ~len:(!ne - !ns);
        t.value <- Span.make ~off:!vs ~len:(!ve - !vs)
      end
    end
  done;
  !found

let name t = t.name
let value t = t.value

let find t buf s name =
  start t buf s;
  let found = ref false in
  while (not !found) && next t do
    if Span.equal buf t.name name then found := true
  done;
  !found

let find_in_request t buf req name =
  let i = ref (Request.find req Header_name.Cookie) and found = ref false in
  while (not !found) && !i >= 0 do
    if find t buf (Request.header_value req !i) name then found := true
    else i := Request.find_next req Header_name.Cookie ~after:!i
  done;
  !found

let get buf req name =
  let t = create () in
  if find_in_request t buf req name then Some (Span.to_string buf t.value) else None

let to_list buf s =
  let t = create () in
  start t buf s;
  let acc = ref [] in
  while next t do
    acc := (Span.to_string buf t.name, Span.to_string buf t.value) :: !acc
  done;
  List.rev !acc

(* {1 Writing} *)

type same_site = Strict | Lax | No_restriction

(* cookie-octet = %x21 / %x23-2B / %x2D-3A / %x3C-5B / %x5D-7E *)
let[@inline] cookie_octet c =
  c = '\x21' || (c >= '\x23' && c <= '\x2b') || (c >= '\x2d' && c <= '\x3a')
  || (c >= '\x3c' && c <= '\x5b') || (c >= '\x5d' && c <= '\x7e')

let valid_value v =
  let n = String.length v in
  let from, upto = if n >= 2 && v.[0] = '"' && v.[n - 1] = '"' then (1, n - 1) else (0, n) in
  let ok = ref true in
  for i = from to upto - 1 do
    if not (cookie_octet (String.unsafe_get v i)) then ok := false
  done;
  !ok

(* av-octet: any CHAR except CTLs or ";" *)
let valid_attribute v =
  let ok = ref true in
  for i = 0 to String.length v - 1 do
    let c = String.unsafe_get v i in
    if c < ' ' || c = '\x7f' || c = ';' || c >= '\x80' then ok := false
  done;
  !ok

let check ~name ~value ~max_age ~domain ~path ~secure ~same_site =
  if not (Response.is_token name) then invalid_arg "Cookie: the name is not a token"
  else if not (valid_value value) then invalid_arg "Cookie: the value has a byte outside cookie-octets"
  else if not (valid_attribute domain) then invalid_arg "Cookie: bad Domain"
  else if not (valid_attribute path) then invalid_arg "Cookie: bad Path"
  else if max_age < -1 then invalid_arg "Cookie: negative Max-Age (give 0 to delete)"
  else
    match same_site with
    | Some No_restriction when not secure -> invalid_arg "Cookie: SameSite=None needs Secure"
    | _ -> ()

let put buf pos s =
  if pos + String.length s > Bigstring.length buf then raise_notrace Response.No_space;
  Response.write_string buf ~off:pos s

let write buf ~off ~name ~value ~max_age ~expires ~domain ~path ~secure ~http_only ~same_site =
  check ~name ~value ~max_age ~domain ~path ~secure ~same_site;
  let pos = put buf off "Set-Cookie: " in
  let pos = put buf pos name in
  let pos = put buf pos "=" in
  let pos = put buf pos value in
  let pos =
    if max_age < 0 then pos
    else begin
      let pos = put buf pos "; Max-Age=" in
      if pos + 20 > Bigstring.length buf then raise_notrace Response.No_space;
      Response.write_int buf ~off:pos max_age
    end
  in
  let pos =
    if expires < 0 then pos
    else begin
      let pos = put buf pos "; Expires=" in
      if pos + Date.imf_fixdate_length > Bigstring.length buf then raise_notrace Response.No_space;
      Date.write_imf_fixdate buf ~off:pos expires
    end
  in
  let pos = if domain = "" then pos else put buf (put buf pos "; Domain=") domain in
  let pos = if path = "" then pos else put buf (put buf pos "; Path=") path in
  let pos = if secure then put buf pos "; Secure" else pos in
  let pos = if http_only then put buf pos "; HttpOnly" else pos in
  let pos =
    match same_site with
    | None -> pos
    | Some Strict -> put buf pos "; SameSite=Strict"
    | Some Lax -> put buf pos "; SameSite=Lax"
    | Some No_restriction -> put buf pos "; SameSite=None"
  in
  put buf pos "\r\n"

let to_string ?(max_age = -1) ?(expires = -1) ?(domain = "") ?(path = "") ?(secure = false)
    ?(http_only = false) ?same_site name value =
  (* The fixed parts take at most 150 bytes; the rest are the strings. *)
  let n = 160 + String.length name + String.length value + String.length domain + String.length path in
  let b = Bigstring.create n in
  let len = write b ~off:0 ~name ~value ~max_age ~expires ~domain ~path ~secure ~http_only ~same_site in
  (* without "Set-Cookie: " and the CRLF *)
  Bigstring.sub_string b ~off:12 ~len:(len - 14)
