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
  mutable has_reason : bool;  (** [reason <> ""], without a string compare *)
  mutable controls : int;  (** values holding a control byte (HTAB...) *)
  mutable cookies : int;  (** Cookie fields (crumbs, RFC 9113 §8.2.3) *)
  mutable cookie_bytes : int;  (** their values' bytes *)
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
    has_reason = false;
    controls = 0;
    cookies = 0;
    cookie_bytes = 0;
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

(* Does a value of fewer than 8 bytes at [off] hold a byte below 0x20 or
   DEL? One little-endian word read from [off] (the caller made sure 8
   bytes are there), the bytes past the value replaced by 'A'; the
   borrow tests ("a byte below n", "a zero byte") answer exactly whether
   some byte matches. *)
let short_has_control buf off len =
  let keep = Int64.pred (Int64.shift_left 1L (8 * len)) in
  let x = B.unsafe_get64 buf off in
  let x = Int64.logor (Int64.logand x keep) (Int64.logand 0x4141414141414141L (Int64.lognot keep)) in
  let del = Int64.logxor x 0x7f7f7f7f7f7f7f7fL in
  let below_space = Int64.logand (Int64.sub x 0x2020202020202020L) (Int64.lognot x) in
  let is_del = Int64.logand (Int64.sub del 0x0101010101010101L) (Int64.lognot del) in
  (Int64.logand (Int64.logor below_space is_del) 0x8080808080808080L : int64) <> 0L

(* §8.2.1: no NUL, CR or LF, and no whitespace at either end. [0]: the
   value passes and holds no control byte; [1]: it passes and holds one
   (HTAB, say), counted in [t.controls]; [-1]: it fails; [-2]: it fails
   and holds a control byte (counted too). *)
let value_check buf s =
  let off = Span.off s and len = Span.len s in
  let ws c = c = ' ' || c = '\t' in
  let edges_ok = len = 0 || ((not (ws (B.unsafe_get buf off))) && not (ws (B.unsafe_get buf (off + len - 1)))) in
  (* Most values hold no control byte at all: eight bytes at a time, a
     short one (a path, say) in one word. *)
  let plain =
    if len < 8 && off + 8 <= B.length buf && not Sys.big_endian then not (short_has_control buf off len)
    else Swar.skip_field_value buf off (off + len) = off + len
  in
  if plain then (if edges_ok then 0 else -1)
  else begin
    let ok = ref edges_ok and i = ref 0 in
    while !ok && !i < len do
      let c = B.unsafe_get buf (off + !i) in
      if c = '\000' || c = '\r' || c = '\n' then ok := false;
      incr i
    done;
    if !ok then 1 else -2
  end

let reset t =
  t.count <- 0;
  t.cookies <- 0;
  t.cookie_bytes <- 0;
  t.meth <- Meth.Other;
  let p = t.pseudo_spans in
  Array.unsafe_set p 0 (-1);
  Array.unsafe_set p 1 (-1);
  Array.unsafe_set p 2 (-1);
  Array.unsafe_set p 3 (-1);
  t.content_length <- -1;
  t.priority <- H2_priority.default;
  t.controls <- 0;
  if t.has_reason then begin t.reason <- ""; t.has_reason <- false end

let repeated : Hpack_static.pseudo -> string = function
  | Method -> "repeated :method"
  | Scheme -> "repeated :scheme"
  | Path -> "repeated :path"
  | _ -> "repeated :authority"

let[@inline] has t k = Array.unsafe_get t.pseudo_spans k >= 0
let[@inline] pseudo_span t k =
  if has t k then Span.unsafe_of_int (Array.unsafe_get t.pseudo_spans k) else Span.empty

let set_reason t why = t.reason <- why; t.has_reason <- true

(* The first broken rule is kept; later fields are still decoded. *)
let fail t why = if not t.has_reason then set_reason t why

(* Marks on dynamic table entries (Hpack_decoder.entry_marks): the name
   passed [name_ok], the value passed [value_check] (and held a control
   byte). Recorded only once the check passed: a later field referencing
   the entry needs no check, and one whose check failed is checked (and
   refused) again. *)
let name_checked = D.name_mark
let value_checked = 2
let value_has_control = 4

(* The name check, skipped for static names and marked entries. *)
let[@inline] name_passes d out name ~pseudo =
  D.static_name d || D.entry_marks d land name_checked <> 0 || name_ok out name ~pseudo

(* The value check as [value_check] says, skipped likewise; marks the
   entry the field was inserted as. *)
let[@inline] value_passes t d out value =
  let marks = D.entry_marks d in
  let v =
    if D.static_value d then 0
    else if marks land value_checked <> 0 then (if marks land value_has_control <> 0 then 1 else 0)
    else value_check out value
  in
  if v < 0 then begin
    if v = -2 then t.controls <- t.controls + 1;
    D.mark_inserted d name_checked;
    false
  end
  else begin
    t.controls <- t.controls + v;
    D.mark_inserted d (name_checked lor value_checked lor (v * value_has_control));
    true
  end

let regular t d out ~trailers =
  let name = D.name d and value = D.value d in
  let hn = D.header_name d in
  if not (name_passes d out name ~pseudo:false) then fail t "field name not lower-case token"
  else if not (value_passes t d out value) then fail t "field value with CR, LF, NUL or edge whitespace"
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
    | Cookie ->
        t.cookies <- t.cookies + 1;
        t.cookie_bytes <- t.cookie_bytes + Span.len value
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
  else if not (name_passes d out name ~pseudo:true) then fail t "pseudo-header name not lower case"
  else if not (value_passes t d out value) then fail t "field value with CR, LF, NUL or edge whitespace"
  else
    (* Each kind with its slot as a constant: no [slot] per field. *)
    match p with
    | Method ->
        if has t 0 then fail t (repeated p)
        else begin
          Array.unsafe_set t.pseudo_spans 0 (value :> int);
          t.meth <- Meth.of_buffer out ~off:(Span.off value) ~len:(Span.len value)
        end
    | Scheme -> if has t 1 then fail t (repeated p) else Array.unsafe_set t.pseudo_spans 1 (value :> int)
    | Path -> if has t 2 then fail t (repeated p) else Array.unsafe_set t.pseudo_spans 2 (value :> int)
    | Authority -> if has t 3 then fail t (repeated p) else Array.unsafe_set t.pseudo_spans 3 (value :> int)
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

(* The current field, then the next ones until the block's end or an HPACK
   error: that status. The first [D.next_field] checked the block's range
   against [src]; the following calls need not. *)
let rec fields t d src out ~trailers (status : D.status) =
  match status with
  | Field ->
      (match D.pseudo d with
      | Regular -> regular t d out ~trailers
      | p -> pseudo_field t d out p ~trailers);
      fields t d src out ~trailers (D.next_field_unchecked d src ~out)
  | End | Error -> status

let decode t d src ~off ~len ~out ~trailers =
  reset t;
  D.start_block d ~off ~len;
  if fields t d src out ~trailers (D.next_field d src ~out) = D.Error then begin
    set_reason t (D.describe (D.error d));
    Compression_error
  end
  else begin
    if not trailers then check_request t;
    if t.has_reason then Malformed
    else if t.count > t.max_fields then begin
      set_reason t "too many header fields";
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
let cookies t = t.cookies
let cookie_bytes t = t.cookie_bytes
