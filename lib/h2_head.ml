module B = Bigstring
module D = Hpack_decoder

type t = {
  max_fields : int;
  names : Header_name.t array;
  name_spans : int array;
  value_spans : int array;
  mutable count : int;
  mutable meth : Meth.t;
  pseudo_spans : int array;  (* by [slot]; -1 when absent *)
  mutable content_length : int;
  mutable priority : H2_priority.t;
  mutable reason : string;
  mutable controls : int;  (** values holding a control byte (HTAB...) *)
}

let create ~max_fields =
  if max_fields < 1 then invalid_arg "Httpz.H2_head.create";
  {
    max_fields;
    names = Array.make max_fields Header_name.Other;
    name_spans = Array.make max_fields 0;
    value_spans = Array.make max_fields 0;
    count = 0;
    meth = Meth.Other;
    pseudo_spans = Array.make 4 (-1);
    content_length = -1;
    priority = H2_priority.default;
    reason = "";
    controls = 0;
  }

type result = Valid | Malformed | Too_many_fields | Compression_error

(* §8.2.1: a name holds no control, SP, upper case, DEL or non-ASCII byte,
   and no ':' past the first byte; and it is a token (RFC 9110 §5.1), as
   HTTP/1.1 asks, so the request built from it need not look again. *)
let name_ok buf s ~pseudo =
  let off = Span.off s and len = Span.len s in
  if len = 0 then false
  else begin
    let ok = ref true and i = ref (if pseudo then 1 else 0) in
    while !ok && !i < len do
      let c = B.unsafe_get buf (off + !i) in
      if (not (Charset.is_tchar c)) || (c >= 'A' && c <= 'Z') then ok := false;
      incr i
    done;
    !ok
  end

(* §8.2.1: no NUL, CR or LF, and no whitespace at either end. A value
   with some other control byte (HTAB, say) passes, and is counted in
   [t.controls]. *)
let value_ok t buf s =
  let off = Span.off s and len = Span.len s in
  let ws c = c = ' ' || c = '\t' in
  (* Most values hold no control byte at all: eight bytes at a time. *)
  if Swar.skip_field_value buf off (off + len) = off + len then
    len = 0 || ((not (ws (B.unsafe_get buf off))) && not (ws (B.unsafe_get buf (off + len - 1))))
  else
  let () = t.controls <- t.controls + 1 in
  let ok = ref true and i = ref 0 in
  while !ok && !i < len do
    let c = B.unsafe_get buf (off + !i) in
    if c = '\000' || c = '\r' || c = '\n' then ok := false;
    incr i
  done;
  !ok && (len = 0 || ((not (ws (B.unsafe_get buf off))) && not (ws (B.unsafe_get buf (off + len - 1)))))

let reset t =
  t.count <- 0;
  t.meth <- Meth.Other;
  Array.fill t.pseudo_spans 0 4 (-1);
  t.content_length <- -1;
  t.priority <- H2_priority.default;
  t.controls <- 0;
  t.reason <- ""

let slot : Hpack_static.pseudo -> int = function Method -> 0 | Scheme -> 1 | Path -> 2 | _ -> 3

let repeated : Hpack_static.pseudo -> string = function
  | Method -> "repeated :method"
  | Scheme -> "repeated :scheme"
  | Path -> "repeated :path"
  | _ -> "repeated :authority"

let[@inline] has t k = t.pseudo_spans.(k) >= 0
let[@inline] pseudo_span t k = if has t k then Span.unsafe_of_int t.pseudo_spans.(k) else Span.empty

(* The first broken rule is kept; later fields are still decoded. *)
let fail t why = if t.reason = "" then t.reason <- why

let regular t d out ~trailers =
  let name = D.name d and value = D.value d in
  let hn = D.header_name d in
  if not (D.static_name d || name_ok out name ~pseudo:false) then fail t "field name not lower-case token"
  else if not (D.static_value d || value_ok t out value) then fail t "field value with CR, LF, NUL or edge whitespace"
  else begin
    (match hn with
    | Header_name.Connection | Keep_alive | Transfer_encoding | Upgrade ->
        fail t "connection-specific field"
    | Te ->
        if not (Span.equal out value "trailers") then fail t "te other than trailers"
    | Content_length ->
        let n = Span.parse_decimal out value in
        if n < 0 then fail t "content-length not a number"
        else if t.content_length >= 0 && t.content_length <> n then
          fail t "content-length values differ"
        else if not trailers then t.content_length <- n
    | Other ->
        if Span.equal out name "proxy-connection" then fail t "connection-specific field"
        else if Span.equal out name "priority" && not trailers then
          t.priority <- H2_priority.parse out ~off:(Span.off value) ~len:(Span.len value)
    | _ -> ());
    if t.count < t.max_fields then begin
      let i = t.count in
      Array.unsafe_set t.names i hn;
      Array.unsafe_set t.name_spans i (name :> int);
      Array.unsafe_set t.value_spans i (value :> int)
    end;
    t.count <- t.count + 1
  end

let pseudo_field t d out (p : Hpack_static.pseudo) ~trailers =
  let name = D.name d and value = D.value d in
  if trailers then fail t "pseudo-header in trailers"
  else if t.count > 0 then fail t "pseudo-header after a regular field"
  else if not (D.static_name d || name_ok out name ~pseudo:true) then fail t "pseudo-header name not lower case"
  else if not (D.static_value d || value_ok t out value) then fail t "field value with CR, LF, NUL or edge whitespace"
  else
    match p with
    | Method | Scheme | Path | Authority ->
        let k = slot p in
        if t.pseudo_spans.(k) >= 0 then fail t (repeated p)
        else begin
          t.pseudo_spans.(k) <- (value :> int);
          if p = Method then t.meth <- Meth.of_buffer out ~off:(Span.off value) ~len:(Span.len value)
        end
    | Status -> fail t ":status in a request"
    | Protocol -> fail t ":protocol without SETTINGS_ENABLE_CONNECT_PROTOCOL"
    | Unknown_pseudo -> fail t "unknown pseudo-header"
    | Regular -> ()

let check_request t =
  if not (has t 0) then fail t "missing :method"
  else if t.meth = Meth.Connect then begin
    if not (has t 3) then fail t "CONNECT without :authority"
    else if has t 1 || has t 2 then fail t "CONNECT with :scheme or :path"
  end
  else if not (has t 1) then fail t "missing :scheme"
  else if not (has t 2) then fail t "missing :path"
  else if Span.len (pseudo_span t 2) = 0 then fail t "empty :path"

let decode t d src ~off ~len ~out ~trailers =
  reset t;
  D.start_block d ~off ~len;
  let status = ref D.Field in
  while !status = D.Field do
    status := D.next_field d src ~out;
    if !status = D.Field then
      match D.pseudo d with
      | Regular -> regular t d out ~trailers
      | p -> pseudo_field t d out p ~trailers
  done;
  if !status = D.Error then begin
    t.reason <- D.describe (D.error d);
    Compression_error
  end
  else begin
    if not trailers then check_request t;
    if t.reason <> "" then Malformed
    else if t.count > t.max_fields then begin
      t.reason <- "too many header fields";
      Too_many_fields
    end
    else Valid
  end

let reason t = t.reason
let field_count t = if t.count > t.max_fields then t.max_fields else t.count
let field_name t i = Array.unsafe_get t.names i
let field_name_span t i = Span.unsafe_of_int (Array.unsafe_get t.name_spans i)
let field_value t i = Span.unsafe_of_int (Array.unsafe_get t.value_spans i)

let find t n =
  let r = ref (-1) and i = ref 0 and c = field_count t in
  while !r < 0 && !i < c do
    if Array.unsafe_get t.names !i = n then r := !i;
    incr i
  done;
  !r

let meth t = t.meth
let method_span t = pseudo_span t 0
let scheme t = pseudo_span t 1
let path t = pseudo_span t 2
let authority t = pseudo_span t 3
let has_authority t = has t 3
let content_length t = t.content_length
let priority t = t.priority
let values_plain t = t.controls = 0
